"""OpenDocument text and presentations, from packages written by hand in the test."""

from __future__ import annotations

import io
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docshelf.converters import ConversionError, ConversionResult, convert, find_converter
from docshelf.converters.odf.package import MAX_XML_BYTES
from docshelf.converters.parts import pages_markdown
from tests.support.results import json_of, text_of

ODT = "application/vnd.oasis.opendocument.text"
ODP = "application/vnd.oasis.opendocument.presentation"
NAMESPACES = " ".join(
    f'xmlns:{prefix}="{uri}"'
    for prefix, uri in {
        "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
        "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
        "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
        "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
        "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
        "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
        "svg": "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0",
        "meta": "urn:oasis:names:tc:opendocument:xmlns:meta:1.0",
        "xlink": "http://www.w3.org/1999/xlink",
        "dc": "http://purl.org/dc/elements/1.1/",
        "manifest": "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0",
    }.items()
)


def odf(
    mimetype: str,
    body: str,
    *,
    meta: str = "",
    styles: str = "",
    extra: dict[str, bytes] | None = None,
) -> bytes:
    """An ODF package: ``mimetype`` first and stored, then content.xml (``body`` inside
    office:body, ``styles`` as automatic styles), meta.xml and ``extra`` members."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr(zipfile.ZipInfo("mimetype"), mimetype)
        package.writestr(
            "content.xml",
            f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {NAMESPACES}>'
            f"<office:automatic-styles>{styles}</office:automatic-styles>"
            f"<office:body>{body}</office:body></office:document-content>",
        )
        package.writestr(
            "meta.xml",
            f"<office:document-meta {NAMESPACES}><office:meta>{meta}</office:meta>"
            "</office:document-meta>",
        )
        for name, data in (extra or {}).items():
            package.writestr(name, data)
    return out.getvalue()


ODT_STYLES = (
    '<text:list-style style:name="Numbers"><text:list-level-style-number text:level="1"/>'
    '<text:list-level-style-bullet text:level="2"/></text:list-style>'
    '<style:style style:name="P9" style:family="paragraph" style:parent-style-name="Heading_20_2"/>'
)
ODT_BODY = """<office:text><text:sequence-decls/>
<text:tracked-changes><text:changed-region><text:deletion>
  <text:p>Deleted words</text:p></text:deletion></text:changed-region></text:tracked-changes>
<text:table-of-content><text:index-body><text:p>Intro ...... 1</text:p></text:index-body>
</text:table-of-content>
<text:h text:outline-level="1">Intro</text:h>
<text:p>Hello   <text:span>big</text:span><text:s text:c="2"/>world,
 see <text:a xlink:href="https://example.org/a b">the site</text:a>.<text:line-break/>Next line.
<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation>
<text:note-body><text:p>A footnote.</text:p></text:note-body></text:note></text:p>
<text:p>* not a list</text:p>
<text:section text:name="S1">
<text:list text:style-name="Numbers"><text:list-item><text:p>First</text:p>
  <text:list><text:list-item><text:p>Inner</text:p>
    <text:list><text:list-item><text:p>Deepest</text:p></text:list-item></text:list>
  </text:list-item></text:list></text:list-item>
  <text:list-item><text:p>Second</text:p></text:list-item></text:list>
<text:p text:style-name="P9">Styled heading</text:p>
<table:table><table:table-column table:number-columns-repeated="3"/>
<table:table-header-rows><table:table-row><table:table-cell><text:p>Name</text:p></table:table-cell>
  <table:table-cell><text:p>A|B</text:p></table:table-cell>
  <table:table-cell><text:p>C</text:p></table:table-cell></table:table-row></table:table-header-rows>
<table:table-row><table:table-cell table:number-columns-spanned="2"><text:p>wide</text:p>
  </table:table-cell><table:covered-table-cell/><table:table-cell><text:p>x</text:p>
  </table:table-cell></table:table-row>
<table:table-row table:number-rows-repeated="2"><table:table-cell table:number-columns-repeated="3">
  <text:p>r</text:p></table:table-cell></table:table-row>
<table:table-row table:number-rows-repeated="1048000"><table:table-cell
  table:number-columns-repeated="16000"/></table:table-row>
</table:table>
</text:section>
<text:p><draw:frame draw:name="Figure 1"><draw:image xlink:href="Pictures/ab.png"/>
  <svg:title>A chart of growth</svg:title></draw:frame></text:p>
