"""Tables and forms in PDFs as people set them (issue 26, defect classes 6, 7, 11, 13).

Every document here is built by the test: a sparse inventory table and a
twelve-column schedule set without rules (aligned columns, empty cells), a
form of label/value lines inside a frame drawn around the page, a ruled table
with a link in a cell, and a form with filled-in AcroForm fields.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from docshelf.converters import ConversionResult
from tests.support.drawn_pdfs import convert_pdf, draw_row, letter_page
from tests.support.results import json_of, markdown_of, markdown_rows, text_of

#: Product code, location, expected, actual, variance, status: "" where nothing is printed.
INVENTORY = [
    ("Product Code", "Location", "Expected", "Actual", "Variance", "Status"),
    ("SKU-1001", "A-12", "450", "", "", ""),
    ("", "B-07", "", "289", "-23", ""),
    ("SKU-2002", "", "780", "778", "", "OK"),
    ("", "C-15", "", "", "+15", ""),
    ("SKU-3003", "D-22", "", "156", "", "CRITICAL"),
]
INVENTORY_COLUMNS = (30, 90, 150, 210, 270, 330)

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov")
SCHEDULE = [
    ("Task", *MONTHS),
    ("Survey", "x", "x", "", "", "", "", "", "", "", "", ""),
    ("Design", "", "x", "x", "x", "", "", "", "", "", "", ""),
    ("Permits", "", "", "", "x", "x", "", "", "", "", "", ""),
    ("Build", "", "", "", "", "x", "x", "x", "x", "x", "", ""),
    ("Handover", "", "", "", "", "", "", "", "", "", "x", "x"),
]

FORM = [
    (("Insured name", "Gabriel Diaz"), ("Year", "2022")),
    (("Claim #", "SF-1008"), ("Make", "Jeep")),
    (("Policy #", "POL-2022-555"), ("Model", "Grand Cherokee")),
    (("Phone", "(425) 111-1111"), ("Trim", "Limited")),
    (("Email", "gabriel@contoso.com"), ("VIN", "1C4RJFBG2NC123456")),
]


# --- 7: tables set without rules ----------------------------------------------------


def sparse_inventory_pdf() -> bytes:
    pdf = letter_page()
    pdf.set_font("Helvetica", "B", 16)
    pdf.text(72, 72, "Inventory Reconciliation")
    pdf.set_font("Helvetica", size=10)
    pdf.text(72, 100, "Counted on the fifteenth of November by the night shift.")
    xs = tuple(72 + x * 1.5 for x in INVENTORY_COLUMNS)
    for number, cells in enumerate(INVENTORY):
        pdf.set_font("Helvetica", "B" if number == 0 else "", 11 if number == 0 else 10)
        draw_row(pdf, 140 + 24 * number, xs, cells)
    pdf.text(72, 320, "Variance Analysis:")
    pdf.text(72, 334, "The primary variance driver is SKU-3003, which needs investigation.")
    return bytes(pdf.output())


def test_a_sparse_table_without_rules_keeps_its_empty_cells() -> None:
    markdown = markdown_of(convert_pdf(sparse_inventory_pdf()))
    # Before: "SKU-1001 A-12 450" / "B-07 289 -23" ... as lines; rows with
    # different numbers of cells were never a table.
    assert markdown_rows(markdown) == [list(row) for row in INVENTORY]
    assert markdown.index("Counted on") < markdown.index("| Product Code |")
    assert markdown.index("| SKU-3003 |") < markdown.index("Variance Analysis:")


def schedule_pdf() -> bytes:
    pdf = letter_page()
    pdf.set_font("Helvetica", size=9)
    pdf.text(72, 72, "Project schedule, in months:")
    xs = (72.0, *(150 + 36 * n for n in range(len(MONTHS))))
    for number, cells in enumerate(SCHEDULE):
        draw_row(pdf, 100 + 16 * number, xs, cells)
    return bytes(pdf.output())


def test_a_twelve_column_schedule_is_one_table() -> None:
    result = convert_pdf(schedule_pdf())
    # Before: "Survey x x", "Design x x x" ... as lines of text.
    assert markdown_rows(markdown_of(result)) == [list(row) for row in SCHEDULE]
    [table] = json_of(result)["tables"]
    assert table["header"] == list(SCHEDULE[0])


def test_lines_with_a_wide_gap_in_prose_stay_prose() -> None:
    pdf = letter_page()
    pdf.set_font("Helvetica", size=10)
    lines = [
        ("1.", "Preheat the oven and butter a tin."),
        ("2.", "Beat the eggs with the sugar until they are pale."),
        ("3.", "Fold in the flour, then pour the batter into the tin."),
    ]
    for number, (mark, text) in enumerate(lines):
        pdf.text(72, 100 + 14 * number, mark)
        pdf.text(100, 100 + 14 * number, text)
    markdown = markdown_of(convert_pdf(bytes(pdf.output())))
    assert "|" not in markdown
    assert "2\\. Beat the eggs" in markdown or "2. Beat the eggs" in markdown


# --- 6: a frame around the page is not a table ---------------------------------------------


def framed_form_pdf() -> bytes:
    """An insurance form: a frame around the page, label/value lines in two groups inside."""
    pdf = letter_page()
    pdf.set_line_width(1.8)
    pdf.rect(75, 67, 400, 670)  # the page-wide frame
    pdf.set_line_width(0.8)
    pdf.line(75, 453, 475, 453)  # a rule across it, under the form
    pdf.line(257, 453, 257, 614)  # and one down its lower half
    pdf.line(75, 614, 475, 614)
    pdf.set_font("Helvetica", "B", 20)
    pdf.text(190, 200, "ZAVA AUTO REPAIR")
    pdf.set_font("Helvetica", size=10)
    for number, ((label, value), (label2, value2)) in enumerate(FORM):
        y = 310 + 13.4 * number
        pdf.set_font("Helvetica", "B", 10)
        pdf.text(77, y, label)
        pdf.text(311, y, label2)
        pdf.set_font("Helvetica", size=10)
        pdf.text(158, y, value)
        pdf.text(371, y, value2)
    pdf.set_font("Helvetica", "I", 8)
    note = "This is a preliminary estimate for the visible damage of the vehicle."
    pdf.text(77, 480, note)
    pdf.text(77, 490, "Additional damage may be found after the vehicle has been taken apart.")
    return bytes(pdf.output())


def test_a_frame_around_the_page_is_not_a_two_column_table() -> None:
    markdown = markdown_of(convert_pdf(framed_form_pdf()))
    rows = markdown_rows(markdown)
    # Before: "| ZAVA AUTO REPAIR Insured name Gabriel Diaz Year 2022 ... |  |".
    assert not any("Insured name" in cell and "Claim #" in cell for row in rows for cell in row)
    for (label, value), (label2, value2) in FORM:
        assert [label, value, label2, value2] in rows
    assert "This is a preliminary estimate" in markdown


def test_a_ruled_table_inside_a_frame_is_still_a_table() -> None:
    pdf = letter_page()
    pdf.set_font("Helvetica", size=10)
    pdf.rect(40, 40, 530, 700)  # a decorative page border
    pdf.set_xy(72, 100)
    with pdf.table(col_widths=(60, 60, 60), width=300) as table:
        for cells in (("Part", "Qty", "Price"), ("Bolt", "12", "0.40"), ("Nut", "30", "0.10")):
            table.row(cells)
    rows = markdown_rows(markdown_of(convert_pdf(bytes(pdf.output()))))
    assert rows == [["Part", "Qty", "Price"], ["Bolt", "12", "0.40"], ["Nut", "30", "0.10"]]


# --- 13: a link inside a table cell ---------------------------------------------------------


def test_a_link_in_a_table_cell_is_a_markdown_link() -> None:
    pdf = letter_page()
    pdf.set_font("Helvetica", size=10)
    pdf.set_xy(72, 100)
    with pdf.table(col_widths=(60, 120), width=300) as table:
        header = table.row()
        header.cell("Project")
        header.cell("Home page")
        row = table.row()
        row.cell("docshelf")
        row.cell("docshelf.dev", link="https://docshelf.dev/")
        row = table.row()
        row.cell("pypdf")
        row.cell("pypdf.readthedocs.io", link="https://pypdf.readthedocs.io/")
    result = convert_pdf(bytes(pdf.output()))
    markdown = markdown_of(result)
    # Before: "| docshelf | docshelf.dev |": the link only in the JSON.
    assert "| docshelf | [docshelf.dev](https://docshelf.dev/) |" in markdown
    assert "| pypdf | [pypdf.readthedocs.io](https://pypdf.readthedocs.io/) |" in markdown
    assert {"text": "docshelf.dev", "href": "https://docshelf.dev/"} in json_of(result)["links"]
    # The JSON table keeps the cell's text.
    assert json_of(result)["tables"][0]["rows"][0] == ["docshelf", "docshelf.dev"]


# --- 11: filled-in form fields ------------------------------------------------------------


def filled_form_pdf() -> bytes:
    """Labels printed on the page, their values in AcroForm fields (pymupdf, tests only)."""
    import pymupdf

    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    page.insert_text((72, 80), "Claim form", fontsize=16)
    fields = [("Insured name", "insured", "Gabriel Diaz"), ("Policy #", "policy", "POL-2022-555")]
    for number, (label, name, value) in enumerate(fields):
        y = 120 + 24 * number
        page.insert_text((72, y), label, fontsize=10)
        widget = pymupdf.Widget()
        widget.field_type = pymupdf.PDF_WIDGET_TYPE_TEXT
        widget.field_name = name
        widget.field_value = value
        widget.rect = pymupdf.Rect(160, y - 12, 360, y + 4)
        widget.text_fontsize = 10
        page.add_widget(widget)
    page.insert_text((72, 168), "Total loss", fontsize=10)
    box = pymupdf.Widget()
    box.field_type = pymupdf.PDF_WIDGET_TYPE_CHECKBOX
    box.field_name = "total_loss"
    box.field_value = True
    box.rect = pymupdf.Rect(160, 157, 172, 169)
    page.add_widget(box)
    page.insert_text((72, 192), "Signed by the insured on the date above.", fontsize=10)
    return bytes(document.tobytes())


@pytest.fixture(scope="module")
def filled_form() -> ConversionResult:
    return convert_pdf(filled_form_pdf())


def test_filled_in_values_stand_beside_their_labels(filled_form: ConversionResult) -> None:
    # Before: the labels alone ("Insured name", "Policy #"), the values nowhere.
    for text in (text_of(filled_form, "text/plain"), markdown_of(filled_form)):
        assert re.search(r"Insured name\W+Gabriel Diaz", text)
        assert re.search(r"Policy #\W+POL-2022-555", text)
        assert text.index("Gabriel Diaz") < text.index("Signed by the insured")


def test_the_json_lists_the_fields(filled_form: ConversionResult, schema_validator: Any) -> None:
    document = json_of(filled_form)
    schema_validator.validate(document)
    assert document["fields"] == [
        {"name": "insured", "type": "text", "value": "Gabriel Diaz", "page": 1},
        {"name": "policy", "type": "text", "value": "POL-2022-555", "page": 1},
        {"name": "total_loss", "type": "checkbox", "value": "Yes", "page": 1},
    ]
