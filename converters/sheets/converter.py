"""Spreadsheets: .xlsx/.xlsm (OOXML), .xls (Excel 97-2003) and .ods (OpenDocument).

Read by python-calamine (MIT, Rust): one library for all three formats, cached
formula values, merged ranges, sheet visibility and kinds, and ~16 times faster
than openpyxl (20 000 by 10 cells: 0.13 s against 2.1 s). It gives no number
formats: those are read beside it (:mod:`.formats`, :mod:`.numfmt`) for .xlsx
and .ods, so cells show as displayed; .xls cells show their values
(:mod:`.table` says how).

Each sheet is a ``## <sheet name>`` section holding one table
(:mod:`.table`: used range, header, caps). Hidden sheets are included and say
so; chart sheets hold no cells and are listed as left out. Bounds: a ZIP
workbook opens through :func:`converters.package.open_package`, its grid is
measured before calamine reads it (:mod:`.grid`), and an .xls, whose cells
calamine cannot be told to skip, is capped by size (its format tops out at
65 536 by 256 cells).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from docshelf.converters.assemble import parsed_markdown_result
from docshelf.converters.base import ConversionError, ConversionResult, Facts, FailureReason, Source
from docshelf.converters.failures import conversion_failure, describe
from docshelf.converters.html.docx import core_properties
from docshelf.converters.markdown.model import parse_markdown
from docshelf.converters.package import open_package, optional_member, read_member
from docshelf.converters.sheets.formats import xlsx_formats
from docshelf.converters.sheets.grid import check_grid, ods_extents, xlsx_extents
from docshelf.converters.sheets.table import (
    MAX_SHOWN_CELLS,
    MAX_SHOWN_COLUMNS,
    Budget,
    SheetTable,
    Shown,
    cell_range,
    column_letters,
    display,
    json_value,
    read_sheet,
)
from docshelf.converters.textutil import (
    check_size,
    collapse_whitespace,
    markdown_heading,
    markdown_table,
)

XLSX_MIME_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
XLSM_MIME_TYPE = "application/vnd.ms-excel.sheet.macroEnabled.12"
XLS_MIME_TYPE = "application/vnd.ms-excel"
ODS_MIME_TYPE = "application/vnd.oasis.opendocument.spreadsheet"
SPREADSHEET_MIME_TYPES = frozenset({XLSX_MIME_TYPE, XLSM_MIME_TYPE, XLS_MIME_TYPE, ODS_MIME_TYPE})
SPREADSHEET_EXTENSIONS = frozenset({".xlsx", ".xlsm", ".xls", ".ods"})
#: A ZIP workbook's size refused outright (its grid is measured besides: :mod:`.grid`).
MAX_WORKBOOK_BYTES = 128 * 1024 * 1024
#: An .xls's size refused outright: nothing bounds its grid before calamine reads it.
MAX_XLS_BYTES = 32 * 1024 * 1024
TIMES = "\N{MULTIPLICATION SIGN}"
#: How many sheets the description names.
DESCRIBED_SHEETS = 5

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ZIP_MAGIC = b"PK\x03\x04"
_ODS_META = {
    "dc:title": "title",
    "dc:subject": "subject",
    "dc:description": "description",
    "meta:initial-creator": "author",
    "dc:creator": "last_modified_by",
    "meta:creation-date": "created",
    "dc:date": "modified",
    "dc:language": "language",
}
_ODF_NAMESPACES = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "dc": "http://purl.org/dc/elements/1.1/",
    "meta": "urn:oasis:names:tc:opendocument:xmlns:meta:1.0",
}


class SpreadsheetConverter:
    """Converts workbooks, one table per sheet."""

    name = "spreadsheet"
    version = "2"

    def accepts(self, source: Source) -> bool:
        return (
            source.base_mime_type in SPREADSHEET_MIME_TYPES
            or source.extension in SPREADSHEET_EXTENSIONS
        )

    def convert(self, source: Source) -> ConversionResult:
        properties, shown = _bounded_properties(source.data)
        sheets, charts = _read_workbook(source.data, shown)
        facts = Facts(
            title=properties.get("title"),
            description=properties.get("subject")
            or properties.get("description")
            or describe_workbook(sheets),
            language=properties.get("language"),
            metadata={**properties, "sheets": str(len(sheets))},
        )
        markdown = workbook_markdown(facts.title, sheets, charts)
        model = parse_markdown(markdown)
        facts = replace(facts, outline=model.headings)
        data = {"sheets": [sheet_data(sheet) for sheet in sheets], "chart_sheets": charts}
        return parsed_markdown_result(
            source, facts, markdown, model, pdf_author=properties.get("author"), data=data
        )


def _bounded_properties(data: bytes) -> tuple[Mapping[str, str], Mapping[str, Shown]]:
    """Check the workbook's bounds (size, package, grid); its title, author... where it has
    them, and how each sheet's cells are displayed (by sheet name; none for an .xls)."""
    if data.startswith(_ZIP_MAGIC):
        check_size(data, MAX_WORKBOOK_BYTES)
        package = open_package(data, "spreadsheet")
        if "content.xml" in package.NameToInfo:
            tables = ods_extents(read_member(package, "content.xml", "ODS"))
            check_grid(list(tables), "ODS")
            shown: dict[str, Shown] = {table.name: table.displayed.text for table in tables}
            return _ods_properties(optional_member(package, "meta.xml", "ODS")), shown
        formats = xlsx_formats(package)
        wanted = {part: formats.codes.keys() for part in formats.sheets.values()}
        parts = xlsx_extents(package, wanted if formats.codes else None)
        check_grid(list(parts.values()), "XLSX")
        shown = {
            name: formats.shown(parts[part].styles)
            for name, part in formats.sheets.items()
            if part in parts and parts[part].styles
        }
        return core_properties(package), shown
    if data.startswith(_OLE_MAGIC):
        if "EncryptionInfo".encode("utf-16-le") in data:
            raise ConversionError(FailureReason.ENCRYPTED, "the workbook is password-protected")
        check_size(data, MAX_XLS_BYTES)
        return {}, {}
    raise ConversionError(
        FailureReason.CORRUPT,
        "not a spreadsheet: neither a ZIP package (.xlsx, .ods) nor an OLE file (.xls)",
    )


