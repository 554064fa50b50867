"""Archives (ZIP; tar, plain or gzip/bzip2/xz-compressed): members as sections, within bounds.

The members of an archive are parts of it, not resources of their own: the
Markdown lists every member (path, type, size, what happened), then gives each
converted member a section under ``## <member path>`` (:mod:`converters.members`),
so ``bundle.zip?section=docsguidemd`` reads ``docs/guide.md``. Members are
converted by the same converters as any file on the shelf. Nothing is ever
extracted to disk; every member is read into memory only if it is converted.

Bounds — an archive over one of these is refused whole (``too_large``, naming
the limit), and no other file is affected:

* the member count and the total unpacked size, checked before inflating: a
  ZIP's declared sizes (:func:`converters.package.open_package`, which also
  refuses a member expanding more than 250:1), a tar's header sizes as each
  header is read; the bytes a tar's decompressor yields are counted as they
  stream through (a gzip stream can expand about 1000:1), with the same ratio
  limit, and a header may not run past its member by more than 1 MB (a huge
  pax or long-name header would otherwise be read into memory whole).

A member is listed without being converted (the rest still are) when its path
is unsafe (``..``, absolute, a drive letter, NUL: never read), it is a link,
device or pipe, it is encrypted, it is larger than :attr:`ArchiveLimits.max_member_bytes`,
the archive's conversion budget is spent (members and bytes, shared with the
archives inside it), or it is an archive nested deeper than
:attr:`ArchiveLimits.max_depth`. A gzip/bzip2/xz file that is not a tar is read
as an archive of one member: the file it compresses.
"""

from __future__ import annotations

import bz2
import io
import lzma
import mimetypes
import re
import stat
import zipfile
import zlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from docshelf.converters.assemble import parsed_markdown_result
from docshelf.converters.base import ConversionError, ConversionResult, Facts, FailureReason, Source
from docshelf.converters.detect import EXTENSION_TYPES, HEAD_BYTES, detect_mime
from docshelf.converters.failures import describe
from docshelf.converters.markdown.model import parse_markdown
from docshelf.converters.members import (
    ConvertedMember,
    Member,
    convert_members,
    display_path,
    human_size,
    member_entries,
    members_markdown,
)
from docshelf.converters.package import (
    MAX_MEMBERS,
    MAX_RATIO,
    MAX_UNPACKED_BYTES,
    RATIO_FLOOR,
    open_package,
)
from docshelf.converters.textutil import collapse_whitespace

if TYPE_CHECKING:  # tarfile and gzip are imported when a tar is read
    import tarfile

ZIP_MIME_TYPES = frozenset({"application/zip", "application/x-zip-compressed", "application/x-zip"})
TAR_MIME_TYPES = frozenset(
    {
        "application/x-tar",
        "application/x-gtar",
        "application/x-ustar",
        "application/gzip",
        "application/x-gzip",
        "application/x-bzip2",
        "application/x-xz",
        "application/x-compressed-tar",
        "application/x-bzip-compressed-tar",
        "application/x-xz-compressed-tar",
    }
)
ARCHIVE_EXTENSIONS = frozenset(
    {".zip", ".tar", ".tgz", ".gz", ".tbz", ".tbz2", ".bz2", ".txz", ".xz"}
)
#: ZIP-based documents: they belong to their own converters, never read as archives
#: (a .pptx without a converter is not a folder of XML parts to the reader).
PACKAGE_EXTENSIONS = frozenset(
    {
        *(".docx", ".docm", ".dotx", ".dotm", ".xlsx", ".xlsm", ".xltx", ".xltm", ".xlsb"),
        *(".pptx", ".pptm", ".potx", ".potm", ".ppsx", ".ppsm", ".vsdx", ".epub"),
        *(".odt", ".ods", ".odp", ".odg", ".odf", ".ott", ".ots", ".otp", ".otg"),
    }
)
#: How far past a tar member's data the next member's headers may reach.
HEADER_ALLOWANCE = 1024 * 1024
#: tarfile.BLOCKSIZE: a member's data is padded to whole blocks.
_TAR_BLOCK = 512
#: How much a byte-counting reader hands on at once.
_CHUNK = 64 * 1024
#: The heading level of a member's section.
MEMBER_LEVEL = 2
#: Members named in the description.
_DESCRIBED_MEMBERS = 5
_DRIVE = re.compile(r"^[A-Za-z]:")
_ZIP_SIGNATURES = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
_COMPRESSIONS: tuple[tuple[bytes, str], ...] = (
    (b"\x1f\x8b", "gz"),
    (b"BZh", "bz2"),
    (b"\xfd7zXZ\x00", "xz"),
)
_COMPRESSION_NAMES = {"gz": "gzip", "bz2": "bzip2", "xz": "xz"}
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    NotImplementedError,
    RuntimeError,
    EOFError,
    OSError,
    ValueError,
    zlib.error,
    lzma.LZMAError,
)


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    """The bounds of one archive and the archives inside it (module docstring)."""

    max_members: int = MAX_MEMBERS
    max_unpacked: int = MAX_UNPACKED_BYTES
    max_ratio: int = MAX_RATIO
    ratio_floor: int = RATIO_FLOOR
    #: Larger members are listed, not converted.
    max_member_bytes: int = 32 * 1024 * 1024
    #: Members converted, all nesting levels together; the rest are listed.
    max_converted: int = 200
    #: Bytes of members converted, all nesting levels together.
    max_converted_bytes: int = 128 * 1024 * 1024
    #: The archive on the shelf is level 1; an archive inside one at this level is listed.
    max_depth: int = 2


