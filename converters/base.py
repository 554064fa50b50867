"""The converter contract: bytes in, facts and derived representations out.

The storage layer is written against these types alone. A converter never
touches the database, the network, the clock or the filesystem beyond the
bytes it is handed (the PDF renderer may read font files); what it learned
about a document travels in :class:`Facts`, never through side channels.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import PurePosixPath
from typing import Protocol, runtime_checkable

TEXT_PLAIN = "text/plain"
TEXT_MARKDOWN = "text/markdown"
APPLICATION_JSON = "application/json"
APPLICATION_PDF = "application/pdf"


class FailureReason(StrEnum):
    """Why docshelf could not index or convert a file: every reason it reports.

    A StrEnum, so what is stored and reported is the plain string it always was.
    Converters raise the first four (:class:`ConversionError`); the conversion
    runner, ``storage.conversion``, records the next three for what happens around
    a converter: a file it cannot read, a worker that overruns or dies, a bug.
    Those seven are a document's ``error_reason``. The catalog pass
    (``storage.indexer``) refuses a file for the last two before it is listed; they
    appear only in a pass's or a job's errors.
    """

    #: The document needs a password (converters: PDF).
    ENCRYPTED = "encrypted"
    #: The parser could not make sense of the bytes (converters).
    CORRUPT = "corrupt"
    #: Over a size cap (converters, the runner's read cap), or out of memory (the runner).
    TOO_LARGE = "too_large"
    #: No converter reads it, or it is binary where text was expected (converters).
    UNSUPPORTED = "unsupported"
    #: The file could not be read off the shelf (the runner, the builder).
    UNREADABLE = "unreadable"
    #: The conversion took longer than the per-file timeout (the runner).
    TIMEOUT = "timeout"
    #: A converter bug, or a worker that died (the runner).
    ERROR = "error"
    #: A file name that is not UTF-8: the index stores paths as text (the catalog).
    INVALID_NAME = "invalid_name"
    #: A path whose URI would be too long to serve (the catalog).
    PATH_TOO_LONG = "path_too_long"


#: The reasons a converter itself may give; the rest belong to the runner and the catalog.
CONVERTER_REASONS = frozenset(
    {
        FailureReason.ENCRYPTED,
        FailureReason.CORRUPT,
        FailureReason.TOO_LARGE,
        FailureReason.UNSUPPORTED,
    }
)


def base_mime_type(mime_type: str) -> str:
    """Return ``mime_type`` lowercased and without parameters (``; charset=...``)."""
    return mime_type.split(";", 1)[0].strip().lower()


def extension_of(filename: str) -> str:
    """The lowercase extension with its dot (``""`` when there is none)."""
    return PurePosixPath(filename.replace("\\", "/")).suffix.lower()


@dataclass(frozen=True, slots=True)
class Source:
    """A file as a converter sees it: what it is called, what type it was detected as, its bytes.

    The same description goes to :meth:`Converter.accepts`, which decides from
    the type and extension alone (the catalog asks before any bytes are read, so
    ``data`` is empty then), and to :meth:`Converter.convert`.
    """

    mime_type: str
    extension: str  # lowercase, with its dot; "" when there is none
    filename: str = ""  # the file's own name, without folders
    data: bytes = b""
    #: Whether the converter may run OCR on pages that have no usable text. The first
    #: pass of a document never does (OCR is slow); it reports such pages in
    #: :attr:`Facts.ocr_pages`, and the builder queues a second pass with ``ocr`` set.
    ocr: bool = False

    @classmethod
    def of(cls, filename: str, mime_type: str, data: bytes = b"", *, ocr: bool = False) -> Source:
        """The source for a file named ``filename`` of ``mime_type``."""
        return cls(mime_type, extension_of(filename), filename, data, ocr)

    @property
    def base_mime_type(self) -> str:
        """The type lowercased and without parameters, for comparing."""
        return base_mime_type(self.mime_type)


@dataclass(frozen=True, slots=True)
class Representation:
    """One derived variant of a document; text variants are UTF-8 encoded."""

    mime_type: str
    data: bytes


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """A heading or bookmark: ``level`` is 1-based, ``page`` 1-based where known."""

    title: str
    level: int
    page: int | None


@dataclass(frozen=True, slots=True)
class Facts:
    """What a converter learned about a document, for the index and for listings.

    ``title``: PDF /Title (or XMP dc:title), else the first outline entry or
    heading; Markdown front matter ``title``, else the first heading; HTML
    ``<title>``, else the first ``<h1>``; JSON a top-level ``"title"`` string.
    ``description``: front matter / PDF /Subject / HTML meta description, else
    the start of the first paragraph of prose.
    """

    title: str | None = None
    description: str | None = None
    page_count: int | None = None
    language: str | None = None
    outline: tuple[OutlineEntry, ...] = ()
    metadata: Mapping[str, str] = field(default_factory=dict)
    #: Pages (1-based; 1 for a picture) with no usable text that OCR could read: set by
    #: a conversion without :attr:`Source.ocr`; empty once OCR has run, or when none need it.
    ocr_pages: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Segment:
    """A searchable piece of a document: one page, one section, or the whole.

    ``part`` is the query naming it ("pages=3", "section=intro"), or "" for text
    that belongs to the document itself (the text before the first heading, or a
    source without headings or pages).
    """

    part: str
    title: str | None
    text: str


Producer = Callable[[], bytes]


@dataclass(frozen=True)
class ConversionResult:
    """Facts plus a producer for each derived variant, in the canonical order of D4.

    Producers run only when asked (:meth:`produce`), so a format nobody wants
    yet — typically the rendered PDF, most of a text document's conversion
    cost (DESIGN D12) — is never computed. ``formats`` never holds the
    source's own type: the storage layer serves the original file itself.
    """

    facts: Facts
    producers: Mapping[str, Producer]
    # The text to search, page by page or section by section (empty: nothing to search).
    segments: Callable[[], tuple[Segment, ...]] = tuple

    @property
    def formats(self) -> tuple[str, ...]:
        """The MIME types this result can produce."""
        return tuple(self.producers)

    def produce(self, formats: Collection[str] | None = None) -> tuple[Representation, ...]:
        """The variants of ``formats`` (all when None), computed now, in canonical order."""
        return tuple(
            Representation(mime_type, producer())
            for mime_type, producer in self.producers.items()
            if formats is None or mime_type in formats
        )

    @cached_property
    def representations(self) -> tuple[Representation, ...]:
        """Every derived variant (computes them all; the storage layer uses :meth:`produce`)."""
        return self.produce()

    def get(self, mime_type: str) -> Representation | None:
        """The representation of ``mime_type``, if one is derived."""
        producer = self.producers.get(mime_type)
        return Representation(mime_type, producer()) if producer else None


class ConversionError(Exception):
    """A document could not be converted.

    ``reason`` is one of :data:`CONVERTER_REASONS` (the storage layer records
    it; the document stays listed with its original only); ``message`` says
    what happened, for people.
    """

    def __init__(self, reason: FailureReason, message: str) -> None:
        if reason not in CONVERTER_REASONS:
            raise ValueError(
                f"unknown conversion error reason {reason!r}; "
                f"use one of {sorted(CONVERTER_REASONS)}"
            )
        super().__init__(f"{reason}: {message}")
        self.reason = FailureReason(reason)
        self.message = message

    def __reduce__(self) -> tuple[type[ConversionError], tuple[FailureReason, str]]:
        # Conversions run in a process pool: the error must survive pickling.
        return (type(self), (self.reason, self.message))


@runtime_checkable
class Converter(Protocol):
    """One source kind (PDF, Markdown, ...).

    ``version`` is part of the storage cache key (source sha256, name, version):
    bump it whenever the output for the same input changes.
    """

    name: str

    @property
    def version(self) -> str:
        """Changes whenever the output for the same input would (a class attribute, mostly;
        a property where a setting changes the output, as ``DOCSHELF_IMAGE_GPS`` does)."""
        ...

    def accepts(self, source: Source) -> bool:
        """Cheap check from the source's MIME type and extension; never reads ``data``."""
        ...

    def convert(self, source: Source) -> ConversionResult:
        """Parse ``source.data``; raise :class:`ConversionError` and nothing else on failure.

        The variants are produced later by :meth:`ConversionResult.produce`, which
        may raise :class:`ConversionError` too.
        """
        ...
