"""Spreadsheets: .xlsx built with XlsxWriter, .ods written as ZIP + XML, a shipped .xls."""

from __future__ import annotations

import datetime
import io
import zipfile
from pathlib import Path
from typing import Any

import pytest
import xlsxwriter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docshelf.converters import ConversionError, ConversionResult, convert
from docshelf.converters.sheets.converter import TIMES
from docshelf.converters.sheets.grid import MAX_GRID_CELLS
from docshelf.converters.sheets.table import MAX_SHOWN_CELLS
from tests.support.markitdown_vectors import NEEDS_PEERS, TEST_FILES, markitdown_vector
from tests.support.results import json_of as document
from tests.support.results import markdown_of as markdown

DATA = Path(__file__).parent.parent / "data" / "sheets"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
ODS = "application/vnd.oasis.opendocument.spreadsheet"
MANIFEST = (
    '<?xml version="1.0"?><manifest:manifest'
    ' xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
    f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{ODS}"/>'
    "</manifest:manifest>"
)


def failure(data: bytes, filename: str, mime_type: str = XLSX) -> ConversionError:
    with pytest.raises(ConversionError) as caught:
        convert(data, mime_type, filename)
    return caught.value


def workbook_bytes(build: Any, **properties: str) -> bytes:
    buffer = io.BytesIO()
    book = xlsxwriter.Workbook(buffer, {"in_memory": True})
    if properties:
        book.set_properties(properties)
    build(book)
    book.close()
    return buffer.getvalue()


def _rich(book: Any) -> None:
    data = book.add_worksheet("Data")
    iso = book.add_format({"num_format": "yyyy-mm-dd"})
    clock = book.add_format({"num_format": "hh:mm:ss"})
    stamp = book.add_format({"num_format": "yyyy-mm-dd hh:mm"})
    percent = book.add_format({"num_format": "0.0%"})
    # The used range starts at B3: two empty rows and one empty column are trimmed.
    data.write_row(2, 1, ["Day", "Start", "Logged", "Share", "Done", "Twice", "Note"])
    data.write_datetime(3, 1, datetime.datetime(2024, 3, 14), iso)
    data.write_datetime(3, 2, datetime.datetime(1899, 12, 31, 13, 5, 7), clock)
    data.write_datetime(3, 3, datetime.datetime(2024, 3, 14, 22, 10), stamp)
    data.write_number(3, 4, 0.256, percent)
    data.write_boolean(3, 5, True)
    data.write_formula(3, 6, "=E4*2", None, 0.512)
    data.write(3, 7, "a | b")
    data.merge_range("B5:D5", "merged")
    data.write_number(4, 4, 1234.5)
    hidden = book.add_worksheet("Names")
    hidden.write_column(0, 0, ["Name", "Ann", "Bob"])
    hidden.hide()
    chart = book.add_chart({"type": "line"})
    chart.add_series({"values": "=Data!$E$4:$E$5"})
    book.add_chartsheet("Trend").set_chart(chart)
    book.add_worksheet("Blank")


@pytest.fixture(scope="module")
def rich() -> ConversionResult:
    return convert(workbook_bytes(_rich, title="Timesheet", author="Ann"), XLSX, "hours.xlsx")


def test_each_sheet_is_a_section_with_one_table(rich: ConversionResult) -> None:
    text = markdown(rich)
    assert text.startswith("# Timesheet\n\n*Chart sheets not converted: Trend.*\n\n## Data\n\n")
    assert "| Day | Start | Logged | Share | Done | Twice | Note |\n|---|" in text
    assert "| 2024-03-14 | 13:05:07 | 2024-03-14 22:10 | 25.6% | TRUE | 0.512 | a \\| b |" in text
    assert "| merged |  |  | 1234.5 |  |  |  |" in text
    assert "## Names\n\n*Hidden sheet.*\n\n| Name |\n|---|\n| Ann |\n| Bob |" in text
    assert text.endswith("## Blank\n\n*Empty sheet.*\n")
    assert "## Trend" not in text


def test_facts_title_description_outline(rich: ConversionResult) -> None:
    facts = rich.facts
    assert facts.title == "Timesheet"
    assert facts.description == (
        f"Spreadsheet, 3 sheets: Data (3 rows {TIMES} 7 columns), "
        f"Names (3 rows {TIMES} 1 column), Blank (empty)"
    )
    assert [entry.title for entry in facts.outline] == ["Timesheet", "Data", "Names", "Blank"]
    assert facts.metadata["author"] == "Ann" and facts.metadata["sheets"] == "3"


