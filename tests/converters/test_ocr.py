"""OCR: scanned pages and pictures are found by a cheap pass, and read by an OCR pass.

Every document here is built by the test from known text (tests/support/scans.py).
"""

from __future__ import annotations

import jsonschema
import pytest

from docshelf.converters.base import ConversionResult, Source
from docshelf.converters.media.image import ImageConverter
from docshelf.converters.ocr import (
    ENABLED_SETTING,
    LANGUAGES_SETTING,
    PAGE_TIMEOUT_SETTING,
    ocr_enabled,
    ocr_identity,
    ocr_unavailable,
)
from docshelf.converters.ocr.reading import bulleted
from docshelf.converters.ocr.tesseract import OcrLine, installed
from docshelf.converters.pdf.converter import PdfConverter
from tests.support.results import json_of, markdown_of, text_of
from tests.support.scans import NEEDS_TESSERACT, image_pdf, png, text_picture

FIRST_PAGE = ["Scanned pages carry pictures", "of text and no text layer."]
SECOND_PAGE = ["The second page says", "something else entirely."]
LEFT = [
    "Left column starts here",
    "and tells its story",
    "down to its end.",
    "",
    "Its second paragraph",
    "follows below it.",
]
RIGHT = [
    "Right column begins",
    "with other words",
    "that stay apart.",
    "",
    "Closing remarks here",
    "end the page.",
]


def _pdf(data: bytes, *, ocr: bool = False) -> Source:
    return Source.of("scan.pdf", "application/pdf", data, ocr=ocr)


@pytest.fixture(scope="module")
def scanned_pdf() -> bytes:
    return image_pdf([text_picture([FIRST_PAGE]), text_picture([SECOND_PAGE])])


def test_a_cheap_pass_lists_image_only_pages_for_ocr(scanned_pdf: bytes) -> None:
    facts = PdfConverter().convert(_pdf(scanned_pdf)).facts
    assert facts.page_count == 2
    assert facts.ocr_pages == (1, 2)


def test_blank_pages_and_pages_with_text_need_no_ocr() -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.multi_cell(0, 6, "A page with a text layer of its own needs no OCR at all. " * 3)
    pdf.add_page()  # blank: nothing to read
    facts = PdfConverter().convert(_pdf(bytes(pdf.output()))).facts
    assert facts.page_count == 2
    assert facts.ocr_pages == ()


def test_a_picture_is_listed_for_ocr() -> None:
    source = Source.of("note.png", "image/png", png(text_picture([FIRST_PAGE])))
    assert ImageConverter().convert(source).facts.ocr_pages == (1,)


@NEEDS_TESSERACT
def test_settings_and_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENABLED_SETTING, raising=False)
    assert ocr_enabled()
    monkeypatch.setenv(ENABLED_SETTING, "off")
    assert not ocr_enabled()
    assert ocr_unavailable() is None
    assert ocr_identity().startswith("tesseract-")
    assert ocr_identity().endswith("-eng")
    monkeypatch.setenv(LANGUAGES_SETTING, "eng+xyz")
    reason = ocr_unavailable()
    assert reason is not None and "tesseract-ocr-xyz" in reason
    assert ocr_identity().endswith("-eng+xyz")


@NEEDS_TESSERACT
def test_without_tesseract_ocr_is_unavailable_and_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    installed.cache_clear()
    try:
        reason = ocr_unavailable()
        assert reason is not None and "apt-get install tesseract-ocr" in reason
    finally:
        monkeypatch.undo()
        installed.cache_clear()
    assert ocr_unavailable() is None


@pytest.fixture(scope="module")
def read_pdf(scanned_pdf: bytes) -> ConversionResult:
    return PdfConverter().convert(_pdf(scanned_pdf, ocr=True))


