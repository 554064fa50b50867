"""MIME type detection from a file's first bytes and its name, together.

libmagic is right about formats it knows by a signature (PDF, ZIP and DOCX,
PNG, ...) and unreliable about which kind of *text* a text file is: for text it
guesses from what the head contains, and documentation trips those guesses all
the time. An ``import { X } from "..."`` line in a code sample makes a Markdown
page ``application/javascript``, ``fn main() {`` makes it ``text/x-c``, a
comment before ``<svg>`` makes a drawing ``text/html``. The extension is what
the author said the file is. So the two decide together, in this order:

1. An empty file has no content to go by: its extension's type (the table's,
   else the system's), else ``text/plain``.
2. A format signature wins over the name: libmagic named a non-text format and
   found the bytes binary, or named one of :data:`TEXT_SIGNATURE_TYPES`. A ``.md`` that is
   really a PDF is a PDF; a ``.ts`` that is an MPEG transport stream is video.
3. Otherwise the content is text (libmagic found a text encoding), or bytes that
   match no signature, and an extension in :data:`EXTENSION_TYPES` decides:
   a ``.md`` is Markdown whatever code it quotes. A ``.json`` is JSON whether or
   not its head parses: detection sees only the head, and a broken JSON file is
   the JSON converter's to report (``corrupt``), not detection's to relabel.
4. An extension the table does not know: text keeps libmagic's name (a ``.pdf``
   that is really text is ``text/plain``); unrecognised bytes take the system's
   guess from the name (a truncated ``.png`` is still ``image/png``), else
   ``application/octet-stream``. The system's table is not asked about text: it
   varies by machine and maps ``.ts`` to video.
5. A container says what it is made of, its name says what it is. A ZIP named
   ``.xlsx`` is a workbook, an OLE file named ``.msg`` a mail, an MP4 named
   ``.m4a`` audio (:data:`CONTAINER_EXTENSIONS`: libmagic often sees only the
   container in the first 8 KiB, as with a DOCX whose ``[Content_Types].xml``
   comes late); XML whose root is ``<rss>``, Atom's ``<feed>`` or RSS 1.0's
   ``<rdf:RDF>`` is a feed, whatever it is named. Nothing is unpacked to decide.

:data:`EXTENSION_TYPES` is the one place an extension names a type; every type
in it is textual (:func:`is_textual`). Changing what an unchanged file is
detected as means bumping :data:`DETECTION_VERSION`.
"""

from __future__ import annotations

import mimetypes
import re
from functools import lru_cache

import magic

from docshelf.converters.base import TEXT_PLAIN, extension_of
from docshelf.converters.formats import is_textual

HEAD_BYTES = 8192

#: The version of the rule above and of :data:`EXTENSION_TYPES`. Bump it whenever
#: a change makes an unchanged file detect as another type: the index records
#: the type a file was given, and only a new version tells the indexer that
#: files it skips as unchanged (same size and mtime) must be detected again.
#: Version 1 let libmagic's guess win for text outside ``text/*``; version 2 did not
#: look inside containers (rule 5) nor know the families of issue 25.
DETECTION_VERSION = 3

OCTET_STREAM = "application/octet-stream"

#: The textual families, by the extension that names them (lowercase, with the dot).
EXTENSION_TYPES: dict[str, str] = {
    # Markdown; MDX is Markdown with JSX in it, which the Markdown converter unwraps.
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".mdown": "text/markdown",
    ".mkd": "text/markdown",
    ".mkdn": "text/markdown",
    ".mdx": "text/markdown",
    # Tables.
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".tab": "text/tab-separated-values",
    # Data.
    ".json": "application/json",
    ".xml": "application/xml",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
    # Web pages and drawings.
    ".html": "text/html",
    ".htm": "text/html",
    ".xhtml": "application/xhtml+xml",
    ".svg": "image/svg+xml",
    ".css": "text/css",
    # Source code (text/javascript per RFC 9239; the rest have no registered type).
    ".py": "text/x-python",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".cjs": "text/javascript",
    ".ts": "text/x-typescript",
    ".mts": "text/x-typescript",
    ".cts": "text/x-typescript",
    ".sh": "text/x-shellscript",
    ".c": "text/x-c",
    ".h": "text/x-c",
    # Prose.
    ".txt": TEXT_PLAIN,
    ".text": TEXT_PLAIN,
    ".log": TEXT_PLAIN,
    ".rst": "text/x-rst",
    ".org": "text/x-org",
    ".adoc": "text/asciidoc",
    ".asciidoc": "text/asciidoc",
    # Notebooks and feeds are JSON and XML with a type of their own.
    ".ipynb": "application/x-ipynb+json",
    ".rss": "application/rss+xml",
    ".atom": "application/atom+xml",
}