def test_search_segments_are_the_sheets(rich: ConversionResult) -> None:
    parts = [(segment.part, segment.title) for segment in rich.segments()]
    assert parts[1:] == [
        ("section=data", "Data"),
        ("section=names", "Names"),
        ("section=blank", "Blank"),
    ]
    assert "Bob" in rich.segments()[2].text


def test_json_data_per_sheet(rich: ConversionResult) -> None:
    data = document(rich)["data"]
    assert data["chart_sheets"] == ["Trend"]
    sheet = data["sheets"][0]
    assert sheet["dimensions"] == {"range": "B3:H5", "rows": 3, "columns": 7}
    assert sheet["header_row"] is True and sheet["header"][0] == "Day"
    assert sheet["rows"] == [
        ["2024-03-14", "13:05:07", "2024-03-14 22:10", 0.256, True, 0.512, "a | b"],
        ["merged", None, None, 1234.5, None, None, None],
    ]
    assert sheet["merged"] == ["B5:D5"]
    assert sheet["displayed"] == {"E4": "25.6%"}
    assert (sheet["rows_left_out"], sheet["columns_left_out"]) == (0, 0)
    names = data["sheets"][1]
    assert names["hidden"] is True and names["header"] == ["Name"]


def _formatted(book: Any) -> None:
    sheet = book.add_worksheet("Money")
    sheet.write_row(0, 0, ["What", "Shown"])
    cells: list[tuple[str, Any, str]] = [
        ("percent", 0.256, "0.0%"),
        ("thousands", 1234.5, "#,##0.00"),
        ("euro", 1234.5, "€#,##0.00"),
        ("dollar", -1234.5, "[$$-409]#,##0.00"),
        ("scientific", 123456, "0.0E+00"),
        ("date", datetime.datetime(2024, 3, 14), "dd/mm/yyyy"),
        ("time", datetime.datetime(1899, 12, 31, 13, 30), "hh:mm AM/PM"),
        ("negative", -1234.5, "0.00;(0.00)"),
        ("weight", 72.25, '0.0 "kg"'),
        ("half", 2.675, "0.00"),
        ("fraction", 1.5, "# ?/?"),
        ("general", 0.1, "General"),
    ]
    for row, (label, value, code) in enumerate(cells, start=1):
        style = book.add_format({"num_format": code})
        sheet.write(row, 0, label)
        if isinstance(value, datetime.datetime):
            sheet.write_datetime(row, 1, value, style)
        else:
            sheet.write_number(row, 1, value, style)


def test_xlsx_numbers_show_as_their_number_format_displays_them() -> None:
    result = convert(workbook_bytes(_formatted), XLSX, "money.xlsx")
    rows = dict(
        line.strip("|").split(" | ", 1) for line in markdown(result).splitlines()[4:] if line
    )
    assert {label.strip(): shown.strip(" |") for label, shown in rows.items()} == {
        "percent": "25.6%",
        "thousands": "1,234.50",
        "euro": "€1,234.50",
        "dollar": "-$1,234.50",
        "scientific": "1.2E+05",
        "date": "14/03/2024",
        "time": "01:30 PM",
        "negative": "(1234.50)",
        "weight": "72.3 kg",  # half away from zero, on the decimal 72.25
        "half": "2.68",  # 2.675 is 2.67499… in binary; Excel shows 2.68
        "fraction": "1.5",  # fractions fall back to the value
        "general": "0.1",
    }
    sheet = document(result)["data"]["sheets"][0]
    assert sheet["rows"][0] == ["percent", 0.256]  # the JSON keeps the values
    assert sheet["rows"][5] == ["date", "2024-03-14"]
    assert sheet["displayed"]["B2"] == "25.6%" and sheet["displayed"]["B7"] == "14/03/2024"
    assert "B12" not in sheet["displayed"] and "B13" not in sheet["displayed"]


def test_ods_numbers_show_the_text_libreoffice_stored() -> None:
    def cell(kind: str, value: str, text: str, extra: str = "") -> str:
        return (
            f'<table:table-cell office:value-type="{kind}" office:value="{value}"{extra}>'
            f"<text:p>{text}</text:p></table:table-cell>"
        )

    euro = cell("currency", "1234.5", "1.234,50<text:s/>€", ' office:currency="EUR"')
    rows = (
        f"<table:table-row>{_cell('Share')}{_cell('Price')}{_cell('Plain')}</table:table-row>"
        f"<table:table-row>{cell('percentage', '0.256', '25.6%')}{euro}"
        f"{_cell('7', 'float')}</table:table-row>"
    )
    result = convert(ods_bytes(f'<table:table table:name="Fx">{rows}</table:table>'), ODS, "f.ods")
    assert "| Share | Price | Plain |\n|---|---|---|\n| 25.6% | 1.234,50 € | 7 |" in markdown(
        result
    )
    sheet = document(result)["data"]["sheets"][0]
    assert sheet["rows"] == [[0.256, 1234.5, 7]]
    assert sheet["displayed"] == {"A2": "25.6%", "B2": "1.234,50 €"}


