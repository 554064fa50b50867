"""Text in a picture, read by OCR: the body of an image's conversion.

The picture is decoded only here, on the OCR pass (the first pass reads its
header alone), upright as its EXIF orientation says, in greyscale, and shrunk
while decoding where the format allows (JPEG's draft mode): OCR needs no more
than :data:`~docshelf.converters.ocr.reading.MAX_OCR_PIXELS`.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import replace
from typing import TYPE_CHECKING

from docshelf.converters.ocr.reading import (
    MAX_OCR_PIXELS,
    NoText,
    Reading,
    engine_name,
    ocr_metadata,
    read_image,
)

if TYPE_CHECKING:
    from docshelf.converters.media.image import Picture
    from docshelf.converters.media.report import MediaReport

#: A picture's stated resolution is believed within these bounds; outside them
#: (or unstated) Tesseract estimates it from the letters.
_PLAUSIBLE_DPI = (70, 1200)


def read_text(data: bytes, picture: Picture) -> Reading:
    """OCR the picture in ``data`` (its first frame); a reading that says why on failure."""
    from PIL import Image, ImageOps

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opened = Image.open(io.BytesIO(data))
            pixels = opened.width * opened.height
            if pixels > MAX_OCR_PIXELS:
                shrink = (MAX_OCR_PIXELS / pixels) ** 0.5
                opened.draft("L", (int(opened.width * shrink), int(opened.height * shrink)))
            image = ImageOps.exif_transpose(opened).convert("L")
    except Exception as exc:  # a picture whose header read but whose pixels do not
        return Reading((), engine_name(), NoText.OCR_FAILED, f"not decoded: {exc}")
    dpi = round(picture.dpi[0]) if picture.dpi else 0
    low, high = _PLAUSIBLE_DPI
    return read_image(image, dpi=dpi if low <= dpi <= high else 0)


def with_text(report: MediaReport, reading: Reading) -> MediaReport:
    """``report`` with the text read as its body, the reading in its JSON and metadata."""
    return replace(
        report,
        body=tuple(reading.paragraphs()),
        data={**report.data, "ocr": reading.as_json()}
        | ({} if reading.lines else {"no_text": str(reading.no_text)}),
        metadata={**report.metadata, **ocr_metadata({1: reading})},
    )
