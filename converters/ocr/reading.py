"""One picture read by OCR: its lines, or why there are none, as every converter reports it.

:func:`read_image` bounds the picture (a huge scan is shrunk before OCR: memory
and time grow with its pixels), runs the engine within the page's time limit,
and never raises: a page OCR could not read is a :class:`Reading` that says
why, and the conversion goes on with the other pages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from docshelf.converters.ocr import ocr_languages, ocr_page_timeout
from docshelf.converters.ocr.tesseract import (
    OcrFailed,
    OcrLine,
    OcrTimeout,
    installed,
    recognise,
)

if TYPE_CHECKING:
    from PIL import Image

#: Pictures with more pixels than this are shrunk before OCR (an A4 page at
#: 200 dpi has 3.9 million; a poster scanned at 600 dpi has hundreds).
MAX_OCR_PIXELS = 16_000_000

# A bullet misread: one of these alone at the start of a line, before a word.
_MISREAD_BULLET = re.compile(r"^[*+«·•] (?=\w)")


class NoText(StrEnum):
    """Why a page has no text, in the JSON's ``no_text``."""

    #: No text layer and no picture to read: an empty page.
    BLANK = "blank"
    #: No usable text, and a picture OCR could read: it has not run (yet).
    NEEDS_OCR = "needs_ocr"
    #: OCR ran and found no text.
    OCR_EMPTY = "ocr_empty"
    #: OCR took longer than the page's time limit (``DOCSHELF_OCR_PAGE_TIMEOUT``).
    OCR_TIMEOUT = "ocr_timeout"
    #: OCR could not run on it (the engine refused the picture, or is missing).
    OCR_FAILED = "ocr_failed"


@dataclass(frozen=True, slots=True)
class Reading:
    """What OCR read on one page: lines with boxes in the page's units, or why nothing.

    Boxes are (left, top, right, bottom) from the top-left corner, in the page's
    units: points for a PDF page, pixels for a picture.
    """

    lines: tuple[OcrLine, ...]
    engine: str
    failure: NoText | None = None
    message: str = ""

    @property
    def confidence(self) -> float | None:
        """The mean confidence of the lines (0-1), None without lines."""
        if not self.lines:
            return None
        return round(sum(line.confidence for line in self.lines) / len(self.lines), 3)

    @property
    def no_text(self) -> NoText | None:
        """Why the page has no text from OCR, or None when it has some."""
        return None if self.lines else self.failure or NoText.OCR_EMPTY

    def paragraphs(self) -> list[str]:
        """The text as paragraphs (Tesseract's), each its lines joined by newlines."""
        grouped: dict[tuple[int, int], list[str]] = {}
        for line in self.lines:
            grouped.setdefault((line.block, line.paragraph), []).append(line.text)
        return ["\n".join(lines) for lines in grouped.values()]

    def as_json(self) -> dict[str, Any]:
        """The ``ocr`` member of a page in the JSON (schema: ``$defs/ocr``)."""
        out: dict[str, Any] = {"engine": self.engine}
        if self.confidence is not None:
            out["confidence"] = self.confidence
        if self.message:
            out["message"] = self.message
        out["lines"] = [
            {"text": line.text, "box": list(line.box), "confidence": line.confidence}
            for line in self.lines
        ]
        return out


def engine_name() -> str:
    """The engine as the JSON and metadata name it ("tesseract 5.3.0")."""
    engine = installed()
    return f"tesseract {engine.version}" if engine else "tesseract (not installed)"


def read_image(image: Image.Image, *, dpi: int, unit_scale: float = 1.0) -> Reading:
    """OCR ``image`` (``dpi`` pixels per inch); boxes divided by ``unit_scale``.

    A picture over :data:`MAX_OCR_PIXELS` is shrunk first (its boxes scaled back).
    """
    shrink = min(1.0, (MAX_OCR_PIXELS / max(image.width * image.height, 1)) ** 0.5)
    if shrink < 1.0:
        size = (max(1, int(image.width * shrink)), max(1, int(image.height * shrink)))
        image = image.convert("L").resize(size)
    try:
        found = recognise(
            image,
            ocr_languages(),
            dpi=max(1, round(dpi * shrink)),
            timeout=ocr_page_timeout(),
        )
    except OcrTimeout as exc:
        return Reading((), engine_name(), NoText.OCR_TIMEOUT, str(exc))
    except OcrFailed as exc:
        return Reading((), engine_name(), NoText.OCR_FAILED, str(exc))
    factor = shrink * unit_scale
    return Reading(tuple(_scaled(bulleted(line), factor) for line in found), engine_name())


def bulleted(line: OcrLine) -> OcrLine:
    """The line with a list bullet read as ``*``, ``+``, ``«`` or ``·`` put back as ``•``
    (Tesseract's English model has no bullet; the Markdown writer knows ``•`` as one)."""
    text = _MISREAD_BULLET.sub("• ", line.text, count=1)
    return line if text == line.text else replace(line, text=text)


def mean_confidence(readings: Sequence[Reading]) -> float | None:
    """The mean line confidence over several pages (None when none has lines)."""
    lines = [line.confidence for reading in readings for line in reading.lines]
    return round(sum(lines) / len(lines), 3) if lines else None


#: The metadata entry with the mean confidence (0-1) of a document's OCR; the index reads it.
CONFIDENCE_KEY = "ocr_confidence"


def ocr_metadata(readings: Mapping[int, Reading]) -> dict[str, str]:
    """What a document's metadata says of its OCR: which pages, which engine, how sure,
    and the pages it could not read, with why (empty when OCR did not run)."""
    if not readings:
        return {}
    read = [number for number, reading in readings.items() if reading.lines]
    values = {"ocr_engine": engine_name(), "ocr_pages": ", ".join(str(n) for n in read)}
    confidence = mean_confidence(list(readings.values()))
    if confidence is not None:
        values[CONFIDENCE_KEY] = f"{confidence:.3f}"
    failed = [
        f"{number}: {reading.message or reading.no_text}"
        for number, reading in readings.items()
        if not reading.lines
    ]
    if failed:
        values["ocr_unread_pages"] = "; ".join(failed)
    return values


def _scaled(line: OcrLine, factor: float) -> OcrLine:
    if factor == 1.0:
        return line
    left, top, right, bottom = (round(value / factor, 1) for value in line.box)
    return OcrLine(
        line.text, (left, top, right, bottom), line.confidence, line.block, line.paragraph
    )