def test_a_first_row_repeated_below_is_data_not_a_header() -> None:
    def build(book: Any) -> None:
        sheet = book.add_worksheet("Pairs")
        for row, values in enumerate([["x", "y"], ["x", "z"], ["w", "y"]]):
            sheet.write_row(row, 2, values)

    result = convert(workbook_bytes(build), XLSX, "pairs.xlsx")
    assert "| C | D |\n|---|---|\n| x | y |" in markdown(result)


def test_large_sheets_are_capped_with_a_note() -> None:
    def build(book: Any) -> None:
        sheet = book.add_worksheet("Big")
        sheet.write_row(0, 0, [f"c{n}" for n in range(60)])
        for row in range(1, 600):
            sheet.write_row(row, 0, range(60))

    result = convert(workbook_bytes(build), XLSX, "big.xlsx")
    shown_rows = MAX_SHOWN_CELLS // 50
    assert (
        f"*{600 - shown_rows} more rows and 10 more columns not shown "
        f"(at most {MAX_SHOWN_CELLS} cells per workbook and 50 columns per sheet).*"
    ) in markdown(result)
    sheet = document(result)["data"]["sheets"][0]
    assert len(sheet["header"]) == 50 and len(sheet["rows"]) == shown_rows - 1
    assert (sheet["rows_left_out"], sheet["columns_left_out"]) == (600 - shown_rows, 10)