@NEEDS_TESSERACT
def test_an_ocr_pass_reads_scanned_pages_into_every_format(
    read_pdf: ConversionResult, schema_validator: jsonschema.protocols.Validator
) -> None:
    plain = text_of(read_pdf, "text/plain")
    assert "Scanned pages carry pictures" in plain
    assert "something else entirely." in plain
    assert "The second page says" in markdown_of(read_pdf)
    facts = read_pdf.facts
    assert facts.ocr_pages == ()
    assert facts.metadata["ocr_pages"] == "1, 2"
    assert facts.metadata["ocr_engine"].startswith("tesseract ")
    assert 0.8 < float(facts.metadata["ocr_confidence"]) <= 1
    document = json_of(read_pdf)
    schema_validator.validate(document)
    first = document["pages"][0]
    assert [line["text"] for line in first["ocr"]["lines"]] == FIRST_PAGE
    left, top, right, bottom = first["ocr"]["lines"][0]["box"]
    assert 0 < left < right < 400 and 0 < top < bottom < 100  # points from the top-left
    assert "no_text" not in first
    segments = {segment.part: segment.text for segment in read_pdf.segments()}
    assert "something else entirely." in segments["pages=2"]


@NEEDS_TESSERACT
def test_columns_of_a_scanned_page_stay_apart() -> None:
    data = image_pdf([text_picture([LEFT, RIGHT], width=1400)])
    plain = text_of(PdfConverter().convert(_pdf(data, ocr=True)), "text/plain")
    assert plain.index("down to its end.") < plain.index("follows below it.")
    assert plain.index("follows below it.") < plain.index("Right column begins")
    assert "Left column starts here\nand tells its story\ndown to its end.\n\n" in plain


@NEEDS_TESSERACT
def test_a_page_that_overruns_its_time_limit_is_left_without_text(
    monkeypatch: pytest.MonkeyPatch, scanned_pdf: bytes
) -> None:
    monkeypatch.setenv(PAGE_TIMEOUT_SETTING, "0.001")
    result = PdfConverter().convert(_pdf(scanned_pdf, ocr=True))
    pages = json_of(result)["pages"]
    assert [page.get("no_text") for page in pages] == ["ocr_timeout", "ocr_timeout"]
    assert "longer than" in pages[0]["ocr"]["message"]
    assert "1: OCR took longer than" in result.facts.metadata["ocr_unread_pages"]


def test_pages_without_text_say_why_and_get_no_heading(scanned_pdf: bytes) -> None:
    from fpdf import FPDF
    from PIL import Image

    pdf = FPDF()
    pdf.add_page()  # blank
    pdf.add_page()  # a small logo: nothing OCR could read
    pdf.image(Image.new("L", (40, 40), 128), x=10, y=10, w=15)
    converted = PdfConverter().convert(_pdf(bytes(pdf.output())))
    assert converted.facts.ocr_pages == ()
    assert [page["no_text"] for page in json_of(converted)["pages"]] == ["blank", "blank"]
    cheap = PdfConverter().convert(_pdf(scanned_pdf))
    assert [page["no_text"] for page in json_of(cheap)["pages"]] == ["needs_ocr", "needs_ocr"]
    assert "## Page" not in markdown_of(cheap)


@NEEDS_TESSERACT
def test_an_ocr_pass_reads_the_text_in_a_picture(
    schema_validator: jsonschema.protocols.Validator,
) -> None:
    source = Source.of("note.png", "image/png", png(text_picture([FIRST_PAGE])), ocr=True)
    result = ImageConverter().convert(source)
    assert result.facts.ocr_pages == ()
    assert "Scanned pages carry pictures\nof text and no text layer." in markdown_of(result)
    assert "of text and no text layer." in text_of(result, "text/plain")
    document = json_of(result)
    schema_validator.validate(document)
    assert [line["text"] for line in document["data"]["ocr"]["lines"]] == FIRST_PAGE
    assert result.facts.metadata["ocr_pages"] == "1"
    assert any("no text layer" in segment.text for segment in result.segments())


def test_bullets_tesseract_misreads_become_bullets_again() -> None:
    def line(text: str) -> OcrLine:
        return OcrLine(text, (0, 0, 10, 10), 0.9, 1, 1)

    assert bulleted(line("* Hypertension (2019)")).text == "• Hypertension (2019)"
    assert bulleted(line("+ Type 2 Diabetes")).text == "• Type 2 Diabetes"
    assert bulleted(line("2 + 2 = 4")).text == "2 + 2 = 4"
    assert bulleted(line("*emphasis*")).text == "*emphasis*"
