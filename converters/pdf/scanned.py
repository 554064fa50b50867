"""Which PDF pages are pictures of text: no usable text layer, and an image to read.

A scanner's PDF is one image per page and no text; some carry a text layer
that is garbage (symbols from a font without a Unicode map). Such a page is
listed for OCR only when it also carries an image big enough to hold text: a
blank page, or one with a small logo, has nothing for OCR to read.
"""

from __future__ import annotations

from collections.abc import Sequence

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from docshelf.converters.pdf.layout import PageLayout
from docshelf.converters.pdf.pdfium_calls import PDFIUM_LOCK

#: A page whose text has fewer letters and digits than this has no usable text
#: (a scan may carry a stamped page number or file name, nothing more)...
MIN_USABLE_CHARACTERS = 20
#: ...and so does one where letters and digits are fewer than this share of
#: its visible characters (symbol soup from a font without a Unicode map).
MIN_WORD_SHARE = 0.5
#: Images covering at least this share of the page are worth reading.
MIN_IMAGE_SHARE = 0.1
#: Images nested in forms deeper than this are not looked for.
_FORM_DEPTH = 4


def has_usable_text(text: str) -> bool:
    """Whether ``text`` reads as text: enough letters and digits, and mostly those."""
    visible = [character for character in text if not character.isspace()]
    wordy = sum(1 for character in visible if character.isalnum())
    return wordy >= MIN_USABLE_CHARACTERS and wordy >= MIN_WORD_SHARE * len(visible)


def pages_needing_ocr(data: bytes, layouts: Sequence[PageLayout]) -> tuple[int, ...]:
    """The numbers of the pages without usable text that carry an image OCR could read."""
    candidates = [layout.number for layout in layouts if not has_usable_text(layout.text)]
    if not candidates:
        return ()
    with PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(data)
        except (pdfium.PdfiumError, ValueError, OSError):
            return ()
        try:
            count = len(document)
            return tuple(
                number
                for number in candidates
                if number <= count and _image_share(document, number - 1) >= MIN_IMAGE_SHARE
            )
        finally:
            document.close()


def _image_share(document: pdfium.PdfDocument, index: int) -> float:
    """The share of the page's area its images cover (overlaps counted twice, capped at 1)."""
    try:
        page = document[index]
    except pdfium.PdfiumError:
        return 0.0
    try:
        width, height = page.get_size()
        if width <= 0 or height <= 0:
            return 0.0
        covered = 0.0
        for image in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=_FORM_DEPTH):
            left, bottom, right, top = image.get_bounds()
            covered += max(0.0, min(right, width) - max(left, 0.0)) * max(
                0.0, min(top, height) - max(bottom, 0.0)
            )
            if covered >= width * height:
                return 1.0
        return covered / (width * height)
    except pdfium.PdfiumError:
        return 0.0
    finally:
        page.close()