def ods_bytes(tables: str, meta: str = "") -> bytes:
    content = (
        '<?xml version="1.0" encoding="UTF-8"?><office:document-content'
        ' xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
        ' xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"'
        ' xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2">'
        f"<office:body><office:spreadsheet>{tables}</office:spreadsheet></office:body>"
        "</office:document-content>"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr(zipfile.ZipInfo("mimetype"), ODS)
        package.writestr("content.xml", content)
        package.writestr("META-INF/manifest.xml", MANIFEST)
        if meta:
            package.writestr(
                "meta.xml",
                '<office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:'
                'office:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><office:meta>'
                f"{meta}</office:meta></office:document-meta>",
            )
    return buffer.getvalue()


def _cell(value: str, kind: str = "string", repeat: int = 1) -> str:
    number = f' office:value="{value}"' if kind == "float" else ""
    return (
        f'<table:table-cell office:value-type="{kind}"{number}'
        f' table:number-columns-repeated="{repeat}"><text:p>{value}</text:p></table:table-cell>'
    )


def test_ods_repeated_cells_and_title() -> None:
    rows = (
        f"<table:table-row>{_cell('Item')}{_cell('Qty')}</table:table-row>"
        f'<table:table-row table:number-rows-repeated="2">{_cell("Pen")}{_cell("3", "float")}'
        "</table:table-row>"
        # LibreOffice's tail: a million empty rows, which cost nothing.
        '<table:table-row table:number-rows-repeated="1048573">'
        '<table:table-cell table:number-columns-repeated="1024"/></table:table-row>'
    )
    data = ods_bytes(
        f'<table:table table:name="Stock">{rows}</table:table>', "<dc:title>Inv</dc:title>"
    )
    result = convert(data, ODS, "stock.ods")
    assert result.facts.title == "Inv"
    assert markdown(result) == (
        "# Inv\n\n## Stock\n\n| Item | Qty |\n|---|---|\n| Pen | 3 |\n| Pen | 3 |\n"
    )
    assert document(result)["data"]["sheets"][0]["merged"] == []


def test_ods_bomb_is_refused_before_it_is_read() -> None:
    """806 bytes that calamine expands into 2 million cells (136 MB)."""
    rows = (
        '<table:table-row table:number-rows-repeated="2000">'
        f"{_cell('1', 'float', 1000)}</table:table-row>"
    )
    error = failure(ods_bytes(f'<table:table table:name="S">{rows}</table:table>'), "b.ods", ODS)
    assert error.reason == "too_large"
    assert error.message == (
        f"the ODS workbook's sheets span 2000000 cells, over the limit of {MAX_GRID_CELLS}"
    )


def test_xlsx_far_apart_cells_are_refused_before_they_are_read() -> None:
    """5 KB whose two cells, A1 and CV1000000, made calamine allocate 3.2 GB."""

    def build(book: Any) -> None:
        sheet = book.add_worksheet()
        sheet.write(0, 0, "a")
        sheet.write(999_999, 99, "b")

    error = failure(workbook_bytes(build), "far.xlsx")
    assert error.reason == "too_large"
    assert error.message == (
        f"the XLSX workbook's sheets span 100000000 cells, over the limit of {MAX_GRID_CELLS}"
    )


def test_shipped_xls_has_markitdowns_strings() -> None:
    result = convert((DATA / "test.xls").read_bytes(), "application/vnd.ms-excel", "test.xls")
    text = markdown(result)
    for expected in (
        "## 09060124-b5e7-4717-9d07-3c046eb",
        "6ff4173b-42a5-4784-9b19-f49caff4d93d",
        "affc7dad-52dc-4b98-9b5d-51e65d8a8ad0",
    ):
        assert expected in text
    assert "| Alpha | Beta | Gamma | Delta |\n|---|---|---|---|\n| 89 | 82 | 100 | 12 |" in text
    assert result.facts.title is None


@NEEDS_PEERS
@pytest.mark.parametrize("name", ["test.xlsx", "test.xls"])
def test_markitdown_vectors(name: str) -> None:
    vector = markitdown_vector(name)
    text = markdown(convert((TEST_FILES / name).read_bytes(), "application/octet-stream", name))
    assert [s for s in vector["must_include"] if s not in text] == []
    assert [s for s in vector["must_not_include"] if s in text] == []


@pytest.mark.parametrize(
    ("data", "filename", "reason", "message"),
    [
        (
            b"just text",
            "a.xlsx",
            "corrupt",
            "not a spreadsheet: neither a ZIP package (.xlsx, .ods) nor an OLE file (.xls)",
        ),
        (
            b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600,
            "a.xls",
            "corrupt",
            "unreadable spreadsheet: CalamineError: Cannot detect file format",
        ),
        (
            b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + "EncryptionInfo".encode("utf-16-le"),
            "a.xlsx",
            "encrypted",
            "the workbook is password-protected",
        ),
    ],
)
def test_bad_inputs(data: bytes, filename: str, reason: str, message: str) -> None:
    error = failure(data, filename)
    assert (error.reason, error.message) == (reason, message)


def test_truncated_xls_is_corrupt() -> None:
    error = failure((DATA / "test.xls").read_bytes()[:9000], "test.xls", "application/vnd.ms-excel")
    assert error.reason == "corrupt" and error.message.startswith("unreadable spreadsheet: ")


def test_truncated_xlsx_is_corrupt() -> None:
    data = workbook_bytes(lambda book: book.add_worksheet().write(0, 0, "x"))
    error = failure(data[: len(data) // 2], "t.xlsx")
    assert error.reason == "corrupt" and error.message.startswith("not a spreadsheet (ZIP) package")


def test_zip_needing_a_newer_unzip_is_corrupt() -> None:
    data = bytearray(_SMALL)
    data[data.index(b"PK\x01\x02") + 6] = 200  # "version needed to extract": 20.0
    error = failure(bytes(data), "new.xlsx")
    assert (error.reason, error.message) == (
        "corrupt",
        "not a spreadsheet (ZIP) package: zip file version 20.0",
    )


def test_damaged_member_is_corrupt() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr(
            "xl/worksheets/sheet1.xml", "<worksheet>" + "<row/>" * 200 + "</worksheet>"
        )
    data = bytearray(buffer.getvalue())
    data[60:64] = b"\xff\xff\xff\xff"  # inside the deflated stream
    error = failure(bytes(data), "d.xlsx")
    assert error.reason == "corrupt"
    assert error.message.startswith("'xl/worksheets/sheet1.xml' in the XLSX package: ")


def test_zip_without_a_workbook_is_corrupt() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        package.writestr("hello.txt", "hi")
    error = failure(buffer.getvalue(), "z.xlsx")
    assert error.reason == "corrupt" and error.message.startswith("unreadable spreadsheet: ")


def test_broken_ods_content_is_corrupt() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        package.writestr("mimetype", ODS)
        package.writestr("content.xml", "<office:document-content")
    error = failure(buffer.getvalue(), "x.ods", ODS)
    assert error.reason == "corrupt"
    assert error.message.startswith("unreadable ODS content.xml: ParseError")


_SMALL = workbook_bytes(lambda book: book.add_worksheet("S").write_row(0, 0, ["a", 1, 2.5]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(_SMALL) - 1), st.binary(min_size=1, max_size=8))
def test_damaged_workbooks_fail_cleanly(offset: int, patch: bytes) -> None:
    data = _SMALL[:offset] + patch + _SMALL[offset + len(patch) :]
    try:
        markdown(convert(data, XLSX, "f.xlsx"))
    except ConversionError as error:
        assert error.reason in {"corrupt", "too_large"}
