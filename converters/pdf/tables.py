"""Ruled tables on a PDF page: grids found from drawn lines, cells filled with characters.

A PDF has no tables, only text and lines drawn near it. Word processors and
fpdf2-like generators draw a table's borders as thin lines or as one stroked
rectangle per cell; either way the borders meet. Borders that meet form a
grid (:func:`find_grids`); a grid with at least two rows and two columns and
text in a fair share of its cells is a table, and each character goes to the
cell its centre falls in (:func:`fill`). A column border missing across a row
band means merged cells: the text goes to the first of them, the others stay
empty (Markdown tables have no column spans).

Tables set without borders (aligned columns only, like TeX's booktabs) are
not found here; their rows stay lines of text.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Protocol

#: Lines and rectangle edges this close (points) are the same border; a
#: stroked rectangle's bounds include half its line width.
TOLERANCE = 2.0
#: A drawn box at most this thick is a line.
MAX_RULE_THICKNESS = 3.0
#: Shorter lines are glyph parts or decoration, not borders.
MIN_RULE_LENGTH = 5.0
#: More drawn pieces than this on a page is a drawing (chart, map), not a table
#: (a table drawn as one rectangle per cell reaches it at about 250 cells).
MAX_RULES = 1000
#: A grid is a table only when at least this share of its cells hold text
#: (a chart's gridlines enclose next to none)...
MIN_FILLED_SHARE = 0.5
#: ...and they hold this many characters on average (a drawn lattice of dots
#: or stars is a figure).
MIN_CELL_CHARS = 2.0
#: The grid's frame must be drawn along this share of each side: lines that
#: cross inside a diagram seldom close a frame.
MIN_FRAME_SHARE = 0.9
#: A grid one of whose cells holds this many lines set in columns of their own
#: is a frame drawn around a layout (a form, a page border), not a table.
MIN_LAYOUT_LINES = 3

Table = tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class Rule:
    """A horizontal (``y0 == y1``) or vertical (``x0 == x1``) border in page space."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def horizontal(self) -> bool:
        return self.y0 == self.y1


def rules_of_box(
    left: float, bottom: float, right: float, top: float, *, outline: bool
) -> list[Rule]:
    """The borders a drawn path stands for, from its bounds.

    A thin box is one line; a larger one counts only as a rectangle's outline
    (``outline``: a stroked path of at most five segments), i.e. four borders.
    """
    width, height = right - left, top - bottom
    if height <= MAX_RULE_THICKNESS and width >= MIN_RULE_LENGTH:
        y = (top + bottom) / 2
        return [Rule(left, y, right, y)]
    if width <= MAX_RULE_THICKNESS and height >= MIN_RULE_LENGTH:
        x = (left + right) / 2
        return [Rule(x, bottom, x, top)]
    if outline and width >= MIN_RULE_LENGTH and height >= MIN_RULE_LENGTH:
        return [
            Rule(left, top, right, top),
            Rule(left, bottom, right, bottom),
            Rule(left, bottom, left, top),
            Rule(right, bottom, right, top),
        ]
    return []


@dataclass(frozen=True, slots=True)
class Grid:
    """A table's borders: column edges left to right, row edges top to bottom."""

    xs: tuple[float, ...]
    ys: tuple[float, ...]
    verticals: tuple[Rule, ...]

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """left, bottom, right, top."""
        return self.xs[0], self.ys[-1], self.xs[-1], self.ys[0]

    def contains(self, x: float, y: float) -> bool:
        left, bottom, right, top = self.bounds
        return left < x < right and bottom < y < top

    def spans(self, row: int) -> list[tuple[int, float, float]]:
        """The cells of one row band: (first column, left, right), merged cells as one."""
        middle = (self.ys[row] + self.ys[row + 1]) / 2
        edges = [0]
        for column in range(1, len(self.xs) - 1):
            x = self.xs[column]
            if any(
                abs(rule.x0 - x) <= TOLERANCE
                and rule.y0 - TOLERANCE <= middle <= rule.y1 + TOLERANCE
                for rule in self.verticals
            ):
                edges.append(column)
        edges.append(len(self.xs) - 1)
        return [(a, self.xs[a], self.xs[b]) for a, b in pairwise(edges)]


class _Piece(Protocol):
    @property
    def x0(self) -> float: ...
    @property
    def x1(self) -> float: ...


class SpreadLine(Protocol):
    """A line of text: its vertical extent and, if spread out, its pieces between wide gaps."""

    @property
    def bottom(self) -> float: ...
    @property
    def top(self) -> float: ...
    @property
    def cells(self) -> Sequence[_Piece] | None: ...


def frames_layout(grid: Grid, lines: Iterable[SpreadLine]) -> bool:
    """Whether ``grid`` is a frame around a layout rather than a table.

    A rectangle drawn around a page or a block of a form closes a "grid" of
    one or two huge cells; the label/value lines inside are set in columns of
    their own, wide gaps apart within one cell, where a table cell holds
    running text. Such a grid is left alone, its lines stay lines (and may
    make a table set without rules).
    """
    found = 0
    rows = len(grid.ys) - 1
    for line in lines:
        pieces = line.cells or ()
        middle = (line.bottom + line.top) / 2
        row = next((r for r in range(rows) if grid.ys[r + 1] < middle < grid.ys[r]), None)
        if row is None or len(pieces) < 2:
            continue
        spans = grid.spans(row)
        where = [
            next((c for c, left, right in spans if left < (p.x0 + p.x1) / 2 < right), None)
            for p in pieces
        ]
        if any(a is not None and a == b for a, b in pairwise(where)):
            found += 1
            if found >= MIN_LAYOUT_LINES:
                return True
    return False


