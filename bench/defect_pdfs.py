# ruff: noqa: RUF001  (the documents hold typographic dashes on purpose)
"""PDFs the quality benchmark builds, one per PDF defect class of issue 26.

Each shows one class of defect found on documents nobody here had tuned for
(issue 26, items 5-9, 11 and 13), built from known content so its truth is exact:
text for words, lines that must stand alone, label/value pairs, table rows, links,
titles, code, and strings that must not appear. Deterministic and offline: fpdf2
(a docshelf dependency) draws them, pypdf rewrites what fpdf2 cannot say (a font's
name and flags). The filled form needs PyMuPDF (bench only, AGPL, never imported by
docshelf): without it that document is left out, with a note.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import cast

from fpdf import FPDF
from PIL import Image
from pypdf import PdfReader, PdfWriter
from pypdf.generic import DictionaryObject, NameObject, NumberObject, PdfObject

from bench.quality_docs import FIXED_DATE, LEAKS, BuiltDocument, find_font
from bench.quality_measures import Truth

PDF = "application/pdf"
PREFIX = "defects/"

#: (text, font size, bold): one line of a page.
Line = tuple[str, float, bool]


def _pdf(title: str | None = None, landscape: bool = False) -> FPDF:
    pdf = FPDF(orientation="L" if landscape else "P", format="A4")
    pdf.set_creation_date(FIXED_DATE)
    pdf.set_auto_page_break(False)
    if title is not None:
        pdf.set_title(title)
    sans, bold = find_font("DejaVuSans.ttf"), find_font("DejaVuSans-Bold.ttf")
    if sans and bold:
        pdf.add_font("Body", "", str(sans))
        pdf.add_font("Body", "B", str(bold))
    return pdf


def _font(pdf: FPDF, size: float, bold: bool = False) -> None:
    family = "Body" if "body" in pdf.fonts else "Helvetica"  # DejaVu, else a core font
    pdf.set_font(family, "B" if bold else "", size)


def _lines(pdf: FPDF, lines: Sequence[Line], top: float = 25) -> None:
    pdf.set_xy(20, top)
    for text, size, bold in lines:
        _font(pdf, size, bold)
        pdf.multi_cell(170, size * 0.55, text, new_x="LMARGIN", new_y="NEXT")
        pdf.set_x(20)
        pdf.ln(size * 0.25)


def _document(name: str, pdf: FPDF, truth: Truth) -> BuiltDocument:
    return BuiltDocument(PREFIX + name, PDF, bytes(pdf.output()), truth)


def _text(lines: Sequence[Line]) -> str:
    return "\n".join(text for text, _, _ in lines)


# ---------------------------------------------------------- item 5: repeated lines

LABEL = "Exhibit 4 – signed delivery note"


def label_pages() -> BuiltDocument:
    """Every page is one label line (a scan's stamp, an exhibit cover): content, not a
    running head, so it stays on every page."""
    pdf = _pdf("Delivery exhibits")
    for _ in range(4):
        pdf.add_page()
        _lines(pdf, [(LABEL, 12, False)], top=40)
    truth = Truth(lines=(LABEL,) * 4, text="\n".join([LABEL] * 4), forbidden=LEAKS)
    return _document("label-pages.pdf", pdf, truth)


CAPTION = "Figure: north elevation of the pump house"
CAPTION_PAGES = (
    "The survey of 12 May recorded the north wall before the repairs began.",
    "The same wall after the mortar was renewed, seen from the access road.",
    "The finished wall in October, with the new drainage channel in front.",
)


def _photo(shade: int) -> Image.Image:
    return Image.new("RGB", (240, 150), (shade, shade, 200 - shade // 2))


def repeated_captions() -> BuiltDocument:
    """The same caption under a picture on three pages: a caption each time."""
    pdf = _pdf("Pump house survey")
    for number, paragraph in enumerate(CAPTION_PAGES):
        pdf.add_page()
        _lines(pdf, [(paragraph, 11, False)], top=25)
        pdf.image(_photo(60 + 40 * number), x=40, y=50, w=120)
        pdf.set_xy(40, 128)
        _font(pdf, 10)
        pdf.cell(120, 6, CAPTION, align="C")
    text = "\n".join(line for paragraph in CAPTION_PAGES for line in (paragraph, CAPTION))
    return _document("captions.pdf", pdf, Truth(lines=(CAPTION,) * 3, text=text, forbidden=LEAKS))


# -------------------------------------------------- item 6: a form inside a frame

FORM_PAIRS = (
    (("Insured name", "Gabriel Diaz"), ("Year", "2022")),
    (("Claim #", "SF-1008"), ("Make", "Jeep")),
    (("Policy #", "POL-2022-555"), ("Model", "Grand Cherokee")),
    (("Phone", "(425) 111-1111"), ("Odometer", "9,800")),
)


def framed_form() -> BuiltDocument:
    """Label/value pairs in two columns inside a rectangle drawn round the whole page."""
    pdf = _pdf("Preliminary estimate")
    pdf.add_page()
    pdf.rect(10, 10, 190, 277)
    _lines(pdf, [("Preliminary Estimate", 16, True)], top=18)
    y = 40.0
    for row in FORM_PAIRS:
        for column, (label, value) in enumerate(row):
            x = 20 + 90 * column
            _font(pdf, 10, True)
            pdf.set_xy(x, y)
            pdf.cell(35, 6, label)
            _font(pdf, 10)
            pdf.set_xy(x + 35, y)
            pdf.cell(50, 6, value)
        y += 9
    _lines(pdf, [("Totals are estimates until the vehicle is inspected.", 10, False)], top=y + 8)
    pairs = tuple(pair for row in FORM_PAIRS for pair in row)
    text = "\n".join(
        [
            "Preliminary Estimate",
            *(" ".join(f"{a} {b}" for a, b in row) for row in FORM_PAIRS),
            "Totals are estimates until the vehicle is inspected.",
        ]
    )
    return _document("framed-form.pdf", pdf, Truth(pairs=pairs, text=text, forbidden=LEAKS))


# ----------------------------------------------------- item 7: borderless tables

INVENTORY = (
    ("Product Code", "Location", "Expected", "Actual", "Variance", "Status"),
    ("SKU-8847", "A-12", "450", "427", "-23", ""),
    ("SKU-9201", "B-07", "780", "778", "-2", "OK"),
    ("SKU-4563", "C-15", "180", "156", "-24", "CRITICAL"),
    ("SKU-7728", "D-22", "920", "935", "+15", "OK"),
    ("SKU-3345", "", "335", "335", "0", "OK"),
)
SCHEDULE = tuple(
    tuple("" if cell == "-" else cell.replace("_", " ") for cell in row.split())
    for row in (
        "Line Depot 05:40 06:10 06:40 07:10 07:40 08:10 08:40 09:10 09:40 Notes",
        "12 North 05:52 06:22 06:52 07:22 07:52 08:22 08:52 09:22 09:52 -",
        "14 Harbour 05:47 - 06:47 - 07:47 - 08:47 - 09:47 hourly",
        "21 North 06:05 06:35 07:05 07:35 08:05 08:35 09:05 09:35 10:05 -",
        "33 Airport - 06:15 - 07:15 - 08:15 - 09:15 - school_days",
    )
)


def _borderless(
    pdf: FPDF, rows: Sequence[Sequence[str]], widths: Sequence[float], top: float, size: float
) -> float:
    """Rows set column by column at fixed positions, without a rule: what a report
    generator writes. Returns the y below the table."""
    y = top
    for number, row in enumerate(rows):
        x = 15.0
        for cell, width in zip(row, widths, strict=True):
            _font(pdf, size, number == 0)
            pdf.set_xy(x, y)
            pdf.cell(width, size * 0.6, cell)
            x += width
        y += size * 0.6 + 1.5
    return y


def _row_pairs(rows: Sequence[Sequence[str]]) -> tuple[tuple[str, str], ...]:
    """Each row's key (its first cell) paired with every other filled cell of the row."""
    return tuple((row[0], cell) for row in rows[1:] for cell in row[1:] if cell and row[0])


def inventory_table() -> BuiltDocument:
    """A borderless inventory table with empty cells, between two paragraphs."""
    pdf = _pdf("Inventory reconciliation")
    pdf.add_page()
    before = ("Inventory Reconciliation Report", 15, True)
    _lines(pdf, [before, ("Warehouse: Distribution Center East", 10, False)], top=20)
    y = _borderless(pdf, INVENTORY, (32, 26, 26, 26, 26, 30), 48, 10)
    after = ("Variance analysis follows the count of 15 November.", 10, False)
    _lines(pdf, [after], top=y + 8)
    text = "\n".join(
        [before[0], "Warehouse: Distribution Center East", *map(" ".join, INVENTORY), after[0]]
    )
    truth = Truth(tables=(INVENTORY,), pairs=_row_pairs(INVENTORY), text=text, forbidden=LEAKS)
    return _document("inventory.pdf", pdf, truth)


def schedule_table() -> BuiltDocument:
    """A 12-column timetable on a landscape page, some slots empty, no rules."""
    pdf = _pdf("Morning timetable", landscape=True)
    pdf.add_page()
    _lines(pdf, [("Morning timetable, weekdays", 14, True)], top=18)
    _borderless(pdf, SCHEDULE, (14, 24, *([21.0] * 9), 30), 40, 9)
    text = "\n".join(["Morning timetable, weekdays", *map(" ".join, SCHEDULE)])
    truth = Truth(tables=(SCHEDULE,), pairs=_row_pairs(SCHEDULE), text=text, forbidden=LEAKS)
    return _document("schedule.pdf", pdf, truth)


# ------------------------------------------------- item 8: placeholder metadata

PLACEHOLDERS = (
    ("placeholder-anonymous.pdf", "(anonymous)", "Boiler Inspection Record"),
    ("placeholder-untitled.pdf", "untitled", "Quarterly Maintenance Plan"),
    ("placeholder-nul.pdf", "Harbour Survey 2024\x00", "Harbour Survey 2024"),
)


def placeholder_title(name: str, metadata: str, heading: str) -> BuiltDocument:
    """A placeholder (or NUL-terminated) metadata title over a page whose largest text
    is the real title: the title is that text (or the file name), never the placeholder."""
    pdf = _pdf(metadata)
    pdf.add_page()
    body = "The inspection covered the boiler room, the flue and the feed pumps."
    _lines(pdf, [(heading, 20, True), (body, 11, False)])
    forbidden = (*LEAKS, ("\x00", 0), *(((metadata, 0),) if "\x00" not in metadata else ()))
    truth = Truth(
        titles=(heading, name.removesuffix(".pdf")),
        text=f"{heading}\n{body}",
        forbidden=forbidden,
    )
    return _document(name, pdf, truth)


# --------------------------------------------------- item 9: no structure at all

PLAIN_PAGES = (
    "The committee met on the first Monday of the month and heard the treasurer.",
    "Receipts from the spring fair covered the cost of the new roof in full.",
    "The next meeting will decide the date of the autumn open day.",
)


def structureless() -> BuiltDocument:
    """Three pages of plain paragraphs, one size, no outline: no heading is the
    document's, so none may be invented (``## Page N``)."""
    pdf = _pdf("Committee minutes")
    for paragraph in PLAIN_PAGES:
        pdf.add_page()
        _lines(pdf, [(paragraph, 11, False)] * 3)
    text = "\n".join(paragraph for paragraph in PLAIN_PAGES for _ in range(3))
    truth = Truth(text=text, forbidden=(*LEAKS, ("## Page", 0)))
    return _document("structureless.pdf", pdf, truth)


# ------------------------------------------------------------- item 11: a form

FIELDS = (
    ("Applicant name", "applicant", "Maria Lindqvist"),
    ("Policy number", "policy", "POL-7731-204"),
    ("Date of loss", "loss_date", "2024-03-18"),
)


def filled_form() -> BuiltDocument | None:
    """AcroForm text fields, filled, beside their printed labels (PyMuPDF draws the
    widgets and their appearances; None without it)."""
    try:
        import pymupdf
    except ImportError:
        return None
    document = pymupdf.open()
    page = document.new_page(width=595, height=842)
    page.insert_text((72, 80), "Claim form", fontsize=16)
    for number, (label, field_name, value) in enumerate(FIELDS):
        y = 130 + 40 * number
        page.insert_text((72, y), f"{label}:", fontsize=11)
        widget = pymupdf.Widget()
        widget.field_type = pymupdf.mupdf.PDF_WIDGET_TYPE_TEXT
        widget.field_name = field_name
        widget.field_value = value
        widget.rect = pymupdf.Rect(200, y - 14, 420, y + 4)
        widget.text_fontsize = 11
        page.add_widget(widget)
    data = document.tobytes(garbage=3, deflate=True, no_new_id=True)
    document.close()
    text = "\n".join(["Claim form", *(f"{label}: {value}" for label, _, value in FIELDS)])
    pairs = tuple((label, value) for label, _, value in FIELDS)
    truth = Truth(pairs=pairs, text=text, forbidden=LEAKS)
    return BuiltDocument(PREFIX + "acroform.pdf", PDF, data, truth)


# ------------------------------------------------------------- item 13: smaller

CELL_LINK = "https://registry.example.org/parts/4471"
LINK_TABLE = (
    ("Part", "Supplier", "Record"),
    ("Impeller", "Nordpump AB", "registry entry"),
    ("Seal kit", "Vallen GmbH", "on file"),
)


def link_in_cell() -> BuiltDocument:
    """A ruled table whose cell carries a link annotation."""
    pdf = _pdf("Parts register")
    pdf.add_page()
    _lines(pdf, [("Parts register", 14, True)])
    _font(pdf, 10)
    pdf.set_y(45)
    with pdf.table(width=150, line_height=7) as table:
        for number, cells in enumerate(LINK_TABLE):
            row = table.row()
            for cell in cells:
                row.cell(cell, link=CELL_LINK if (number, cell) == (1, "registry entry") else None)
    text = "\n".join(["Parts register", *map(" ".join, LINK_TABLE)])
    truth = Truth(tables=(LINK_TABLE,), links=(CELL_LINK,), text=text, forbidden=LEAKS)
    return _document("link-in-cell.pdf", pdf, truth)


BOLD_LABELS = (
    ("Consignee", "Harbour Works Ltd, Pier 4, Kalmar"),
    ("Carrier", "Baltic Freight, vehicle KLM 442"),
    ("Remarks", "Two crates opened for customs and resealed."),
)


def bold_labels() -> BuiltDocument:
    """A bold label on its own line above its value: two lines, not one."""
    pdf = _pdf("Consignment note")
    pdf.add_page()
    lines: list[Line] = [("Consignment note 4471", 14, True)]
    for label, value in BOLD_LABELS:
        lines += [(label, 10, True), (value, 10, False)]
    _lines(pdf, lines)
    truth = Truth(
        lines=tuple(text for label_value in BOLD_LABELS for text in label_value),
        text=_text(lines),
        forbidden=LEAKS,
    )
    return _document("bold-labels.pdf", pdf, truth)


MANUAL_TITLE = "Pump Station Operating Manual"


def numbered_heading() -> BuiltDocument:
    """A title line above a numbered first heading, no metadata title: the document's
    title is the title line, not "1 Introduction"."""
    pdf = _pdf(None)
    pdf.add_page()
    pdf.set_xy(20, 25)
    _font(pdf, 22, True)
    pdf.cell(170, 12, MANUAL_TITLE, new_x="LMARGIN", new_y="NEXT")
    lines: list[Line] = [(MANUAL_TITLE, 22, True)]
    for heading, body in (
        ("1 Introduction", "The station lifts water from the lower basin to the reservoir."),
        ("2 Operation", "Start the pumps one at a time and watch the pressure gauge."),
    ):
        pdf.set_x(20)
        pdf.ln(4)
        _font(pdf, 15, True)
        pdf.start_section(heading)
        pdf.cell(170, 9, heading, new_x="LMARGIN", new_y="NEXT")
        _font(pdf, 11)
        pdf.multi_cell(170, 6, body, new_x="LMARGIN", new_y="NEXT")
        lines += [(heading, 15, True), (body, 11, False)]
    truth = Truth(
        headings=("1 Introduction", "2 Operation"),
        titles=(MANUAL_TITLE,),
        text=_text(lines),
        forbidden=LEAKS,
    )
    return _document("numbered-heading.pdf", pdf, truth)


XML_SAMPLE = """\
<?xml version="1.0"?>
<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">
  <mime-type type="text/x-diff">
    <comment>Differences between files</comment>
    <glob pattern="*.diff"/>
  </mime-type>
</mime-info>"""
#: The monospaced face of the freedesktop shared-mime-info specification (pdfTeX):
#: its name says "Mon", not "Mono", and its descriptor's flags do not set FixedPitch.
SPEC_MONO_NAME = "JNNPWA+NimbusMonL-Regu"


def _renamed_mono(data: bytes) -> bytes:
    """The PDF with its monospaced font renamed as pdfTeX names Nimbus Mono and its
    FixedPitch flag cleared (flags 4, symbolic), as in that specification."""
    reader = PdfReader(io.BytesIO(data))
    writer = PdfWriter(clone_from=reader)
    for page in writer.pages:
        fonts = cast(DictionaryObject, cast(DictionaryObject, page["/Resources"])["/Font"])
        for key in fonts:
            font = cast(DictionaryObject, fonts[key].get_object())
            descendants = cast(list[PdfObject], font.get("/DescendantFonts", []))
            fonts_to_patch = [font, *(cast(DictionaryObject, d.get_object()) for d in descendants)]
            if not any("Mono" in str(f.get("/BaseFont", "")) for f in fonts_to_patch):
                continue
            for part in fonts_to_patch:
                part[NameObject("/BaseFont")] = NameObject("/" + SPEC_MONO_NAME)
                descriptor = part.get("/FontDescriptor")
                if descriptor is not None:
                    descriptor = cast(DictionaryObject, descriptor.get_object())
                    descriptor[NameObject("/FontName")] = NameObject("/" + SPEC_MONO_NAME)
                    descriptor[NameObject("/Flags")] = NumberObject(4)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def xml_sample() -> BuiltDocument:
    """An XML example set in a monospaced face named and flagged as the shared-mime-info
    specification's is: the block is code, fenced, with its indentation."""
    pdf = _pdf("Shared MIME-info Database")
    mono = find_font("DejaVuSansMono.ttf")
    pdf.add_page()
    intro = "A package registers its types with a file such as this one:"
    _lines(pdf, [("Adding a new MIME type", 14, True), (intro, 11, False)])
    if mono:
        pdf.add_font("SpecMono", "", str(mono))
        pdf.set_font("SpecMono", "", 9)
    else:
        pdf.set_font("Courier", "", 9)
    pdf.set_y(50)
    for line in XML_SAMPLE.splitlines():
        pdf.set_x(25)
        pdf.cell(160, 4.5, line, new_x="LMARGIN", new_y="NEXT")
    data = _renamed_mono(bytes(pdf.output())) if mono else bytes(pdf.output())
    truth = Truth(
        code=(XML_SAMPLE,),
        text="\n".join(["Adding a new MIME type", intro, XML_SAMPLE]),
        forbidden=(*LEAKS, ("\\<mime-type", 0)),
    )
    return BuiltDocument(PREFIX + "xml-sample.pdf", PDF, data, truth)


def build_pdfs(notes: list[str]) -> list[BuiltDocument]:
    """Every PDF of this module, in a fixed order (a note for one that cannot be built)."""
    builders: list[Callable[[], BuiltDocument | None]] = [
        label_pages,
        repeated_captions,
        framed_form,
        inventory_table,
        schedule_table,
        *(lambda p=p: placeholder_title(*p) for p in PLACEHOLDERS),
        structureless,
        filled_form,
        link_in_cell,
        bold_labels,
        numbered_heading,
        xml_sample,
    ]
    documents = []
    for build in builders:
        document = build()
        if document is None:
            notes.append("defects/acroform.pdf left out: PyMuPDF is not installed")
        else:
            documents.append(document)
    return documents