_OOXML = "application/vnd.openxmlformats-officedocument"
_ODF = "application/vnd.oasis.opendocument"
_ZIP_FORMATS = {
    ".docx": f"{_OOXML}.wordprocessingml.document",
    ".pptx": f"{_OOXML}.presentationml.presentation",
    ".xlsx": f"{_OOXML}.spreadsheetml.sheet",
    ".xlsm": "application/vnd.ms-excel.sheet.macroenabled.12",
    ".odt": f"{_ODF}.text",
    ".odp": f"{_ODF}.presentation",
    ".ods": f"{_ODF}.spreadsheet",
    ".epub": "application/epub+zip",
}
_OLE_FORMATS = {
    ".xls": "application/vnd.ms-excel",
    ".msg": "application/vnd.ms-outlook",
    ".doc": "application/msword",
    ".ppt": "application/vnd.ms-powerpoint",
}
#: Rule 5: what a container libmagic named is, by the extension of its file.
CONTAINER_EXTENSIONS: dict[str, dict[str, str]] = {
    "application/zip": _ZIP_FORMATS,
    "application/x-ole-storage": _OLE_FORMATS,
    "application/cdfv2": _OLE_FORMATS,
    "application/vnd.ms-office": _OLE_FORMATS,
    "application/octet-stream": {**_ZIP_FORMATS, **_OLE_FORMATS},
    "video/mp4": {".m4a": "audio/mp4", ".m4b": "audio/mp4"},
    "text/plain": {".eml": "message/rfc822"},
}
#: Rule 5: the root elements that make XML a feed, and the namespaces that must come with them.
_FEED_ROOT = re.compile(rb"<(?:[\w.-]+:)?(rss|feed|RDF)[\s>/]")
_FEED_TYPES = {
    b"rss": ("application/rss+xml", b""),
    b"feed": ("application/atom+xml", b"http://www.w3.org/2005/Atom"),
    b"RDF": ("application/rss+xml", b"http://purl.org/rss/1.0/"),
}
_XML_TYPES = frozenset({"application/xml", "text/xml", "text/html"})

#: Formats whose signature is itself text (``%PDF-``, ``%!PS``, ``{\rtf`` at the
#: start). libmagic names them from that marker, not from a guess, but may call
#: their bytes text (a small PDF can be all Latin-1): the signature still wins.
TEXT_SIGNATURE_TYPES = frozenset({"application/pdf", "application/postscript", "text/rtf"})

_EMPTY = "application/x-empty"


@lru_cache(maxsize=1)
def _magic() -> magic.Magic:
    return magic.Magic(mime=True, mime_encoding=True)


def _libmagic_type(head: bytes) -> tuple[str, str]:
    """libmagic's (MIME type, charset) for ``head``; the charset is ``"binary"`` for non-text."""
    if not head:
        return _EMPTY, "binary"
    answer = _magic().from_buffer(head[:HEAD_BYTES])
    mime_type, _, parameters = answer.partition(";")
    charset = parameters.strip().lower().removeprefix("charset=")
    return mime_type.strip().lower(), charset


def _extension_type(filename: str) -> str | None:
    """The type :data:`EXTENSION_TYPES` gives ``filename``'s extension, if any."""
    return EXTENSION_TYPES.get(extension_of(filename))


def _has_signature(mime_type: str, charset: str) -> bool:
    """Whether libmagic recognised a format by its signature, rather than guessed at text."""
    if mime_type in TEXT_SIGNATURE_TYPES:
        return True
    if charset != "binary" or mime_type in (OCTET_STREAM, _EMPTY):
        return False
    return not is_textual(mime_type)


def _plainly_text(head: bytes) -> bool:
    """UTF-8 text with no format signature in it: libmagic could only guess at its kind.

    libmagic spends 0.5-1.3 ms guessing what kind of text a head is, and for a
    file with a known extension the guess is thrown away (rule 3) unless it
    found a signature, which UTF-8 text without these markers cannot carry.
    Skipping it keeps the catalog pass at thousands of files a second.
    """
    if b"\x00" in head or head.startswith((b"%!PS", b"{\\rtf")) or b"%PDF-" in head[:1024]:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3 and exc.reason == "unexpected end of data"
    return True


def detect_mime(head: bytes, filename: str) -> str:
    """The MIME type of ``filename``, whose first bytes are ``head`` (rule: module docstring)."""
    found = _detect(head, filename)
    refined = CONTAINER_EXTENSIONS.get(found, {}).get(extension_of(filename))
    if refined:
        return refined
    if found in _XML_TYPES and extension_of(filename) in (".xml", ""):
        return _feed_type(head) or found
    return found


def _detect(head: bytes, filename: str) -> str:
    """Rules 1-4 of the module docstring."""
    by_extension = _extension_type(filename)
    if by_extension and head and _plainly_text(head):
        return by_extension
    detected, charset = _libmagic_type(head)
    if detected == _EMPTY:
        return _extension_type(filename) or _system_type(filename) or TEXT_PLAIN
    if _has_signature(detected, charset):
        return detected
    if by_extension:
        return by_extension
    if detected == OCTET_STREAM:
        return _system_type(filename) or OCTET_STREAM
    return detected


def _feed_type(head: bytes) -> str | None:
    """The feed type of XML whose first element is an RSS, Atom or RSS 1.0 root (rule 5)."""
    start = re.sub(rb"<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>", b"", head[:2048], flags=re.S)
    root = _FEED_ROOT.match(start.lstrip())
    if root is None:
        return None
    feed_type, namespace = _FEED_TYPES[root.group(1)]
    return feed_type if namespace in head else None


def _system_type(filename: str) -> str | None:
    guessed, _ = mimetypes.guess_type(filename, strict=False)
    return guessed
