"""JSON sources: the MCP schema files, and made-up documents."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docshelf.converters import ConversionError, convert
from docshelf.converters.base import Source
from docshelf.converters.json_ import JsonConverter

from .conftest import SPEC, SPEC_SCHEMAS, Convert


@pytest.mark.parametrize("name", SPEC_SCHEMAS)
def test_schema_file_derives_text_markdown_pdf(name: str, converted: Convert) -> None:
    path = SPEC / name
    result = converted(path)
    assert [r.mime_type for r in result.representations] == [
        "text/plain",
        "text/markdown",
        "application/pdf",
    ]
    pretty = result.get("text/plain").data.decode()  # type: ignore[union-attr]
    assert json.loads(pretty) == json.loads(path.read_bytes())
    markdown = result.get("text/markdown").data.decode()  # type: ignore[union-attr]
    assert markdown.startswith("# schema.json\n\n```json\n")
    assert result.facts.metadata["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert result.facts.description is not None and "$defs" in result.facts.description


def test_json_labelled_otherwise_gets_a_json_document_with_data() -> None:
    value = {"title": "Config", "description": "Settings", "n": [1, 2.5, None, True]}
    result = convert(json.dumps(value).encode(), "text/plain", "config.json")
    document = json.loads(result.get("application/json").data)  # type: ignore[union-attr]
    assert document["data"] == value
    assert document["title"] == "Config" and document["description"] == "Settings"
    assert document["sections"] == []


def test_list_of_flat_objects_becomes_a_table() -> None:
    rows = [{"name": "a|b", "n": 1}, {"name": "c", "ok": False}]
    markdown = convert(json.dumps(rows).encode(), "application/json", "rows.json").get(
        "text/markdown"
    )
    assert markdown is not None
    assert markdown.data.decode() == (
        "# rows.json\n\n| name | n | ok |\n|---|---|---|\n| a\\|b | 1 |  |\n| c |  | false |\n"
    )


def test_fence_outgrows_backticks_in_strings() -> None:
    markdown = convert(json.dumps({"code": "```"}).encode(), "application/json", "x.json").get(
        "text/markdown"
    )
    assert markdown is not None and "````json\n" in markdown.data.decode()


@pytest.mark.parametrize(
    "data",
    [b"{", b'{"a": NaN}', b"[Infinity]", b"not json", b"1" * 5000, b"[" * 100_000 + b"]" * 100_000],
    ids=["truncated", "nan", "infinity", "text", "huge-int", "deep"],
)
def test_invalid_json_is_corrupt(data: bytes) -> None:
    with pytest.raises(ConversionError) as caught:
        JsonConverter().convert(Source.of("bad.json", "application/json", data))
    assert caught.value.reason == "corrupt"


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_arbitrary_bytes_raise_nothing_but_conversion_error(data: bytes) -> None:
    with contextlib.suppress(ConversionError):
        JsonConverter().convert(Source.of("fuzz.json", "application/json", data))