<text:p><draw:frame draw:name="Box"><draw:text-box><text:p>Boxed text</text:p></draw:text-box>
</draw:frame></text:p>
<office:annotation><text:p>A reviewer comment</text:p></office:annotation>
</office:text>"""
ODT_META = (
    "<dc:title>Field guide</dc:title><dc:subject>Birds of the coast</dc:subject>"
    "<meta:initial-creator>Ada</meta:initial-creator><dc:language>en-GB</dc:language>"
    "<meta:creation-date>2024-05-01T10:00:00</meta:creation-date>"
    "<meta:keyword>birds</meta:keyword><meta:keyword>coast</meta:keyword>"
)


@pytest.fixture(scope="module")
def odt() -> ConversionResult:
    return convert(odf(ODT, ODT_BODY, meta=ODT_META, styles=ODT_STYLES), ODT, "guide.odt")


def test_odt_headings_paragraphs_links_and_footnotes(odt: ConversionResult) -> None:
    markdown = text_of(odt, "text/markdown")
    assert markdown.startswith(
        "# Intro\n\nHello big  world, see [the site](<https://example.org/a b>)."
    )
    assert "\\\nNext line. \\[1\\]\n\n> \\[1\\] A footnote.\n\n\\* not a list\n" in markdown
    assert "## Styled heading\n" in markdown


def test_odt_lists_nest_and_number_by_their_style(odt: ConversionResult) -> None:
    assert "1. First\n   - Inner\n     - Deepest\n1. Second\n" in text_of(odt, "text/markdown")


def test_odt_tables_header_rows_covered_and_repeated_cells(odt: ConversionResult) -> None:
    markdown = text_of(odt, "text/markdown")
    assert (
        "| Name | A\\|B | C |\n|---|---|---|\n| wide |  | x |\n| r | r | r |\n| r | r | r |\n"
        in (markdown)
    )
    assert json_of(odt)["tables"] == [
        {
            "header": ["Name", "A|B", "C"],
            "rows": [["wide", "", "x"], ["r", "r", "r"], ["r", "r", "r"]],
        }
    ]


def test_odt_frames_pictures_and_what_is_left_out(odt: ConversionResult) -> None:
    markdown = text_of(odt, "text/markdown")
    assert "![A chart of growth](Figure1.png)" in markdown
    assert "Boxed text" in markdown
    for absent in ("Deleted words", "Intro ......", "reviewer comment"):
        assert absent not in markdown


def test_odt_facts_and_sections(odt: ConversionResult) -> None:
    facts = odt.facts
    assert (facts.title, facts.description, facts.language) == (
        "Field guide",
        "Birds of the coast",
        "en-GB",
    )
    assert facts.page_count is None
    assert facts.metadata["author"] == "Ada"
    assert facts.metadata["keywords"] == "birds, coast"
    assert facts.metadata["created"] == "2024-05-01T10:00:00"
    assert [(e.title, e.level) for e in facts.outline] == [("Intro", 1), ("Styled heading", 2)]
    assert [s.part for s in odt.segments()] == ["section=intro", "section=styled-heading"]
    assert json_of(odt)["links"] == [{"text": "the site", "href": "https://example.org/a%20b"}]


def test_odt_title_falls_back_to_the_first_heading() -> None:
    result = convert(odf(ODT, "<office:text><text:h>Minutes</text:h></office:text>"), ODT, "m.odt")
    assert result.facts.title == "Minutes"


ODP_BODY = """<office:presentation>
<draw:page draw:name="page1">
  <draw:frame presentation:class="subtitle" svg:x="2cm" svg:y="8cm"><draw:text-box>
    <text:p>By the team</text:p></draw:text-box></draw:frame>
  <draw:frame presentation:class="title" svg:x="2cm" svg:y="1cm"><draw:text-box>
    <text:p>Roadmap</text:p></draw:text-box></draw:frame>
  <draw:frame presentation:class="outline" svg:x="2cm" svg:y="4cm"><draw:text-box>
    <text:list><text:list-item><text:p>Now</text:p><text:list><text:list-item>
      <text:p>Soon</text:p></text:list-item></text:list></text:list-item></text:list>
  </draw:text-box></draw:frame>
  <draw:frame presentation:class="outline" presentation:placeholder="true" svg:y="5cm">
    <draw:text-box/></draw:frame>
  <presentation:notes><draw:page-thumbnail/><draw:frame presentation:class="notes">
    <draw:text-box><text:p>Speak slowly.</text:p></draw:text-box></draw:frame>
  </presentation:notes>
</draw:page>
<draw:page draw:name="page2">
  <draw:g>
    <draw:custom-shape svg:x="10cm" svg:y="3cm"><text:p>Right</text:p></draw:custom-shape>
    <draw:g><draw:custom-shape svg:x="1cm" svg:y="3cm"><text:p>Left</text:p></draw:custom-shape>
    </draw:g>
  </draw:g>
  <draw:custom-shape svg:x="1cm" svg:y="1in"><text:p>Top</text:p></draw:custom-shape>
  <draw:frame svg:x="1cm" svg:y="12cm"><table:table><table:table-row>
    <table:table-cell><text:p>k</text:p></table:table-cell>
    <table:table-cell><text:p>v</text:p></table:table-cell></table:table-row>
  </table:table></draw:frame>
  <draw:frame draw:name="Photo 2" svg:x="1cm" svg:y="14cm"><draw:image xlink:href="Pictures/p.jpg"/>
    <svg:desc>Team photo</svg:desc></draw:frame>
