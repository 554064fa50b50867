"""Page text with just enough layout to recover structure.

An extractor reports each visual line with its effective font size (headings
are set larger), baseline and boldness (:class:`TextLine`); :func:`lay_out`
turns those into a :class:`PageLayout`: lines cleaned, paragraph breaks found
from the vertical gaps, words hyphenated across lines joined. PDFium is the
extractor (:mod:`converters.pdf.text`); :func:`extract_layout` is the pypdf one,
for pages PDFium cannot open. pypdf's ``extract_text`` returns lines and its
text visitor reports, for every piece of text, the font size and position; the
visitor costs nothing extra: it runs during the same extraction.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any

from pypdf import PageObject

from docshelf.converters.markdown.model import Link
from docshelf.converters.pdf.aligned import aligned_tables
from docshelf.converters.pdf.drawn_order import in_drawn_order_repaired
from docshelf.converters.pdf.tables import Table
from docshelf.converters.textutil import clean_text

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
# Monospaced faces by PostScript name, for fonts that do not set the FixedPitch
# flag; TeX's typewriter faces are "CMTT", "SFTT", "LMMono".
_MONO_NAME = re.compile(
    r"courier|mono|consol|menlo|typewriter|inconsolata|\bcmtt|\+cmtt|\bsftt|\+sftt|lmmono",
    re.IGNORECASE,
)
#: Bit 1 of a font descriptor's /Flags: all glyphs have the same width (PDF 32000-1 §9.8.2).
FIXED_PITCH_FLAG = 1
#: A run of lines each set at most this many font sizes above the one before,
#: starting at about the same left edge, is read bottom to top: Google Docs
#: writes footnotes last one first.
UPWARD_STEP_SIZES = 2.0


@dataclass(frozen=True, slots=True)
class Cell:
    """A piece of a line set apart by wide gaps, with its left and right edges."""

    text: str
    x0: float
    x1: float


@dataclass(frozen=True, slots=True)
class TextLine:
    """One visual line as an extractor found it, before :func:`lay_out`.

    ``size`` is the dominant effective font size in points (0 if unknown),
    ``y`` the baseline and ``x0`` the left edge in page space (None if
    unknown; ``x1`` its right edge), ``mono`` whether it is set in a monospaced face throughout
    (``advance``: its glyphs' width, when measured).
    ``table`` holds the cells of a ruled table found in its place (``text``
    is then the table as plain text); ``cells``, a spread-out line's pieces
    between wide gaps, which may be a row of a table set without rules.
    """

    text: str
    size: float
    y: float | None
    bold: bool
    x0: float | None = None
    mono: bool = False
    advance: float = 0.0
    table: Table | None = None
    cells: tuple[Cell, ...] | None = None
    x1: float | None = None


@dataclass(frozen=True, slots=True)
class Line(TextLine):
    """One text line of a laid-out page: as the extractor found it (:class:`TextLine`,
    cleaned), and whether it starts a paragraph."""

    starts_paragraph: bool = False


@dataclass(frozen=True, slots=True)
class PageLayout:
    """A page's lines in reading order, its links, and where the page's visible area
    starts and ends vertically (``bounds``: bottom and top, in the lines' ``y`` space,
    None where unknown), which is where its margins are."""

    number: int
    lines: tuple[Line, ...]
    links: tuple[Link, ...] = ()
    bounds: tuple[float, float] | None = None

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
    mono: bool


def extract_layout(page: PageObject, number: int) -> PageLayout:
    """Extract one page's lines with sizes and paragraph breaks."""
    runs: list[_Run] = []
    offset = 0

    def visit(text: str, cm: Sequence[float], tm: Sequence[float], font: Any, size: float) -> None:
        nonlocal offset
        if text:
            effective, y = _geometry(cm, tm, size)
            runs.append(_Run(offset, text, effective, y, _is_bold(font), _is_mono(font)))
            offset += len(text)

    raw = page.extract_text(visitor_text=visit)
    if "".join(run.text for run in runs) != raw:
        runs = [_Run(0, raw, 0.0, None, False, False)]
    return lay_out(number, _text_lines(raw, runs))


def lay_out(number: int, lines: Sequence[TextLine], links: Sequence[Link] = ()) -> PageLayout:
    """A page from its visual lines, in reading order: cleaned, in paragraphs, dehyphenated."""
    cleaned = [
        line if text == line.text and line.table is None else _cleaned(line, text)
        for line in lines
        if (text := line.text if line.table else clean_line(line.text))
    ]
    ordered = _upward_runs_reversed(aligned_tables(in_drawn_order_repaired(cleaned)))
    return PageLayout(number, tuple(_dehyphenate(_paragraphs(ordered))), tuple(links))


def empty_layout(number: int) -> PageLayout:
    """A page whose text could not be read."""
    return PageLayout(number=number, lines=())


def clean_line(text: str) -> str:
    """Ligatures expanded, unmapped glyphs and control characters dropped."""
    return _UNMAPPED.sub("", clean_text(text.translate(_LIGATURES))).strip()


def _cleaned(line: TextLine, text: str) -> TextLine:
    table, cells = line.table, line.cells
    if table is not None:
        table = tuple(tuple(clean_line(cell) for cell in row) for row in table)
    if cells is not None:
        cells = tuple(replace(cell, text=clean_line(cell.text)) for cell in cells)
    return replace(line, text=text, table=table, cells=cells)


def _upward_runs_reversed(lines: list[TextLine]) -> list[TextLine]:
    """Lines in top-to-bottom order where the extractor gave a run of them bottom to top.

    Only runs of three or more lines, each a line's pitch above the one before
    and starting at about the same left edge, are turned: a single step up is
    as likely a new column or a float as a reversed order.
    """
    out: list[TextLine] = []
    run: list[TextLine] = []

    def flush() -> None:
        out.extend(reversed(run) if len(run) >= 3 else run)
        run.clear()

    for line in lines:
        previous = run[-1] if run else None
        if previous is not None and _steps_up(previous, line):
            run.append(line)
            continue
        flush()
        run.append(line)
    flush()
    return out


def _steps_up(below: TextLine, line: TextLine) -> bool:
    if below.y is None or line.y is None or below.x0 is None or line.x0 is None:
        return False
    size = max(below.size, line.size, 1.0)
    return (
        0 < line.y - below.y <= UPWARD_STEP_SIZES * size
        and abs(line.x0 - below.x0) <= UPWARD_STEP_SIZES * size
        and below.table is None
        and line.table is None
    )


def is_mono_name(name: str) -> bool:
    """Whether a font's PostScript name says it is a monospaced face."""
    return bool(_MONO_NAME.search(name))


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
        weight = _described(font, "/FontWeight")
        return isinstance(weight, int | float) and weight >= 600
    except (AttributeError, TypeError, ValueError, KeyError):
        return False


def _is_mono(font: Any) -> bool:
    """Whether a font dictionary names a monospaced face (by name or the FixedPitch flag)."""
    if not isinstance(font, Mapping):
        return False
    try:
        if is_mono_name(str(font.get("/BaseFont", ""))):
            return True
        flags = _described(font, "/Flags")
        return isinstance(flags, int) and bool(flags & FIXED_PITCH_FLAG)
    except (AttributeError, TypeError, ValueError, KeyError):
        return False


def _described(font: Mapping[str, Any], key: str) -> Any:
    """``key`` of the font's descriptor (weight, flags), or None; may raise what a damaged
    file's objects raise, which the callers turn into "no"."""
    descriptor = font.get("/FontDescriptor")
    descriptor = descriptor.get_object() if descriptor is not None else None
    return descriptor.get(key) if isinstance(descriptor, Mapping) else None


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
        bold_chars = mono_chars = 0
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
                mono_chars += visible if run.mono else 0
                if y is None:
                    y = run.y
            probe += 1
        size = max(weights, key=lambda s: (weights[s], s)) if weights else 0.0
        start = end + 1
        visible_chars = sum(weights.values())
        lines.append(
            TextLine(
                text,
                size,
                y,
                bold=2 * bold_chars > visible_chars,
                mono=0 < visible_chars == mono_chars,
            )
        )
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
        if position.table is not None:
            starts = True
        lines.append(
            Line(
                text=text,
                size=size,
                starts_paragraph=starts,
                bold=position.bold,
                y=y,
                x0=position.x0,
                mono=position.mono,
                advance=position.advance,
                table=position.table,
            )
        )
        previous_y, previous_size = y, size
    return lines


def _dehyphenate(lines: list[Line]) -> list[Line]:
    """Join words hyphenated across lines ("exam-" + "ple is" → "example is")."""
    out: list[Line] = []
    for line in lines:
        if out and not line.starts_paragraph and line.text[:1].islower():
            previous = out[-1]
            if _HYPHEN_END.search(previous.text) and not (previous.mono or line.mono):
                out[-1] = replace(previous, text=previous.text[:-1] + line.text)
                continue
        out.append(line)
    return out
