"""DOCX sources: a Word package assembled in tmp_path from its XML parts."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from converters import ConversionError, convert

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
CONTENT_TYPES = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
  <Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
  <Default Extension="xml" ContentType="application/xml"/>
  <Override PartName="/word/document.xml"
    ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
  <Override PartName="/word/styles.xml"
    ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>
  <Override PartName="/docProps/core.xml"
    ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>
</Types>"""
PACKAGE_RELS = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
  <Relationship Id="rId1"
    Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
    Target="word/document.xml"/>
  <Relationship Id="rId2"
    Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties"
    Target="docProps/core.xml"/>
</Relationships>"""
DOCUMENT_RELS = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
  <Relationship Id="rId1"
    Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles"
    Target="styles.xml"/>
</Relationships>"""
STYLES = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles xmlns:w="{W}">
  <w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>
  <w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/></w:style>
</w:styles>"""
CORE = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<cp:coreProperties
  xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties"
  xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <dc:title>Quarterly Shelf Report</dc:title>
  <dc:creator>Ann Example</dc:creator>
  <dc:language>en-GB</dc:language>
  <dcterms:created xsi:type="dcterms:W3CDTF">2024-05-01T10:00:00Z</dcterms:created>
</cp:coreProperties>"""


def paragraph(text: str, style: str | None = None, bold: bool = False) -> str:
    properties = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    run_properties = "<w:rPr><w:b/></w:rPr>" if bold else ""
    return (
        f'<w:p>{properties}<w:r>{run_properties}<w:t xml:space="preserve">{text}</w:t></w:r></w:p>'
    )


def cell(text: str) -> str:
    return f"<w:tc>{paragraph(text)}</w:tc>"


BODY = "".join(
    [
        paragraph("Overview", "Heading1"),
        paragraph("Shelves hold books."),
        paragraph("Important: everything fits.", bold=True),
        paragraph("Numbers", "Heading2"),
        "<w:tbl>"
        + "<w:tr>"
        + cell("Shelf")
        + cell("Books")
        + "</w:tr>"
        + "<w:tr>"
        + cell("A")
        + cell("12")
        + "</w:tr>"
        + "</w:tbl>",
    ]
)
DOCUMENT = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    f'<w:document xmlns:w="{W}"><w:body>{BODY}</w:body></w:document>'
)


@pytest.fixture
def docx_file(tmp_path: Path) -> Path:
    path = tmp_path / "report.docx"
    with zipfile.ZipFile(path, "w") as package:
        package.writestr("[Content_Types].xml", CONTENT_TYPES)
        package.writestr("_rels/.rels", PACKAGE_RELS)
        package.writestr("word/_rels/document.xml.rels", DOCUMENT_RELS)
        package.writestr("word/document.xml", DOCUMENT)
        package.writestr("word/styles.xml", STYLES)
        package.writestr("docProps/core.xml", CORE)
    return path


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


def _empty_zip(tmp_path: Path) -> bytes:
    path = tmp_path / "empty.zip"
    with zipfile.ZipFile(path, "w") as package:
        package.writestr("hello.txt", "not a word document")
    return path.read_bytes()
