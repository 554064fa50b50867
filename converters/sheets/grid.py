"""How many cells a workbook's sheets span, measured before python-calamine reads them.

calamine stores each sheet as a dense grid from its first to its last cell
(about 32 bytes a cell): a 5 KB .xlsx with one cell in A1 and one in
CV1000000 took 3.2 GB, an 806-byte .ods whose rows and columns say
"repeated 2000 and 1000 times" 136 MB. The ZIP checks of
:mod:`converters.package` cannot see that, so the grid is measured here from
the XML itself and a workbook spanning more than :data:`MAX_GRID_CELLS` is
refused before calamine allocates anything. The measure counts from A1 and
never undercounts, so it may refuse a little early, never late.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from xml.etree.ElementTree import Element, ParseError

from docshelf.converters.base import ConversionError, FailureReason
from docshelf.converters.failures import conversion_failure, describe
from docshelf.converters.package import read_member

#: Cells (rows times columns of the used ranges) all sheets together may span: ~32 MB in
#: calamine for an .xlsx (one sheet at a time), ~64 MB for an .ods (read whole).
MAX_GRID_CELLS = 1_000_000

# A worksheet's <row> and <c> start tags, any namespace prefix; a cell without a
# value is self-closing (a styled blank, which calamine leaves out).
_TAG = re.compile(rb"<(?:[\w.-]+:)?(row|c)(?=[\s/>])([^>]*)>")
_REF = re.compile(rb"""\sr\s*=\s*["']([A-Za-z]*)(\d*)["']""")

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


def check_grid(extents: list[Extent], kind: str) -> None:
    """Refuse (``too_large``) a workbook whose sheets span more than :data:`MAX_GRID_CELLS`."""
    cells = sum(extent.cells for extent in extents)
    if cells > MAX_GRID_CELLS:
        raise ConversionError(
            FailureReason.TOO_LARGE,
            f"the {kind} workbook's sheets span {cells} cells, over the limit of {MAX_GRID_CELLS}",
        )


def xlsx_extents(package: zipfile.ZipFile) -> list[Extent]:
    """The extent of every XML part holding cells (calamine finds sheets by relationships,
    which may name any part, so every ``.xml`` part is measured)."""
    return [
        _xlsx_extent(read_member(package, name, "XLSX"))
        for name in package.namelist()
        if name.lower().endswith(".xml")
    ]


def _xlsx_extent(xml: bytes) -> Extent:
    """Rows and cells are placed as calamine places them: at their ``r`` reference, else
    one after the previous."""
    extent, row, column = Extent(), 0, 0
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
    return extent


def _column_number(letters: bytes) -> int:
    number = 0
    for letter in letters.upper():
        number = number * 26 + letter - 64
    return number


def ods_extents(content: bytes) -> list[Extent]:
    """The extent of each table in an ODF ``content.xml``, repeated rows and columns expanded
    by count, never by allocation."""
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import iterparse

    extents: list[Extent] = []
    open_elements: list[Element] = []
    row = column = row_repeat = 0
    row_filled = False
    try:
        for event, element in iterparse(io.BytesIO(content), ("start", "end"), forbid_dtd=True):
            tag = element.tag
            if event == "start":
                open_elements.append(element)
                if tag == f"{{{_TABLE}}}table":
                    extents.append(Extent())
                    row = 0
                elif tag == _ROW:
                    row_repeat = _repeat(element.get(_ROWS_REPEATED))
                    column, row_filled = 0, False
                continue
            open_elements.pop()
            if tag in (_CELL, _COVERED):
                repeat = _repeat(element.get(_COLUMNS_REPEATED))
                if extents and (element.get(_VALUE_TYPE) or len(element)):
                    extents[-1].reach(row + 1, column + repeat)
                    row_filled = True
                column += repeat
                element.clear()
            elif tag == _ROW:
                if extents and row_filled:
                    extents[-1].reach(row + row_repeat, 0)
                row += row_repeat
                if open_elements:  # done with: a million rows must not stay in memory
                    open_elements[-1].remove(element)
    except (ParseError, DefusedXmlException, ValueError) as exc:
        raise conversion_failure(exc, f"unreadable ODS content.xml: {describe(exc)}") from exc
    return extents


def _repeat(value: str | None) -> int:
    """A ``number-*-repeated`` count (1 when absent or not a positive number)."""
    try:
        return max(1, int(value or 1))
    except ValueError:
        return 1
