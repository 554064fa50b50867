"""Pieces of a page's visual lines as PDFium gives them, and how they become lines.

PDFium often sets a raised or lowered glyph (the ² of S², the i of xᵢ, a
fraction's parts, a big ∑) as a line of its own; :func:`merge_raised` puts it
back into its line, and :func:`text_line` makes each merged piece a
:class:`~converters.pdf.layout.TextLine`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from docshelf.converters.pdf.aligned import CELL_GAP
from docshelf.converters.pdf.bidi import joined_surrogates
from docshelf.converters.pdf.layout import Cell, TextLine
from docshelf.converters.pdf.tables import Table

#: A line starting to the right of the previous line's start is a raised or
#: lowered part of it when their font boxes overlap by more than this share of
#: the lower box (superscripts, subscripts, big operators; consecutive lines
#: overlap by their descenders at most)...
SAME_LINE_OVERLAP = 0.5
#: ...or when its baseline is within this many font sizes of the other's
#: (TeX sets fraction numerators and denominators about 0.7 em off the axis;
#: the next line is 1.1 em or more below).
SAME_LINE_SHIFT = 0.8

#: Only these count as blank: str.strip() would also eat control characters
#: (\t, \x0c, \x1c ...), which are a glyph's raw code until they are resolved.
BLANK = " \u00a0"


@dataclass(slots=True)
class Segment:
    """A piece of one visual line, before raised and lowered pieces are merged in."""

    text: str
    size: float
    bold: bool
    x0: float
    x1: float
    bottom: float
    top: float
    y: float  # baseline of the first character
    weight: int  # visible characters: which piece's size and weight the line takes
    hyphenated: bool  # PDFium joined the next line to this one after a hyphen
    start: int = 0  # the piece's characters in the page text: start ...
    end: int = 0  # ... and end
    mono: bool = False
    advance: float = 0.0  # a monospaced line's glyph advance
    table: Table | None = None
    cells: tuple[Cell, ...] | None = None


def merge_raised(segments: Sequence[Segment]) -> list[Segment]:
    """Raised and lowered pieces put back into the line they belong to."""
    lines: list[Segment] = []
    for segment in segments:
        previous = lines[-1] if lines else None
        if previous is not None and _continues(previous, segment):
            gap = segment.x0 - previous.x1
            head, tail = previous.text.rstrip(), segment.text.lstrip()
            # Apart: after a gap; stacked (a fraction's numerator and denominator);
            # or a footnote mark after a number, which must not read as more digits.
            size = max(previous.size, 1)
            apart = (
                gap > 0.25 * size
                or gap < -0.25 * size
                or (head[-1:].isdigit() and tail[:1].isdigit())
            )
            space = " " if apart else ""
            cells = None
            if previous.cells is not None or segment.cells is not None:
                cells = _joined_cells(previous, segment, space)
            heavier = segment if segment.weight > previous.weight else previous
            lines[-1] = Segment(
                text=head + space + tail,
                size=heavier.size,
                bold=heavier.bold,
                x0=previous.x0,
                x1=max(previous.x1, segment.x1),
                bottom=min(previous.bottom, segment.bottom),
                top=max(previous.top, segment.top),
                y=previous.y,
                weight=previous.weight + segment.weight,
                hyphenated=segment.hyphenated,
                start=previous.start,
                end=segment.end,
                mono=previous.mono and segment.mono,
                advance=previous.advance,
                cells=cells,
            )
        else:
            lines.append(segment)
    return lines


def _joined_cells(previous: Segment, segment: Segment, space: str) -> tuple[Cell, ...]:
    """The cells of two pieces of one line: the second's first cell continues the
    first's last unless a wide gap parts them (a raised ² inside "Area (km²)")."""
    head = previous.cells or (Cell(previous.text.strip(), previous.x0, previous.x1),)
    tail = segment.cells or (Cell(segment.text.strip(), segment.x0, segment.x1),)
    last, first = head[-1], tail[0]
    if first.x0 - last.x1 > CELL_GAP * max(previous.size, 1):
        return head + tail
    joined = Cell(last.text + space + first.text, last.x0, max(last.x1, first.x1))
    return (*head[:-1], joined, *tail[1:])


def _continues(previous: Segment, segment: Segment) -> bool:
    """Whether ``segment`` overlaps ``previous`` as part of the same line, to the right."""
    if previous.hyphenated or segment.x0 < previous.x0 or previous.table or segment.table:
        return False
    overlap = min(previous.top, segment.top) - max(previous.bottom, segment.bottom)
    lower = min(previous.top - previous.bottom, segment.top - segment.bottom)
    if lower > 0 and overlap > SAME_LINE_OVERLAP * lower:
        return True
    return abs(segment.y - previous.y) < SAME_LINE_SHIFT * max(previous.size, segment.size)


def text_line(segment: Segment) -> TextLine:
    """The merged piece as a line of the page's layout, its surrogate pairs joined."""
    table = segment.table and tuple(tuple(map(joined_surrogates, row)) for row in segment.table)
    return TextLine(
        text=joined_surrogates(segment.text),
        size=segment.size,
        y=segment.y,
        bold=segment.bold,
        x0=segment.x0,
        mono=segment.mono,
        advance=segment.advance,
        table=table,
        cells=segment.cells,
        x1=segment.x1,
    )
