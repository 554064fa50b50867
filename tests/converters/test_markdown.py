"""Markdown and MDX sources: the MCP specification pages."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docshelf.converters import ConversionError, convert
from docshelf.converters.base import Source
from docshelf.converters.formats import is_textual
from docshelf.converters.markdown.converter import MarkdownConverter
from docshelf.converters.markdown.frontmatter import parse_front_matter
from docshelf.converters.markdown.mdx import mdx_to_markdown
from docshelf.converters.markdown.model import parse_markdown
from tests.support.paths import NEEDS_SHARED

from .conftest import SPEC, SPEC_PAGES, Convert

RESOURCES_PAGE = SPEC / "mcp-2026-07-28" / "server_resources.mdx"


@pytest.mark.parametrize("page", SPEC_PAGES)
def test_spec_page_title_comes_from_front_matter(page: str, converted: Convert) -> None:
    path = SPEC / page
    front_title = path.read_text(encoding="utf-8").split("\n")[1].removeprefix("title:").strip()
    result = converted(path)
    assert result.facts.title == front_title
    assert result.facts.metadata["title"] == front_title
    assert [r.mime_type for r in result.representations] == [
        "text/plain",
        "application/json",
        "application/pdf",
    ]


@NEEDS_SHARED
def test_resources_page_json_has_sections_tables_code_and_links(converted: Convert) -> None:
    document = json.loads(converted(RESOURCES_PAGE).get("application/json").data)  # type: ignore[union-attr]
    headings = [section["heading"] for section in document["sections"]]
    assert "User Interaction Model" in headings and "Capabilities" in headings
    # Each outline entry names its part as a reference relative to the document's URI.
    assert document["outline"][0] == {
        "title": "User Interaction Model",
        "level": 2,
        "page": None,
        "part": "?section=user-interaction-model",
    }
    languages = {block["language"] for block in document["code_blocks"]}
    assert "json" in languages
    assert any(
        link["href"].startswith("https://datatracker.ietf.org") for link in document["links"]
    )
    assert document["title"] == "Resources"


@NEEDS_SHARED
def test_gfm_tables_become_json_tables(converted: Convert) -> None:
    tables = [
        table
        for page in SPEC_PAGES
        for table in json.loads(converted(SPEC / page).get("application/json").data).get(
            "tables", []
        )  # type: ignore[union-attr]
    ]
    assert tables, "the spec pages contain tables"
    for table in tables:
        assert table["header"] and all(len(row) == len(table["header"]) for row in table["rows"])


@NEEDS_SHARED
def test_plain_text_has_no_markdown_syntax(converted: Convert) -> None:
    text = converted(RESOURCES_PAGE).get("text/plain").data.decode()  # type: ignore[union-attr]
    assert "```" not in text
    assert "](" not in text
    assert "**" not in text
    assert "<Note>" not in text
    assert "title: Resources" not in text
    # The text of links, code and MDX notes survives.
    assert "For brevity, the request examples on this page omit" in text
    assert '"listChanged": true' in text


def test_mdx_components_are_unwrapped_not_swallowed() -> None:
    source = (
        "<Note>\n  Inside a **note**.\n</Note>\n\n"
        '<Card\n  title="ext-auth"\n  href="https://example.com/ext"\n>\nCard body.\n</Card>\n\n'
        "```jsx\n<Note>kept in code</Note>\n```\n"
    )
    markdown = mdx_to_markdown(source)
    assert "<Note>" not in markdown.split("```")[0]
    assert "<Note>kept in code</Note>" in markdown
    assert "**[ext-auth](https://example.com/ext)**" in markdown
    text = parse_markdown(markdown).text
    assert "Inside a note." in text and "Card body." in text


def test_md_file_labelled_text_plain_gets_a_markdown_variant() -> None:
    result = convert(b"# Hi\n\nSome *text*.\n", "text/plain", "README.md")
    assert [r.mime_type for r in result.representations] == [
        "text/markdown",
        "application/json",
        "application/pdf",
    ]
    assert result.facts.title == "Hi"
    assert result.facts.description == "Some text."


def test_front_matter_subset() -> None:
    parsed = parse_front_matter(
        'title: "Quoted: yes"\n'
        "description: >\n  Folded\n  lines\n"
        "tags: [a, 'b c']\n"
        "authors:\n  - Ann\n  - Bob\n"
        "nested:\n  lang: de\n"
        "empty:\n"
        "# a comment\n"
    )
    assert parsed == {
        "title": "Quoted: yes",
        "description": "Folded lines",
        "tags": "a, b c",
        "authors": "Ann, Bob",
        "nested.lang": "de",
    }


def test_front_matter_language_and_description_become_facts() -> None:
    source = b"---\ntitle: T\ndescription: D\nlang: fr\nauthor: Ann\n---\n\n# Heading\n\nBody.\n"
    facts = convert(source, "text/markdown", "x.md").facts
    assert (facts.title, facts.description, facts.language) == ("T", "D", "fr")
    assert facts.metadata["author"] == "Ann"


def test_lists_in_plain_text_keep_markers() -> None:
    text = parse_markdown("- one\n- two\n  - nested\n\n1. first\n2. second\n").text
    assert text == "• one\n• two\n  • nested\n1. first\n2. second\n"


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_arbitrary_bytes_raise_nothing_but_conversion_error(data: bytes) -> None:
    try:
        result = MarkdownConverter().convert(Source.of("fuzz.md", "text/markdown", data))
    except ConversionError:
        return
    for representation in result.representations:
        if is_textual(representation.mime_type):
            representation.data.decode("utf-8")


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=400))
def test_markdown_model_reads_any_text(source: str) -> None:
    document = parse_markdown(mdx_to_markdown(source))
    assert isinstance(document.text, str)
    for heading in document.headings:
        assert 1 <= heading.level <= 6