</draw:page>
</office:presentation>"""


@pytest.fixture(scope="module")
def odp() -> ConversionResult:
    return convert(odf(ODP, ODP_BODY, meta="<dc:creator>Bo</dc:creator>"), ODP, "road.odp")


def test_odp_slides_are_pages_with_titles_bodies_and_notes(odp: ConversionResult) -> None:
    markdown = text_of(odp, "text/markdown")
    assert odp.facts.page_count == 2
    assert pages_markdown(markdown, 1, 1) == (
        "<!-- page 1 -->\n\n## Roadmap\n\n- Now\n  - Soon\n\nBy the team\n\n"
        "### Notes\n\nSpeak slowly.\n"
    )
    assert [(e.title, e.page) for e in odp.facts.outline] == [("Roadmap", 1), ("Slide 2", 2)]
    assert (odp.facts.title, odp.facts.description) == (
        "Roadmap",
        "Presentation, 2 slides: Roadmap",
    )


def test_odp_reads_shapes_and_groups_in_reading_order(odp: ConversionResult) -> None:
    slide = pages_markdown(text_of(odp, "text/markdown"), 2, 2)
    assert slide == (
        "<!-- page 2 -->\n\n## Slide 2\n\nTop\n\nLeft\n\nRight\n\n| k | v |\n|---|---|\n\n"
        "![Team photo](Photo2.jpg)\n"
    )
    data = json_of(odp)["data"]["slides"]
    assert data[0] == {"number": 1, "title": "Roadmap", "name": "page1", "notes": "Speak slowly."}


@pytest.mark.parametrize(
    ("mime_type", "filename", "expected"),
    [
        (ODT, "x", "odt"),
        ("application/zip", "report.odt", "odt"),
        ("application/octet-stream", "Deck.ODP", "odp"),
        (ODP, "x", "odp"),
    ],
)
def test_accepts_types_and_extensions(mime_type: str, filename: str, expected: str) -> None:
    converter = find_converter(mime_type, filename)
    assert converter is not None and converter.name == expected


def refused(data: bytes, mime_type: str = ODT, name: str = "x.odt") -> ConversionError:
    with pytest.raises(ConversionError) as caught:
        convert(data, mime_type, name)
    return caught.value


def test_not_a_zip_is_corrupt() -> None:
    error = refused(b"plain text")
    assert (error.reason, error.message) == (
        "corrupt",
        "not a ODT (ZIP) package: File is not a zip file",
    )


def test_truncated_package_is_corrupt() -> None:
    assert refused(odf(ODT, ODT_BODY)[:300]).reason == "corrupt"


def test_missing_content_is_corrupt() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        package.writestr("mimetype", ODT)
    error = refused(out.getvalue())
    assert (error.reason, error.message) == ("corrupt", "the ODT package has no 'content.xml'")


def test_wrong_xml_is_corrupt() -> None:
    error = refused(odf(ODT, "<office:text><text:p>unclosed</office:text>"))
    assert error.reason == "corrupt"
    assert error.message.startswith("content.xml of the ODT file: ParseError: mismatched tag")


def test_a_presentation_named_odt_says_what_it_holds() -> None:
    error = refused(odf(ODP, ODP_BODY))
    assert (error.reason, error.message) == (
        "corrupt",
        "the ODF file has no office:text; it holds office:presentation",
    )


def test_entities_are_refused() -> None:
    data = odf(ODT, "")  # content.xml replaced below
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as package:
        for info in source.infolist():
            content = source.read(info)
            if info.filename == "content.xml":
                content = b'<!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>'
            package.writestr(info, content)
    error = refused(out.getvalue())
    assert error.reason == "corrupt"
    assert "EntitiesForbidden" in error.message


def test_encrypted_package_is_encrypted() -> None:
    manifest = (
        f"<manifest:manifest {NAMESPACES}><manifest:file-entry manifest:full-path='content.xml'>"
        "<manifest:encryption-data/></manifest:file-entry></manifest:manifest>"
    )
    error = refused(odf(ODT, "", extra={"META-INF/manifest.xml": manifest.encode()}))
    assert (error.reason, error.message) == ("encrypted", "the ODT file needs a password")


def test_a_content_bomb_is_refused_before_it_is_parsed() -> None:
    out = io.BytesIO()
    with (
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package,
        package.open("content.xml", "w") as member,
    ):
        member.write(b"<office:document-content>")
        chunk = b" " * (1024 * 1024)
        for _ in range(MAX_XML_BYTES // len(chunk) + 1):
            member.write(chunk)
    error = refused(out.getvalue())
    assert error.reason == "too_large"


def test_deep_nesting_is_read_flat_not_recursed() -> None:
    body = "<office:text>" + "<text:section>" * 3000 + "<text:p>deep</text:p>"
    body += "</text:section>" * 3000 + "</office:text>"
    assert "deep" in text_of(convert(odf(ODT, body), ODT, "d.odt"), "text/markdown")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_damaged_packages_are_refused_with_a_reason(data: st.DataObject) -> None:
    original = odf(ODP, ODP_BODY)
    position = data.draw(st.integers(0, len(original) - 1))
    damage = data.draw(st.binary(min_size=1, max_size=64))
    damaged = original[:position] + damage + original[position + len(damage) :]
    try:
        convert(damaged, ODP, "x.odp")
    except ConversionError as exc:
        assert exc.reason in ("corrupt", "too_large")