@dataclass(slots=True)
class _Walk:
    """One conversion of an archive on the shelf, with the archives inside it."""

    limits: ArchiveLimits
    depth: int = 0
    converted: int = 0
    converted_bytes: int = 0

    def admit(self, size: int) -> str | None:
        """Book a member of ``size`` bytes for conversion; or why it is only listed."""
        limits = self.limits
        if size > limits.max_member_bytes:
            return f"over the {human_size(limits.max_member_bytes)} limit for converting a member"
        if self.converted >= limits.max_converted:
            return f"over the limit of {limits.max_converted} members converted per archive"
        if self.converted_bytes + size > limits.max_converted_bytes:
            total = human_size(limits.max_converted_bytes)
            return f"over the {total} limit of member bytes converted per archive"
        self.converted += 1
        self.converted_bytes += size
        return None


#: The conversion under way in this context: nested archives share its depth and budget.
_WALK: ContextVar[_Walk | None] = ContextVar("docshelf_archive_walk", default=None)


@dataclass
class _Listing:
    """What a reader found: its kind ("ZIP", "tar.gz"), comment, and members as it streams."""

    kind: str
    members: Iterator[Member]
    comment: str = ""
    single: bool = False
    sizes: list[int] = field(default_factory=list)


class ArchiveConverter:
    """Converts ZIP and tar archives, member by member, through the registry."""

    name = "archive"
    version = "1"

    def __init__(self, limits: ArchiveLimits | None = None) -> None:
        self.limits = limits or ArchiveLimits()

    def accepts(self, source: Source) -> bool:
        if source.extension in PACKAGE_EXTENSIONS:
            return False
        return (
            source.extension in ARCHIVE_EXTENSIONS
            or source.base_mime_type in ZIP_MIME_TYPES
            or source.base_mime_type in TAR_MIME_TYPES
        )

    def convert(self, source: Source) -> ConversionResult:
        walk = _WALK.get()
        if walk is None:
            walk = _Walk(self.limits, depth=1)
            token = _WALK.set(walk)
            try:
                return _convert(source, walk)
            finally:
                _WALK.reset(token)
        if walk.depth >= walk.limits.max_depth:
            raise ConversionError(
                FailureReason.TOO_LARGE,
                f"an archive inside an archive is read {walk.limits.max_depth} levels deep at most",
            )
        walk.depth += 1
        try:
            return _convert(source, walk)
        finally:
            walk.depth -= 1


