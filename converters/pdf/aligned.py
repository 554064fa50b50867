"""Tables set without rules: rows of a page whose cells line up in columns.

The extractor splits a spread-out line at its wide gaps into cells
(:attr:`TextLine.cells`, with their left and right edges). A run of such lines
a line's pitch or so apart is a table when its cells fall into columns. Rows
need not fill every column: an inventory lists a location on one line and
the count on the next, a schedule marks a few months of twelve. So columns
are found from the whole run, not row by row: they are the stretches of the
page that cells of at least two rows cover (one row may run across a gap: a
header spanning two columns, a long value), and a cell clear of them all is a
column of its own. Each cell goes to the column where it starts.

What keeps prose and lists out: every row has two or more cells, at least
three rows (or a header and one row of three cells or more, each above one
of the other's), short cells (columns of prose side by side also line up, but
their cells are long), each column's cells below the first row sharing a
left, right or centre edge, and no table of contents (titles, then page
numbers that never decrease). A run that fails as a whole is tried again in
pieces of rows with the same number of cells.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from itertools import groupby, pairwise
from typing import TYPE_CHECKING

from docshelf.converters.pdf.tables import Table, table_text

if TYPE_CHECKING:
    from docshelf.converters.pdf.layout import Cell, TextLine

#: A gap this many font sizes wide between two words of a line makes them two cells
#: (converters.pdf.page_tables splits lines there; drawn_order joins pieces only across less).
CELL_GAP = 1.5

#: A table set without rules has at least this many rows...
MIN_ALIGNED_ROWS = 3
#: ...or two (a header and one row) of this many cells each, one above the other.
MIN_PAIRED_CELLS = 3
#: ...at most this many font sizes apart...
MAX_ROW_PITCH = 3.0
#: ...and cells this long at most on average.
MAX_CELL_CHARS = 40
#: Runs are looked at this many rows at a time at most (the work is quadratic in columns).
MAX_RUN_ROWS = 500

Column = tuple[float, float]

_PAGE_NUMBER = re.compile(r"(?:^|\.)[\s.]*?(\d{1,5})\.?$")


def aligned_tables(lines: Sequence[TextLine]) -> list[TextLine]:
    """``lines`` with each run of rows whose cells line up made one table line."""
    out: list[TextLine] = []
    index = 0
    while index < len(lines):
        end = index + 1
        if len(lines[index].cells or ()) >= 2:
            while (
                end < len(lines)
                and end - index < MAX_RUN_ROWS
                and _next_row(lines[end - 1], lines[end])
            ):
                end += 1
        out.extend(_run_tables(lines[index:end]))
        index = end
    return out


def _next_row(above: TextLine, line: TextLine) -> bool:
    if len(line.cells or ()) < 2 or above.y is None or line.y is None:
        return False
    return 0 < above.y - line.y <= MAX_ROW_PITCH * max(above.size, line.size, 1.0)


def _run_tables(rows: Sequence[TextLine]) -> list[TextLine]:
    """The run as one table, else its pieces of equal cell counts that are tables, else lines."""
    table = _table(rows)
    if table is not None:
        return [_table_line(rows, table)]
    out: list[TextLine] = []
    start = 0
    for _count, group in groupby(rows, key=lambda row: len(row.cells or ())):
        piece = rows[start : start + len(list(group))]
        start += len(piece)
        table = _table(piece, paired=False) if len(piece) < len(rows) else None
        out.extend([_table_line(piece, table)] if table is not None else piece)
    return out


def _table_line(rows: Sequence[TextLine], table: Table) -> TextLine:
    return replace(rows[0], text=table_text(table), table=table, cells=None)


def _table(rows: Sequence[TextLine], *, paired: bool = True) -> Table | None:
    """The rows as a table, when their cells fall into aligned columns (``paired``:
    two rows may be one, when they are the whole run, not a piece of a longer one)."""
    cells = [[cell for cell in row.cells or () if cell.text] for row in rows]
    if len(rows) < MIN_ALIGNED_ROWS and not (paired and _header_and_row(cells)):
        return None
    texts = [cell.text for row in cells for cell in row]
    if any(len(row) < 2 for row in cells) or sum(map(len, texts)) > MAX_CELL_CHARS * len(texts):
        return None
    columns = _columns(cells)
    if len(columns) < 2:
        return None
    table: list[list[str]] = []
    for row in cells:
        out = [""] * len(columns)
        for cell in row:
            at = _column_of(cell, columns)
            out[at] = f"{out[at]} {cell.text}" if out[at] else cell.text
        if sum(1 for text in out if text) < 2:
            return None
        table.append(out)
    tolerance = max(2.0, 0.5 * max(row.size for row in rows))
    if _is_contents(table) or not _edges_line_up(cells[1:], columns, tolerance):
        return None
    return tuple(tuple(row) for row in table)


def _header_and_row(rows: Sequence[Sequence[Cell]]) -> bool:
    """Whether two rows are a header over one row: three cells or more each, every cell
    above exactly one of the other row's (a summary line under its column names)."""
    if len(rows) != 2 or len(rows[0]) != len(rows[1]) or len(rows[0]) < MIN_PAIRED_CELLS:
        return False
    above, below = rows
    return all(
        sum(1 for other in below if _overlap(cell, (other.x0, other.x1)) > 0) == 1 for cell in above
    ) and all(
        sum(1 for other in above if _overlap(cell, (other.x0, other.x1)) > 0) == 1 for cell in below
    )


