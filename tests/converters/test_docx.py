"""DOCX sources: a Word package assembled in tmp_path from its XML parts."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from docshelf.converters import ConversionError, ConversionResult, convert
from tests.support.docx import BODY, DOCUMENT_RELS, DOCX, W, paragraph, write_docx


@pytest.fixture
def docx_file(tmp_path: Path) -> Path:
    return write_docx(tmp_path / "report.docx", BODY)


def test_docx_headings_tables_and_core_properties(docx_file: Path) -> None:
    mime = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    result = convert(docx_file.read_bytes(), mime, docx_file.name)
    assert [r.mime_type for r in result.representations] == [
        "text/plain",
        "text/markdown",
        "application/json",
        "application/pdf",
    ]
    facts = result.facts
    assert facts.title == "Quarterly Shelf Report"
    assert facts.language == "en-GB"
    assert facts.metadata["author"] == "Ann Example"
    assert facts.metadata["created"] == "2024-05-01T10:00:00Z"
    assert [(e.level, e.title) for e in facts.outline] == [(1, "Overview"), (2, "Numbers")]
    markdown = result.get("text/markdown").data.decode()  # type: ignore[union-attr]
    assert "# Overview\n\nShelves hold books.\n\n**Important: everything fits.**" in markdown
    assert "| Shelf | Books |\n|---|---|\n| A | 12 |" in markdown
    document = json.loads(result.get("application/json").data)  # type: ignore[union-attr]
    assert document["tables"] == [{"header": ["Shelf", "Books"], "rows": [["A", "12"]]}]


def test_broken_docx_is_corrupt(tmp_path: Path) -> None:
    for name, data in (
        ("not-zip.docx", b"PK\x03\x04 broken"),
        ("empty-zip.docx", _empty_zip(tmp_path)),
    ):
        with pytest.raises(ConversionError) as caught:
            convert(data, "application/octet-stream", name)
        assert caught.value.reason == "corrupt"


# The list styles of python-docx's default template (and of Word's Normal.dotm):
# "List Bullet 2" and "List Number 2" are list styles of their own, each bound
# to a numbering whose level 0 (w:ilvl 0) is simply indented further, so the
# nesting is in the style's name, not in w:ilvl.
LIST_STYLES = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles xmlns:w="{W}">
  <w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>
  <w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style>
  <w:style w:type="paragraph" w:styleId="Subtitle"><w:name w:val="Subtitle"/></w:style>
  <w:style w:type="paragraph" w:styleId="ListBullet"><w:name w:val="List Bullet"/>
    <w:pPr><w:numPr><w:numId w:val="1"/></w:numPr></w:pPr></w:style>
  <w:style w:type="paragraph" w:styleId="ListBullet2"><w:name w:val="List Bullet 2"/>
    <w:pPr><w:numPr><w:numId w:val="2"/></w:numPr></w:pPr></w:style>
  <w:style w:type="paragraph" w:styleId="ListNumber"><w:name w:val="List Number"/>
    <w:pPr><w:numPr><w:numId w:val="3"/></w:numPr></w:pPr></w:style>
  <w:style w:type="paragraph" w:styleId="ListNumber2"><w:name w:val="List Number 2"/>
    <w:pPr><w:numPr><w:numId w:val="4"/></w:numPr></w:pPr></w:style>
  <w:style w:type="paragraph" w:styleId="ListParagraph"><w:name w:val="List Paragraph"/></w:style>
</w:styles>"""


def _level(index: int, fmt: str, style: str | None = None) -> str:
    style_element = f'<w:pStyle w:val="{style}"/>' if style else ""
    return f'<w:lvl w:ilvl="{index}"><w:numFmt w:val="{fmt}"/>{style_element}</w:lvl>'