def _convert(source: Source, walk: _Walk) -> ConversionResult:
    listing = _open(source, walk)
    converted = convert_members(_tallied(listing), level=MEMBER_LEVEL)
    markdown, parts = members_markdown(converted, level=MEMBER_LEVEL)
    model = parse_markdown(markdown)
    total = sum(listing.sizes)
    metadata = {
        "format": listing.kind.lower(),
        "files": str(len(converted)),
        "unpacked_bytes": str(total),
    }
    if listing.comment:
        metadata["comment"] = listing.comment
    facts = Facts(
        title=_comment_title(listing.comment),
        description=_description(listing, converted, total),
        outline=model.headings,
        metadata=metadata,
    )
    data = {
        "format": listing.kind.lower(),
        "files": len(converted),
        "unpacked_bytes": total,
        "members": member_entries(converted, parts),
    }
    return parsed_markdown_result(source, facts, markdown, model, data=data)


def _tallied(listing: _Listing) -> Iterator[Member]:
    """The members, their sizes noted for the description as they pass."""
    for member in listing.members:
        listing.sizes.append(member.size or 0)
        yield member


def _open(source: Source, walk: _Walk) -> _Listing:
    """The reader for ``source``: ZIP by its signature or its type (not a tar's); tar otherwise."""
    data = source.data
    if data.startswith(_ZIP_SIGNATURES) or (
        source.base_mime_type in ZIP_MIME_TYPES
        and not _compression_of(data)
        and data[257:262] != b"ustar"
    ):
        return _zip_listing(data, walk)
    return _tar_listing(data, source.filename, walk)


# ZIP


def _zip_listing(data: bytes, walk: _Walk) -> _Listing:
    limits = walk.limits
    package = open_package(
        data, "ZIP", max_members=limits.max_members, max_unpacked=limits.max_unpacked
    )
    return _Listing("ZIP", _zip_members(package, walk), comment=_decoded(package.comment))


def _zip_members(package: zipfile.ZipFile, walk: _Walk) -> Iterator[Member]:
    for info in package.infolist():
        if not info.filename.endswith("/"):  # folders carry nothing (is_dir fails on "")
            yield _zip_member(package, info, walk)


def _zip_member(package: zipfile.ZipFile, info: zipfile.ZipInfo, walk: _Walk) -> Member:
    path, size = info.filename, info.file_size
    details = {"compressed_size": info.compress_size}
    skipped = unsafe_path(info.orig_filename)
    if skipped is None and stat.S_ISLNK(info.external_attr >> 16):
        skipped = "symbolic link, not followed"
    if skipped is None and info.flag_bits & 0x1:
        skipped = "encrypted (needs a password)"
    if skipped is not None:
        return Member(path, size, skipped=skipped, mime_type=type_from_name(path), details=details)
    skipped = walk.admit(size)
    try:
        if skipped is None:
            return Member(path, size, data=package.read(info), details=details)
        with package.open(info) as member:
            head = member.read(HEAD_BYTES)
    except _ZIP_ERRORS as exc:
        damaged = f"damaged: {describe(exc)}"
        return Member(path, size, skipped=damaged, mime_type=type_from_name(path), details=details)
    return Member(path, size, skipped=skipped, mime_type=detect_mime(head, path), details=details)


# tar


def _tar_errors() -> tuple[type[Exception], ...]:
    """What reading a damaged tar or compressed stream raises."""
    import tarfile

    return (tarfile.TarError, EOFError, OSError, zlib.error, lzma.LZMAError, ValueError)


def _tar_listing(data: bytes, filename: str, walk: _Walk) -> _Listing:
    import tarfile

    compression = _compression_of(data)
    kind = f"tar.{compression}" if compression else "tar"
    reader = _CountingReader(data, compression, walk.limits, kind)
    try:
        # Read as the members stream past; in memory, nothing to close.
        archive = tarfile.open(fileobj=reader, mode="r|")  # noqa: SIM115
    except _tar_errors() as exc:
        if compression is None:
            raise ConversionError(
                FailureReason.CORRUPT, f"not a tar archive: {describe(exc)}"
            ) from exc
        if not _not_a_tar(exc):
            raise _damaged_stream(compression, exc) from exc
        return _single_file(data, compression, filename, walk)
    return _Listing(kind, _tar_members(archive, reader, walk, kind))


def _not_a_tar(exc: Exception) -> bool:
    """Whether tarfile refused the first header (rather than the decompressor its bytes)."""
    import tarfile

    return isinstance(exc, tarfile.ReadError) and not str(exc).startswith("zlib error")


