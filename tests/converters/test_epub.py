"""EPUB sources: e-books assembled in memory from their XML and XHTML parts."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docshelf.converters import ConversionError, ConversionResult, convert, find_converter
from docshelf.converters import epub as epub_module
from docshelf.converters.parts import section_markdown, slugify
from tests.support.markitdown_vectors import NEEDS_PEERS, TEST_FILES, markitdown_vector, normalized
from tests.support.results import text_of as text

CONTAINER = """<?xml version="1.0"?>
<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" version="1.0">
  <rootfiles><rootfile full-path="OEBPS/content.opf"
    media-type="application/oebps-package+xml"/></rootfiles>
</container>"""
METADATA = """
    <dc:identifier id="uid">urn:isbn:9780000000001</dc:identifier>
    <dc:identifier>other-id</dc:identifier>
    <dc:title>The Shelf Book</dc:title>
    <dc:creator>Ann Example</dc:creator>
    <dc:creator>Bo Sample</dc:creator>
    <dc:language>en-GB</dc:language>
    <dc:publisher>Docshelf Press</dc:publisher>
    <dc:date>2024-05-01</dc:date>
    <dc:subject>Testing</dc:subject>
    <dc:description>&lt;p&gt;A book about &lt;b&gt;shelves&lt;/b&gt;.&lt;/p&gt;</dc:description>"""
XHTML_11 = (
    '<?xml version="1.0" encoding="utf-8"?>\n'
    '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" '
    '"http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">\n'
    '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Book</title></head>'
    "<body>{body}</body></html>"
)
NAV = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">
<body>
  <nav epub:type="landmarks"><ol><li><a href="text/ch1.xhtml">Start&nbsp;here</a></li></ol></nav>
  <nav epub:type="toc"><h2>Contents</h2><ol>
    <li><a href="text/ch1.xhtml">The First Chapter</a></li>
    <li><a href="text/ch%202.xhtml#top">Second&nbsp;Chapter</a>
      <ol><li><a href="text/ch3.xhtml">A Subchapter</a></li></ol></li>
    <li><a href="text/notes.xhtml">Notes</a></li>
  </ol></nav>
</body></html>"""
NCX = """<?xml version="1.0" encoding="utf-8"?>
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><navMap>
  <navPoint id="p1"><navLabel><text>NCX One</text></navLabel><content src="text/ch1.xhtml"/>
    <navPoint id="p2"><navLabel><text>NCX Nested</text></navLabel>
      <content src="text/ch3.xhtml"/></navPoint></navPoint>
</navMap></ncx>"""
CHAPTERS = {
    "text/ch1.xhtml": XHTML_11.format(
        body="<h1>Chapter&nbsp;One</h1><p>Some <em>styled</em> text&mdash;here.</p>"
        '<p><img src="../images/map%20one.png" alt="A map"/>'
        '<img src="../../../etc/passwd" alt="escape"/>'
        '<img src="data:image/png;base64,iVBORw0KGgo=" alt="inline"/></p>'
        "<ul><li>First point</li><li>Second point</li></ul>"
    ),
    "text/ch 2.xhtml": XHTML_11.format(body="<p>A chapter without any heading.</p>"),
    "text/ch2b.xhtml": XHTML_11.format(body="<p>The second file of chapter two.</p>"),
    "text/ch3.xhtml": XHTML_11.format(body="<p>Sub text.</p><h2>Deeper</h2><p>More.</p>"),
    "text/notes.xhtml": XHTML_11.format(body="<blockquote><p>A note.</p></blockquote>"),
    "nav.xhtml": NAV,
}
MANIFEST = """
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
    <item id="notes" href="text/notes.xhtml" media-type="application/xhtml+xml"/>
    <item id="c1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/>
    <item id="c2" href="text/ch%202.xhtml" media-type="application/xhtml+xml"/>
    <item id="c2b" href="text/ch2b.xhtml" media-type="application/xhtml+xml"/>
    <item id="c3" href="text/ch3.xhtml" media-type="application/xhtml+xml"/>
    <item id="css" href="style.css" media-type="text/css"/>
    <item id="out" href="../outside.xhtml" media-type="application/xhtml+xml"/>"""
