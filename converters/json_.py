"""JSON sources.

Derived: text/plain (pretty-printed), text/markdown (a table for a list of
flat objects, else a fenced ``json`` block under a title), application/pdf
(rendered); the JSON representation is not derived because the source is one
(its docshelf.document/v1 view, with the value under ``data``, is still built
when the source arrived under another MIME type). Invalid JSON, including
NaN/Infinity, which JSON does not have, is ``"corrupt"``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import PurePosixPath
from typing import Any

from docshelf.converters.assemble import markdown_result
from docshelf.converters.base import (
    APPLICATION_JSON,
    ConversionResult,
    Facts,
    Source,
)
from docshelf.converters.declared import declared_title
from docshelf.converters.document import DocumentData
from docshelf.converters.failures import conversion_failure
from docshelf.converters.textutil import (
    check_size,
    code_fence,
    decode,
    markdown_heading,
    markdown_table,
    summarize,
)

JSON_EXTENSIONS = frozenset({".json"})
#: Top-level string members reported as metadata when present.
METADATA_MEMBERS = ("$schema", "$id", "name", "version", "author", "license")
#: Lists of flat objects with more columns than this read better as JSON.
MAX_TABLE_COLUMNS = 12
_SCALARS = (str, int, float, bool, type(None))
_SCALAR_NAMES = {str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


class JsonConverter:
    """Converts JSON documents."""

    name = "json"
    version = "5"

    def accepts(self, source: Source) -> bool:
        mime = source.base_mime_type
        return (
            mime == APPLICATION_JSON
            or mime.endswith("+json")
            or source.extension in JSON_EXTENSIONS
        )

    def convert(self, source: Source) -> ConversionResult:
        check_size(source.data)
        decoded = decode(source.data)
        value = parse_json(decoded.text)
        facts = json_facts(value)
        facts = replace(facts, metadata={**facts.metadata, **decoded.metadata})
        pretty = pretty_json(value)
        heading = facts.title or PurePosixPath(source.filename).name or "JSON document"
        markdown = f"{markdown_heading(1, heading)}\n\n{json_markdown_body(value, pretty)}"
        # A top-level "author" member is data, not the PDF's author: none is given.
        return markdown_result(
            source,
            facts,
            markdown,
            plain=pretty,
            json_view=DocumentData(facts=facts, sections=(), data=value),
        )


def parse_json(text: str) -> Any:
    """Strict JSON: NaN/Infinity and other non-JSON refused as ``"corrupt"``."""

    def refuse_constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    try:
        return json.loads(text, parse_constant=refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise conversion_failure(exc, f"invalid JSON: {exc}") from exc


def pretty_json(value: Any) -> str:
    """Two-space indented JSON, non-ASCII kept as is."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    except RecursionError as exc:
        raise conversion_failure(exc, "JSON nested too deeply to print") from exc


def json_facts(value: Any) -> Facts:
    """Title and description from top-level ``title``/``description`` strings.

    Without a description, one sentence says what the value is (an object and
    its keys, an array and its length): that is what a listing needs to show.
    """
    members = value if isinstance(value, dict) else {}
    title = members.get("title") if isinstance(members.get("title"), str) else None
    described = members.get("description")
    description = summarize(described) if isinstance(described, str) else _shape(value)
    metadata = {key: members[key] for key in METADATA_MEMBERS if isinstance(members.get(key), str)}
    return Facts(title=declared_title(title), description=description, metadata=metadata)


def json_markdown_body(value: Any, pretty: str) -> str:
    """A table for a list of flat objects, otherwise the pretty JSON fenced."""
    columns = _flat_columns(value)
    if columns is not None:
        rows = [
            [_cell(item.get(column)) if column in item else "" for column in columns]
            for item in value
        ]
        return markdown_table(columns, rows)
    return code_fence(pretty, "json")


def _flat_columns(value: Any) -> list[str] | None:
    if not isinstance(value, list) or not value:
        return None
    columns: dict[str, None] = {}
    for item in value:
        if not isinstance(item, dict) or not all(isinstance(v, _SCALARS) for v in item.values()):
            return None
        columns.update(dict.fromkeys(item))
    return list(columns) if 0 < len(columns) <= MAX_TABLE_COLUMNS else None


def _cell(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        keys = ", ".join(list(value)[:10])
        more = ", …" if len(value) > 10 else ""
        return summarize(f"JSON object with {len(value)} members: {keys}{more}") or "JSON object"
    if isinstance(value, list):
        return f"JSON array of {len(value)} items"
    return f"JSON {_SCALAR_NAMES.get(type(value), 'value')}"
