"""PDF sources, on the real py-pdf sample files."""

from __future__ import annotations

import json
import logging
import re

import pytest

from docshelf.converters import ConversionError, convert
from docshelf.converters.base import APPLICATION_PDF, Source
from docshelf.converters.formats import is_textual
from docshelf.converters.library_logs import quiet_libraries
from docshelf.converters.pdf.converter import PdfConverter
from tests.support.paths import FIXTURE_PDF, NEEDS_SHARED

from .conftest import CORPUS_PDF, ENCRYPTED_PDF, READABLE_PDFS, Convert

ARABIC = re.compile("[\u0600-\u06ff]")


def markdown_of(converted: Convert, name: str) -> str:
    representation = converted(CORPUS_PDF / name).get("text/markdown")
    assert representation is not None
    return representation.data.decode("utf-8")


def headings(markdown: str) -> list[tuple[int, str]]:
    return [(len(m[1]), m[2]) for m in re.finditer(r"^(#{1,6}) (.+)$", markdown, re.MULTILINE)]


@pytest.mark.parametrize("name", READABLE_PDFS)
def test_page_count_matches_files_json(
    name: str, converted: Convert, expected_pages: dict[str, int]
) -> None:
    result = converted(CORPUS_PDF / name)
    assert result.facts.page_count == expected_pages[name]
    document = json.loads(result.get("application/json").data)  # type: ignore[union-attr]
    assert [page["number"] for page in document["pages"]] == list(
        range(1, expected_pages[name] + 1)
    )


@pytest.mark.parametrize("name", READABLE_PDFS)
def test_pdf_derives_text_markdown_json_but_never_pdf(name: str, converted: Convert) -> None:
    result = converted(CORPUS_PDF / name)
    assert [r.mime_type for r in result.representations] == [
        "text/plain",
        "text/markdown",
        "application/json",
    ]
    for representation in result.representations:
        assert representation.mime_type != APPLICATION_PDF
        assert is_textual(representation.mime_type)
        representation.data.decode("utf-8")  # valid UTF-8 or this raises


def test_pdf_labelled_otherwise_offers_itself_as_the_pdf_variant() -> None:
    data = (FIXTURE_PDF / "minimal-document.pdf").read_bytes()
    result = convert(data, "application/octet-stream", "minimal-document.pdf")
    assert result.get(APPLICATION_PDF) is not None
    assert result.get(APPLICATION_PDF).data == data  # type: ignore[union-attr]


def test_damaged_xref_is_repaired_and_pypdf_warnings_stay_out_of_a_started_process_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    data = (FIXTURE_PDF / "minimal-document.pdf").read_bytes()
    position = data.rfind(b"startxref")
    damaged = data[:position] + re.sub(rb"startxref\s+\d+", b"startxref\n123", data[position:])
    pypdf_log, level = logging.getLogger("pypdf"), logging.getLogger("pypdf").level
    pypdf_log.setLevel(logging.NOTSET)  # as imported: the converters leave logging alone
    try:
        with caplog.at_level(logging.DEBUG):
            convert(damaged, "application/pdf", "damaged.pdf")
            noisy = [record for record in caplog.records if record.name.startswith("pypdf")]
            caplog.clear()
            quiet_libraries()  # what the CLI and every conversion worker do when they start
            result = convert(damaged, "application/pdf", "damaged.pdf")
    finally:
        pypdf_log.setLevel(level)
    assert noisy, "the damaged file no longer makes pypdf warn: this test checks nothing"
    assert result.facts.page_count == 1
    assert "Lorem ipsum" in result.get("text/plain").data.decode()  # type: ignore[union-attr]
    assert not [record for record in caplog.records if record.name.startswith("pypdf")]


def test_password_protected_pdf_is_encrypted_error() -> None:
    data = (FIXTURE_PDF / ENCRYPTED_PDF).read_bytes()
    with pytest.raises(ConversionError) as caught:
        PdfConverter().convert(Source.of(ENCRYPTED_PDF, "application/pdf", data))
    assert caught.value.reason == "encrypted"


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"%PDF-1.7\n" + bytes(range(256)) * 8, id="garbage-after-header"),
        pytest.param(b"this is not a PDF at all", id="not-a-pdf"),
        pytest.param(b"", id="empty"),
        pytest.param((FIXTURE_PDF / "minimal-document.pdf").read_bytes()[:400], id="truncated"),
    ],
)
def test_broken_pdf_is_corrupt_error(data: bytes) -> None:
    with pytest.raises(ConversionError) as caught:
        convert(data, "application/pdf", "broken.pdf")
    assert caught.value.reason == "corrupt"


@NEEDS_SHARED
def test_arabic_text_survives_extraction(converted: Convert) -> None:
    text = converted(CORPUS_PDF / "habibi.pdf").get("text/plain").data.decode()  # type: ignore[union-attr]
    assert ARABIC.search(text)
    assert "habibi" in text


