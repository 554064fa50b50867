"""HTML sources, written to tmp_path."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pypdf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from docshelf.converters import ConversionResult, convert
from docshelf.converters.html.markdown import html_to_markdown

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


def _convert_page(tmp_path: Path, body: str, name: str = "page.html") -> ConversionResult:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return convert(path.read_bytes(), "text/html", path.name)


def _variants(result: ConversionResult) -> tuple[str, str, dict[str, object]]:
    markdown = result.get("text/markdown").data.decode()  # type: ignore[union-attr]
    text = result.get("text/plain").data.decode()  # type: ignore[union-attr]
    document = json.loads(result.get("application/json").data)  # type: ignore[union-attr]
    return markdown, text, document


def _pdf_text(result: ConversionResult) -> str:
    pdf = pypdf.PdfReader(io.BytesIO(result.get("application/pdf").data))  # type: ignore[union-attr]
    return " ".join(page.extract_text() for page in pdf.pages)


# What Sphinx writes after every heading and what texinfo 7 writes after each
# definition term: a permalink whose only text is a pilcrow (or #, §, 🔗).
SPHINX_PAGE = """<html><head><title>Setup — Docs</title></head><body>
<section id="setup">
<h1>Setup<a class="headerlink" href="#setup" title="Permalink to this heading">¶</a></h1>
<p>Install it.</p>
<section id="options"><h2>Options<a class="headerlink" href="#options">¶</a></h2>
<p>See <a href="#setup">setup</a> and <a href="https://example.com/x">#</a>.</p>
<h3 id="more">More <a href="#more">§</a></h3><p>Text.</p>
<h3 id="icon">Icon <a class="anchor" href="#icon">🔗</a></h3><p>Text.</p>
</section></section></body></html>"""


def test_permalink_anchors_are_dropped(tmp_path: Path) -> None:
    result = _convert_page(tmp_path, SPHINX_PAGE)
    markdown, text, document = _variants(result)
    assert [(e.level, e.title) for e in result.facts.outline] == [
        (1, "Setup"),
        (2, "Options"),
        (3, "More"),
        (3, "Icon"),
    ]
    assert markdown.startswith("# Setup\n\nInstall it.\n\n## Options\n")
    # A "#" that links elsewhere is a link, not a permalink.
    assert "See [setup](#setup) and [#](https://example.com/x)." in markdown
    for variant in (markdown, text, json.dumps(document, ensure_ascii=False), _pdf_text(result)):
        for glyph in ("¶", "§", "🔗", "(#options)", "(#more)"):
            assert glyph not in variant
    assert {"text": "setup", "href": "#setup"} in document["links"]  # type: ignore[operator]


# texinfo's definition lists (makeinfo --html 7.x): the term in <strong>,
# <code> or <b>, sometimes with a category prefix and a permalink.
TEXINFO_PAGE = """<html><body><h4>2.3.6 Complex Types</h4>
<dl class="first-deftp">
<dt id="index-ffi_type"><span class="category">Data type: </span><span><strong>ffi_type</strong>\
<a href="#index-ffi_type" class="copiable-anchor"> &para;</a></span></dt>
<dd><p>Describes a type.</p>
<dl compact="compact">
<dt><span><code>size_t size</code></span></dt>
<dd><p>The size of the type.</p></dd>
<dt><strong>-v</strong></dt>
<dt><b>--verbose</b></dt>
<dd>Say more.</dd>
</dl></dd></dl></body></html>"""


def test_definition_lists_keep_terms_apart_without_nested_bold(tmp_path: Path) -> None:
    result = _convert_page(tmp_path, TEXINFO_PAGE)
    markdown, text, _ = _variants(result)
    assert "****" not in markdown and "¶" not in markdown
    assert (
        "**Data type: ffi\\_type**\n\nDescribes a type.\n\n"
        "**`size_t size`**\n\nThe size of the type.\n\n**-v**\n\n**--verbose**\n\nSay more.\n"
    ) in markdown
    assert "Data type: ffi_type\n\nDescribes a type.\n\nsize_t size\n\nThe size" in text
    assert "Data type: ffi_type" in _pdf_text(result)


def test_nested_emphasis_is_written_once(tmp_path: Path) -> None:
    # <i><em>x</em></i> written naively is **x**: bold.
    source = "<p><b>All <strong>bold</strong> here</b>, <b><b>x</b></b> and <i><em>y</em></i></p>"
    markdown, _, _ = _variants(_convert_page(tmp_path, source))
    assert markdown == "**All bold here**, **x** and *y*\n"


# The shape of the libxslt pages (xmlsoft.org, generated by its site.xsl):
# a one-row banner table, then an outer table whose left cell holds the
# navigation menus (nested tables, a form, lists) and whose right cell holds
# the page itself (headings, paragraphs, lists, a data table).
LAYOUT_PAGE = """<html><head><title>Introduction</title></head><body>
<table border="0" width="100%"><tr>
<td width="120"><a href="http://swpat.ffii.org/"><img src="epatents.png" alt="No patents"/></a></td>
<td><table><tr><td><table><tr><td align="center"><h1>The XSLT C library</h1>
<h2>Introduction</h2></td></tr></table></td></tr></table></td></tr></table>
<table border="0" width="100%"><tr><td>
<table><tr><td valign="top" width="200"><table><tr><td><center><b>Main Menu</b></center></td></tr>
<tr><td><form action="search.php"><input name="query" type="text"/></form>
<ul><li><a href="index.html">Home</a></li><li><a href="intro.html">Introduction</a></li></ul>
</td></tr></table></td>
<td valign="top"><table><tr><td><table><tr><td>
<p>This document describes libxslt, the XSLT C library.</p>
<h3>Key points</h3>
<ul><li>Libxslt is a C implementation</li><li>It is written in plain C</li></ul>
<table border="1"><tr><th>Name</th><th>Kind</th></tr>
<tr><td>xsltproc</td><td>tool</td></tr><tr><td>libexslt</td><td>library</td></tr></table>
<p><a href="bugs.html">Daniel Veillard</a></p>
</td></tr></table></td></tr></table></td></tr></table>
</td></tr></table></body></html>"""


def test_layout_tables_become_blocks(tmp_path: Path) -> None:
    result = _convert_page(tmp_path, LAYOUT_PAGE)
    markdown, text, document = _variants(result)
    assert [(e.level, e.title) for e in result.facts.outline] == [
        (1, "The XSLT C library"),
        (2, "Introduction"),
        (3, "Key points"),
    ]
    assert "\n\n**Main Menu**\n\n- [Home](index.html)\n- [Introduction](intro.html)\n\n" in markdown
    assert (
        "This document describes libxslt, the XSLT C library.\n\n### Key points\n\n"
        "- Libxslt is a C implementation\n- It is written in plain C\n\n"
        "| Name | Kind |\n|---|---|\n| xsltproc | tool |\n| libexslt | library |\n\n"
        "[Daniel Veillard](bugs.html)\n"
    ) in markdown
    # Only the data table is a table; the layout tables left no pipes behind.
    assert markdown.count("|---|") == 1
    assert document["tables"] == [  # type: ignore[comparison-overlap]
        {"header": ["Name", "Kind"], "rows": [["xsltproc", "tool"], ["libexslt", "library"]]}
    ]
    assert "This document describes libxslt, the XSLT C library.\n\nKey points\n" in text
    pdf_text = _pdf_text(result)
    assert "This document describes libxslt" in pdf_text and "Key points" in pdf_text


@pytest.mark.parametrize(
    "table",
    [
        '<table role="presentation"><tr><td>A<td>B</tr><tr><td>C<td>D</tr></table>',
        "<table><tr><td>A</td><td>B</td></tr></table>",
        "<table><tr><td>A</td></tr><tr><td>B</td></tr></table>",
        "<table><tr><td><p>A</p></td><td><ul><li>B</li></ul></td></tr><tr><td>C</td><td>D</td></tr></table>",
    ],
)
def test_what_makes_a_layout_table(tmp_path: Path, table: str) -> None:
    markdown, _, document = _variants(_convert_page(tmp_path, table))
    assert "|" not in markdown and "tables" not in document


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        (
            "<table><tr><th>K</th><th>V</th></tr><tr><td><p>a</p></td><td>1</td></tr></table>",
            "| K | V |\n|---|---|\n| a | 1 |\n",
        ),
        (
            "<table><tr><th>Only</th></tr><tr><td>one</td></tr><tr><td>two</td></tr></table>",
            "| Only |\n|---|\n| one |\n| two |\n",
        ),
        (
            "<table><tr><td>K</td><td>V</td></tr><tr><td>a <b>b</b></td><td>1</td></tr></table>",
            "| K | V |\n|---|---|\n| a **b** | 1 |\n",
        ),
    ],
)
def test_data_tables_stay_tables(tmp_path: Path, table: str, expected: str) -> None:
    markdown, _, document = _variants(_convert_page(tmp_path, table))
    assert markdown == expected
    assert len(document["tables"]) == 1  # type: ignore[arg-type]


def test_one_blank_line_after_a_code_block(tmp_path: Path) -> None:
    markdown, _, _ = _variants(_convert_page(tmp_path, "<pre>a = 1</pre><p>After.</p>"))
    assert markdown == "```\na = 1\n```\n\nAfter.\n"


@pytest.mark.parametrize(
    ("href", "target"),
    [
        # Bing's result links carry their target as "a1" and base64url (markitdown's
        # test_serp.html); one to nowhere is javascript:void(0), and its text stays.
        (
            "https://www.bing.com/ck/a?!&&p=1f&u=a1aHR0cHM6Ly9lbi53aWtpcGVkaWEub3JnL3dpa2kvTWljcm9zb2Z0&ntb=1",
            "https://en.wikipedia.org/wiki/Microsoft",
        ),
        (
            "https://www.bing.com/ck/a?!&&p=2c&u=a1L3NlYXJjaD9xPVBhdWwlMjBBbGxlbg&ntb=1",
            "https://www.bing.com/search?q=Paul%20Allen",
        ),
        ("https://www.google.com/url?q=https://example.org/a&sa=U", "https://example.org/a"),
        ("https://duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.org%2Fb", "https://example.org/b"),
        (
            "https://eur01.safelinks.protection.outlook.com/?url=https%3A%2F%2Fexample.org%2Fc",
            "https://example.org/c",
        ),
        # Not redirectors: a share link keeps its own address.
        ("https://example.com/share?url=https://example.org/d", None),
    ],
)
def test_redirector_links_lead_where_they_lead(href: str, target: str | None) -> None:
    markdown = html_to_markdown(f'<p><a href="{href}">Result</a></p>').markdown
    assert f"[Result]({target or href})" in markdown


def test_a_void_redirect_keeps_its_text_and_no_link() -> None:
    href = "https://www.bing.com/ck/a?!&&p=b5&u=a1amF2YXNjcmlwdDp2b2lkKDAp&ntb=1"
    assert html_to_markdown(f'<p><a href="{href}">Feedback</a></p>').markdown.strip() == "Feedback"


def test_control_labels_are_interface_not_text() -> None:
    """markitdown's test_wikipedia.html: the Vector skin's "move to sidebar" buttons."""
    source = (
        "<div><div>Main menu</div><button>move to sidebar</button><button>hide</button></div>"
        "<p>Language: <select><option>English</option><option>Deutsch</option></select></p>"
        "<p>Microsoft was founded in 1975.</p>"
    )
    markdown = html_to_markdown(source).markdown
    assert "move to sidebar" not in markdown and "hide" not in markdown
    assert "Deutsch" not in markdown and "Microsoft was founded in 1975." in markdown
