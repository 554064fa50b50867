"""A page's lines in the order they sit on the page, where the PDF draws them otherwise.

PDFium gives lines in the order the content stream draws them, which is the
reading order for nearly every document. Forms exported from spreadsheets
and report writers are the exception: they draw the cells first and the
section bars above them last (white text on a dark band), or a label in one
pass and its value in a later one. Read as drawn, the bar "Customer
Information" lands at the foot of the page and "Note" is separated from
"Minor rear bumper repair" by the paragraph below them.

Three repairs, each only where the drawing order contradicts the page:

- A line of words drawn after lines that sit *below it in the same column*
  (they overlap it horizontally by half the narrower one's width) moves up to
  just before the first of them; a drawing's labels stay where drawn, and
  so do lines printed over a table's rows. A new column, drawn after the previous column,
  overlaps none of its lines and stays where it is.
- Two lines drawn one after the other on one baseline, the second to the
  right of the first, are one visual line; a wide gap between them makes
  them cells (a label and its value).
- Two blocks of label/value rows (lines split into cells), the second drawn
  after the first, to its right, on the same baselines, are one block whose
  rows hold both: a form's left and right halves.

Lines without a position (pypdf's fallback extraction) are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from docshelf.converters.pdf.aligned import CELL_GAP, MAX_ROW_PITCH

if TYPE_CHECKING:
    from docshelf.converters.pdf.layout import Cell, TextLine

#: Lines overlapping horizontally by this share of the narrower one are in one column.
MIN_COLUMN_OVERLAP = 0.5
#: Baselines this many font sizes apart are the same baseline.
SAME_BASELINE = 0.2
#: Lines moved up at most per page: beyond, the drawing order is the page's own
#: (a chart's labels, say), and the work stays linear.
MAX_MOVES = 200
#: A line moves up only when it holds this many words: the labels of a drawing
#: (axis ticks, a variable's name) sit where the drawing puts them, and read no
#: better moved.
MIN_MOVED_WORDS = 2
_WORD = re.compile(r"[^\W\d_]{2,}")
#: Side by side blocks share at least this many baselines.
MIN_SHARED_ROWS = 2
#: Blocks longer than this are not paired row by row (the work is their product).
MAX_BLOCK_ROWS = 200


def in_drawn_order_repaired(lines: Sequence[TextLine]) -> list[TextLine]:
    """``lines`` in the order they sit on the page where they were drawn out of it."""
    return _same_baseline_joined(_side_by_side_joined(_moved_up(lines)))


def _placed(line: TextLine) -> bool:
    return line.y is not None and line.x0 is not None and line.x1 is not None


def _box(line: TextLine) -> tuple[float, float, float]:
    """A placed line's left edge, right edge and baseline."""
    return line.x0 or 0.0, line.x1 or 0.0, line.y or 0.0


def _in_column(a: TextLine, b: TextLine) -> bool:
    assert a.x0 is not None and a.x1 is not None and b.x0 is not None and b.x1 is not None
    overlap = min(a.x1, b.x1) - max(a.x0, b.x0)
    narrower = min(a.x1 - a.x0, b.x1 - b.x0)
    return overlap > 0 and overlap >= MIN_COLUMN_OVERLAP * narrower


def _tolerance(a: TextLine, b: TextLine) -> float:
    return SAME_BASELINE * max(a.size, b.size, 1.0)


def _moved_up(lines: Sequence[TextLine]) -> list[TextLine]:
    """Each line drawn after lines below it in its column placed before them."""
    out: list[TextLine] = []
    moves = 0
    for line in lines:
        previous = out[-1] if out else None
        jumps_up = (
            previous is not None
            and len(_WORD.findall(line.text)) >= MIN_MOVED_WORDS
            and _placed(line)
            and _placed(previous)
            and _box(line)[2] > _box(previous)[2] + _tolerance(line, previous)
        )
        at = _place_above(out, line) if jumps_up and moves < MAX_MOVES else None
        if at is None:
            out.append(line)
        else:
            out.insert(at, line)
            moves += 1
    return out


def _place_above(placed: Sequence[TextLine], line: TextLine) -> int | None:
    """Where ``line`` goes among ``placed``: before the first line below it in its
    column, unless a line above it in its column follows there (then it stays)."""
    assert line.y is not None
    at = None
    for index, other in enumerate(placed):
        if not _placed(other) or not _in_column(line, other):
            continue
        assert other.y is not None
        below = other.y < line.y - _tolerance(line, other)
        if at is None and below:
            if index and _rows_of_one_table(placed[index - 1], other):
                return None  # text overprinted on a table's rows is not one of them
            at = index
        elif at is not None and other.y > line.y + _tolerance(line, other):
            return None
    return at