SPINE = """
    <itemref idref="nav"/>
    <itemref idref="notes" linear="no"/>
    <itemref idref="c1"/>
    <itemref idref="c2"/>
    <itemref idref="c2b"/>
    <itemref idref="css"/>
    <itemref idref="missing"/>
    <itemref idref="out"/>
    <itemref idref="c3"/>"""


def opf(metadata: str = METADATA, manifest: str = MANIFEST, spine: str = SPINE) -> str:
    return f"""<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">{metadata}</metadata>
  <manifest>{manifest}</manifest>
  <spine toc="ncx">{spine}</spine>
</package>"""


def build_epub(
    members: dict[str, str | bytes] | None = None,
    *,
    package: str | None = None,
    chapters: dict[str, str] = CHAPTERS,
    extra: dict[str, str | bytes] | None = None,
) -> bytes:
    """An EPUB: ``mimetype`` stored first, the container, the OPF and its folder's files."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        if members is None:
            members = {
                "META-INF/container.xml": CONTAINER,
                "OEBPS/content.opf": package if package is not None else opf(),
                "OEBPS/toc.ncx": NCX,
                **{f"OEBPS/{name}": text for name, text in chapters.items()},
            }
        for name, data in {**members, **(extra or {})}.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def run(
    data: bytes, name: str = "book.epub", mime: str = "application/epub+zip"
) -> ConversionResult:
    return convert(data, mime, name)


@pytest.fixture(scope="module")
def book() -> ConversionResult:
    return run(build_epub())


def test_header_block_then_chapters_in_spine_order_nav_left_out(book: ConversionResult) -> None:
    markdown = text(book, "text/markdown")
    assert markdown.startswith(
        "**Title:** The Shelf Book\\\n**Authors:** Ann Example, Bo Sample\\\n"
        "**Language:** en-GB\\\n**Publisher:** Docshelf Press\\\n**Date:** 2024-05-01\\\n"
        "**Description:** A book about shelves.\\\n**Identifier:** urn:isbn:9780000000001\n\n"
    )
    order = [markdown.index(s) for s in ("# Chapter", "Second Chapter", "Sub text", "A note.")]
    assert order == sorted(order)
    assert "Contents" not in markdown and "Start here" not in markdown  # the nav document
    assert "Some *styled* text\u2014here." in markdown  # XHTML entities, never XML-parsed
    assert "- First point\n- Second point" in markdown
    assert "> A note." in markdown  # linear="no" comes last, but comes


def test_chapters_without_a_heading_get_their_contents_label(book: ConversionResult) -> None:
    markdown = text(book, "text/markdown")
    # Chapter one opens with its own heading: the label "The First Chapter" is not added.
    assert "# Chapter\u00a0One" in markdown and "The First Chapter" not in markdown
    # A headless chapter gets its label; the unlisted file after it continues it.
    assert "# Second Chapter\n\nA chapter without any heading.\n\nThe second file" in markdown
    # Nested in the contents: a level-2 heading; linear="no" notes get theirs too.
    assert "## A Subchapter\n\nSub text." in markdown
    assert "# Notes\n\n> A note." in markdown


def test_every_outline_entry_is_a_section_part(book: ConversionResult) -> None:
    markdown = text(book, "text/markdown")
    titles = [entry.title for entry in book.facts.outline]
    assert titles == ["Chapter One", "Second Chapter", "A Subchapter", "Deeper", "Notes"]
    cut = section_markdown(markdown, slugify("Second Chapter"))
    assert cut is not None
    assert cut[1].rstrip() == (
        "# Second Chapter\n\nA chapter without any heading.\n\nThe second file of chapter two.\n\n"
        "## A Subchapter\n\nSub text.\n\n## Deeper\n\nMore."
    )
    segments = {segment.part: segment for segment in book.segments()}
    assert "section=second-chapter" in segments
    assert "The second file" in segments["section=second-chapter"].text


def test_images_are_package_paths_never_data_or_outside(book: ConversionResult) -> None:
    markdown = text(book, "text/markdown")
    assert "![A map](<OEBPS/images/map one.png>)" in markdown
    assert "passwd" not in markdown and "data:" not in markdown and "base64" not in markdown
    assert "escape" in markdown and "inline" in markdown  # alt text stays


def test_facts_from_the_package_metadata(book: ConversionResult) -> None:
    facts = book.facts
    assert facts.title == "The Shelf Book"
    assert facts.description == "A book about shelves."  # Calibre-style HTML, as text
    assert facts.language == "en-GB"
    assert facts.metadata == {
        "author": "Ann Example; Bo Sample",
        "publisher": "Docshelf Press",
        "date": "2024-05-01",
        "identifier": "urn:isbn:9780000000001",
        "subject": "Testing",
    }


def test_json_data_has_metadata_and_chapters(book: ConversionResult) -> None:
    document = json.loads(text(book, "application/json"))
    data = document["data"]
    assert data["authors"] == ["Ann Example", "Bo Sample"]
    assert data["subjects"] == ["Testing"]
    assert data["chapters"] == [
        {"title": "The First Chapter", "path": "OEBPS/text/ch1.xhtml", "linear": True},
        {"title": "Second Chapter", "path": "OEBPS/text/ch 2.xhtml", "linear": True},
        {"title": None, "path": "OEBPS/text/ch2b.xhtml", "linear": True},
        {"title": "A Subchapter", "path": "OEBPS/text/ch3.xhtml", "linear": True},
        {"title": "Notes", "path": "OEBPS/text/notes.xhtml", "linear": False},
    ]
    assert [s["heading"] for s in document["sections"]][:2] == [None, "Chapter One"]
    plain = text(book, "text/plain")
    assert "Some styled text" in plain and "**" not in plain


def test_epub2_without_nav_takes_labels_from_toc_ncx() -> None:
    manifest = MANIFEST.replace('properties="nav"', "")
    result = run(build_epub(package=opf(manifest=manifest, spine=SPINE.replace('"nav"', '"c1"'))))
    markdown = text(result, "text/markdown")
    assert "## NCX Nested\n\nSub text." in markdown
    assert "A note." in markdown and "# Notes" not in markdown  # the NCX does not list it


def test_a_book_without_description_is_described_by_its_shape() -> None:
    result = run(build_epub(package=opf(metadata="<dc:title>T</dc:title>")))
    assert result.facts.description == "E-book, 5 chapters"
    assert text(result, "text/markdown").startswith("**Title:** T\n\n")


def test_container_missing_falls_back_to_the_only_opf() -> None:
    data = build_epub(
        {
            "OEBPS/content.opf": opf(spine='<itemref idref="c1"/>'),
            **{f"OEBPS/{n}": t for n, t in CHAPTERS.items()},
        }
    )
    assert "# Chapter\u00a0One" in text(run(data), "text/markdown")


def test_registry_accepts_the_type_and_the_extension() -> None:
    for mime, name in [
        ("application/epub+zip", "a.epub"),
        ("application/zip", "a.epub"),
        ("application/octet-stream", "A.EPUB"),
    ]:
        converter = find_converter(mime, name)
        assert converter is not None and converter.name == "epub"


@pytest.mark.parametrize(
    ("data", "reason", "message"),
    [
        (b"not a zip at all", "corrupt", "not a EPUB (ZIP) package: File is not a zip file"),
        (build_epub({"a.txt": "x"}), "corrupt", "not an EPUB: no package document"),
        (
            build_epub(package="<package"),
            "corrupt",
            "the EPUB's 'OEBPS/content.opf' is not well-formed XML: ParseError",
        ),
        (
            build_epub(package="<root/>"),
            "corrupt",
            "'OEBPS/content.opf' is not an EPUB package document (OPF)",
        ),
        (
            build_epub(package='<!DOCTYPE p [<!ENTITY a "aaaa">]><package>&a;</package>'),
            "corrupt",
            "the EPUB's 'OEBPS/content.opf' is not well-formed XML: EntitiesForbidden",
        ),
    ],
)
def test_bad_packages_are_refused_with_a_reason(data: bytes, reason: str, message: str) -> None:
    with pytest.raises(ConversionError) as caught:
        run(data)
    assert caught.value.reason == reason
    assert caught.value.message.startswith(message)


def test_truncated_epub_is_corrupt() -> None:
    data = build_epub()
    with pytest.raises(ConversionError) as caught:
        run(data[: len(data) // 2])
    assert caught.value.reason == "corrupt"


def test_drm_encrypted_chapters_are_encrypted_but_obfuscated_fonts_are_not() -> None:
    def encryption(algorithm: str) -> str:
        return f"""<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container"
          xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>
          <enc:EncryptionMethod Algorithm="{algorithm}"/>
          <enc:CipherData><enc:CipherReference URI="OEBPS/text/ch1.xhtml"/></enc:CipherData>
          </enc:EncryptedData></encryption>"""

    locked = build_epub(
        extra={"META-INF/encryption.xml": encryption("http://www.w3.org/2001/04/xmlenc#aes128-cbc")}
    )
    with pytest.raises(ConversionError) as caught:
        run(locked)
    assert caught.value.reason == "encrypted"
    assert caught.value.message == "the EPUB's chapters are encrypted (DRM): 'OEBPS/text/ch1.xhtml'"
    fonts = build_epub(
        extra={"META-INF/encryption.xml": encryption("http://www.idpf.org/2008/embedding")}
    )
    assert "Chapter" in text(run(fonts), "text/markdown")


@pytest.mark.parametrize(
    ("limit", "value", "message"),
    [
        ("MAX_CHAPTERS", 3, "the EPUB's spine lists 9 items, over the limit of 3"),
        ("MAX_BOOK_TEXT_BYTES", 600, "the EPUB's chapters unpack to over 600 bytes of text"),
        ("MAX_CHAPTER_BYTES", 300, "'OEBPS/text/ch1.xhtml' in the EPUB unpacks to"),
        ("MAX_XML_BYTES", 100, "'META-INF/container.xml' in the EPUB unpacks to"),
    ],
)
def test_limits_are_too_large(
    monkeypatch: pytest.MonkeyPatch, limit: str, value: int, message: str
) -> None:
    monkeypatch.setattr(epub_module, limit, value)
    with pytest.raises(ConversionError) as caught:
        run(build_epub())
    assert caught.value.reason == "too_large"
    assert caught.value.message.startswith(message)


def test_zip_bomb_is_refused_before_inflating() -> None:
    bomb = build_epub(extra={"OEBPS/text/huge.xhtml": b"\0" * (8 * 1024 * 1024)})
    assert len(bomb) < 64 * 1024
    with pytest.raises(ConversionError) as caught:
        run(bomb)
    assert caught.value.reason == "too_large"
    assert "a ZIP bomb" in caught.value.message


SMALL_EPUB = build_epub()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(SMALL_EPUB) - 1), st.integers(0, 255)), max_size=8))
def test_damaged_epubs_convert_or_fail_with_a_reason(flips: list[tuple[int, int]]) -> None:
    data = bytearray(SMALL_EPUB)
    for offset, value in flips:
        data[offset] = value
    try:
        result = run(bytes(data))
        text(result, "text/markdown")
    except ConversionError as error:
        assert error.reason in ("corrupt", "too_large", "unsupported", "encrypted")


@NEEDS_PEERS
def test_markitdown_vector_test_epub() -> None:
    vector = markitdown_vector("test.epub")
    path: Path = TEST_FILES / "test.epub"
    markdown = normalized(
        text(run(path.read_bytes(), path.name, vector["mimetype"]), "text/markdown")
    )
    for needed in vector["must_include"]:
        assert normalized(needed) in markdown
    for refused in vector["must_not_include"]:
        assert normalized(refused) not in markdown


def test_json_validates_against_the_document_schema(
    book: ConversionResult, schema_validator: jsonschema.protocols.Validator
) -> None:
    schema_validator.validate(json.loads(text(book, "application/json")))
