"""The format table and the one rule for which MIME types are text."""

from __future__ import annotations

import pytest

from docshelf.app.negotiation import DEFAULT_ORDER, FORMAT_MIME_TYPES, Role
from docshelf.converters.base import Source
from docshelf.converters.formats import DERIVED_FORMATS, DERIVED_MIME_TYPES, is_textual
from docshelf.converters.registry import CONVERTERS


@pytest.mark.parametrize(
    "mime_type",
    [
        "text/plain",
        "Text/Markdown; charset=utf-8",
        "application/json",
        "application/ld+json",
        "image/svg+xml",
        "application/x-yaml",
        "application/toml",
    ],
)
def test_textual_types(mime_type: str) -> None:
    assert is_textual(mime_type)


@pytest.mark.parametrize(
    "mime_type", ["application/pdf", "image/png", "application/octet-stream", "application/zip"]
)
def test_binary_types(mime_type: str) -> None:
    assert not is_textual(mime_type)


def test_every_derived_format_has_a_role_and_a_place_in_the_default_order() -> None:
    assert DERIVED_MIME_TYPES == (
        "text/plain",
        "text/markdown",
        "application/json",
        "application/pdf",
    )
    assert DEFAULT_ORDER == (Role.ORIGINAL, Role.MARKDOWN, Role.TEXT, Role.JSON, Role.PDF)
    assert set(FORMAT_MIME_TYPES) == {f.role for f in DERIVED_FORMATS}


def test_the_text_converter_leaves_json_and_xml_vocabularies_to_others() -> None:
    text = next(converter for converter in CONVERTERS if converter.name == "text")
    assert text.accepts(Source("application/x-yaml", ""))
    assert not text.accepts(Source("application/json", ""))
    assert not text.accepts(Source("image/svg+xml", ".svg"))
