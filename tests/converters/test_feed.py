"""RSS 2.0, RSS 1.0 (RDF) and Atom feeds, written in the tests."""

from __future__ import annotations

import json

import jsonschema
import pytest

from docshelf.converters import ConversionError, ConversionResult, convert, find_converter
from docshelf.converters import feed as feed_module
from docshelf.converters.parts import section_markdown
from tests.support.markitdown_vectors import NEEDS_PEERS, TEST_FILES, markitdown_vector, normalized
from tests.support.results import data_of
from tests.support.results import text_of as text

# The content module bound to an unusual prefix, as in markitdown's test_rss.xml.
RSS = """<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:x9="http://purl.org/rss/1.0/modules/content/"
     xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel>
  <title>Shelf  News</title>
  <link>https://example.org/</link>
  <description>News from the &lt;b&gt;shelf&lt;/b&gt;.</description>
  <language>en-GB</language>
  <lastBuildDate>Mon, 09 Dec 2024 20:26:59 +0000</lastBuildDate>
  <item>
    <title>First *post*</title>
    <link>https://example.org/1</link>
    <dc:creator>Ann Example</dc:creator>
    <pubDate>Tue, 19 Nov 2024 13:30:02 +0000</pubDate>
    <category>Shelves</category>
    <description>&lt;p&gt;Short summary.&lt;/p&gt;</description>
    <x9:encoded><![CDATA[<h1>Big heading</h1><p>Full <em>text</em> with
      <a href="https://example.org/more">a link</a>.</p><h2>Smaller</h2><p>More.</p>
      <img src="data:image/png;base64,iVBOR=" alt="pixel"/>]]></x9:encoded>
  </item>
  <item>
    <guid>https://example.org/2</guid>
    <description>An item without a title, only &lt;i&gt;words&lt;/i&gt; to show.</description>
    <pubDate>not a date</pubDate>
  </item>
  <item><guid isPermaLink="false">id-3</guid></item>
</channel>
</rss>"""
RDF = """<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
  xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel rdf:about="https://example.org/rdf">
    <title>RDF Site</title><link>https://example.org/</link>
    <description>Plain RSS 1.0.</description><dc:language>fr</dc:language>
  </channel>
  <item rdf:about="https://example.org/a">
    <title>Item A</title><link>https://example.org/a</link>
    <description>Text of A.</description><dc:date>2024-01-02T03:04:05Z</dc:date>
    <dc:creator>Bo Sample</dc:creator>
  </item>
</rdf:RDF>"""
ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="de">
  <title type="html">Atom &amp;lt;Feed&amp;gt;</title>
  <subtitle>An Atom feed.</subtitle>
  <link rel="self" href="https://example.org/feed.atom"/>
  <link href="https://example.org/"/>
  <updated>2024-03-01T10:00:00Z</updated>
  <author><name>Cy Writer</name></author>
  <entry>
    <title>HTML entry</title>
    <link rel="alternate" href="https://example.org/e1"/>
    <published>2024-02-01T09:00:00+01:00</published>
    <updated>2024-02-02T09:00:00+01:00</updated>
    <author><name>Di Author</name></author>
    <category term="t" label="Tagged"/>
    <summary>Plain *summary* text.</summary>
    <content type="html">&lt;p&gt;Escaped &lt;strong&gt;HTML&lt;/strong&gt;.&lt;/p&gt;</content>
  </entry>
  <entry>
    <title type="text">XHTML entry</title>
    <updated>2024-02-03T00:00:00Z</updated>
    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">
      <p>Inline <em>XHTML</em> body.</p><ul><li>one</li></ul></div></content>
  </entry>
  <entry>
    <title>Elsewhere</title>
    <content src="https://example.org/video.mp4" type="video/mp4"/>
    <summary type="text">Only a summary.</summary>
  </entry>