NUMBERING = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:numbering xmlns:w="{W}">
  <w:abstractNum w:abstractNumId="0">{_level(0, "bullet", "ListBullet")}{_level(1, "bullet")}\
{_level(2, "decimal")}</w:abstractNum>
  <w:abstractNum w:abstractNumId="1">{_level(0, "bullet", "ListBullet2")}</w:abstractNum>
  <w:abstractNum w:abstractNumId="2">{_level(0, "decimal", "ListNumber")}</w:abstractNum>
  <w:abstractNum w:abstractNumId="3">{_level(0, "decimal", "ListNumber2")}</w:abstractNum>
  <w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>
  <w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>
  <w:num w:numId="3"><w:abstractNumId w:val="2"/></w:num>
  <w:num w:numId="4"><w:abstractNumId w:val="3"/></w:num>
</w:numbering>"""


def _convert(path: Path) -> tuple[ConversionResult, str, str, dict[str, Any]]:
    result = convert(path.read_bytes(), DOCX, path.name)
    markdown = result.get("text/markdown").data.decode()  # type: ignore[union-attr]
    text = result.get("text/plain").data.decode()  # type: ignore[union-attr]
    document = json.loads(result.get("application/json").data)  # type: ignore[union-attr]
    return result, markdown, text, document


def test_numbering_levels_nest(tmp_path: Path) -> None:
    body = "".join(
        [
            paragraph("Steps", "Heading1"),
            paragraph("Fruit", "ListParagraph", numbering=(1, 0)),
            paragraph("Apple", "ListParagraph", numbering=(1, 1)),
            paragraph("Peel it", "ListParagraph", numbering=(1, 2)),
            paragraph("Pear", "ListParagraph", numbering=(1, 1)),
            paragraph("Bread", "ListParagraph", numbering=(1, 0)),
        ]
    )
    path = write_docx(tmp_path / "levels.docx", body, styles=LIST_STYLES, numbering=NUMBERING)
    _, markdown, text, document = _convert(path)
    assert "- Fruit\n  - Apple\n    1. Peel it\n  - Pear\n- Bread\n" in markdown
    nested = "• Fruit\n  • Apple\n    1. Peel it\n  • Pear\n• Bread"
    assert nested in text
    assert nested in document["sections"][0]["text"]


def test_list_styles_nest(tmp_path: Path) -> None:
    body = "".join(
        [
            paragraph("Steps", "Heading1"),
            paragraph("Fruit", "ListBullet"),
            paragraph("Apple", "ListBullet2"),
            paragraph("Pear", "ListBullet2"),
            paragraph("Bread", "ListBullet"),
            paragraph("First", "ListNumber"),
            paragraph("First a", "ListNumber2"),
            paragraph("First b", "ListNumber2"),
            paragraph("Second", "ListNumber"),
            paragraph("After the lists."),
        ]
    )
    path = write_docx(tmp_path / "styles.docx", body, styles=LIST_STYLES, numbering=NUMBERING)
    _, markdown, text, document = _convert(path)
    assert "- Fruit\n  - Apple\n  - Pear\n- Bread\n" in markdown
    assert "1. First\n   1. First a\n   2. First b\n2. Second\n" in markdown
    nested = "• Fruit\n  • Apple\n  • Pear\n• Bread"
    assert nested in text and nested in document["sections"][0]["text"]
    assert "1. First\n  1. First a\n  2. First b\n2. Second" in text


def _empty_zip(tmp_path: Path) -> bytes:
    path = tmp_path / "empty.zip"
    with zipfile.ZipFile(path, "w") as package:
        package.writestr("hello.txt", "not a word document")
    return path.read_bytes()


def _core(title: str = "", subject: str = "", description: str = "") -> str:
    """Core properties as python-docx's template writes them, with these values."""
    return f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<cp:coreProperties
  xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties"
  xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/">
  <dc:title>{title}</dc:title><dc:subject>{subject}</dc:subject>
  <dc:creator>python-docx</dc:creator><dc:description>{description}</dc:description>
