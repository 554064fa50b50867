"""Word packages written by hand (a ``w:body`` in the few parts Word needs), so the DOCX
tests need no binary fixtures; :data:`BODY` is a small report: headings, bold, a table."""

from __future__ import annotations

import zipfile
from pathlib import Path

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
CONTENT_TYPES = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
  <Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
  <Default Extension="xml" ContentType="application/xml"/>
  <Default Extension="png" ContentType="image/png"/>
  <Override PartName="/word/document.xml"
    ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
  <Override PartName="/word/styles.xml"
    ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>
  <Override PartName="/word/numbering.xml"
    ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml"/>
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
  <Relationship Id="rId2"
    Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering"
    Target="numbering.xml"/>
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


def paragraph(
    text: str,
    style: str | None = None,
    bold: bool = False,
    numbering: tuple[int, int] | None = None,
) -> str:
    """A ``w:p``; ``numbering`` is ``(numId, ilvl)``, as Word writes it in ``w:numPr``."""
    inner = f'<w:pStyle w:val="{style}"/>' if style else ""
    if numbering:
        number, level = numbering
        inner += f'<w:numPr><w:ilvl w:val="{level}"/><w:numId w:val="{number}"/></w:numPr>'
    properties = f"<w:pPr>{inner}</w:pPr>" if inner else ""
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


def write_docx(
    path: Path,
    body: str,
    *,
    styles: str = STYLES,
    numbering: str | None = None,
    core: str = CORE,
    rels: str = DOCUMENT_RELS,
    parts: dict[str, bytes] | None = None,
) -> Path:
    """A Word package at ``path`` with ``body`` inside ``w:body`` (and more ``parts``)."""
    document = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        f'<w:document xmlns:w="{W}"><w:body>{body}</w:body></w:document>'
    )
    with zipfile.ZipFile(path, "w") as package:
        package.writestr("[Content_Types].xml", CONTENT_TYPES)
        package.writestr("_rels/.rels", PACKAGE_RELS)
        package.writestr("word/_rels/document.xml.rels", rels)
        package.writestr("word/document.xml", document)
        package.writestr("word/styles.xml", styles)
        if numbering is not None:
            package.writestr("word/numbering.xml", numbering)
        package.writestr("docProps/core.xml", core)
        for name, data in (parts or {}).items():
            package.writestr(name, data)
    return path
