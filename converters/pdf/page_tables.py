"""Tables in PDFium's page text: spread-out lines split into cells, ruled grids filled.

A line that spans much more than its characters need may be a table row: it is
split into cells at wide gaps (:func:`split_cells`), which
:mod:`converters.pdf.aligned` later lines up into tables. Lines and rectangles
drawn on the page are read as the borders a table may have
(:func:`ruled_grids`), and the text inside a grid that makes a table is
replaced by that table (:func:`table_in_place`; the geometry is
:mod:`converters.pdf.tables`).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

import pypdfium2.raw as pdfium_c

from docshelf.converters.pdf.aligned import CELL_GAP
from docshelf.converters.pdf.bidi import joined_surrogates
from docshelf.converters.pdf.layout import Cell
from docshelf.converters.pdf.pdfium_calls import GET_OBJECT, OBJECT_TYPE
from docshelf.converters.pdf.segments import BLANK, Segment
from docshelf.converters.pdf.tables import (
    MAX_RULE_THICKNESS,
    MAX_RULES,
    MIN_RULE_LENGTH,
    Grid,
    Rule,
    fill,
    find_grids,
    rules_of_box,
    table_text,
)

#: A line is split into cells only when it spans this many times the width its
#: characters need (about half a font size each): table rows are spread out...
WIDE_LINE = 1.4
#: ...and split where the gap between two words is aligned.CELL_GAP font sizes wide (a
#: header row, set closer above its columns, at this smaller gap).
HEADER_CELL_GAP = 1.0


def split_cells(
    textpage: pdfium_c.FPDF_TEXTPAGE, units: str, chars: list[str] | None, segments: list[Segment]
) -> None:
    """Give each spread-out line, and the header row above such lines, its cells."""
    spread = [_is_spread(segment) for segment in segments]
    for index, segment in enumerate(segments):
        # A header row, often set closer than the rows that follow, splits at a smaller gap.
        header = any(spread[index + 1 : index + 4])
        if spread[index] or header:
            gap = HEADER_CELL_GAP if header and not any(spread[index - 1 : index]) else CELL_GAP
            segment.cells = _cells(textpage, units, chars, segment, gap)


def _is_spread(segment: Segment) -> bool:
    """Whether a line spans much more than its characters need: a table row, maybe."""
    return segment.x1 - segment.x0 > WIDE_LINE * 0.5 * max(segment.size, 1) * len(segment.text)


def _cells(
    textpage: pdfium_c.FPDF_TEXTPAGE,
    units: str,
    chars: list[str] | None,
    segment: Segment,
    gap_sizes: float,
) -> tuple[Cell, ...] | None:
    """The line's pieces between gaps of ``gap_sizes`` font sizes, each with its edges."""
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))

    def edges(index: int) -> tuple[float, float] | None:
        if pdfium_c.FPDFText_GetCharBox(textpage, index, left, right, bottom, top):
            return left.value, right.value
        return None

    gap = gap_sizes * max(segment.size, 1)
    cells: list[Cell] = []
    first = segment.start
    while first < segment.end and units[first] in BLANK:
        first += 1
    for index in range(first, segment.end):
        if units[index] != " " or index + 1 >= segment.end or units[index + 1] in BLANK:
            continue
        before, after = edges(index - 1), edges(index + 1)
        if before is not None and after is not None and after[0] - before[1] > gap:
            cells.append(_cell(units, chars, first, index, edges))
            first = index + 1
    if not cells:
        return None
    end = segment.end
    while end > first and units[end - 1] in BLANK:
        end -= 1
    cells.append(_cell(units, chars, first, end, edges))
    return tuple(cells)


def _cell(
    units: str,
    chars: list[str] | None,
    start: int,
    end: int,
    edges: Callable[[int], tuple[float, float] | None],
) -> Cell:
    text = units[start:end] if chars is None else "".join(chars[start:end])
    head, tail = edges(start), edges(end - 1)
    x0 = head[0] if head is not None else 0.0
    return Cell(joined_surrogates(text).strip(), x0, tail[1] if tail is not None else x0)


def ruled_grids(page: pdfium_c.FPDF_PAGE) -> list[Grid]:
    """The grids the borders drawn on the page form (:func:`converters.pdf.tables.find_grids`)."""
    return find_grids(_rules(page))


def _rules(page: pdfium_c.FPDF_PAGE) -> list[Rule]:
    """Lines and outlined rectangles drawn on the page: the borders tables may have."""
    rules: list[Rule] = []
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    fill_mode, stroke = ctypes.c_int(), ctypes.c_int()
    handle = ctypes.cast(page, ctypes.c_void_p).value
    path_type = pdfium_c.FPDF_PAGEOBJ_PATH
    for index in range(pdfium_c.FPDFPage_CountObjects(page)):
        address = GET_OBJECT(handle, index)
        if OBJECT_TYPE(address) != path_type:
            continue
        obj = ctypes.cast(address, pdfium_c.FPDF_PAGEOBJECT)
        if not pdfium_c.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
            continue
        width, height = right.value - left.value, top.value - bottom.value
        outline = False
        if min(width, height) > MAX_RULE_THICKNESS:
            if min(width, height) < MIN_RULE_LENGTH:
                continue  # a dot, a glyph drawn as a shape
            pdfium_c.FPDFPath_GetDrawMode(obj, fill_mode, stroke)
            outline = bool(stroke.value) and pdfium_c.FPDFPath_CountSegments(obj) <= 5
        rules.extend(
            rules_of_box(left.value, bottom.value, right.value, top.value, outline=outline)
        )
        if len(rules) > MAX_RULES:
            return []
    return rules


def table_in_place(
    textpage: pdfium_c.FPDF_TEXTPAGE,
    units: str,
    chars: list[str] | None,
    segments: list[Segment],
    grid: Grid,
) -> list[Segment]:
    """``segments`` with those inside ``grid`` replaced by one table, if they make one."""
    inside = [
        index
        for index, segment in enumerate(segments)
        if segment.table is None
        and grid.contains((segment.x0 + segment.x1) / 2, (segment.bottom + segment.top) / 2)
    ]
    if not inside:
        return segments
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    x, y = ctypes.c_double(), ctypes.c_double()
    placed: list[tuple[str, float, float, float]] = []
    for index in inside:
        segment = segments[index]
        for char in range(segment.start, segment.end):
            if units[char] in "\r\n\ufffe":
                continue
            if pdfium_c.FPDFText_GetCharBox(
                textpage, char, left, right, bottom, top
            ) and pdfium_c.FPDFText_GetCharOrigin(textpage, char, x, y):
                text = units[char] if chars is None else chars[char]
                middle = (left.value + right.value) / 2, (bottom.value + top.value) / 2
                placed.append((text, *middle, y.value))
    table = fill(grid, placed)
    if table is None:
        return segments
    first = segments[inside[0]]
    grid_left, grid_bottom, grid_right, grid_top = grid.bounds
    as_segment = Segment(
        text=table_text(table),
        size=first.size,
        bold=False,
        x0=grid_left,
        x1=grid_right,
        bottom=grid_bottom,
        top=grid_top,
        y=first.y,
        weight=sum(segments[index].weight for index in inside),
        hyphenated=False,
        table=table,
    )
    taken = set(inside)
    return [
        as_segment if index == inside[0] else segment
        for index, segment in enumerate(segments)
        if index == inside[0] or index not in taken
    ]