def _rows_of_one_table(above: TextLine, below: TextLine) -> bool:
    """Whether two lines are consecutive rows of a table set without rules."""
    if not (above.cells and below.cells and above.y is not None and below.y is not None):
        return False
    return 0 < above.y - below.y <= MAX_ROW_PITCH * max(above.size, below.size, 1.0)


def _cells_of(line: TextLine) -> tuple[Cell, ...]:
    # layout imports this module: its Cell is imported when first needed.
    from docshelf.converters.pdf.layout import Cell

    if line.cells:
        return line.cells
    assert line.x0 is not None and line.x1 is not None
    return (Cell(line.text, line.x0, line.x1),)


def _joined(left: TextLine, right: TextLine) -> TextLine:
    """Two pieces of one visual line, left to right, as one line."""
    assert left.x1 is not None and right.x0 is not None
    size = max(left.size, right.size)
    cells = None
    if left.cells or right.cells or right.x0 - left.x1 > CELL_GAP * max(size, 1.0):
        cells = _cells_of(left) + _cells_of(right)
    return replace(
        left,
        text=f"{left.text} {right.text}",
        size=size,
        bold=left.bold and right.bold,
        x1=right.x1,
        mono=left.mono and right.mono,
        cells=cells,
    )


def _beside(left: TextLine, right: TextLine) -> bool:
    """Whether ``right`` continues ``left`` on its baseline, to its right."""
    if not (_placed(left) and _placed(right)) or left.table or right.table:
        return False
    assert left.y is not None and right.y is not None
    assert left.x1 is not None and right.x0 is not None
    return abs(left.y - right.y) <= _tolerance(left, right) and right.x0 >= left.x1


def _same_baseline_joined(lines: Sequence[TextLine]) -> list[TextLine]:
    out: list[TextLine] = []
    for line in lines:
        if out and _beside(out[-1], line):
            out[-1] = _joined(out[-1], line)
        else:
            out.append(line)
    return out


def _descending_run(lines: Sequence[TextLine], start: int, *, rows: bool = False) -> int:
    """The end of the run of placed lines from ``start``, each below the one before
    (``rows``: and each split into cells)."""
    end = start + 1
    while (
        end < len(lines)
        and _placed(lines[end])
        and _box(lines[end])[2] < _box(lines[end - 1])[2]
        and (lines[end].cells or not rows)
    ):
        end += 1
    return end


def _side_by_side_joined(lines: Sequence[TextLine]) -> list[TextLine]:
    """Each block of rows drawn after the block to its left, on its baselines, joined
    into it row by row."""
    out = list(lines)
    start = 0
    while start < len(out):
        if not _placed(out[start]):
            start += 1
            continue
        middle = _descending_run(out, start)
        if middle >= len(out) or not _placed(out[middle]) or not out[middle].cells:
            start = middle
            continue
        end = _descending_run(out, middle, rows=True)
        joined = _blocks_joined(out[start:middle], out[middle:end])
        if joined is None:
            start = middle
            continue
        out[start:end] = joined
        start += len(joined)
    return out


def _blocks_joined(left: Sequence[TextLine], right: Sequence[TextLine]) -> list[TextLine] | None:
    """The two blocks as one, rows on a shared baseline joined; None unless ``right`` is
    rows of cells wholly to the right of ``left`` sharing enough of its baselines."""
    if len(left) > MAX_BLOCK_ROWS or len(right) > MAX_BLOCK_ROWS:
        return None
    reach = _tolerance(right[0], right[0])
    top = max(_box(row)[2] for row in right) + reach
    bottom = min(_box(row)[2] for row in right) - reach
    beside = [line for line in left if bottom <= _box(line)[2] <= top]
    if not beside or min(_box(row)[0] for row in right) < max(_box(line)[1] for line in beside):
        return None
    partner: dict[int, int] = {}
    for r_index, row in enumerate(right):
        for l_index, line in enumerate(left):
            if l_index not in partner and _beside(line, row) and line.cells:
                partner[l_index] = r_index
                break
    if len(partner) < MIN_SHARED_ROWS:
        return None
    merged = [
        _joined(line, right[partner[i]]) if i in partner else line for i, line in enumerate(left)
    ]
    alone = [row for index, row in enumerate(right) if index not in partner.values()]
    # Rows of the right block alone on their baseline go where they sit.
    return sorted(merged + alone, key=lambda line: -(line.y or 0.0))
