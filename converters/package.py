"""ZIP packages — OOXML (DOCX, PPTX, XLSX), ODF, EPUB and ``.zip`` archives — opened within bounds.

A ZIP says up front how large each member unpacks to, and :mod:`zipfile` never
inflates a member past that declared size (it raises "Bad CRC-32" instead), so
the central directory is a real bound: :func:`open_package` checks the member
count, the declared total and each large member's compression ratio before a
single byte is inflated, and refuses a bomb with ``too_large`` and a reason.
Libraries that read a package whole (python-pptx inflates every part when it
opens one) are handed the bytes only after this check.
"""

from __future__ import annotations

import io
import zipfile
import zlib

from docshelf.converters.base import ConversionError, FailureReason
from docshelf.converters.failures import conversion_failure

#: Members one package may hold (an e-book has hundreds; a bomb has millions).
MAX_MEMBERS = 10_000
#: What all members together may unpack to.
MAX_UNPACKED_BYTES = 512 * 1024 * 1024
#: How much a member may expand (deflate tops out near 1032:1 on zeros; real XML
#: and text stay well under 100:1) — checked only for members of :data:`RATIO_FLOOR` or more.
MAX_RATIO = 250
RATIO_FLOOR = 4 * 1024 * 1024


def open_package(
    data: bytes,
    kind: str,
    *,
    max_members: int = MAX_MEMBERS,
    max_unpacked: int = MAX_UNPACKED_BYTES,
) -> zipfile.ZipFile:
    """``data`` as a ZIP package of ``kind`` ("PPTX", "EPUB"...), refused if it is a bomb.

    Raises :class:`ConversionError`: ``corrupt`` when it is no ZIP, ``too_large``
    (with what was over which limit) when it holds too many members, unpacks to
    too much, or a member expands more than :data:`MAX_RATIO` to 1.
    """
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        NotImplementedError,  # a member needing a newer ZIP version ("zip file version 6.4")
        EOFError,
        ValueError,
        OSError,
    ) as exc:
        raise conversion_failure(exc, f"not a {kind} (ZIP) package: {exc}") from exc
    members = package.infolist()
    if len(members) > max_members:
        raise ConversionError(
            FailureReason.TOO_LARGE,
            f"the {kind} package has {len(members)} members, over the limit of {max_members}",
        )
    unpacked = sum(member.file_size for member in members)
    if unpacked > max_unpacked:
        raise ConversionError(
            FailureReason.TOO_LARGE,
            f"the {kind} package unpacks to {unpacked} bytes, over the limit of {max_unpacked}",
        )
    for member in members:
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size >= RATIO_FLOOR and ratio > MAX_RATIO:
            raise ConversionError(
                FailureReason.TOO_LARGE,
                f"{member.filename!r} in the {kind} package expands {ratio:.0f} to 1 "
                f"(over {MAX_RATIO} to 1): a ZIP bomb",
            )
    return package


def read_member(
    package: zipfile.ZipFile, name: str, kind: str, *, limit: int | None = None
) -> bytes:
    """The bytes of member ``name``; ``corrupt`` when it is missing or damaged, ``too_large``
    when it declares more than ``limit`` bytes (checked before it is inflated)."""
    info = package.NameToInfo.get(name)
    if limit is not None and info is not None and info.file_size > limit:
        raise ConversionError(
            FailureReason.TOO_LARGE,
            f"{name!r} in the {kind} unpacks to {info.file_size} bytes, over the limit of {limit}",
        )
    try:
        return package.read(name)
    except KeyError as exc:
        raise ConversionError(FailureReason.CORRUPT, f"the {kind} package has no {name!r}") from exc
    except (
        zipfile.BadZipFile,
        zlib.error,  # a damaged deflate stream
        NotImplementedError,
        OSError,
        EOFError,
        ValueError,
    ) as exc:
        raise conversion_failure(exc, f"{name!r} in the {kind} package: {exc}") from exc


def optional_member(
    package: zipfile.ZipFile, name: str, kind: str, *, limit: int | None = None
) -> bytes | None:
    """The bytes of member ``name`` (as :func:`read_member`), or None when there is none such."""
    if name not in package.NameToInfo:
        return None
    return read_member(package, name, kind, limit=limit)
