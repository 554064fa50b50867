"""OCR of scanned PDF pages: rendered with PDFium, read by OCR, laid out like any page.

The recognised lines become the page's :class:`TextLine` s in PDF space
(baseline and left edge in points), in the engine's reading order (Tesseract
reads a column to its end before the next), so :func:`lay_out` finds the
paragraphs and :mod:`converters.pdf.markdown` the structure, as for a page with
a text layer. A line's size is its box's height, evened out: boxes of body
lines differ with their letters (descenders, capitals), and a heading must
stand out by its size, not by its letters, so every line within
:data:`BODY_HEIGHT_SPREAD` of the page's median height is given the median.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pypdfium2 as pdfium

from docshelf.converters.ocr.reading import (
    MAX_OCR_PIXELS,
    NoText,
    Reading,
    engine_name,
    read_image,
)
from docshelf.converters.ocr.tesseract import OcrLine
from docshelf.converters.pdf.layout import PageLayout, TextLine, lay_out
from docshelf.converters.pdf.pdfium_calls import PDFIUM_LOCK

if TYPE_CHECKING:
    from PIL import Image

#: Pages are rendered for OCR at this resolution (bench/README.md, OCR: on corpus
#: pages Tesseract's word recall is 97.4 % at 200 dpi, 95.4 % at 150 and no better at
#: 250, which costs 15 % more time).
OCR_DPI = 200
#: Lines whose box height is within this factor of the page's median (either
#: way) are body text, all of one size.
BODY_HEIGHT_SPREAD = 1.3
#: A line box spans about this many font sizes (ascenders to descenders).
_BOX_TO_FONT_SIZE = 0.8


def read_scanned_pages(
    data: bytes, numbers: Sequence[int]
) -> dict[int, tuple[PageLayout, Reading]]:
    """OCR the pages ``numbers`` (1-based) of the PDF ``data``, one at a time: each page
    laid out from its OCR lines, and the reading itself.

    A page PDFium cannot render is a reading that says so; the others go on.
    """
    out: dict[int, tuple[PageLayout, Reading]] = {}
    for number in numbers:
        with PDFIUM_LOCK:
            rendered = _render(data, number)
        if rendered is None:
            reading = Reading((), engine_name(), NoText.OCR_FAILED, "the page could not be drawn")
            out[number] = (PageLayout(number, ()), reading)
            continue
        image, scale, height = rendered
        reading = read_image(image, dpi=round(72 * scale), unit_scale=scale)
        out[number] = (lay_out(number, text_lines(reading.lines, height)), reading)
    return out


def text_lines(lines: Sequence[OcrLine], page_height: float) -> list[TextLine]:
    """OCR lines as extractor lines: baseline and left edge in PDF space, sizes evened out."""
    heights = [line.box[3] - line.box[1] for line in lines]
    body = statistics.median(heights) if heights else 0.0
    out: list[TextLine] = []
    for line, height in zip(lines, heights, strict=True):
        left, _top, _right, bottom = line.box
        even = body / BODY_HEIGHT_SPREAD <= height <= body * BODY_HEIGHT_SPREAD
        size = round((body if even else height) * _BOX_TO_FONT_SIZE, 1)
        out.append(TextLine(text=line.text, size=size, y=page_height - bottom, bold=False, x0=left))
    return out


def _render(data: bytes, number: int) -> tuple[Image.Image, float, float] | None:
    """Page ``number`` as a greyscale picture at :data:`OCR_DPI` (less for a huge page:
    pixels cost memory), its pixels per point, and its height in points."""
    try:
        document = pdfium.PdfDocument(data)
    except (pdfium.PdfiumError, ValueError, OSError):
        return None
    try:
        page = document[number - 1]
        try:
            width, height = page.get_size()
            scale = OCR_DPI / 72
            scale *= min(1.0, (MAX_OCR_PIXELS / max(width * height * scale * scale, 1.0)) ** 0.5)
            return page.render(scale=scale, grayscale=True).to_pil(), scale, height
        finally:
            page.close()
    except pdfium.PdfiumError:
        return None
    finally:
        document.close()