@NEEDS_SHARED
def test_multicolumn_text_keeps_both_columns_and_joins_hyphenation(converted: Convert) -> None:
    text = converted(CORPUS_PDF / "multicolumn.pdf").get("text/plain").data.decode()  # type: ignore[union-attr]
    # "adip-" / "iscing" and "con-" / "sectetuer" are split across lines in the PDF.
    assert "consectetuer adipiscing elit" in text
    assert "adip-\n" not in text
    assert "Two-Column Document with Lorem Ipsum" in text


@NEEDS_SHARED
@pytest.mark.parametrize("name", ["pdflatex-outline.pdf", "mistitled_outlines_example.pdf"])
def test_outline_becomes_markdown_headings_at_their_pages(name: str, converted: Convert) -> None:
    result = converted(CORPUS_PDF / name)
    outline = result.facts.outline
    assert outline, "the PDF has bookmarks"
    markdown = markdown_of(converted, name)
    # Document order: by page, and in outline order within a page (this
    # outline is not in page order: "Tenth" on page 1 follows "Ninth" on 3).
    in_page_order = sorted(outline, key=lambda entry: entry.page or 0)
    # Each heading reads as printed: the bookmark's title, with its number where the page has one.
    found = [(level, re.sub(r"^\d+ ", "", title)) for level, title in headings(markdown)]
    assert found == [(entry.level, entry.title) for entry in in_page_order]
    # Each heading sits after the marker of the page its bookmark points to.
    for entry in outline:
        marker = markdown.index(f"<!-- page {entry.page} -->")
        heading = rf"^{'#' * entry.level} (\d+ )?{re.escape(entry.title)}$"
        assert re.compile(heading, re.MULTILINE).search(markdown, marker)


@NEEDS_SHARED
def test_outline_heading_replaces_the_matching_line(converted: Convert) -> None:
    markdown = markdown_of(converted, "pdflatex-outline.pdf")
    assert "# 1 Foo\n\nHello, here is some text" in markdown
    assert "\n1 Foo\nHello" not in markdown


@NEEDS_SHARED
def test_outline_levels_nest(converted: Convert) -> None:
    outline = converted(CORPUS_PDF / "mistitled_outlines_example.pdf").facts.outline
    assert {entry.level for entry in outline} == {1, 2, 3}
    assert outline[0].title == "First" and outline[0].page == 2


@NEEDS_SHARED
def test_font_size_headings_without_outline(converted: Convert) -> None:
    result = converted(CORPUS_PDF / "multicolumn.pdf")
    found = headings(markdown_of(converted, "multicolumn.pdf"))
    assert (1, "Two-Column Document with Lorem Ipsum") in found
    assert any(title == "Abstract" for _, title in found)
    assert result.facts.title == "Two-Column Document with Lorem Ipsum"


@NEEDS_SHARED
def test_pages_without_structure_get_page_markers_not_headings(converted: Convert) -> None:
    markdown = markdown_of(converted, "pdflatex-4-pages.pdf")
    assert headings(markdown) == []
    assert all(f"<!-- page {n} -->" in markdown for n in range(1, 5))


@NEEDS_SHARED
def test_metadata_from_info_dictionary(converted: Convert) -> None:
    facts = converted(CORPUS_PDF / "GeoTopo-komprimiert.pdf").facts
    assert facts.title == "Geometrie und Topologie"
    assert facts.metadata["author"] == "Martin Thoma"
    assert facts.metadata["created"] == "2016-12-31T18:43:23+01:00"
    assert facts.metadata["keywords"] == "Geometrie, Topologie"
    assert facts.outline[0].title == "1 Topologische Grundbegriffe"
    assert facts.outline[0].page == 6


@NEEDS_SHARED
def test_document_language_from_catalog(converted: Convert) -> None:
    assert converted(CORPUS_PDF / "002-trivial-libre-office-writer.pdf").facts.language == "en-US"


@NEEDS_SHARED
def test_unreadable_metadata_and_page_tree_are_tolerated(converted: Convert) -> None:
    result = converted(CORPUS_PDF / "unreadablemetadata.pdf")
    assert result.facts.page_count == 4
    assert "recovered" in result.facts.metadata["recovery"]
    assert "Wirewound" in result.get("text/plain").data.decode()  # type: ignore[union-attr]


@NEEDS_SHARED
def test_description_is_first_body_paragraph_when_no_subject(converted: Convert) -> None:
    facts = converted(CORPUS_PDF / "crazyones-pdfa.pdf").facts
    assert facts.description is not None
    assert facts.description.startswith("Heres to the crazy ones.")
    assert len(facts.description) <= 201


@NEEDS_SHARED
def test_ligatures_are_expanded(converted: Convert) -> None:
    text = converted(CORPUS_PDF / "crazyones-pdfa.pdf").get("text/plain").data.decode()  # type: ignore[union-attr]
    assert "misfits" in text
    assert "\ufb01" not in text


@NEEDS_SHARED
def test_page_markers_and_running_folios(converted: Convert) -> None:
    markdown = markdown_of(converted, "pdflatex-outline.pdf")
    assert "<!-- page 1 -->" in markdown and "<!-- page 4 -->" in markdown
    # The bare page number closing each page is not body text.
    assert "\n\n1\n\n<!-- page 2 -->" not in markdown