def _columns(rows: Sequence[Sequence[Cell]]) -> list[Column]:
    """The stretches of x that cells of more than ``spanning`` rows cover, and cells clear of them.

    One row may cross a gap between columns (a header over two, a long value)
    when the run has four rows or more.
    """
    spanning = 1 if len(rows) >= 4 else 0
    events = sorted((x, step) for row in rows for cell in row for x, step in _ends(cell))
    strong: list[Column] = []
    depth, start = 0, 0.0
    for x, step in events:
        before, depth = depth, depth + step
        if before <= spanning < depth:
            start = x
        elif depth <= spanning < before and x > start:
            strong.append((start, x))
    strong = _slivers_merged(strong, [cell for row in rows for cell in row])
    columns = list(strong)
    for row in rows:
        for cell in row:
            if not any(_overlap(cell, column) > 0 for column in columns):
                columns.append((cell.x0, cell.x1))
    columns.sort()
    merged: list[Column] = []
    for column in columns:
        if merged and column[0] < merged[-1][1] and column not in strong:
            merged[-1] = (merged[-1][0], max(merged[-1][1], column[1]))
        else:
            merged.append(column)
    return merged


def _slivers_merged(strong: list[Column], cells: Sequence[Cell]) -> list[Column]:
    """Columns made only of cells overhanging from their neighbours merged to the left.

    Two cells running past their column's edge (a long label, a header over two
    columns) cover a sliver beyond it together; a sliver every one of whose cells
    reaches into another column, and one of them from the column to its left, is
    that column's edge, not a column.
    """
    out: list[Column] = []
    for column in strong:
        covering = [cell for cell in cells if _overlap(cell, column) > 0]
        if (
            out
            and all(
                any(_overlap(cell, other) > 0 for other in (*out, *strong) if other != column)
                for cell in covering
            )
            and any(_overlap(cell, out[-1]) > 0 for cell in covering)
        ):
            out[-1] = (out[-1][0], column[1])
        else:
            out.append(column)
    return out


def _ends(cell: Cell) -> tuple[tuple[float, int], tuple[float, int]]:
    # At one x, ends come before starts: touching cells leave a gap of zero width.
    return (cell.x0, 1), (cell.x1, -1)


def _overlap(cell: Cell, column: Column) -> float:
    return min(cell.x1, column[1]) - max(cell.x0, column[0])


def _column_of(cell: Cell, columns: Sequence[Column]) -> int:
    """The column the cell starts in, else the first it reaches into, else the nearest."""
    for index, (left, right) in enumerate(columns):
        if left <= cell.x0 < right:
            return index
    for index, column in enumerate(columns):
        if _overlap(cell, column) > 0:
            return index
    return min(range(len(columns)), key=lambda index: abs(columns[index][0] - cell.x0))


def _edges_line_up(
    rows: Sequence[Sequence[Cell]], columns: Sequence[Column], tolerance: float
) -> bool:
    """Whether each column's cells (those within it) share a left, right or centre edge."""
    by_column: list[list[Cell]] = [[] for _ in columns]
    for row in rows:
        for cell in row:
            reached = [index for index, column in enumerate(columns) if _overlap(cell, column) > 0]
            if len(reached) <= 1:
                by_column[_column_of(cell, columns)].append(cell)
    for column in by_column:
        if len(column) < 2:
            continue
        edges = (
            [cell.x0 for cell in column],
            [cell.x1 for cell in column],
            [(cell.x0 + cell.x1) / 2 for cell in column],
        )
        if not any(max(values) - min(values) <= tolerance for values in edges):
            return False
    return True


def _is_contents(table: Sequence[Sequence[str]]) -> bool:
    """Whether rows are a table of contents: titles, then page numbers that never decrease.

    The number may end a cell of dot leaders ("Fundamentalgruppe . . . 47").
    """
    pages: list[int] = []
    for row in table:
        found = _PAGE_NUMBER.search(row[-1])
        if found is None:
            return False
        pages.append(int(found.group(1)))
    return len(table[0]) == 2 and all(a <= b for a, b in pairwise(pages))
