"""PDF page text through PDFium: what PDFium gets wrong is put right (converters/pdf/text.py).

PDFs made here with fpdf2 need only DejaVu Sans; the tests on real files need
the shared corpus and skip without it.
"""

from __future__ import annotations

import io
import re
import threading
from collections.abc import Callable

import pytest
from fpdf import FPDF
from pypdf import PdfReader, PdfWriter

from docshelf.converters import convert
from docshelf.converters.render.fonts import coverage, system_fonts
from docshelf.converters.render.pdf import render_markdown_pdf

from .conftest import CORPUS_PDF

SANS = system_fonts().sans
needs_dejavu = pytest.mark.skipif(SANS is None, reason="DejaVu Sans is not installed")
needs_corpus = pytest.mark.skipif(
    not (CORPUS_PDF / "files.json").exists(),
    reason=f"needs the shared PDF corpus at {CORPUS_PDF} "
    "(../shared beside the checkout, or set DOCSHELF_SHARED)",
)
# A glyph name shown as text ("/Bullet"); "Y /X" (a quotient) is text.
GLYPH_NAME = re.compile(r"(?:^|\s)/[A-Za-z]{3,}\b", re.MULTILINE)


def text_of(data: bytes) -> str:
    representation = convert(data, "application/pdf", "test.pdf").get("text/plain")
    assert representation is not None
    return representation.data.decode("utf-8")


def made_pdf(write: Callable[[FPDF], None]) -> bytes:
    assert SANS is not None
    pdf = FPDF()
    pdf.add_page()
    pdf.add_font("sans", "", str(SANS.regular))
    pdf.set_font("sans", size=12)
    write(pdf)
    return bytes(pdf.output())


def paragraphs(pdf: FPDF) -> None:
    pdf.multi_cell(
        60,
        6,
        "This para\u00adgraph is long enough to need a hyphen\u00adation "
        "somewhere in it, isn't it? Extraordinarily so.",
    )
    pdf.ln(10)
    pdf.multi_cell(60, 6, "Second paragraph here.")


def rotated(data: bytes, degrees: int) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.pages[0].rotate(degrees)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@needs_dejavu
def test_superscripts_and_subscripts_stay_in_their_line() -> None:
    def write(pdf: FPDF) -> None:
        for text, position in (("The area is 4 m", "LINE"), ("2", "SUP"), (" and x", "LINE")):
            pdf.char_vpos = position
            pdf.write(text=text)
        pdf.char_vpos = "SUB"
        pdf.write(text="i")
        pdf.char_vpos = "LINE"
        pdf.write(text=" is small.\n")

    assert text_of(made_pdf(write)) == "The area is 4 m2 and xi is small.\n"


@needs_dejavu
def test_line_end_hyphen_joins_the_word_and_paragraphs_stay_apart() -> None:
    text = text_of(made_pdf(paragraphs))
    assert "hyphenation somewhere" in text
    assert "\ufffe" not in text and "hyphen-" not in text
    assert text.endswith("Extraordinarily so.\n\nSecond paragraph here.\n")


@needs_dejavu
@pytest.mark.parametrize("degrees", [90, 180, 270])
def test_rotated_page_reads_as_the_unrotated_one(degrees: int) -> None:
    # PDFium orders text as the page is shown: turned 90°, last line first.
    data = made_pdf(paragraphs)
    assert text_of(rotated(data, degrees)) == text_of(data)


def test_characters_beyond_the_bmp_are_one_character_each() -> None:
    bold_a = "\U0001d400"
    fonts = system_fonts()
    if not any(ord(bold_a) in coverage(path) for path in fonts.fallbacks):
        pytest.skip("no fallback font with mathematical alphanumerics installed")
    text = text_of(render_markdown_pdf(f"Bold A: {bold_a} here\n"))
    assert f"Bold A: {bold_a} here" in text
    assert not re.search("[\ud800-\udfff]", text)


@needs_dejavu
def test_threads_converting_at_once_get_what_one_at_a_time_gets() -> None:
    # PDFium is not thread-safe; pdftext serialises calls into it.
    documents = [made_pdf(paragraphs), rotated(made_pdf(paragraphs), 90)]
    expected = [text_of(data) for data in documents]
    results: dict[int, str] = {}

    def work(slot: int) -> None:
        results[slot] = text_of(documents[slot % 2])

    threads = [threading.Thread(target=work, args=(slot,)) for slot in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [results[slot] for slot in range(8)] == [expected[slot % 2] for slot in range(8)]


@needs_corpus
def test_geotopo_math_glyphs_are_neither_lost_nor_shown_as_names() -> None:
    text = text_of((CORPUS_PDF / "GeoTopo-komprimiert.pdf").read_bytes())
    assert text.count("\u2212") >= 500  # MINUS SIGN: pypdf kept 2 of 513
    assert text.count("Γ") >= 8  # pypdf lost them all
    assert "/Bullet" not in text and not GLYPH_NAME.search(text)
    # Glyphs PDFium cannot map itself (TeX math fonts without ToUnicode) come
    # through the font's encoding, not as the raw code ("hxi", "6=", "x 7→").
    assert text.count("⟨") >= 40 and text.count("⟩") >= 40
    assert "↦" in text and "\u2032" in text and "‖" in text  # maps to, prime, parallel
    assert "Skalarprodukt ⟨·, ·⟩" in text and "h·, ·i" not in text
    assert "✁" not in text  # LaTeX's line-drawing font is not Dingbats


@needs_corpus
def test_arabic_ligature_text_reads_in_logical_order() -> None:
    # habibi.pdf draws each word as one glyph whose ToUnicode text is the word;
    # PDFium reverses that text with its right-to-left run.
    text = text_of((CORPUS_PDF / "habibi.pdf").read_bytes())
    assert text == "حَبيبي habibi حَبيبي\n"


@needs_corpus
def test_table_row_with_footnote_marks_reads_as_one_line() -> None:
    text = text_of((CORPUS_PDF / "google-doc-document.pdf").read_bytes())
    # A ruled table: a row per line, a tab between cells.
    assert "\tIndonesia\tGermany\tAustria\tFrance\tVatican\n" in text
    # The superscript 1 after the number is a footnote mark, not a tenth digit.
    assert "Population\t273.879.750 1\t83,190,556 2\t8,935,112 3\t67,413,000\t453" in text
