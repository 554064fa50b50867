"""Page text with just enough layout to recover structure.

An extractor reports each visual line with its effective font size (headings
are set larger), baseline and boldness (:class:`TextLine`); :func:`lay_out`
turns those into a :class:`PageLayout`: lines cleaned, paragraph breaks found
from the vertical gaps, words hyphenated across lines joined. PDFium is the
extractor (:mod:`converters.pdftext`); :func:`extract_layout` is the pypdf one,
for pages PDFium cannot open. pypdf's ``extract_text`` returns lines and its
text visitor reports, for every piece of text, the font size and position; the
visitor costs nothing extra: it runs during the same extraction.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from pypdf import PageObject

from converters.textutil import clean_text

#: A line whose gap above it exceeds this many times the page's usual line
#: pitch starts a new paragraph.
PARAGRAPH_GAP_FACTOR = 1.45

_LIGATURES = str.maketrans(
    {
        "\ufb00": "ff",
        "\ufb01": "fi",
        "\ufb02": "fl",
        "\ufb03": "ffi",
        "\ufb04": "ffl",
        "\ufb05": "st",
        "\ufb06": "st",
    }
)
# U+FFFD comes from fonts without a Unicode map, private-use code points from
# icon fonts: neither carries text.
_UNMAPPED = re.compile("[\ufffd\ue000-\uf8ff\U000f0000-\U0010ffff]+")
_HYPHEN_END = re.compile(r"(?<=[^\W\d_])-$")
# Bold faces by PostScript name; TeX's Computer Modern bold is "CMBX"/"CMB".
_BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi|\bcmbx|\+cmbx|\+cmb\d|-bx", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class TextLine:
    """One visual line as an extractor found it, before :func:`lay_out`.

    ``size`` is the dominant effective font size in points (0 if unknown),
    ``y`` the baseline in page space (None if unknown).
    """

    text: str
    size: float
    y: float | None
    bold: bool


@dataclass(frozen=True, slots=True)
class Line:
    """One text line.

    ``size`` is its dominant font size in points (0 if unknown), ``bold``
    whether most of it is set in a bold face.
    """

    text: str
    size: float
    starts_paragraph: bool
    bold: bool = False


@dataclass(frozen=True, slots=True)
class PageLayout:
    number: int
    lines: tuple[Line, ...]

    @property
    def text(self) -> str:
        """Plain text: lines joined, a blank line between paragraphs."""
        parts: list[str] = []
        for line in self.lines:
            if parts and line.starts_paragraph:
                parts.append("")
            parts.append(line.text)
        return "\n".join(parts)


@dataclass(slots=True)
class _Run:
    start: int  # offset in the page text
    text: str
    size: float
    y: float | None
    bold: bool


def extract_layout(page: PageObject, number: int) -> PageLayout:
    """Extract one page's lines with sizes and paragraph breaks."""
    runs: list[_Run] = []
    offset = 0

    def visit(text: str, cm: Sequence[float], tm: Sequence[float], font: Any, size: float) -> None:
        nonlocal offset
        if text:
            effective, y = _geometry(cm, tm, size)
            runs.append(_Run(offset, text, effective, y, _is_bold(font)))
            offset += len(text)

    raw = page.extract_text(visitor_text=visit)
    if "".join(run.text for run in runs) != raw:
        runs = [_Run(0, raw, 0.0, None, False)]
    return lay_out(number, _text_lines(raw, runs))


def lay_out(number: int, lines: Sequence[TextLine]) -> PageLayout:
    """A page from its visual lines, in reading order: cleaned, in paragraphs, dehyphenated."""
    cleaned = [
        TextLine(text, line.size, line.y, line.bold)
        for line in lines
        if (text := clean_line(line.text))
    ]
    return PageLayout(number=number, lines=tuple(_dehyphenate(_paragraphs(cleaned))))


def empty_layout(number: int) -> PageLayout:
    """A page whose text could not be read."""
    return PageLayout(number=number, lines=())


