"""Document-level facts of a PDF: info dictionary, XMP, language (outline: pdfoutline).

Metadata in the wild is often broken (dangling references, undecodable XMP,
malformed dates); every reader here tolerates that and returns what it could
read, because a PDF with bad metadata is still a document worth serving.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pypdf import PdfReader
from pypdf.generic import ByteStringObject

from docshelf.converters.declared import declared_text, declared_title
from docshelf.converters.textutil import collapse_whitespace

#: Document-info keys we publish, under the names docshelf uses.
INFO_KEYS: Mapping[str, str] = {
    "/Title": "title",
    "/Author": "author",
    "/Subject": "subject",
    "/Keywords": "keywords",
    "/Creator": "creator",
    "/Producer": "producer",
    "/CreationDate": "created",
    "/ModDate": "modified",
}
_DATE_KEYS = frozenset({"created", "modified"})
_PDF_DATE = re.compile(
    r"^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?"
    r"\s*(?:(Z)|([+\-])(\d{2})'?(\d{2})?'?)?"
)

# On damaged files pypdf raises far more than PdfReadError while resolving
# objects (KeyError, TypeError, AttributeError, ValueError, UnicodeDecodeError,
# RecursionError ...). Metadata is optional, so its readers catch them all.
READ_ERRORS: tuple[type[Exception], ...] = (Exception,)


@dataclass(frozen=True, slots=True)
class PdfMetadata:
    """Metadata as strings; ``title``/``subject`` also stand alone for Facts, as declared
    unless they are placeholders ("(anonymous)", "untitled"), which are missing."""

    values: Mapping[str, str] = field(default_factory=dict)
    language: str | None = None

    @property
    def title(self) -> str | None:
        return declared_title(self.values.get("title"))

    @property
    def subject(self) -> str | None:
        return declared_text(self.values.get("subject"))


def read_metadata(reader: PdfReader) -> PdfMetadata:
    """The info dictionary, completed from XMP where the info dictionary is silent."""
    values = dict(_info_values(reader))
    for key, value in _xmp_values(reader):
        values.setdefault(key, value)
    return PdfMetadata(values=values, language=_language(reader))


def pdf_date_to_iso(value: str) -> str | None:
    """``D:20220403193102+02'00'`` → ``2022-04-03T19:31:02+02:00`` (None if not a date)."""
    match = _PDF_DATE.match(value.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second, zulu, sign, tz_hour, tz_minute = match.groups()
    iso = f"{year}-{month or '01'}-{day or '01'}"
    if hour is None:
        return iso
    iso += f"T{hour}:{minute or '00'}:{second or '00'}"
    if zulu:
        return iso + "Z"
    if sign:
        return iso + f"{sign}{tz_hour}:{tz_minute or '00'}"
    return iso


def _info_values(reader: PdfReader) -> Iterator[tuple[str, str]]:
    try:
        info = reader.metadata
        items = list(info.items()) if info else []
    except READ_ERRORS:
        return
    for raw_key, raw_value in items:
        key = INFO_KEYS.get(str(raw_key))
        if key is None:
            continue
        try:
            text = _text(raw_value)
        except READ_ERRORS:
            continue
        if key in _DATE_KEYS:
            text = pdf_date_to_iso(text) or text
        if text:
            yield key, text


def _xmp_values(reader: PdfReader) -> Iterator[tuple[str, str]]:
    try:
        xmp = reader.xmp_metadata
        if xmp is None:
            return
        found: dict[str, Any] = {
            "title": xmp.dc_title,
            "author": xmp.dc_creator,
            "subject": xmp.dc_description,
            "keywords": xmp.pdf_keywords,
            "producer": xmp.pdf_producer,
            "creator": xmp.xmp_creator_tool,
            "created": xmp.xmp_create_date,
            "modified": xmp.xmp_modify_date,
        }
    except READ_ERRORS:
        return
    for key, value in found.items():
        text = _xmp_text(value)
        if text:
            yield key, text


def _xmp_text(value: Any) -> str | None:
    """XMP values come as str, lang-alternative dicts, lists or datetimes."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        value = value.get("x-default") or next(iter(value.values()), None)
        return _xmp_text(value)
    if isinstance(value, list | tuple):
        parts = [part for part in (_xmp_text(v) for v in value) if part]
        return ", ".join(parts) or None
    if hasattr(value, "isoformat"):
        return str(value.isoformat())
    return collapse_whitespace(str(value)) or None


def _text(value: Any) -> str:
    if hasattr(value, "get_object"):
        value = value.get_object()
    if isinstance(value, ByteStringObject):
        value = _decoded(bytes(value))
    return collapse_whitespace(str(value))


def _decoded(raw: bytes) -> str:
    """A string pypdf left as bytes (PDFDocEncoding it could not map: a NUL, say), whose
    ``str()`` guesses UTF-16 by its length. A PDF text string is UTF-16 or UTF-8 when it
    opens with a byte-order mark, else PDFDocEncoding (ISO 32000-2, 7.9.2.2), which
    agrees with Latin-1 on every printable byte that matters here."""
    for bom, codec in ((codecs.BOM_UTF16_BE, "utf-16-be"), (codecs.BOM_UTF8, "utf-8")):
        if raw.startswith(bom):
            return raw[len(bom) :].decode(codec, "replace")
    return raw.decode("latin-1")


def _language(reader: PdfReader) -> str | None:
    try:
        root = reader.trailer["/Root"].get_object()
        language = root.get("/Lang") if isinstance(root, Mapping) else None
        text = _text(language) if language is not None else ""
    except READ_ERRORS:
        return None
    return text or None
