"""PDFs drawn a text at a time with fpdf2 at chosen coordinates, with no rules or tags: how
the table and reading-order tests build the documents that showed a defect."""

from __future__ import annotations

from fpdf import FPDF

from docshelf.converters import ConversionResult, convert


def letter_page() -> FPDF:
    """A blank US Letter page measured in points, nothing placed for the test."""
    pdf = FPDF(unit="pt", format="letter")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    return pdf


def draw_row(pdf: FPDF, y: float, xs: tuple[float, ...], cells: tuple[str, ...]) -> None:
    """``cells`` on baseline ``y``, each at its ``xs``; an empty cell is left blank."""
    for x, text in zip(xs, cells, strict=True):
        if text:
            pdf.text(x, y, text)


def convert_pdf(data: bytes) -> ConversionResult:
    return convert(data, "application/pdf", "built.pdf")