def _ods_properties(meta: bytes | None) -> Mapping[str, str]:
    """Title, author, dates ... from an ODF ``meta.xml`` (empty when absent or broken)."""
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import fromstring

    if meta is None:
        return {}
    try:
        root = fromstring(meta, forbid_dtd=True)
    except (DefusedXmlException, SyntaxError, ValueError):
        return {}
    properties: dict[str, str] = {}
    for qualified, key in _ODS_META.items():
        element = root.find(f"office:meta/{qualified}", _ODF_NAMESPACES)
        text = collapse_whitespace(element.text or "") if element is not None else ""
        if text:
            properties[key] = text
    return properties


def _read_workbook(data: bytes, shown: Mapping[str, Shown]) -> tuple[list[SheetTable], list[str]]:
    """The worksheets' tables, and the names of the chart sheets left out."""
    import python_calamine

    try:
        workbook = python_calamine.CalamineWorkbook.from_filelike(io.BytesIO(data))
        budget, sheets, charts = Budget(), [], []
        for meta in workbook.sheets_metadata:
            if meta.typ != python_calamine.SheetTypeEnum.WorkSheet:
                charts.append(meta.name)
                continue
            sheet = workbook.get_sheet_by_name(meta.name)
            start = sheet.start
            sheets.append(
                read_sheet(
                    meta.name,
                    meta.visible != python_calamine.SheetVisibleEnum.Visible,
                    sheet.iter_rows,
                    start[1] if start else 0,
                    budget,
                    [cell_range(*first, *last) for first, last in sheet.merged_cell_ranges or ()],
                    shown.get(meta.name),
                )
            )
            del sheet  # one sheet's grid in memory at a time
    except python_calamine.PasswordError as exc:
        raise ConversionError(
            FailureReason.ENCRYPTED, "the workbook is password-protected"
        ) from exc
    except (python_calamine.CalamineError, zipfile.BadZipFile, ValueError, OSError) as exc:
        raise conversion_failure(exc, f"unreadable spreadsheet: {describe(exc)}") from exc
    return sheets, charts