def _damaged_stream(compression: str, exc: Exception) -> ConversionError:
    name = _COMPRESSION_NAMES[compression]
    return ConversionError(FailureReason.CORRUPT, f"the {name} data is damaged: {describe(exc)}")


def _tar_members(
    archive: tarfile.TarFile, reader: _CountingReader, walk: _Walk, kind: str
) -> Iterator[Member]:
    limits = walk.limits
    count = declared = 0
    members = iter(archive)
    while True:
        try:
            info = next(members, None)
            if info is None:
                return
            count += 1
            declared += info.size
            if count > limits.max_members:
                raise ConversionError(
                    FailureReason.TOO_LARGE,
                    f"the {kind} archive has more than {limits.max_members} members (the limit)",
                )
            if declared > limits.max_unpacked:
                raise ConversionError(
                    FailureReason.TOO_LARGE,
                    f"the {kind} archive unpacks to at least {declared} bytes, "
                    f"over the limit of {limits.max_unpacked}",
                )
            padded = -(-info.size // _TAR_BLOCK) * _TAR_BLOCK
            reader.ceiling = info.offset_data + padded + HEADER_ALLOWANCE
            if info.isdir():
                continue
            member = _tar_member(archive, info, walk)
        except _tar_errors() as exc:
            raise ConversionError(
                FailureReason.CORRUPT, f"the {kind} archive is damaged: {describe(exc)}"
            ) from exc
        yield member


def _tar_member(archive: tarfile.TarFile, info: tarfile.TarInfo, walk: _Walk) -> Member:
    path, size = info.name, info.size
    skipped = unsafe_path(path)
    if skipped is None and not info.isreg():
        skipped = _not_a_file(info)
    if skipped is not None:
        return Member(
            path,
            None if not info.isreg() else size,
            skipped=skipped,
            mime_type=type_from_name(path),
        )
    skipped = walk.admit(size)
    stream = archive.extractfile(info)
    if stream is None:  # a regular file always has a stream; kept for the type checker
        return Member(path, size, skipped="not readable", mime_type=type_from_name(path))
    if skipped is not None:
        return Member(
            path, size, skipped=skipped, mime_type=detect_mime(stream.read(HEAD_BYTES), path)
        )
    return Member(path, size, data=stream.read())


def _not_a_file(info: tarfile.TarInfo) -> str:
    if info.issym():
        return "symbolic link, not followed"
    if info.islnk():
        return "hard link, not followed"
    if info.issparse():
        return "sparse file, skipped"
    return "device or pipe, skipped"


def _single_file(data: bytes, compression: str, filename: str, walk: _Walk) -> _Listing:
    """A compressed file that is not a tar: an archive of the one file it holds."""
    limits = walk.limits
    kind = _COMPRESSION_NAMES[compression]
    name = _decompressed_name(filename, compression)
    reader = _CountingReader(data, compression, limits, kind)
    reader.ceiling = limits.max_unpacked
    chunks: list[bytes] = []
    size = 0
    try:
        while size <= limits.max_member_bytes and (chunk := reader.read(_CHUNK)):
            chunks.append(chunk)
            size += len(chunk)
    except _tar_errors() as exc:
        raise _damaged_stream(compression, exc) from exc
    content = b"".join(chunks)
    skipped = walk.admit(size)
    member = (
        Member(name, size, data=content)
        if skipped is None
        else Member(name, None, skipped=skipped, mime_type=detect_mime(content[:HEAD_BYTES], name))
    )
    return _Listing(f"{kind}-compressed file", iter([member]), single=True)


class _CountingReader(io.RawIOBase):
    """The decompressed bytes of ``data``, counted as they stream, within the limits.

    Refuses (``too_large``) past the archive's unpacked limit, past
    :attr:`ceiling` (set per member by the tar reader: headers that run on),
    and once enough has been read, an expansion over the ratio limit.
    """

    def __init__(
        self, data: bytes, compression: str | None, limits: ArchiveLimits, kind: str
    ) -> None:
        super().__init__()
        self.raw = io.BytesIO(data)
        self.stream = _decompressor(self.raw, compression)
        self.limits = limits
        self.kind = kind
        self.count = 0
        self.ceiling = HEADER_ALLOWANCE

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        want = _CHUNK if size is None or size < 0 else min(size, _CHUNK)
        chunk = self.stream.read(want)
        self.count += len(chunk)
        self._check()
        return chunk

    def _check(self) -> None:
        limits = self.limits
        if self.count > limits.max_unpacked:
            raise ConversionError(
                FailureReason.TOO_LARGE,
                f"the {self.kind} archive unpacks to more than {limits.max_unpacked} bytes, "
                f"over the limit of {limits.max_unpacked}",
            )
        if self.count > self.ceiling:
            raise ConversionError(
                FailureReason.TOO_LARGE,
                f"the {self.kind} archive has a header of more than {HEADER_ALLOWANCE} bytes "
                "(the limit)",
            )
        consumed = max(self.raw.tell(), 1)
        ratio = self.count / consumed
        if self.count >= limits.ratio_floor and ratio > limits.max_ratio:
            raise ConversionError(
                FailureReason.TOO_LARGE,
                f"the {self.kind} archive expands {ratio:.0f} to 1 "
                f"(over {limits.max_ratio} to 1): a compression bomb",
            )


def _decompressor(raw: io.BytesIO, compression: str | None) -> io.BufferedIOBase:
    if compression == "gz":
        import gzip

        return gzip.GzipFile(fileobj=raw, mode="rb")
    if compression == "bz2":
        return bz2.BZ2File(raw, mode="rb")
    if compression == "xz":
        return lzma.LZMAFile(raw, mode="rb")
    return raw


def _compression_of(data: bytes) -> str | None:
    return next((name for magic, name in _COMPRESSIONS if data.startswith(magic)), None)


def _decompressed_name(filename: str, compression: str) -> str:
    """``notes.md.gz`` → ``notes.md``; ``x.tgz`` → ``x.tar``."""
    path = PurePosixPath(filename or "file")
    suffix = path.suffix.lower()
    if suffix in (".tgz", ".tbz", ".tbz2", ".txz"):
        return path.stem + ".tar"
    if suffix == f".{compression}":
        return path.stem
    return path.name


# paths, types, facts


def unsafe_path(path: str) -> str | None:
    """Why a member path is unsafe to use (and its member never read), or None.

    Absolute paths, drive letters, ``..`` and NUL would escape (or confuse)
    any folder the archive were unpacked into; docshelf never unpacks, but a
    member named so is hostile or broken, and naming it as a part is no help.
    """
    if "\x00" in path:
        return "unsafe path (NUL in the name)"
    if path.startswith(("/", "\\")) or _DRIVE.match(path):
        return "unsafe path (absolute)"
    if ".." in re.split(r"[/\\]", path):
        return "unsafe path (..)"
    return None


def type_from_name(path: str) -> str | None:
    """A member's type from its name alone (for members never read)."""
    extension = PurePosixPath(path).suffix.lower()
    return EXTENSION_TYPES.get(extension) or mimetypes.guess_type(path, strict=False)[0]


def _decoded(comment: bytes) -> str:
    try:
        text = comment.decode("utf-8")
    except UnicodeDecodeError:
        text = comment.decode("cp437")
    return collapse_whitespace(text)[:1000]


def _comment_title(comment: str) -> str | None:
    """An archive comment reads as a title when it is one short line of words."""
    if comment and len(comment) <= 100 and any(char.isalpha() for char in comment):
        return comment
    return None


def _description(listing: _Listing, converted: list[ConvertedMember], total: int) -> str:
    if listing.single:
        return f"{listing.kind} ({human_size(total)}): {display_path(converted[0].member.path)}"
    count = len(converted)
    if not count:
        return f"{listing.kind} archive, empty"
    names = [display_path(c.member.path) for c in converted[:_DESCRIBED_MEMBERS]]
    shown = ", ".join(names) + (", …" if count > _DESCRIBED_MEMBERS else "")
    files = "1 file" if count == 1 else f"{count} files"
    return f"{listing.kind} archive, {files} ({human_size(total)}): {shown}"
