"""Placeholder metadata is no title (issue 26, class 8).

Tools write "(anonymous)", "untitled", "unspecified" or an empty string where a
document has no title or subject, and some end a title in a NUL byte. Such a
value must not become the title, the ``#`` heading or the description: the
title is then the largest text on page 1 (PDF), the document's own heading, or
the file name (the catalog's fallback when ``Facts.title`` is None).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from fpdf import FPDF
from pypdf import PdfReader, PdfWriter

from docshelf.converters import convert
from docshelf.converters.base import Facts
from docshelf.converters.declared import (
    clean_facts,
    declared_text,
    declared_title,
    heading_title,
)
from tests.support.docx import BODY, CORE, write_docx
from tests.support.results import json_of, text_of

HEADLINE = "Inventory of the reading room"


def _pdf(info: dict[str, str]) -> bytes:
    """One page, its name set large, with ``info`` as its document information."""
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 22)
    pdf.cell(0, 12, HEADLINE, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, "Shelves, cabinets and the books on them, counted in May. " * 4)
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(bytes(pdf.output()))))
    writer.add_metadata(info)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.mark.parametrize("placeholder", ["(anonymous)", "untitled", "Unspecified", " ", "\x00"])
def test_a_placeholder_pdf_title_gives_way_to_the_largest_text(placeholder: str) -> None:
    result = convert(
        _pdf({"/Title": placeholder, "/Subject": "unspecified"}), "application/pdf", "r.pdf"
    )
    # Before: "(anonymous)" as title and "# (anonymous)" opening the Markdown.
    assert result.facts.title == HEADLINE
    markdown = text_of(result, "text/markdown")
    headings = [line for line in markdown.splitlines() if line.startswith("#")]
    assert headings[0] == f"# {HEADLINE}"
    assert result.facts.description and "unspecified" not in result.facts.description.casefold()
    assert json_of(result)["title"] == HEADLINE


def test_a_nul_terminated_pdf_title_loses_its_nul() -> None:
    result = convert(_pdf({"/Title": "Reading room\x00"}), "application/pdf", "r.pdf")
    # Before: "Reading room\x00", which reached resources/list.
    assert result.facts.title == "Reading room"
    assert json_of(result)["title"] == "Reading room"
    assert "\x00" not in text_of(result, "text/markdown")


@pytest.mark.parametrize("title", ["Reading rooms", "Salle de lecture — été"])
def test_a_nul_title_written_as_it_comes_is_decoded_by_its_encoding(title: str) -> None:
    """fpdf2 writes a title as bytes: PDFDocEncoding, or UTF-16 with a byte-order mark.
    pypdf hands back a PDFDocEncoding string with a NUL in it as raw bytes, whose str()
    is a UTF-16 guess: the title was mojibake ("慈扲畯..."). A PDF string is
    PDFDocEncoding unless it opens with a byte-order mark (ISO 32000-1, 7.9.2.2)."""
    pdf = FPDF()
    pdf.set_title(f"{title}\x00")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.cell(0, 6, "Shelves, cabinets and the books on them.")
    result = convert(bytes(pdf.output()), "application/pdf", "r.pdf")
    assert result.facts.title == title


def test_a_word_print_job_name_is_no_title() -> None:
    title = "Microsoft Word - inventory_v3.docx"
    result = convert(_pdf({"/Title": title}), "application/pdf", "r.pdf")
    assert result.facts.title == HEADLINE


def test_a_placeholder_docx_title_gives_way_to_the_file_name(tmp_path: Path) -> None:
    core = CORE.replace("Quarterly Shelf Report", "Untitled")
    path = write_docx(tmp_path / "report.docx", BODY, core=core)
    result = convert(
        path.read_bytes(),
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        path.name,
    )
    # Before: "Untitled" as the title and as the Markdown's "# Untitled".
    assert result.facts.title in (None, "Overview")
    assert "Untitled" not in text_of(result, "text/markdown")


def test_a_placeholder_html_title_is_no_title() -> None:
    page = b"<html><head><title>untitled</title></head><body><p>Shelves.</p></body></html>"
    result = convert(page, "text/html", "shelves.html")
    assert result.facts.title is None
    assert "untitled" not in text_of(result, "text/markdown")


def test_control_characters_leave_every_converters_title_and_description() -> None:
    data = b'{"title": "Inventory\\u0000", "description": "Books\\u0007 and shelves"}'
    result = convert(data, "application/json", "inventory.json")
    assert result.facts.title == "Inventory"
    assert result.facts.description == "Books and shelves"
    assert text_of(result, "text/markdown").startswith("# Inventory\n")


def test_declared_values_are_cleaned_and_placeholders_dropped() -> None:
    assert declared_title("  Annual\x00 report\n") == "Annual report"
    for placeholder in ("(anonymous)", "Untitled", "untitled document", "N/A", "--", ""):
        assert declared_title(placeholder) is None
    assert declared_title("Untitled Goose Game manual") == "Untitled Goose Game manual"
    assert declared_text("none") is None
    facts = clean_facts(Facts(title="x\x00", description="(anonymous)", metadata={"a": "b\x00"}))
    assert (facts.title, facts.description, dict(facts.metadata)) == ("x", None, {"a": "b"})


def test_a_heading_title_drops_only_a_section_number() -> None:
    assert heading_title("2.1 Scope") == "Scope"
    assert heading_title("1. Introduction") == "Introduction"
    assert heading_title("1 Introduction", numbered=True) == "Introduction"
    # A bare number may be the name's first word where headings are not numbered.
    assert heading_title("7 Habits of Effective Teams") == "7 Habits of Effective Teams"
    assert heading_title("2024") == "2024"
