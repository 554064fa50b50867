"""What a PDF's Markdown and JSON keep beyond its words (issue #12, items 2-4).

The first document is written here with fpdf2, shaped like the specifications
the issue found wanting (the Shared MIME-info Database, Libtasn1's manual):
no /Title, the name set large on page 1, a running head and a page-number foot
on every page, numbered headings with bookmarks that leave the number out, an
XML sample in Courier, a link annotation, a ruled table. The corpus files
(Google Docs table and footnotes, GeoTopo's links) are the extended tests.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fpdf import FPDF

from docshelf.converters import ConversionResult, convert
from docshelf.converters.pdf.tables import Rule, fill, find_grids, rules_of_box
from tests.support.paths import NEEDS_SHARED
from tests.support.results import json_of, text_of

from .conftest import CORPUS_PDF, Convert

TITLE = "Shared MIME-info Database"
RUNNING_HEAD = "freedesktop.org specification, version 0.21"
XML_SAMPLE = [
    '<?xml version="1.0"?>',
    "<mime-info>",
    '  <mime-type type="text/x-diff">',
    "    <comment>Differences between files</comment>",
    '    <glob pattern="*.diff"/>',
    "  </mime-type>",
    "</mime-info>",
]
ASN1_SAMPLE = ["Entry ::= SEQUENCE {", "    id      INTEGER,", "    name    UTF8String", "}"]
UNRULED = [
    ("Measure", "Unit", "Target"),
    ("Latency", "milliseconds", "250"),
    ("Throughput", "pages/second", "300"),
    ("Footprint", "megabytes", "512"),
]
TABLE = [
    ("Field", "Type", "Meaning"),
    ("type", "string", "The MIME type"),
    ("glob", "pattern", "A file name pattern"),
    ("magic", "bytes", "Content to match"),
]
LINK = "https://www.freedesktop.org/wiki/"


def specification_pdf() -> bytes:
    """Three pages as a word processor would set a small specification."""
    pdf = FPDF()
    pdf.set_auto_page_break(True, margin=20)

    def header() -> None:
        pdf.set_font("Helvetica", size=8)
        pdf.set_y(8)
        pdf.cell(0, 5, RUNNING_HEAD, align="C")
        pdf.set_y(25)

    def footer() -> None:
        pdf.set_y(-15)
        pdf.set_font("Helvetica", size=8)
        pdf.cell(0, 5, f"Page {pdf.page_no()}", align="C")

    pdf.header = header  # type: ignore[method-assign]
    pdf.footer = footer  # type: ignore[method-assign]
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 24)
    pdf.cell(0, 12, TITLE, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, "This document describes a common database of MIME types. " * 4)
    pdf.start_section("Introduction", level=0)
    pdf.set_font("Helvetica", "B", 16)
    pdf.cell(0, 10, "1 Introduction", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, "Many programs need to know the type of a file. " * 5)
    pdf.write(6, "See the ")
    pdf.write(6, "freedesktop website", link=LINK)
    pdf.write(6, " for more, but not ")
    pdf.write(6, "this script", link="javascript:alert(1)")
    pdf.write(6, ".")
    pdf.ln(10)
    pdf.start_section("ASN.1 syntax", level=1)
    pdf.set_font("Helvetica", "B", 13)
    pdf.cell(0, 8, "2.1 ASN.1 syntax", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, "An example of the XML format follows.")
    pdf.ln(3)
    pdf.set_font("Courier", size=10)
    for line in XML_SAMPLE:
        pdf.cell(0, 5, line, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, "The table below lists the fields.")
    pdf.ln(2)
    with pdf.table(col_widths=(30, 40, 60)) as table:
        for cells in TABLE:
            table.row(cells)
    pdf.ln(4)
    pdf.multi_cell(0, 6, "The targets, in a table without rules:")
    with pdf.table(borders_layout="NONE", width=150) as table:
        for cells in UNRULED:
            table.row(cells)
    pdf.ln(4)
    pdf.multi_cell(0, 6, "The record, in ASN.1:", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Courier", size=10)
    for line in ASN1_SAMPLE:
        pdf.cell(0, 5, line, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=11)
    for word in ("two", "three"):
        pdf.add_page()
        pdf.multi_cell(0, 6, f"More text on page {word}. " * 30)
    return bytes(pdf.output())


@pytest.fixture(scope="module")
def specification() -> ConversionResult:
    return convert(specification_pdf(), "application/pdf", "shared-mime-info-spec.pdf")


def test_an_empty_title_is_the_largest_text_on_page_one(specification: ConversionResult) -> None:
    # Before: the first bookmark, "Introduction".
    assert specification.facts.title == TITLE
    markdown = text_of(specification, "text/markdown")
    assert markdown.startswith(f"# {TITLE}\n")


def test_headings_keep_their_printed_numbers(specification: ConversionResult) -> None:
    markdown = text_of(specification, "text/markdown")
    # Before: "## Introduction" and "### ASN.1 syntax", the bookmarks' words.
    assert "\n## 1 Introduction\n" in markdown
    assert "\n### 2.1 ASN.1 syntax\n" in markdown
    # The outline itself is the PDF's, as declared.
    assert [entry.title for entry in specification.facts.outline] == [
        "Introduction",
        "ASN.1 syntax",
    ]


def test_running_heads_and_feet_leave_the_markdown_not_the_page_text(
    specification: ConversionResult,
) -> None:
    markdown = text_of(specification, "text/markdown")
    # Once, where it first appears, so that no words are lost; before, on every page.
    assert markdown.count(RUNNING_HEAD) == 1
    assert markdown.index(RUNNING_HEAD) < markdown.index("<!-- page 2 -->")
    # Page numbers say nothing the page markers do not.
    assert not re.search(r"^Page \d$", markdown, re.MULTILINE)
    plain = text_of(specification, "text/plain")
    assert plain.count(RUNNING_HEAD) == 3
    assert "Page 3" in plain


def test_a_running_head_that_is_the_title_is_not_repeated() -> None:
    pdf = FPDF()
    pdf.set_title(TITLE)
    pdf.header = lambda: (pdf.set_font("Helvetica", size=8), pdf.cell(0, 5, TITLE))  # type: ignore[method-assign]
    for number in range(1, 4):
        pdf.add_page()
        pdf.set_font("Helvetica", size=11)
        pdf.set_y(30)
        pdf.multi_cell(0, 6, f"Text of page {number}. " * 20)
    markdown = text_of(convert(bytes(pdf.output()), "application/pdf", "t.pdf"), "text/markdown")
    # Once, as the title heading: the running head repeats it on every page.
    assert markdown.startswith(f"# {TITLE}\n") and markdown.count(TITLE) == 1


def test_monospaced_lines_are_fenced_code_with_their_indentation(
    specification: ConversionResult,
) -> None:
    markdown = text_of(specification, "text/markdown")
    # Before: each line alone, flush left, as \<mime-type type="text/x-diff"\>.
    assert "```\n" + "\n".join(XML_SAMPLE) + "\n```" in markdown
    assert "\\<" not in markdown
    # Runs of spaces inside a line are kept too (PDFium reads them as one).
    assert "```\n" + "\n".join(ASN1_SAMPLE) + "\n```" in markdown
    assert json_of(specification)["code_blocks"] == [
        {"language": None, "code": "\n".join(XML_SAMPLE) + "\n"},
        {"language": None, "code": "\n".join(ASN1_SAMPLE) + "\n"},
    ]


def test_link_annotations_become_markdown_and_json_links(
    specification: ConversionResult,
) -> None:
    markdown = text_of(specification, "text/markdown")
    assert f"See the [freedesktop website]({LINK}) for more" in markdown
    # A javascript: action is not a link a reader should follow: text only.
    assert "but not this script." in markdown
    assert json_of(specification)["links"] == [{"text": "freedesktop website", "href": LINK}]


def test_ruled_and_aligned_tables_become_markdown_and_json_tables(
    specification: ConversionResult,
) -> None:
    markdown = text_of(specification, "text/markdown")
    for table in (TABLE, UNRULED):
        rows = ["| " + " | ".join(cells) + " |" for cells in table]
        assert "\n".join([rows[0], "|---|---|---|", *rows[1:]]) in markdown
    assert json_of(specification)["tables"] == [
        {"header": list(table[0]), "rows": [list(row) for row in table[1:]]}
        for table in (TABLE, UNRULED)
    ]
    plain = text_of(specification, "text/plain")
    assert "glob\tpattern\tA file name pattern" in plain


def test_json_with_links_tables_and_code_validates(
    specification: ConversionResult, schema_validator: Any
) -> None:
    schema_validator.validate(json_of(specification))


# --- the grid finder on its own -------------------------------------------------------


def box_rules(cells: list[tuple[float, float, float, float]]) -> list[Rule]:
    return [rule for cell in cells for rule in rules_of_box(*cell, outline=True)]


def test_a_grid_of_outlined_cells_is_found_and_filled() -> None:
    cells = [(x, y, x + 50, y + 20) for y in (0, 20) for x in (0, 50)]
    [grid] = find_grids(box_rules(cells))
    assert grid.xs == (0, 50, 100) and grid.ys == (40, 20, 0)
    chars = [(c, 10 + i, 30, 28) for i, c in enumerate("Name")]
    chars += [(c, 60 + i, 30, 28) for i, c in enumerate("Size")]
    chars += [(c, 10 + i, 10, 8) for i, c in enumerate("a.txt")]
    chars += [(c, 60 + i, 10, 8) for i, c in enumerate("12")]
    assert fill(grid, chars) == (("Name", "Size"), ("a.txt", "12"))


def test_a_missing_column_border_merges_cells_into_the_first() -> None:
    rules = box_rules([(0, 0, 100, 40)])  # the frame
    rules += [Rule(0, 20, 100, 20), Rule(50, 20, 50, 40)]  # the lower row has no middle border
    [grid] = find_grids(rules)
    chars = [(c, 5 + i, 30, 28) for i, c in enumerate("ab")]
    chars += [(c, 55 + i, 30, 28) for i, c in enumerate("cd")]
    chars += [(c, 40 + 5 * i, 10, 8) for i, c in enumerate("wide")]  # across the missing border
    assert fill(grid, chars) == (("ab", "cd"), ("wide", ""))


def test_crossing_lines_without_a_frame_are_no_table() -> None:
    # A chart's gridlines: they cross, but nothing closes them into a frame.
    rules = [Rule(0, y, 100, y) for y in (10, 20, 30)] + [Rule(x, 5, x, 35) for x in (20, 40, 60)]
    assert find_grids(rules) == []


def test_a_grid_with_little_text_is_a_figure() -> None:
    cells = [(x, y, x + 20, y + 20) for y in (0, 20, 40) for x in (0, 20, 40)]
    [grid] = find_grids(box_rules(cells))
    assert fill(grid, [("x", 10, 50, 48), ("y", 30, 10, 8)]) is None  # two of nine cells
    stars = [("*", x + 10, y + 10, y + 8) for y in (0, 20, 40) for x in (0, 20, 40)]
    assert fill(grid, stars) is None  # a lattice of marks


# --- the shared corpus -----------------------------------------------------------------


@NEEDS_SHARED
def test_google_docs_table_and_footnotes_in_reading_order(converted: Convert) -> None:
    result = converted(CORPUS_PDF / "google-doc-document.pdf")
    markdown = text_of(result, "text/markdown")
    # Before: one line per row, "Population 273.879.750 1 83,190,556 2 ..."
    assert "| Capital | Jakarta | Berlin | Vienna | Paris | Vatican City |" in markdown
    # "Europe" spans four columns (no borders between them in that row).
    assert "| Continent | Asia | Europe |  |  |  |" in markdown
    # Before: 3, 2, 1 (Google Docs writes the last footnote first).
    assert "1 2021 estimate\n2 2020 estimate\n3 2020 estimate" in markdown
    [table] = json_of(result)["tables"]
    assert table["header"] == ["", "Indonesia", "Germany", "Austria", "France", "Vatican"]


@NEEDS_SHARED
def test_a_table_set_without_rules_keeps_its_header(converted: Convert) -> None:
    markdown = text_of(converted(CORPUS_PDF / "multicolumn.pdf"), "text/markdown")
    # The header is set closer than the rows, its "km²" raised.
    assert (
        "| Country | Population (millions) | Area (km2) | Capital | Official Language |\n"
        "|---|---|---|---|---|\n"
        "| Austria | 8.9 | 83,879 | Vienna | German |"
    ) in markdown


@NEEDS_SHARED
def test_a_table_of_contents_is_not_a_table(converted: Convert) -> None:
    # Titles, then page numbers that never decrease: lines, as printed.
    markdown = text_of(converted(CORPUS_PDF / "pdflatex-outline.pdf"), "text/markdown")
    assert "1 Foo 2\n2 Bar 2\n3 Baz 2\n" in markdown
    assert "| 1 Foo |" not in markdown


@NEEDS_SHARED
def test_geotopo_keeps_its_links(converted: Convert) -> None:
    result = converted(CORPUS_PDF / "GeoTopo-komprimiert.pdf")
    markdown = text_of(result, "text/markdown")
    assert "[martin-thoma.com/geotopo](http://martin-thoma.com/geotopo/)" in markdown
    links = json_of(result)["links"]
    assert {"text": "martin-thoma.com/geotopo", "href": "http://martin-thoma.com/geotopo/"} in links
    assert all(link["href"].startswith(("http://", "https://", "mailto:")) for link in links)


def test_fixture_pdf_has_no_title(tmp_path: Path) -> None:
    """The premise of the title test: the generated file declares none."""
    from pypdf import PdfReader

    path = tmp_path / "spec.pdf"
    path.write_bytes(specification_pdf())
    assert not (PdfReader(path).metadata or {}).get("/Title")
