"""OCR: scanned pages and pictures are found by a cheap pass, and read by an OCR pass.

Every document here is built by the test from known text (tests/support/scans.py).
"""

from __future__ import annotations

import pytest

from docshelf.converters.base import Source
from docshelf.converters.media.image import ImageConverter
from docshelf.converters.ocr import (
    ENABLED_SETTING,
    LANGUAGES_SETTING,
    ocr_enabled,
    ocr_identity,
    ocr_unavailable,
)
from docshelf.converters.pdf.converter import PdfConverter
from tests.support.scans import image_pdf, png, text_picture

FIRST_PAGE = ["Scanned pages carry pictures", "of text and no text layer."]
SECOND_PAGE = ["The second page says", "something else entirely."]


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


def test_settings_and_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENABLED_SETTING, raising=False)
    assert ocr_enabled()
    monkeypatch.setenv(ENABLED_SETTING, "off")
    assert not ocr_enabled()
    assert ocr_unavailable() is None
    assert ocr_identity().startswith("rapidocr-")
    assert ocr_identity().endswith("-en")
    monkeypatch.setenv(LANGUAGES_SETTING, "en,fr")
    reason = ocr_unavailable()
    assert reason is not None and "fr" in reason
    assert ocr_identity().endswith("-en+fr")