def find_grids(rules: Sequence[Rule]) -> list[Grid]:
    """Grids of at least two rows and two columns formed by borders that meet."""
    if len(rules) > MAX_RULES:
        return []
    # Verticals by x, so that each horizontal meets only those within its reach.
    verticals = sorted(
        (index for index, rule in enumerate(rules) if not rule.horizontal),
        key=lambda index: rules[index].x0,
    )
    if len(verticals) < 3 or len(rules) - len(verticals) < 3:
        return []
    vertical_xs = [rules[index].x0 for index in verticals]
    parent = list(range(len(rules)))

    def root(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    for h_index, h in enumerate(rules):
        if not h.horizontal:
            continue
        low = bisect_left(vertical_xs, h.x0 - TOLERANCE)
        high = bisect_right(vertical_xs, h.x1 + TOLERANCE)
        for v_index in verticals[low:high]:
            v = rules[v_index]
            if v.y0 - TOLERANCE <= h.y0 <= v.y1 + TOLERANCE:
                parent[root(h_index)] = root(v_index)
    groups: dict[int, list[Rule]] = {}
    for index, rule in enumerate(rules):
        groups.setdefault(root(index), []).append(rule)
    grids = []
    for group in groups.values():
        xs = _edges(rule.x0 for rule in group if not rule.horizontal)
        ys = _edges((rule.y0 for rule in group if rule.horizontal), descending=True)
        if len(xs) >= 3 and len(ys) >= 3 and _framed(xs, ys, group):
            grids.append(Grid(xs, ys, tuple(rule for rule in group if not rule.horizontal)))
    return grids


def _framed(xs: Sequence[float], ys: Sequence[float], rules: Sequence[Rule]) -> bool:
    """Whether borders run along the four sides of the grid's box, and not past it.

    Gridlines of a chart cross and run on past each other; a table's borders
    end where its frame does.
    """
    left, right, top, bottom = xs[0], xs[-1], ys[0], ys[-1]
    reach = 2 * TOLERANCE
    if any(
        rule.x0 < left - reach
        or rule.x1 > right + reach
        or rule.y0 < bottom - reach
        or rule.y1 > top + reach
        for rule in rules
    ):
        return False
    sides = (
        (True, top, left, right),
        (True, bottom, left, right),
        (False, left, bottom, top),
        (False, right, bottom, top),
    )
    for horizontal, at, low, high in sides:
        covered = [
            (rule.x0, rule.x1) if horizontal else (rule.y0, rule.y1)
            for rule in rules
            if rule.horizontal == horizontal
            and abs((rule.y0 if horizontal else rule.x0) - at) <= TOLERANCE
        ]
        if _covered_length(covered, low, high) < MIN_FRAME_SHARE * (high - low):
            return False
    return True


def _covered_length(pieces: Sequence[tuple[float, float]], low: float, high: float) -> float:
    """How much of [low, high] the pieces cover together."""
    total, reached = 0.0, low
    for start, end in sorted(pieces):
        start, end = max(start, reached), min(end, high)
        if end > start:
            total += end - start
            reached = end
    return total


def _edges(values: Iterable[float], *, descending: bool = False) -> tuple[float, ...]:
    """Positions merged within :data:`TOLERANCE`, each the mean of its cluster."""
    clusters: list[list[float]] = []
    for value in sorted(values):
        if clusters and value - clusters[-1][-1] <= TOLERANCE:
            clusters[-1].append(value)
        else:
            clusters.append([value])
    edges = [sum(cluster) / len(cluster) for cluster in clusters]
    return tuple(reversed(edges)) if descending else tuple(edges)


def fill(grid: Grid, chars: Iterable[tuple[str, float, float, float]]) -> Table | None:
    """Cell texts from characters (text, centre x, centre y, baseline) in reading order.

    None when too few cells hold text for the grid to be a table.
    """
    rows = len(grid.ys) - 1
    spans = [grid.spans(row) for row in range(rows)]
    cells: list[list[list[str]]] = [[[] for _ in range(len(grid.xs) - 1)] for _ in range(rows)]
    last_y: dict[tuple[int, int], float] = {}
    for text, x, y, baseline in chars:
        row = next((r for r in range(rows) if grid.ys[r + 1] < y < grid.ys[r]), None)
        if row is None:
            continue
        column = next((c for c, left, right in spans[row] if left < x < right), None)
        if column is None:
            continue
        cell = cells[row][column]
        previous = last_y.get((row, column))
        if previous is not None and abs(previous - baseline) > TOLERANCE and cell[-1:] != [" "]:
            cell.append(" ")  # the cell's text goes on on its next line
        cell.append(text)
        last_y[(row, column)] = baseline
    table = tuple(tuple(" ".join("".join(cell).split()) for cell in row) for row in cells)
    filled = [cell for row in table for cell in row if cell]
    filled_rows = sum(1 for row in table if any(row))
    if (
        filled_rows < 2
        or len(filled) < MIN_FILLED_SHARE * sum(len(row) for row in spans)
        or sum(len(cell) for cell in filled) < MIN_CELL_CHARS * len(filled)
    ):
        return None
    return table


def table_text(table: Table) -> str:
    """Plain text of a table: a row per line, cells apart by a tab."""
    return "\n".join("\t".join(row).rstrip("\t") for row in table)
