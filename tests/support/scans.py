"""Scanned documents built from known text: pictures of lines, wrapped in an image-only PDF.

Pillow draws the text with its own scalable font (no system font needed) and
writes the PDF, so the pages carry images and no text layer, as a scanner's do.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import pytest
from PIL import Image, ImageDraw, ImageFont

from docshelf.converters.ocr.tesseract import installed

#: Pixels per inch of the pictures (a scanner's usual setting).
DPI = 200
#: A text line's height in pixels at :data:`DPI` (about 11 pt).
FONT_PIXELS = 32


def text_picture(
    columns: Sequence[Sequence[str]], *, width: int = 1100, margin: int = 60
) -> Image.Image:
    """A white page with ``columns`` of lines drawn side by side, black on white."""
    font = ImageFont.load_default(size=FONT_PIXELS)
    pitch = int(FONT_PIXELS * 1.5)
    height = 2 * margin + pitch * max((len(lines) for lines in columns), default=0)
    image = Image.new("L", (width, max(height, 2 * margin)), 255)
    draw = ImageDraw.Draw(image)
    column_width = (width - 2 * margin) // max(len(columns), 1)
    for index, lines in enumerate(columns):
        for row, line in enumerate(lines):
            draw.text((margin + index * column_width, margin + row * pitch), line, 0, font=font)
    return image


def image_pdf(pages: Sequence[Image.Image], *, dpi: int = DPI) -> bytes:
    """An image-only PDF, one picture a page, each page the picture's size at ``dpi``."""
    out = io.BytesIO()
    first, *rest = [page.convert("RGB") for page in pages]
    first.save(out, "PDF", save_all=True, append_images=rest, resolution=dpi)
    return out.getvalue()


def png(image: Image.Image) -> bytes:
    """``image`` as PNG bytes."""
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


#: For tests that run OCR: Tesseract is a system package, not a Python one.
NEEDS_TESSERACT = pytest.mark.skipif(
    installed() is None,
    reason="needs Tesseract: apt-get install tesseract-ocr tesseract-ocr-eng (.ci/run does)",
)