</cp:coreProperties>"""


TITLED_BODY = "".join(
    [
        paragraph("Quarterly Shelf Report", "Title"),
        paragraph("Books, boxes and binders", "Subtitle"),
        paragraph("Overview", "Heading1"),
        paragraph("Shelves hold books."),
    ]
)


def test_title_style_paragraph_is_the_title_not_a_heading(tmp_path: Path) -> None:
    core = _core(description="generated by python-docx")
    path = write_docx(tmp_path / "t.docx", TITLED_BODY, styles=LIST_STYLES, core=core)
    result, markdown, text, document = _convert(path)
    facts = result.facts
    assert facts.title == "Quarterly Shelf Report"
    assert [(e.level, e.title) for e in facts.outline] == [(1, "Overview")]
    assert markdown == (
        "**Quarterly Shelf Report**\n\n*Books, boxes and binders*\n\n"
        "# Overview\n\nShelves hold books.\n"
    )
    assert text.startswith("Quarterly Shelf Report\n\nBooks, boxes and binders\n\nOverview\n")
    assert document["title"] == "Quarterly Shelf Report"
    # No subject, and python-docx's "generated by python-docx" says nothing
    # about the document: the subtitle does.
    assert facts.description == "Books, boxes and binders"


def test_core_title_wins_over_the_title_paragraph(tmp_path: Path) -> None:
    core = _core(title="Q2 Report")
    path = write_docx(tmp_path / "t.docx", TITLED_BODY, styles=LIST_STYLES, core=core)
    result, markdown, _, _ = _convert(path)
    assert result.facts.title == "Q2 Report"
    assert markdown.startswith("**Quarterly Shelf Report**\n\n*Books, boxes and binders*\n\n#")
    assert [e.title for e in result.facts.outline] == ["Overview"]


@pytest.mark.parametrize(
    ("subject", "description", "body", "expected"),
    [
        ("Shelf inventory for Q2", "Counts of every shelf.", TITLED_BODY, "Shelf inventory for Q2"),
        ("", "Counts of every shelf.", TITLED_BODY, "Counts of every shelf."),
        ("", "generated by python-docx", TITLED_BODY, "Books, boxes and binders"),
        # Neither: the first paragraph of the body, not the title above it.
        (
            "",
            "Created with Microsoft Word 2016",
            paragraph("Quarterly Shelf Report", "Title") + paragraph("Shelves hold books."),
            "Shelves hold books.",
        ),
    ],
)
def test_description_from_subject_then_description_then_body(
    tmp_path: Path, subject: str, description: str, body: str, expected: str
) -> None:
    core = _core(subject=subject, description=description)
    path = write_docx(tmp_path / "d.docx", body, styles=LIST_STYLES, core=core)
    result, _, _, _ = _convert(path)
    assert result.facts.description == expected


def test_an_embedded_image_leaves_a_reference_with_its_alt_text(tmp_path: Path) -> None:
    """Issue 25 (markitdown's test.docx): an image used to vanish without a trace; it is a
    reference by number with its alt text, never a base64 data URI."""
    ns = (
        f'xmlns:w="{W}" '
        'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
        'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        'xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture" '
        'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
    )
    drawing = (
        f"<w:p><w:r><w:drawing {ns}><wp:inline>"
        '<wp:docPr id="1" name="Picture 1" descr="Sales by quarter"/>'
        '<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">'
        '<pic:pic><pic:blipFill><a:blip r:embed="rId9"/></pic:blipFill></pic:pic>'
        "</a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>"
    )
    rels = DOCUMENT_RELS.replace(
        "</Relationships>",
        '<Relationship Id="rId9" Target="media/image1.png" Type="http://schemas.'
        'openxmlformats.org/officeDocument/2006/relationships/image"/></Relationships>',
    )
    path = write_docx(
        tmp_path / "chart.docx",
        paragraph("Before the chart.") + drawing,
        rels=rels,
        parts={"word/media/image1.png": b"\x89PNG\r\n\x1a\n" + bytes(32)},
    )
    markdown = _convert(path)[1]
    assert "![Sales by quarter](image1.png)" in markdown
    assert "base64" not in markdown
