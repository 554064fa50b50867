"""HTML sources, written to tmp_path."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pypdf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from converters import ConversionResult, convert
from converters.htmlmd import html_to_markdown

PAGE = """<!DOCTYPE html>
<html lang="en-GB">
<head>
  <title>Shelf &amp; Friends</title>
  <meta name="description" content="A page about shelves.">
  <meta name="author" content="Ann Example">
  <style>body { color: red }</style>
  <script>document.write("SCRIPTED")</script>
</head>
<body>
  <nav><a href="#top">Skip</a></nav>
  <h1>Shelves</h1>
  <p>Shelves hold <b>books</b> and <em>files</em>;
  see <a href="https://example.com/a">the guide</a>.
  <p>Second paragraph with a literal *star* and a line<br>break.
  <h2>Kinds</h2>
  <ul><li>Wall<li>Floor<ul><li>Tall</ul></ul>
  <ol start="3"><li>third<li>fourth</ol>
  <table>
    <caption>Sizes</caption>
    <thead><tr><th>Kind<th>Width</thead>
    <tbody><tr><td>Wall<td>80 cm<tr><td>Floor<td><a href="/floor">90</a> cm</tbody>
  </table>
  <pre><code class="language-python">def shelf():
    return "ok"</code></pre>
  <blockquote><p>A quoted line.</p></blockquote>
  <div hidden>HIDDEN TEXT</div>
  <p style="display: none">ALSO HIDDEN</p>
  <template><p>TEMPLATE TEXT</p></template>
</body>
</html>
"""


@pytest.fixture(scope="module")
def page_result(tmp_path_factory: pytest.TempPathFactory) -> ConversionResult:
    path = tmp_path_factory.mktemp("html") / "shelves.html"
    path.write_text(PAGE, encoding="utf-8")
    return convert(path.read_bytes(), "text/html", path.name)


def test_html_derives_all_four_formats(page_result: ConversionResult) -> None:
    assert [r.mime_type for r in page_result.representations] == [
        "text/plain",
        "text/markdown",
        "application/json",
        "application/pdf",
    ]


def test_facts_from_head(page_result: ConversionResult) -> None:
    facts = page_result.facts
    assert facts.title == "Shelf & Friends"
    assert facts.description == "A page about shelves."
    assert facts.language == "en-GB"
    assert facts.metadata["author"] == "Ann Example"
    assert [(e.level, e.title) for e in facts.outline] == [(1, "Shelves"), (2, "Kinds")]


def test_markdown_structure(page_result: ConversionResult) -> None:
    markdown = page_result.get("text/markdown").data.decode()  # type: ignore[union-attr]
    assert "# Shelves\n" in markdown and "## Kinds\n" in markdown
    assert "Shelves hold **books** and *files*; see [the guide](https://example.com/a)." in markdown
    assert "literal \\*star\\* and a line\\\nbreak." in markdown
    assert "- Wall\n- Floor\n  - Tall" in markdown
    assert "3. third\n4. fourth" in markdown
    assert "| Kind | Width |\n|---|---|\n| Wall | 80 cm |\n| Floor | [90](/floor) cm |" in markdown
    assert '```python\ndef shelf():\n    return "ok"\n```' in markdown
    assert "> A quoted line." in markdown


def test_invisible_content_is_dropped(page_result: ConversionResult) -> None:
    for representation in page_result.representations[:3]:
        text = representation.data.decode()
        for hidden in ("SCRIPTED", "color: red", "HIDDEN TEXT", "ALSO HIDDEN", "TEMPLATE TEXT"):
            assert hidden not in text


def test_visible_text_and_json(page_result: ConversionResult) -> None:
    text = page_result.get("text/plain").data.decode()  # type: ignore[union-attr]
    assert "Shelves hold books and files; see the guide." in text
    document = json.loads(page_result.get("application/json").data)  # type: ignore[union-attr]
    assert {"text": "the guide", "href": "https://example.com/a"} in document["links"]
    assert document["tables"][0]["header"] == ["Kind", "Width"]
    assert document["tables"][0]["rows"] == [["Wall", "80 cm"], ["Floor", "90 cm"]]
    assert document["language"] == "en-GB"


def test_pdf_contains_the_text(page_result: ConversionResult) -> None:
    pdf = pypdf.PdfReader(io.BytesIO(page_result.get("application/pdf").data))  # type: ignore[union-attr]
    text = " ".join(page.extract_text() for page in pdf.pages)
    assert "Shelves hold" in text and "80 cm" in text
    assert pdf.metadata is not None and pdf.metadata.title == "Shelf & Friends"


def test_title_becomes_heading_when_the_body_has_none(tmp_path: Path) -> None:
    path = tmp_path / "t.html"
    path.write_text("<title>Only a title</title><p>Body</p>", encoding="utf-8")
    result = convert(path.read_bytes(), "text/html", path.name)
    assert result.get("text/markdown").data.decode() == "# Only a title\n\nBody\n"  # type: ignore[union-attr]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "<p>",
                "</p>",
                "<li>",
                "<ul>",
                "</ul>",
                "<table>",
                "<tr>",
                "<td>",
                "</table>",
                "<b>",
                "</b>",
                "<a href='x y'>",
                "</a>",
                "<pre>",
                "</pre>",
                "<br>",
                "<h2>",
                "</h2>",
                "*",
                "|",
                "<blockquote>",
                "<img alt='[x]'>",
                "text",
                " ",
                "\n",
                "<div hidden>",
                "</div>",
                "<ol start=x>",
            ]
        )
        | st.text(max_size=10),
        max_size=40,
    ).map("".join)
)
def test_any_tag_soup_becomes_markdown(source: str) -> None:
    page = html_to_markdown(source)
    assert isinstance(page.markdown, str)
