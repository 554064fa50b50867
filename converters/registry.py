"""Which converter handles a file, and the one-call entry point.

Converters are tried in priority order; the first whose ``accepts`` says yes
wins. Binary formats come first (their MIME type is reliable); Markdown comes
before HTML because a README that opens with an HTML block is still Markdown
(its extension says so); plain text is the catch-all for ``text/*``. Adding a
format is one new module and one line in :data:`CONVERTERS`.
"""

from __future__ import annotations

import functools

from docshelf.converters.archive import ArchiveConverter
from docshelf.converters.base import (
    ConversionError,
    ConversionResult,
    Converter,
    FailureReason,
    Source,
    base_mime_type,
    extension_of,
)
from docshelf.converters.csv_ import CsvConverter
from docshelf.converters.epub import EpubConverter
from docshelf.converters.feed import FeedConverter
from docshelf.converters.formats import DERIVED_MIME_TYPES
from docshelf.converters.html.converter import HtmlConverter
from docshelf.converters.html.docx import DocxConverter
from docshelf.converters.json_ import JsonConverter
from docshelf.converters.mail.eml import EmlConverter
from docshelf.converters.mail.msg import MsgConverter
from docshelf.converters.markdown.converter import MarkdownConverter
from docshelf.converters.markup.adoc import AsciidocConverter
from docshelf.converters.markup.org import OrgConverter
from docshelf.converters.markup.rst import RstConverter
from docshelf.converters.media.audio import AudioConverter
from docshelf.converters.media.image import ImageConverter
from docshelf.converters.media.video import VideoConverter
from docshelf.converters.notebook import NotebookConverter
from docshelf.converters.odf.odp import OdpConverter
from docshelf.converters.odf.odt import OdtConverter
from docshelf.converters.pdf.converter import PdfConverter
from docshelf.converters.pptx_ import PptxConverter
from docshelf.converters.rtf import RtfConverter
from docshelf.converters.sheets.converter import SpreadsheetConverter
from docshelf.converters.text import TextConverter

CONVERTERS: tuple[Converter, ...] = (
    PdfConverter(),
    DocxConverter(),
    PptxConverter(),
    OdtConverter(),
    OdpConverter(),
    SpreadsheetConverter(),
    EpubConverter(),
    MarkdownConverter(),
    HtmlConverter(),
    FeedConverter(),
    NotebookConverter(),
    JsonConverter(),
    CsvConverter(),
    EmlConverter(),
    MsgConverter(),
    RtfConverter(),
    RstConverter(),
    OrgConverter(),
    AsciidocConverter(),
    ArchiveConverter(),
    ImageConverter(),
    # Before video: an .m4a is an MP4 file libmagic calls video/mp4.
    AudioConverter(),
    VideoConverter(),
    TextConverter(),
)


def find_converter(mime_type: str, filename: str) -> Converter | None:
    """The first converter, in priority order, that accepts the file."""
    return _first_accepting(Source.of(filename, mime_type))


def _first_accepting(source: Source) -> Converter | None:
    return next((converter for converter in CONVERTERS if converter.accepts(source)), None)


#: Formats people keep that no permissively licensed library reads (issue 25): what the
#: index says of them instead of "no converter for ...". By MIME type, then by extension.
UNSUPPORTED_REASONS: dict[str, str] = {
    "application/msword": "a legacy Word 97-2003 document (.doc): no permissively licensed "
    "reader exists; save it as .docx or .odt",
    "application/vnd.ms-powerpoint": "a legacy PowerPoint 97-2003 deck (.ppt): no permissively "
    "licensed reader exists; save it as .pptx or .odp",
    "image/heic": "HEIC images: every decoder (libheif with x265 or libde265) is GPL or LGPL",
    "image/heif": "HEIF images: every decoder (libheif with x265 or libde265) is GPL or LGPL",
}
_UNSUPPORTED_EXTENSIONS = {
    ".doc": "application/msword",
    ".dot": "application/msword",
    ".ppt": "application/vnd.ms-powerpoint",
    ".pps": "application/vnd.ms-powerpoint",
    ".heic": "image/heic",
    ".heif": "image/heif",
}


def unsupported_reason(mime_type: str, filename: str) -> str:
    """Why no converter reads a file of this type and name (the index records it)."""
    known = UNSUPPORTED_REASONS.get(base_mime_type(mime_type)) or UNSUPPORTED_REASONS.get(
        _UNSUPPORTED_EXTENSIONS.get(extension_of(filename), "")
    )
    return known or f"no converter for {base_mime_type(mime_type)}"


def offered_formats(mime_type: str, filename: str) -> tuple[str, ...]:
    """The derived formats a document of this type gets, without converting it (D4 order)."""
    return _offered(mime_type, extension_of(filename))


@functools.lru_cache(maxsize=1024)
def _offered(mime_type: str, extension: str) -> tuple[str, ...]:
    """Per (type, extension): every catalog lookup asks, and the answer never changes."""
    if _first_accepting(Source(mime_type, extension)) is None:
        return ()
    source = base_mime_type(mime_type)
    return tuple(m for m in DERIVED_MIME_TYPES if m != source)


def convert(data: bytes, mime_type: str, filename: str) -> ConversionResult:
    """Convert with the converter :func:`find_converter` picks.

    Raises :class:`ConversionError` (``"unsupported"`` when no converter accepts).
    """
    source = Source.of(filename, mime_type, data)
    converter = _first_accepting(source)
    if converter is None:
        raise ConversionError(FailureReason.UNSUPPORTED, unsupported_reason(mime_type, filename))
    return converter.convert(source)
