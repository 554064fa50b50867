"""What a third-party parser's exception means for the document.

pypdf, pypdfium2, zipfile, mammoth, ElementTree, json and csv each raise their
own exceptions (pypdf and mammoth almost any type) on a file they cannot read.
Converters catch them where they call the parser and say in words what went
wrong; the reason recorded for the document is decided here, once: a missing
password is ``encrypted``, anything else a parser chokes on is ``corrupt``.

Two failures are decided elsewhere, on purpose: bytes that are not text
(:func:`converters.textutil.decode_text`, ``unsupported``) are docshelf's own
judgement, not a parser's error; and running out of memory is the conversion
runner's ``too_large``, whichever library was allocating.
"""

from __future__ import annotations

from pypdf.errors import DependencyError, FileNotDecryptedError

from docshelf.converters.base import ConversionError, FailureReason

#: Errors that mean "needs a password": pypdf's for a file it cannot decrypt
#: (``DependencyError``: AES without the cryptography package to do it).
ENCRYPTION_ERRORS: tuple[type[Exception], ...] = (FileNotDecryptedError, DependencyError)


def failure_reason(exc: Exception) -> FailureReason:
    """The reason to record when a parser raised ``exc`` reading a source."""
    if isinstance(exc, ENCRYPTION_ERRORS):
        return FailureReason.ENCRYPTED
    return FailureReason.CORRUPT


def conversion_failure(exc: Exception, message: str) -> ConversionError:
    """A :class:`ConversionError` for ``exc``, with the reason :func:`failure_reason` gives."""
    return ConversionError(failure_reason(exc), message)


def describe(exc: Exception) -> str:
    """``exc`` in a few words for a failure message: its type, and its text if it has one."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