def describe_workbook(sheets: Sequence[SheetTable]) -> str:
    """What the workbook holds: "Spreadsheet, 2 sheets: Sheet1 (24 rows x 4 columns), …"."""
    named = [
        f"{sheet.name} ({_count(sheet.rows, 'row')} {TIMES} {_count(sheet.columns, 'column')})"
        if sheet.rows
        else f"{sheet.name} (empty)"
        for sheet in sheets[:DESCRIBED_SHEETS]
    ]
    count = f"{len(sheets)} sheet" + ("" if len(sheets) == 1 else "s")
    more = ", …" if len(sheets) > DESCRIBED_SHEETS else ""
    return f"Spreadsheet, {count}" + (": " + ", ".join(named) + more if named else "")


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def workbook_markdown(
    title: str | None, sheets: Sequence[SheetTable], charts: Sequence[str]
) -> str:
    """The title (when the workbook has one), a note on chart sheets, one section per sheet."""
    blocks = [markdown_heading(1, title)] if title else []
    if charts:
        blocks.append(f"*Chart sheets not converted: {', '.join(charts)}.*")
    blocks.extend(sheet_markdown(sheet) for sheet in sheets)
    return "\n\n".join(block.rstrip("\n") for block in blocks) + "\n"


def sheet_markdown(sheet: SheetTable) -> str:
    """``## <name>``, whether it is hidden, its table, and what the caps left out."""
    blocks = [markdown_heading(2, sheet.name)]
    if sheet.hidden:
        blocks.append("*Hidden sheet.*")
    if not sheet.rows:
        blocks.append("*Empty sheet.*")
    elif sheet.header_row or sheet.body:
        blocks.append(markdown_table(sheet.header, sheet.texts))
    left_out = _left_out(sheet)
    if left_out:
        blocks.append(
            f"*{left_out} not shown (at most {MAX_SHOWN_CELLS} cells per workbook "
            f"and {MAX_SHOWN_COLUMNS} columns per sheet).*"
        )
    return "\n\n".join(block.rstrip("\n") for block in blocks)


def _left_out(sheet: SheetTable) -> str:
    parts = [
        f"{count} more {noun}" + ("" if count == 1 else "s")
        for count, noun in ((sheet.rows_left_out, "row"), (sheet.columns_left_out, "column"))
        if count
    ]
    return " and ".join(parts)


def sheet_data(sheet: SheetTable) -> dict[str, Any]:
    """One sheet for the JSON view's ``data``: ``rows`` holds the values (numbers stay
    numbers), ``displayed`` the cells (A1 → text) whose displayed text differs from
    their plain display, e.g. ``{"E4": "25.6%"}``."""
    displayed = {
        f"{column_letters(sheet.first_column + j)}{sheet.body_first_row + i + 1}": text
        for i, (row, texts) in enumerate(zip(sheet.body, sheet.texts, strict=True))
        for j, (value, text) in enumerate(zip(row, texts, strict=True))
        if text != display(value)
    }
    return {
        "name": sheet.name,
        "hidden": sheet.hidden,
        "dimensions": {"range": sheet.range, "rows": sheet.rows, "columns": sheet.columns},
        "header": sheet.header,
        "header_row": sheet.header_row,
        "rows": [[json_value(value) for value in row] for row in sheet.body],
        "rows_left_out": sheet.rows_left_out,
        "columns_left_out": sheet.columns_left_out,
        "merged": sheet.merged,
        "displayed": displayed,
    }
