"""A sheet's cells as a table: shown as displayed, trimmed, headed, capped.

A cell shows as its spreadsheet displays it where the workbook says how
(:mod:`.formats`): an .xlsx cell through its number format (:mod:`.numfmt`:
``25.6%``, ``1,234.50``, ``€1,234.50``, ``14/03/2024``, ``01:30 PM``), an .ods
cell as the text LibreOffice stored beside the value. Otherwise — .xls, General,
and the formats :mod:`.numfmt` does not render — it shows as calamine's type
carries it (:func:`display`): whole numbers without ".0", other numbers to 15
significant digits (Excel's precision), dates as ISO dates, times as ``HH:MM``
(``:SS`` when there are seconds), booleans as ``TRUE``/``FALSE``; 25.6 % then
shows as 0.256 — the value, never a rounding of it.

The JSON keeps the values (numbers stay numbers) and adds, per sheet, the
displayed text of the cells where it differs from that plain display
(``"displayed": {"E4": "25.6%"}``), so a reader gets both without guessing.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

#: A shown cell's text: (0-based row, 0-based column, raw value) → text, ``None`` to fall back.
Shown = Callable[[int, int, Any], str | None]

#: Cells the tables of one workbook show in all (the Markdown must stay readable and renderable).
MAX_SHOWN_CELLS = 25_000
#: Columns one sheet's table shows.
MAX_SHOWN_COLUMNS = 50


def display(value: Any) -> str:
    """A cell's value as a spreadsheet shows it (see the module's docstring)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:.15g}"
    if isinstance(value, datetime.datetime):
        return f"{value.date().isoformat()} {_clock(value.time())}"
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, datetime.time):
        return _clock(value)
    if isinstance(value, datetime.timedelta):
        seconds = int(value.total_seconds())
        sign, seconds = ("-", -seconds) if seconds < 0 else ("", seconds)
        return f"{sign}{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return str(value)


def _clock(time: datetime.time) -> str:
    return time.strftime("%H:%M:%S" if time.second else "%H:%M")


def json_value(value: Any) -> Any:
    """A cell for the JSON view: numbers stay numbers, empty cells are null, the rest as shown."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 1e15 else value
    if isinstance(value, int | str):
        return value
    return display(value)


def is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def column_letters(index: int) -> str:
    """Excel's name of the 0-based column ``index`` (0 → A, 26 → AA)."""
    letters = ""
    index += 1
    while index:
        index, remainder = divmod(index - 1, 26)
        letters = chr(65 + remainder) + letters
    return letters


def cell_range(first_row: int, first_column: int, last_row: int, last_column: int) -> str:
    """A1 notation of a range of 0-based, inclusive rows and columns."""
    return (
        f"{column_letters(first_column)}{first_row + 1}:{column_letters(last_column)}{last_row + 1}"
    )


@dataclass
class Budget:
    """What is left of :data:`MAX_SHOWN_CELLS` for the workbook's remaining sheets."""

    cells: int = MAX_SHOWN_CELLS


@dataclass(frozen=True)
class SheetTable:
    """One sheet as docshelf shows it.

    ``rows``/``columns`` and ``first_row``/``first_column`` (0-based) are the used range:
    from the first to the last non-empty row and column. ``header`` names the shown
    columns: the sheet's first row when ``header_row``, else the columns' letters.
    ``body`` holds the shown rows under it (raw values), at most the budget allows, and
    ``texts`` the same cells as displayed.
    """

    name: str
    hidden: bool
    first_row: int = 0
    first_column: int = 0
    rows: int = 0
    columns: int = 0
    header: list[str] = field(default_factory=list)
    header_row: bool = False
    body: list[list[Any]] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    texts: list[list[str]] = field(default_factory=list)

    @property
    def body_first_row(self) -> int:
        """The 0-based row of ``body[0]``."""
        return self.first_row + self.header_row

    @property
    def shown_columns(self) -> int:
        return len(self.header)

    @property
    def rows_left_out(self) -> int:
        return self.rows - len(self.body) - self.header_row

    @property
    def columns_left_out(self) -> int:
        return self.columns - self.shown_columns

    @property
    def range(self) -> str | None:
        if not self.rows:
            return None
        return cell_range(
            self.first_row,
            self.first_column,
            self.first_row + self.rows - 1,
            self.first_column + self.columns - 1,
        )


def read_sheet(
    name: str,
    hidden: bool,
    rows: Callable[[], Iterable[Sequence[Any]]],
    column_offset: int,
    budget: Budget,
    merged: list[str],
    shown: Shown | None = None,
) -> SheetTable:
    """The table of one sheet from its rows (``rows()`` iterates them afresh each call,
    the first at row 0, at column ``column_offset``); ``shown`` gives a cell's displayed
    text (:func:`display` where it gives ``None``).

    Two passes: the first finds the used range (empty leading and trailing rows and
    columns are trimmed), the second keeps the rows the budget allows.
    """
    first_row = last_row = first_column = last_column = -1
    for index, row in enumerate(rows()):
        filled = [j for j, value in enumerate(row) if not is_blank(value)]
        if filled:
            first_row = index if first_row < 0 else first_row
            last_row = index
            first_column = filled[0] if first_column < 0 else min(first_column, filled[0])
            last_column = max(last_column, filled[-1])
    if first_row < 0:
        return SheetTable(name, hidden, merged=merged)
    height, width = last_row - first_row + 1, last_column - first_column + 1
    shown_width = min(width, MAX_SHOWN_COLUMNS)
    wanted = min(height, budget.cells // shown_width)
    budget.cells -= wanted * shown_width
    kept: list[list[Any]] = []
    for index, row in enumerate(rows()):
        if index >= first_row + wanted:
            break
        if index >= first_row:
            cells = list(row[first_column : first_column + shown_width])
            kept.append(cells + [None] * (shown_width - len(cells)))
    letters = [column_letters(column_offset + first_column + j) for j in range(shown_width)]
    texts = [
        [
            _text(shown, first_row + i, column_offset + first_column + j, value)
            for j, value in enumerate(row)
        ]
        for i, row in enumerate(kept)
    ]
    header_row = bool(kept) and is_header(kept[0], kept[1:])
    header = (
        [text.strip() or letter for text, letter in zip(texts[0], letters, strict=True)]
        if header_row
        else letters
    )
    return SheetTable(
        name,
        hidden,
        first_row,
        column_offset + first_column,
        height,
        width,
        header,
        header_row,
        kept[1:] if header_row else kept,
        merged,
        texts[1:] if header_row else texts,
    )


def _text(shown: Shown | None, row: int, column: int, value: Any) -> str:
    if shown is None or value is None or value == "":
        return display(value)
    text = shown(row, column, value)
    return display(value) if text is None else text


def is_header(first: Sequence[Any], below: Sequence[Sequence[Any]]) -> bool:
    """Whether the used range's first row names its columns.

    It does when all its non-empty cells are text and the rows below differ from
    it: some column below holds a number, date or boolean, or none of its texts
    comes back in its own column below. A lone row is data.
    """
    if not below or not all(isinstance(v, str) for v in first if not is_blank(v)):
        return False
    if all(is_blank(v) for v in first):
        return False
    if any(not isinstance(v, str) and not is_blank(v) for row in below for v in row):
        return True
    return not any(
        not is_blank(value) and row[j] == value for j, value in enumerate(first) for row in below
    )
