"""Plain-text sources, decoding, and Markdown escaping."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docshelf.converters import ConversionError, convert
from docshelf.converters.base import Source
from docshelf.converters.formats import is_textual
from docshelf.converters.markdown.model import markdown_parser, parse_markdown
from docshelf.converters.text import TextConverter
from docshelf.converters.textutil import (
    decode_text,
    escape_markdown_inline,
    summarize,
    text_to_markdown,
)

# Characters as they come out of decode_text (no controls but tab and
# newline), weighted towards what means something in Markdown.
MARKDOWN_SPECIALS = st.sampled_from(list("#*_-+=>`[]()<>!|~&;:\\.1) 0\t\nx"))
CHARACTERS = st.characters(codec="utf-8", exclude_categories=["Cc", "Cs"]) | MARKDOWN_SPECIALS
LINE = st.text(alphabet=CHARACTERS.filter(lambda c: c not in "\n"), max_size=80)
# Lines that open with what would start a Markdown block.
BLOCK_PREFIXES = st.sampled_from(
    [
        "",
        "",
        "# ",
        "###### ",
        "- ",
        "+ ",
        "* ",
        "1. ",
        "2) ",
        "> ",
        "    ",
        "\t",
        "```",
        "~~~",
        "---",
        "===",
        "***",
        "___",
        "| a | b |",
        "|---|",
        "<div>",
        "<!--",
        "[x]: /url",
        "-",
        "#",
    ]
)
CLEAN_TEXT = st.lists(st.tuples(BLOCK_PREFIXES, LINE).map("".join), max_size=8).map("\n".join)
PARAGRAPH_TOKENS = {"paragraph_open", "inline", "paragraph_close"}
INLINE_TOKENS = {"text", "text_special", "softbreak", "hardbreak"}


def paragraphs(text: str) -> list[list[str]]:
    """The paragraphs of ``text`` as lists of stripped, non-blank lines."""
    out: list[list[str]] = [[]]
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped:
            out[-1].append(stripped)
        elif out[-1]:
            out.append([])
    return [p for p in out if p]


@settings(max_examples=200, deadline=None)
@given(CLEAN_TEXT)
def test_text_to_markdown_renders_back_to_the_same_text(text: str) -> None:
    markdown = text_to_markdown(text)
    tokens = markdown_parser().parse(markdown)
    assert {token.type for token in tokens} <= PARAGRAPH_TOKENS
    for token in tokens:
        assert {child.type for child in token.children or ()} <= INLINE_TOKENS
    assert paragraphs(parse_markdown(markdown).text) == paragraphs(text)


@settings(max_examples=200, deadline=None)
@given(LINE)
def test_inline_escaping_shows_text_literally(text: str) -> None:
    line = " ".join(text.split())
    tokens = markdown_parser().parse(f"x {escape_markdown_inline(line)} x")
    assert {child.type for child in tokens[1].children or ()} <= INLINE_TOKENS
    assert parse_markdown(f"x {escape_markdown_inline(line)} x").text.strip() == f"x {line} x"


def test_text_source_derives_markdown_json_pdf() -> None:
    text = "Title line\nsecond line\n\n# not a heading\n* not a list\n"
    result = convert(text.encode(), "text/plain", "notes.txt")
    assert [r.mime_type for r in result.representations] == [
        "text/markdown",
        "application/json",
        "application/pdf",
    ]
    markdown = result.get("text/markdown").data.decode()  # type: ignore[union-attr]
    assert "\\# not a heading" in markdown and "\\* not a list" in markdown
    document = json.loads(result.get("application/json").data)  # type: ignore[union-attr]
    assert document["sections"] == [
        {
            "heading": None,
            "level": 0,
            "text": "Title line\nsecond line\n\n# not a heading\n* not a list\n",
        }
    ]
    assert result.facts.description == "Title line second line"


def test_other_text_types_get_a_text_plain_variant() -> None:
    result = convert(b"print('hi')\n", "text/x-python", "script.py")
    assert result.get("text/plain").data == b"print('hi')\n"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("Grüße".encode(), "Grüße"),
        (b"\xef\xbb\xbfBOM", "BOM"),
        ("Grüße".encode("utf-16"), "Grüße"),
        ("naïve \u2013 “quoted”".encode("cp1252"), "naïve \u2013 “quoted”"),
        # Not cp1252 either: the byte cp1252 lacks is kept, visibly, never dropped (issue 25).
        (b"caf\xe9 \x81", "café \\x81"),
        (b"a\r\nb\rc", "a\nb\nc"),
    ],
)
def test_decoding_without_a_declared_encoding(data: bytes, expected: str) -> None:
    assert decode_text(data) == expected


def test_nul_bytes_are_binary_not_text() -> None:
    with pytest.raises(ConversionError) as caught:
        convert(b"\x00\x01\x02binary", "text/plain", "blob.txt")
    assert caught.value.reason == "unsupported"


def test_summary_cuts_at_a_word() -> None:
    summary = summarize("word " * 100)
    assert summary is not None and summary.endswith("word…") and len(summary) <= 201


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_arbitrary_bytes_raise_nothing_but_conversion_error(data: bytes) -> None:
    try:
        result = TextConverter().convert(Source.of("fuzz.txt", "text/plain", data))
    except ConversionError:
        return
    for representation in result.representations:
        if is_textual(representation.mime_type):
            representation.data.decode("utf-8")