def clean_line(text: str) -> str:
    """Ligatures expanded, unmapped glyphs and control characters dropped."""
    return _UNMAPPED.sub("", clean_text(text.translate(_LIGATURES))).strip()


def is_bold_name(name: str) -> bool:
    """Whether a font's PostScript name says it is a bold face."""
    return bool(_BOLD_NAME.search(name))


def _is_bold(font: Any) -> bool:
    """Whether a font dictionary names a bold face (by name or declared weight)."""
    if not isinstance(font, Mapping):
        return False
    try:
        if is_bold_name(str(font.get("/BaseFont", ""))):
            return True
        descriptor = font.get("/FontDescriptor")
        descriptor = descriptor.get_object() if descriptor is not None else None
        weight = descriptor.get("/FontWeight") if isinstance(descriptor, Mapping) else None
        return isinstance(weight, int | float) and weight >= 600
    except (AttributeError, TypeError, ValueError, KeyError):
        return False


def _geometry(cm: Sequence[float], tm: Sequence[float], size: float) -> tuple[float, float | None]:
    """Effective font size and baseline y of a text piece, in page space."""
    try:
        c = tm[2] * cm[0] + tm[3] * cm[2]
        d = tm[2] * cm[1] + tm[3] * cm[3]
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        return abs(size * math.hypot(c, d)), y
    except (IndexError, TypeError):
        return abs(size), None


def _text_lines(raw: str, runs: list[_Run]) -> list[TextLine]:
    """pypdf's lines, each with the size, baseline and boldness of the runs in it."""
    lines: list[TextLine] = []
    start = 0
    run_index = 0
    for text in raw.split("\n"):
        end = start + len(text)
        weights: dict[float, int] = {}
        bold_chars = 0
        y: float | None = None
        while run_index < len(runs) and runs[run_index].start + len(runs[run_index].text) <= start:
            run_index += 1
        probe = run_index
        while probe < len(runs) and runs[probe].start < end:
            run = runs[probe]
            overlap = run.text[max(0, start - run.start) : end - run.start]
            visible = sum(1 for char in overlap if not char.isspace())
            if visible:
                rounded = round(run.size * 2) / 2
                weights[rounded] = weights.get(rounded, 0) + visible
                bold_chars += visible if run.bold else 0
                if y is None:
                    y = run.y
            probe += 1
        size = max(weights, key=lambda s: (weights[s], s)) if weights else 0.0
        start = end + 1
        lines.append(TextLine(text, size, y, 2 * bold_chars > sum(weights.values())))
    return lines


def _paragraphs(positions: Sequence[TextLine]) -> list[Line]:
    """Lines with paragraph starts: a gap above well beyond the page's usual line pitch."""
    lines: list[Line] = []
    pitches: list[float] = []
    for above_line, below_line in pairwise(positions):
        above, below, size = above_line.y, below_line.y, below_line.size
        if above is not None and below is not None and 0 < above - below < 4 * max(size, 1):
            pitches.append(above - below)
    pitch = statistics.median(pitches) if pitches else None
    previous_y: float | None = None
    previous_size = 0.0
    for index, position in enumerate(positions):
        text, size, y = position.text, position.size, position.y
        starts = index == 0
        if not starts and pitch is not None and y is not None and previous_y is not None:
            gap = previous_y - y
            usual = max(pitch, 1.1 * max(size, previous_size))
            starts = gap < -usual or gap > PARAGRAPH_GAP_FACTOR * usual
        lines.append(Line(text=text, size=size, starts_paragraph=starts, bold=position.bold))
        previous_y, previous_size = y, size
    return lines


def _dehyphenate(lines: list[Line]) -> list[Line]:
    """Join words hyphenated across lines ("exam-" + "ple is" → "example is")."""
    out: list[Line] = []
    for line in lines:
        if out and not line.starts_paragraph and line.text[:1].islower():
            previous = out[-1]
            if _HYPHEN_END.search(previous.text):
                out[-1] = Line(
                    previous.text[:-1] + line.text,
                    previous.size,
                    previous.starts_paragraph,
                    previous.bold,
                )
                continue
        out.append(line)
    return out
