"""Right-to-left text and characters beyond the BMP, as PDFium gets them wrong.

- A glyph standing for several right-to-left characters (an Arabic
  ligature) has its text reversed along with its run:
  :func:`right_to_left_clusters` finds such glyphs so the caller can undo it.
- Characters outside the Basic Multilingual Plane are two UTF-16 units,
  which PDFium counts as two characters; :func:`joined_surrogates` joins them.
  Inside a right-to-left run PDFium reverses them with the run (a math italic x
  between Arabic words comes out low half first); such pairs are put back in order.
"""

from __future__ import annotations

import ctypes
import re

import pypdfium2.raw as pdfium_c

_RIGHT_TO_LEFT = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]+")
_SURROGATE = re.compile("[\ud800-\udfff]")


def right_to_left_clusters(textpage: pdfium_c.FPDF_TEXTPAGE, units: str) -> list[tuple[int, int]]:
    """Runs of right-to-left characters drawn by one glyph (same origin): PDFium
    reversed their text with the run it reordered, though a glyph's text is
    already in logical order."""
    x, y = ctypes.c_double(), ctypes.c_double()
    clusters: list[tuple[int, int]] = []
    for match in _RIGHT_TO_LEFT.finditer(units):
        start = match.start()
        origin: tuple[float, float] | None = None
        for index in range(match.start(), match.end() + 1):
            here: tuple[float, float] | None = None
            if index < match.end() and pdfium_c.FPDFText_GetCharOrigin(textpage, index, x, y):
                here = (round(x.value, 2), round(y.value, 2))
            if here is None or here != origin:
                if index - start > 1 and origin is not None:
                    clusters.append((start, index))
                start, origin = index, here
    return clusters


def joined_surrogates(text: str) -> str:
    """``text`` with each pair of UTF-16 surrogates (in either order) one character."""
    if _SURROGATE.search(text):
        text = _paired(text)
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def _paired(text: str) -> str:
    """Surrogate pairs in order: a low half followed by a high one is a pair reversed."""
    units = list(text)
    index = 0
    while index < len(units) - 1:
        here, after = units[index], units[index + 1]
        if "\ud800" <= here <= "\udbff" and "\udc00" <= after <= "\udfff":
            index += 2
        elif "\udc00" <= here <= "\udfff" and "\ud800" <= after <= "\udbff":
            units[index], units[index + 1] = after, here
            index += 2
        else:
            index += 1
    return "".join(units)
