"""PDF defects found on documents nobody tuned for (issue 26, classes 5, 9 and 13).

Every document is written here with fpdf2, shaped like the one that showed the
defect: a label that is each page's only content, a caption repeated under the
pictures of several pages, a structureless PDF, a bold label line, a numbered
first heading, an XML sample set in a monospaced face whose name and flags do
not say so (the freedesktop shared-mime-info specification's NimbusMonL-Regu).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from fontTools.ttLib import TTFont
from fpdf import FPDF

from docshelf.converters import ConversionResult, convert
from docshelf.converters.parts import pages_markdown
from tests.support.results import json_of, text_of

LABEL = "Specimen sheet, keep with the samples"
CAPTION = "Figure: the front panel of the reader"
RUNNING_HEAD = "Field manual, second edition"
MONO_TTF = Path("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf")


def _convert(pdf: FPDF, name: str = "doc.pdf") -> ConversionResult:
    return convert(bytes(pdf.output()), "application/pdf", name)


def _pages(count: int, draw: Callable[[FPDF, int], None]) -> FPDF:
    pdf = FPDF()
    pdf.set_auto_page_break(False)
    for number in range(1, count + 1):
        pdf.add_page()
        draw(pdf, number)
    return pdf


def test_a_label_that_is_each_pages_only_content_stays_on_every_page() -> None:
    def draw(pdf: FPDF, number: int) -> None:
        pdf.set_font("Helvetica", size=11)
        pdf.set_y(10)
        pdf.cell(0, 6, LABEL, align="C")

    result = _convert(_pages(4, draw))
    markdown = text_of(result, "text/markdown")
    # Before: once, on page 1; pages 2-4 were empty.
    assert markdown.count(LABEL) == 4
    for number in range(1, 5):
        assert LABEL in (pages_markdown(markdown, number, number) or "")


def test_a_label_beside_a_page_number_is_the_pages_content() -> None:
    def draw(pdf: FPDF, number: int) -> None:
        pdf.set_font("Helvetica", size=11)
        pdf.set_y(140)
        pdf.cell(0, 6, LABEL, align="C")
        pdf.set_y(-15)
        pdf.cell(0, 5, str(number), align="C")

    markdown = text_of(_convert(_pages(4, draw)), "text/markdown")
    assert markdown.count(LABEL) == 4


def test_a_caption_repeated_under_pictures_mid_page_is_kept() -> None:
    def draw(pdf: FPDF, number: int) -> None:
        pdf.set_font("Helvetica", size=11)
        pdf.set_y(25)
        pdf.multi_cell(0, 6, f"Step {number} of the assembly, as the picture shows. " * 3)
        pdf.rect(40, 50, 120, 80, style="F")
        pdf.set_y(133)
        pdf.cell(0, 6, CAPTION, align="C")

    markdown = text_of(_convert(_pages(4, draw)), "text/markdown")
    # Before: once; the caption sat among each page's last lines, at the same height.
    assert markdown.count(CAPTION) == 4


def test_a_running_head_beside_body_text_is_still_kept_once() -> None:
    def draw(pdf: FPDF, number: int) -> None:
        pdf.set_font("Helvetica", size=8)
        pdf.set_y(8)
        pdf.cell(0, 5, RUNNING_HEAD, align="C")
        pdf.set_font("Helvetica", size=11)
        pdf.set_y(30)
        pdf.multi_cell(0, 6, f"Body text of page {number}, different on each. " * 8)

    result = _convert(_pages(4, draw))
    assert text_of(result, "text/markdown").count(RUNNING_HEAD) == 1
    assert text_of(result, "text/plain").count(RUNNING_HEAD) == 4


def test_a_structureless_pdf_marks_pages_with_comments_not_headings() -> None:
    def draw(pdf: FPDF, number: int) -> None:
        pdf.set_font("Helvetica", size=11)
        pdf.set_y(30)
        pdf.multi_cell(0, 6, f"Plain words on page {number}. " * 10)

    result = _convert(_pages(3, draw), "plain.pdf")
    markdown = text_of(result, "text/markdown")
    # Before: "## Page 1", "## Page 2", ...: headings the document never had.
    assert "## Page" not in markdown
    assert [line for line in markdown.splitlines() if line.startswith("<!--")] == [
        "<!-- page 1 -->",
        "<!-- page 2 -->",
        "<!-- page 3 -->",
    ]
    assert result.facts.outline == ()
    assert json_of(result)["outline"] == []
    part = pages_markdown(markdown, 2, 2) or ""
    assert "page 2." in part and "page 1." not in part and "page 3." not in part
    assert [segment.part for segment in result.segments()] == ["pages=1", "pages=2", "pages=3"]


def test_a_bold_label_line_is_its_own_paragraph() -> None:
    def draw(pdf: FPDF, number: int) -> None:
        pdf.set_y(30)
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 6, "The form has two parts, each under its label. " * 3)
        pdf.ln(4)
        pdf.set_font("Helvetica", "B", 11)
        pdf.cell(0, 6, "Header", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=11)
        pdf.cell(0, 6, "Sender, recipient and date of the letter.", new_x="LMARGIN", new_y="NEXT")
        pdf.cell(0, 6, "The date is the day it was posted.", new_x="LMARGIN", new_y="NEXT")

    markdown = text_of(_convert(_pages(1, draw)), "text/markdown")
    # Before: "Header\nSender, recipient and date of the letter.\n..." as one paragraph.
    assert "\n\nHeader\n\nSender, recipient" in markdown


def test_a_title_from_a_numbered_first_heading_drops_its_number() -> None:
    def draw(pdf: FPDF, number: int) -> None:
        pdf.set_y(20)
        pdf.set_font("Helvetica", "B", 18)
        pdf.cell(0, 10, "1 Introduction", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 6, "This report looks at the readers in use. " * 6)
        pdf.set_font("Helvetica", "B", 18)
        pdf.cell(0, 10, "2 Readers", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 6, "Each reader is listed with its year. " * 6)

    result = _convert(_pages(1, draw))
    # Before: "1 Introduction". The heading keeps its number where it stands.
    assert result.facts.title == "Introduction"
    assert "1 Introduction" in text_of(result, "text/markdown")


def _unnamed_monospace(tmp_path: Path) -> Path:
    """A monospaced TrueType face named and flagged like NimbusMonL-Regu: its PostScript
    name does not say "mono" and its post table does not declare a fixed pitch."""
    font = TTFont(MONO_TTF)
    for record in font["name"].names:
        if record.nameID in (1, 3, 4, 6, 16):
            record.string = "NimbusMonL-Regu" if record.nameID == 6 else "Nimbus Mon L"
    font["post"].isFixedPitch = 0
    path = tmp_path / "NimbusMonL-Regu.ttf"
    buffer = io.BytesIO()
    font.save(buffer)
    path.write_bytes(buffer.getvalue())
    return path


XML_SAMPLE = [
    '<?xml version="1.0"?>',
    '<mime-type type="text/x-diff">',
    "  <comment>Differences between files</comment>",
    '  <glob pattern="*.diff"/>',
    "</mime-type>",
]


@pytest.mark.skipif(not MONO_TTF.exists(), reason="needs DejaVu Sans Mono (fonts-dejavu-core)")
def test_a_monospaced_face_known_only_by_its_widths_is_fenced_code(tmp_path: Path) -> None:
    font = _unnamed_monospace(tmp_path)

    def draw(pdf: FPDF, number: int) -> None:
        pdf.add_font("Nimbus Mon L", "", str(font))
        pdf.set_y(20)
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 6, "Here is an example source file, named diff.xml:")
        pdf.ln(3)
        pdf.set_font("Nimbus Mon L", size=10)
        for line in XML_SAMPLE:
            pdf.cell(0, 5, line, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(3)
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 6, "Common types are provided by the shared database.")

    pdf = _pages(1, draw)
    data = bytes(pdf.output())
    assert b"FixedPitch" not in data and b"Mono" not in data  # the premise
    markdown = text_of(convert(data, "application/pdf", "spec.pdf"), "text/markdown")
    # Before: "\<mime-type type="text/x-diff"\>" as a paragraph line.
    assert "```\n" + "\n".join(XML_SAMPLE) + "\n```" in markdown
