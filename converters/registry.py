"""Which converter handles a file, and the one-call entry point.

Converters are tried in priority order; the first whose ``accepts`` says yes
wins. Binary formats come first (their MIME type is reliable); Markdown comes
before HTML because a README that opens with an HTML block is still Markdown
(its extension says so); plain text is the catch-all for ``text/*``. Adding a
format is one new module and one line in :data:`CONVERTERS`.
"""

from __future__ import annotations

import functools

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
from docshelf.converters.formats import DERIVED_MIME_TYPES
from docshelf.converters.html.converter import HtmlConverter
from docshelf.converters.html.docx import DocxConverter
from docshelf.converters.json_ import JsonConverter
from docshelf.converters.markdown.converter import MarkdownConverter
from docshelf.converters.media.audio import AudioConverter
from docshelf.converters.media.image import ImageConverter
from docshelf.converters.media.video import VideoConverter
from docshelf.converters.pdf.converter import PdfConverter
from docshelf.converters.text import TextConverter

CONVERTERS: tuple[Converter, ...] = (
    PdfConverter(),
    DocxConverter(),
    MarkdownConverter(),
    HtmlConverter(),
    JsonConverter(),
    CsvConverter(),
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
        raise ConversionError(
            FailureReason.UNSUPPORTED, f"no converter for {mime_type} ({filename})"
        )
    return converter.convert(source)
