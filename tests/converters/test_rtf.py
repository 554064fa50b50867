"""RTF documents: striprtf's text with headings, lists, tables and links put back."""

from __future__ import annotations

import json

import pytest

from docshelf.converters import ConversionError, convert, find_converter
from docshelf.converters import rtf as rtf_module
from tests.support.results import markdown_of as markdown

WORD_LIKE = rb"""{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0 Calibri;}{\f1\fcharset2 Symbol;}}
{\stylesheet{\s0 Normal;}{\s1\outlinelevel0 heading 1;}{\s2\outlinelevel1 heading 2;}}
{\info{\title Caf\'e9 notes}{\author Ann Smith}{\subject Plans for spring}{\creatim\yr2024\mo3\dy5}}
\pard\s1\outlinelevel0 Overview\par
\pard\plain See {\field{\*\fldinst{HYPERLINK "https://example.com/a_b"}}
{\fldrslt{the plan}}} *now*.\par
{\listtext\pard\plain\f1 \'b7\tab}\pard\ls1 first item\par
{\listtext\pard\plain\f1 \'b7\tab}\pard\ls1 second item\par
\trowd\cellx1000\cellx2000\pard\intbl Name\cell Total\cell\row
\trowd\cellx1000\cellx2000\pard\intbl north\cell 12\cell\row
{\pict\pngblip 89504e470d0a1a0a}\pard\s2\outlinelevel1 Details \u8364?5\par
# not a heading\par}"""


@pytest.mark.parametrize(
    ("mime_type", "filename"),
    [("text/rtf", "a.rtf"), ("application/rtf", "a"), ("application/octet-stream", "A.RTF")],
)
def test_registry_picks_rtf(mime_type: str, filename: str) -> None:
    converter = find_converter(mime_type, filename)
    assert converter is not None and converter.name == "rtf"


def test_structure_and_info() -> None:
    result = convert(WORD_LIKE, "text/rtf", "notes.rtf")
    assert markdown(result) == (
        "# Overview\n\n"
        "See [the plan](https://example.com/a_b) \\*now\\*.\n\n"
        "- first item\n- second item\n\n"
        "| Name | Total |\n|---|---|\n| north | 12 |\n\n"
        "## Details €5\n\n"
        "\\# not a heading\n"
    )
    assert result.facts.title == "Café notes"
    assert result.facts.description == "Plans for spring"
    assert result.facts.metadata == {
        "title": "Café notes",
        "author": "Ann Smith",
        "subject": "Plans for spring",
        "created": "2024-03-05",
    }
    assert [s.part for s in result.segments()] == ["section=overview", "section=details-5"]
    document = json.loads(result.get("application/json").data)  # type: ignore[union-attr]
    assert document["links"] == [{"text": "the plan", "href": "https://example.com/a_b"}]
    assert document["tables"] == [{"header": ["Name", "Total"], "rows": [["north", "12"]]}]


def test_code_page_and_first_line_title() -> None:
    rtf = rb"{\rtf1\ansi\ansicpg1251 \pard \'cf\'f0\'e8\'e2\'e5\'f2\par {\b Bold} "
    rtf += rb"\u26085?\u26412?\par}"
    result = convert(rtf, "text/rtf", "ru.rtf")
    assert markdown(result) == "Привет\n\nBold 日本\n"
    assert result.facts.title == "Привет"


def test_binary_pictures_are_cut_before_parsing() -> None:
    rtf = b"{\\rtf1\\ansi {\\pict\\pngblip\\bin6 }{}{{}\\par kept\\par}"
    assert markdown(convert(rtf, "text/rtf", "p.rtf")) == "kept\n"


def test_not_rtf_is_corrupt() -> None:
    with pytest.raises(ConversionError) as caught:
        convert(b"PK\x03\x04 not rtf", "text/rtf", "x.rtf")
    assert (caught.value.reason, caught.value.message) == (
        "corrupt",
        "not an RTF document: no {\\rtf header",
    )


def test_size_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rtf_module, "MAX_RTF_TEXT", 100)
    rtf = b"{\\rtf1\\ansi " + b"word " * 50 + b"{\\pict " + b"00" * 5000 + b"}}"
    with pytest.raises(ConversionError) as caught:
        convert(rtf, "text/rtf", "big.rtf")
    assert (caught.value.reason, caught.value.message) == (
        "too_large",
        "263 characters of RTF without pictures is over the 100 limit",
    )