</feed>"""


def run(data: str | bytes, name: str, mime: str = "application/rss+xml") -> ConversionResult:
    return convert(data.encode() if isinstance(data, str) else data, mime, name)


@pytest.fixture(scope="module")
def rss() -> ConversionResult:
    return run(RSS, "news.rss")


def test_rss_items_are_sections_under_the_feed_title(rss: ConversionResult) -> None:
    markdown = text(rss, "text/markdown")
    assert markdown.startswith(
        "# Shelf News\n\nNews from the **shelf**.\n\n## First \\*post\\*\n\n"
    )
    assert (
        "**Published:** Tue, 19 Nov 2024 13:30:02 +0000\\\n**Author:** Ann Example\\\n"
        "**Link:** [https://example.org/1](https://example.org/1)\n\n"
    ) in markdown
    # content:encoded (any prefix) wins over the description; its headings sit below the item's.
    assert (
        "### Big heading\n\nFull *text* with [a link](https://example.org/more).\n\n#### Smaller"
        in (markdown)
    )
    assert "Short summary" not in markdown
    assert "base64" not in markdown and "<rss" not in markdown


def test_untitled_items_are_named_by_their_text(rss: ConversionResult) -> None:
    markdown = text(rss, "text/markdown")
    assert "## An item without a title, only words to show.\n\n**Published:** not a date\\\n" in (
        markdown
    )
    assert "**Link:** [https://example.org/2](https://example.org/2)" in markdown  # guid
    assert markdown.rstrip().endswith("## Item 3")  # nothing to name it by


def test_rss_facts_and_parts(rss: ConversionResult) -> None:
    assert rss.facts.title == "Shelf News"
    assert rss.facts.description == "News from the shelf."
    assert rss.facts.language == "en-GB"
    assert rss.facts.metadata == {
        "format": "RSS 2.0",
        "link": "https://example.org/",
        "updated": "Mon, 09 Dec 2024 20:26:59 +0000",
    }
    cut = section_markdown(text(rss, "text/markdown"), "first-post")
    assert cut is not None and "Big heading" in cut[1] and "without a title" not in cut[1]


def test_rss_json_data_has_items_with_iso_dates(rss: ConversionResult) -> None:
    data = data_of(rss)
    assert {key: data[key] for key in ("format", "title", "updated", "description")} == {
        "format": "rss",
        "title": "Shelf News",
        "updated": "2024-12-09T20:26:59+00:00",
        "description": "News from the shelf.",
    }
    first, second, third = data["items"]
    assert first == {
        "title": "First *post*",
        "link": "https://example.org/1",
        "date": "2024-11-19T13:30:02+00:00",
        "authors": ["Ann Example"],
        "categories": ["Shelves"],
        "summary": "Short summary.",
    }
    assert second["date"] is None and second["title"] is None
    assert third["link"] is None and third["summary"] is None


def test_rss_1_0_rdf() -> None:
    result = run(RDF, "site.rdf", "application/rss+xml")
    markdown = text(result, "text/markdown")
    assert markdown.startswith("# RDF Site\n\nPlain RSS 1.0.\n\n## Item A\n\n")
    assert "**Author:** Bo Sample" in markdown and "Text of A." in markdown
    assert result.facts.language == "fr"
    item = data_of(result)["items"][0]
    assert (item["date"], item["link"]) == ("2024-01-02T03:04:05+00:00", "https://example.org/a")


def test_atom_text_constructs_links_and_authors() -> None:
    result = run(ATOM, "feed.atom", "application/atom+xml")
    markdown = text(result, "text/markdown")
    assert markdown.startswith("# Atom \\<Feed\\>\n\nAn Atom feed.\n\n## HTML entry\n\n")
    assert "**Link:** [https://example.org/e1](https://example.org/e1)" in markdown
    assert "Escaped **HTML**." in markdown and "Plain" not in markdown
    assert "Inline *XHTML* body.\n\n- one" in markdown
    assert "## Elsewhere\n\nOnly a summary." in markdown  # content by address is not shown
    assert result.facts.title == "Atom <Feed>"
    assert result.facts.language == "de"
    assert result.facts.metadata["link"] == "https://example.org/"  # alternate, not self
    data = data_of(result)
    assert data["format"] == "atom" and data["authors"] == ["Cy Writer"]
    first = data["items"][0]
    assert first["date"] == "2024-02-01T09:00:00+01:00"  # published before updated
    assert (first["authors"], first["categories"]) == (["Di Author"], ["Tagged"])
    assert first["summary"] == "Plain *summary* text."


def test_a_feed_without_description_is_described_by_its_items() -> None:
    channel_description = "<description>News from the &lt;b&gt;shelf&lt;/b&gt;.</description>"
    result = run(RSS.replace(channel_description, ""), "a.rss")
    assert result.facts.description == "Feed, 3 items: First *post*"


def test_registry_accepts_feed_types_and_extensions() -> None:
    for mime, name in [
        ("application/rss+xml", "feed.xml"),
        ("application/atom+xml", "feed.xml"),
        ("application/xml", "news.rss"),
        ("text/xml", "x.atom"),
    ]:
        converter = find_converter(mime, name)
        assert converter is not None and converter.name == "feed"


@pytest.mark.parametrize(
    ("data", "reason", "message"),
    [
        ("<rss><channel><title>x</channel></rss>", "corrupt", "the feed is not well-formed XML"),
        (
            "<html><body/></html>",
            "unsupported",
            "not an RSS or Atom feed: the document element is <html>",
        ),
        ("<rss version='2.0'/>", "corrupt", "the RSS feed has no <channel>"),
        (
            '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/>',
            "corrupt",
            "the RDF document has no RSS 1.0 channel",
        ),
        (
            '<!DOCTYPE rss [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><rss>&b;</rss>',
            "corrupt",
            "the feed is not well-formed XML: EntitiesForbidden",
        ),
        (
            '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><rss><channel>'
            "<title>&x;</title></channel></rss>",
            "corrupt",
            "the feed is not well-formed XML: EntitiesForbidden",
        ),
        (b"\x00\x01binary", "corrupt", "the feed is not well-formed XML"),
        (
            '<feed xmlns="http://www.w3.org/2005/Atom"><entry><content type="xhtml">'
            '<div xmlns="http://www.w3.org/1999/xhtml">'
            + "<b>" * 20_000
            + "</b>" * 20_000
            + "</div></content></entry></feed>",
            "corrupt",
            "the feed's XHTML content is nested too deeply",
        ),
    ],
)
def test_bad_feeds_are_refused_with_a_reason(data: str | bytes, reason: str, message: str) -> None:
    with pytest.raises(ConversionError) as caught:
        run(data, "bad.rss")
    assert caught.value.reason == reason
    assert caught.value.message.startswith(message)


def test_too_many_items_and_too_many_bytes_are_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feed_module, "MAX_ITEMS", 2)
    with pytest.raises(ConversionError) as caught:
        run(RSS, "a.rss")
    assert (caught.value.reason, caught.value.message) == ("too_large", "the feed has over 2 items")
    monkeypatch.setattr(feed_module, "MAX_FEED_BYTES", 100)
    with pytest.raises(ConversionError) as caught:
        run(RSS, "a.rss")
    assert caught.value.reason == "too_large"


@NEEDS_PEERS
def test_markitdown_vector_test_rss_xml() -> None:
    vector = markitdown_vector("test_rss.xml")
    path = TEST_FILES / "test_rss.xml"
    # detection names an RSS document in an .xml file application/rss+xml (the lead's sniffing)
    markdown = normalized(text(run(path.read_bytes(), path.name), "text/markdown"))
    for needed in vector["must_include"]:
        assert normalized(needed) in markdown
    for refused in vector["must_not_include"]:
        assert normalized(refused) not in markdown


def test_json_validates_against_the_document_schema(
    rss: ConversionResult, schema_validator: jsonschema.protocols.Validator
) -> None:
    schema_validator.validate(json.loads(text(rss, "application/json")))
    atom = run(ATOM, "feed.atom", "application/atom+xml")
    schema_validator.validate(json.loads(text(atom, "application/json")))
