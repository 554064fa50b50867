"""How many cells a workbook's sheets span, measured before python-calamine reads them.

calamine stores each sheet as a dense grid from its first to its last cell
(about 32 bytes a cell): a 5 KB .xlsx with one cell in A1 and one in
CV1000000 took 3.2 GB, an 806-byte .ods whose rows and columns say
"repeated 2000 and 1000 times" 136 MB. The ZIP checks of
:mod:`converters.package` cannot see that, so the grid is measured here from
the XML itself and a workbook spanning more than :data:`MAX_GRID_CELLS` is
refused before calamine allocates anything. The measure counts from A1 and
never undercounts, so it may refuse a little early, never late.

The same single pass collects what :mod:`.formats` needs to show numbers as
displayed: an .xlsx cell's style index (only for styles with a number format), an
.ods numeric cell's text. Memory stays bounded by :class:`Window`: only cells that
may be shown are kept, whatever the sheet's size.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element, ParseError

from docshelf.converters.base import ConversionError, FailureReason
from docshelf.converters.failures import conversion_failure, describe
from docshelf.converters.package import read_member
from docshelf.converters.sheets.formats import Displayed
from docshelf.converters.sheets.table import MAX_SHOWN_CELLS, MAX_SHOWN_COLUMNS

#: Cells (rows times columns of the used ranges) all sheets together may span: ~32 MB in
#: calamine for an .xlsx (one sheet at a time), ~64 MB for an .ods (read whole).
MAX_GRID_CELLS = 1_000_000

# A worksheet's <row> and <c> start tags, any namespace prefix; a cell without a
# value is self-closing (a styled blank, which calamine leaves out).
_TAG = re.compile(rb"<(?:[\w.-]+:)?(row|c)(?=[\s/>])([^>]*)>")
_REF = re.compile(rb"""\sr\s*=\s*["']([A-Za-z]*)(\d*)["']""")
_STYLE = re.compile(rb"""\ss\s*=\s*["'](\d+)["']""")

_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_ROW, _CELL, _COVERED = (
    f"{{{_TABLE}}}table-row",
    f"{{{_TABLE}}}table-cell",
    f"{{{_TABLE}}}covered-table-cell",
)
_ROWS_REPEATED = f"{{{_TABLE}}}number-rows-repeated"
_COLUMNS_REPEATED = f"{{{_TABLE}}}number-columns-repeated"
_VALUE_TYPE = f"{{{_OFFICE}}}value-type"
_TABLE_NAME = f"{{{_TABLE}}}name"
_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_PARAGRAPH, _SPACE, _SPACE_COUNT = f"{{{_TEXT}}}p", f"{{{_TEXT}}}s", f"{{{_TEXT}}}c"
#: The value types whose displayed text may differ from calamine's value.
_NUMERIC = frozenset({"float", "percentage", "currency", "date", "time", "boolean"})
#: Characters of an .ods cell's displayed text kept.
MAX_TEXT = 1000


@dataclass
class Extent:
    """The rows and columns a sheet's non-empty cells reach, counted from A1."""

    rows: int = 0
    columns: int = 0

    def reach(self, row: int, column: int) -> None:
        self.rows, self.columns = max(self.rows, row), max(self.columns, column)

    @property
    def cells(self) -> int:
        return self.rows * self.columns


@dataclass
class Window:
    """Which filled cells (1-based) :func:`.table.read_sheet` may show, judged as the cells
    stream by: at most :data:`.table.MAX_SHOWN_COLUMNS` from the leftmost filled column and
    as many rows from the first filled one as the budget allows at the width seen so far.
    Both bounds only shrink as more cells are seen, so no shown cell is ever missed (a
    sheet whose first rows hold only spaces, which the table trims, is the exception: its
    cells then show unformatted)."""

    first_row: int = 0
    first_column: int = 0
    last_column: int = 0
    row_limit: int = 0

    def admits(self, row: int, column: int) -> bool:
        if not self.first_row:
            self.first_row, self.first_column, self.last_column = row, column, column
        elif row >= self.row_limit:
            return False  # the limit only shrinks: nothing from here on can be shown
        self.first_column = min(self.first_column, column)
        self.last_column = max(self.last_column, column)
        width = min(self.last_column - self.first_column + 1, MAX_SHOWN_COLUMNS)
        self.row_limit = self.first_row + MAX_SHOWN_CELLS // width
        return row < self.row_limit and column < self.first_column + MAX_SHOWN_COLUMNS


@dataclass
class Sheet(Extent):
    """An extent, and what its shown cells display: .xlsx style indices by 0-based
    (row, column), or an .ods table's name and texts."""

    styles: dict[tuple[int, int], int] = field(default_factory=dict)
    name: str = ""
    displayed: Displayed = field(default_factory=Displayed)


def check_grid(extents: list[Extent], kind: str) -> None:
    """Refuse (``too_large``) a workbook whose sheets span more than :data:`MAX_GRID_CELLS`."""
    cells = sum(extent.cells for extent in extents)
    if cells > MAX_GRID_CELLS:
        raise ConversionError(
            FailureReason.TOO_LARGE,
            f"the {kind} workbook's sheets span {cells} cells, over the limit of {MAX_GRID_CELLS}",
        )


def xlsx_extents(
    package: zipfile.ZipFile, styled: Mapping[str, Collection[int]] | None = None
) -> dict[str, Sheet]:
    """The extent of every XML part holding cells (calamine finds sheets by relationships,
    which may name any part, so every ``.xml`` part is measured), by part name. For the
    parts in ``styled``, the style index of each cell that may be shown and whose style
    is one of the part's collection."""
    styled = styled or {}
    return {
        name: _xlsx_extent(read_member(package, name, "XLSX"), styled.get(name, ()))
        for name in package.namelist()
        if name.lower().endswith(".xml")
    }


def _xlsx_extent(xml: bytes, styled: Collection[int] = ()) -> Sheet:
    """Rows and cells are placed as calamine places them: at their ``r`` reference, else
    one after the previous."""
    extent, window, row, column = Sheet(), Window(), 0, 0
    for match in _TAG.finditer(xml):
        attributes = match[2]
        ref = _REF.search(attributes)
        if match[1] == b"row":
            row = int(ref[2]) if ref and ref[2] else row + 1
            column = 0
            continue
        if ref and ref[1]:
            column = _column_number(ref[1])
            row = int(ref[2]) if ref[2] else row
        else:
            column += 1
        if not attributes.endswith(b"/"):
            extent.reach(max(row, 1), column)
            if styled and window.admits(max(row, 1), column):
                style = _STYLE.search(attributes)
                if style and int(style[1]) in styled:
                    extent.styles[max(row, 1) - 1, column - 1] = int(style[1])
    return extent


def _column_number(letters: bytes) -> int:
    number = 0
    for letter in letters.upper():
        number = number * 26 + letter - 64
    return number


def ods_extents(content: bytes) -> list[Sheet]:
    """The extent of each table in an ODF ``content.xml``, repeated rows and columns expanded
    by count, never by allocation; with its name and the texts its numeric cells display
    (those that may be shown)."""
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import iterparse

    extents: list[Sheet] = []
    open_elements: list[Element] = []
    window = Window()
    texts: list[tuple[int, int, str]] = []
    row = column = row_repeat = 0
    row_filled = False
    try:
        for event, element in iterparse(io.BytesIO(content), ("start", "end"), forbid_dtd=True):
            tag = element.tag
            if event == "start":
                open_elements.append(element)
                if tag == f"{{{_TABLE}}}table":
                    extents.append(Sheet(name=element.get(_TABLE_NAME, "")))
                    row, window = 0, Window()
                elif tag == _ROW:
                    row_repeat = _repeat(element.get(_ROWS_REPEATED))
                    column, row_filled, texts = 0, False, []
                continue
            open_elements.pop()
            if tag in (_CELL, _COVERED):
                repeat = _repeat(element.get(_COLUMNS_REPEATED))
                kind = element.get(_VALUE_TYPE)
                if extents and (kind or len(element)):
                    extents[-1].reach(row + 1, column + repeat)
                    row_filled = True
                    if kind in _NUMERIC and window.admits(row + 1, column + 1):
                        texts.append((column, column + repeat, _cell_text(element)))
                column += repeat
                element.clear()
            elif tag == _ROW:
                if extents and row_filled:
                    extents[-1].reach(row + row_repeat, 0)
                    extents[-1].displayed.add(row, row + row_repeat, texts)
                row += row_repeat
                if open_elements:  # done with: a million rows must not stay in memory
                    open_elements[-1].remove(element)
    except (ParseError, DefusedXmlException, ValueError) as exc:
        raise conversion_failure(exc, f"unreadable ODS content.xml: {describe(exc)}") from exc
    return extents


def _cell_text(cell: Element) -> str:
    """What the cell displays: its paragraphs' text (``<text:s/>`` is a space), bounded."""
    lines = []
    for paragraph in cell.iter(_PARAGRAPH):
        for space in paragraph.iter(_SPACE):
            space.text = " " * min(_repeat(space.get(_SPACE_COUNT)), 100)
        try:
            lines.append("".join(paragraph.itertext()))
        except RecursionError:  # spans nested thousands deep: no text rather than a crash
            continue
    return " ".join(lines)[:MAX_TEXT]


def _repeat(value: str | None) -> int:
    """A ``number-*-repeated`` count (1 when absent or not a positive number)."""
    try:
        return max(1, int(value or 1))
    except ValueError:
        return 1
