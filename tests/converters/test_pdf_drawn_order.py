"""PDF forms whose text is drawn in another order than it reads, and small tables
(issue 26, classes 6 and 7, on markitdown's invoice and booking-order PDFs).

Every document is built here with fpdf2, shaped like the one that showed the
defect: section bars (white text on a dark band) drawn after the rows they head,
a label whose value is drawn last, at its baseline; a summary table of a header
and a single row; two blocks of label/value rows set side by side.
"""

from __future__ import annotations

from fpdf import FPDF

from tests.support.drawn_pdfs import convert_pdf, draw_row, letter_page
from tests.support.results import markdown_of, markdown_rows, text_of

FORM = [
    ("Insured name", "Gabriel Diaz", "Year", "2022"),
    ("Claim #", "SF-1008", "Make", "Jeep"),
    ("Policy #", "POL-2022-555", "Model", "Grand Cherokee"),
    ("Phone", "(425) 111-1111", "Trim", "Limited"),
    ("Repair Order #", "RO-20221108", "Estimator", "Ellis Turner"),
]
FORM_XS = (78.0, 158.0, 311.0, 371.0)
NOTE = "This is a preliminary estimate for the visible damage of the vehicle."


def _bar(pdf: FPDF, x: float, y: float, width: float, text: str, text_x: float) -> None:
    """White bold text on a black band, as spreadsheet exports head their sections."""
    pdf.set_fill_color(0, 0, 0)
    pdf.rect(x, y - 10, width, 13, style="F")
    pdf.set_text_color(255, 255, 255)
    pdf.set_font("Helvetica", "B", 10)
    pdf.text(text_x, y, text)
    pdf.set_text_color(0, 0, 0)


def drawn_out_of_order_pdf() -> bytes:
    """The rows first, then the bars above them, then a note whose value comes last."""
    pdf = letter_page()
    pdf.set_font("Helvetica", "B", 20)
    pdf.text(190, 120, "ZAVA AUTO REPAIR")
    pdf.set_font("Helvetica", size=10)
    for number, cells in enumerate(FORM):
        draw_row(pdf, 200 + 13.4 * number, FORM_XS, cells)
    _bar(pdf, 76, 186, 180, "Customer Information", 121)
    _bar(pdf, 300, 186, 170, "Vehicle Information", 350)
    pdf.set_font("Helvetica", "B", 10)
    pdf.text(78, 280, "Note")
    pdf.set_font("Helvetica", "I", 8)
    pdf.text(78, 305, NOTE)
    pdf.text(78, 315, "Additional damage may be found after the vehicle has been taken apart.")
    pdf.set_font("Helvetica", size=10)
    pdf.text(158, 280, "Minor rear bumper repair")
    return bytes(pdf.output())


def test_a_section_bar_drawn_after_its_rows_heads_them() -> None:
    result = convert_pdf(drawn_out_of_order_pdf())
    markdown = markdown_of(result)
    rows = markdown_rows(markdown)
    # Before: "Customer Information Vehicle Information" came after the note, at
    # the end of the page, where the PDF draws it.
    assert rows[0] == ["Customer Information", "", "Vehicle Information", ""]
    for cells in FORM:
        assert list(cells) in rows
    text = text_of(result, "text/plain")
    assert text.index("Customer Information") < text.index("Insured name") < text.index(NOTE)


def test_a_value_drawn_last_stands_beside_its_label() -> None:
    result = convert_pdf(drawn_out_of_order_pdf())
    # Before: "Note", then the paragraph, then "Minor rear bumper repair" on its own.
    for text in (markdown_of(result), text_of(result, "text/plain")):
        note = next(line for line in text.splitlines() if "Note" in line)
        assert "Minor rear bumper repair" in note
        assert text.index("Minor rear bumper repair") < text.index(NOTE)


SUMMARY = [
    ("Start Date", "End Date", "# Shows", "Gross Amount", "Net Amount"),
    ("12/20/24", "12/31/24", "48", "$12,500.00", "$11,250.00"),
]
TERRITORIES = [
    ("Representative", "Territory", "Region", "Commission %"),
    ("Sarah Johnson", "NYC Metro", "NORTHEAST", "100%"),
]


def small_tables_pdf() -> bytes:
    pdf = letter_page()
    pdf.set_font("Helvetica", "B", 10)
    pdf.text(50, 460, "Booking Summary")
    pdf.set_font("Helvetica", size=8)
    for number, cells in enumerate(SUMMARY):
        draw_row(pdf, 474 + 12 * number, (50, 121, 190, 270, 351), cells)
    pdf.set_font("Helvetica", "B", 10)
    pdf.text(50, 520, "Account Representatives")
    pdf.set_font("Helvetica", size=8)
    for number, cells in enumerate(TERRITORIES):
        draw_row(pdf, 534 + 12 * number, (50, 140, 221, 400), cells)
    pdf.set_font("Helvetica", "B", 10)
    pdf.text(50, 580, "Show Schedule Details")
    pdf.set_font("Helvetica", size=8)
    pdf.text(50, 594, "All showtimes are approximate and subject to change.")
    return bytes(pdf.output())


def test_a_header_and_a_single_row_are_a_table() -> None:
    rows = markdown_rows(markdown_of(convert_pdf(small_tables_pdf())))
    # Before: "Start Date End Date # Shows Gross Amount Net Amount" and its row as two lines.
    for table in (SUMMARY, TERRITORIES):
        for cells in table:
            assert list(cells) in rows


def test_two_lines_of_prose_with_a_gap_are_no_table() -> None:
    pdf = letter_page()
    pdf.set_font("Helvetica", size=10)
    pdf.text(72, 100, "1.")
    pdf.text(100, 100, "Preheat the oven and butter a tin of twenty centimetres.")
    pdf.text(72, 114, "2.")
    pdf.text(100, 114, "Beat the eggs with the sugar until they are pale and thick.")
    assert "|" not in markdown_of(convert_pdf(bytes(pdf.output())))


def side_by_side_pdf() -> bytes:
    """Two blocks of label/value rows, drawn one after the other, on the same baselines."""
    left = [
        ("Order / Rev:", "2024-12-5678"),
        ("Alt Order #:", "SC-WINTER-2024"),
        ("Product Desc:", "Holiday Movie Marathon Package"),
        ("Estimate:", "EST-456"),
        ("Booking Dates:", "12/20/2024 - 12/31/2024"),
    ]
    right = [
        ("Cinema:", "Downtown Multiplex"),
        ("Primary Contact:", "Sarah Johnson"),
        ("Location:", "NYC-01"),
        ("Region:", "NORTHEAST"),
    ]
    pdf = letter_page()
    pdf.set_font("Helvetica", "B", 10)
    pdf.text(50, 120, "Orders")
    pdf.set_font("Helvetica", size=8)
    for number, cells in enumerate(left):
        draw_row(pdf, 135 + 12 * number, (50, 150), cells)
    for number, cells in enumerate(right):
        draw_row(pdf, 135 + 12 * number, (350, 450), cells)
    return bytes(pdf.output())


def test_label_value_blocks_side_by_side_share_their_rows() -> None:
    rows = markdown_rows(markdown_of(convert_pdf(side_by_side_pdf())))
    # Before: two tables, the right block's rows after all of the left block's.
    assert ["Order / Rev:", "2024-12-5678", "Cinema:", "Downtown Multiplex"] in rows
    assert ["Region:", "NORTHEAST"] not in rows
    assert ["Booking Dates:", "12/20/2024 - 12/31/2024", "", ""] in rows
