"""A conversion's representations read back in tests: one as text, the JSON as data."""

from __future__ import annotations

import json
import re
from typing import Any

from docshelf.converters import ConversionResult


def text_of(result: ConversionResult, mime_type: str) -> str:
    """The representation of ``mime_type`` as text (the result must derive it)."""
    representation = result.get(mime_type)
    assert representation is not None, f"no {mime_type} representation"
    return representation.data.decode("utf-8")


def markdown_of(result: ConversionResult) -> str:
    return text_of(result, "text/markdown")


def json_of(result: ConversionResult) -> dict[str, Any]:
    document = json.loads(text_of(result, "application/json"))
    assert isinstance(document, dict)
    return document


def data_of(result: ConversionResult) -> Any:
    """The JSON's ``data`` member: the family's own structure."""
    return json_of(result)["data"]


def markdown_rows(markdown: str) -> list[list[str]]:
    """Every Markdown table row, as its cells (separator rows left out)."""
    return [
        [cell.strip() for cell in line.strip()[1:-1].split("|")]
        for line in markdown.splitlines()
        if line.startswith("|") and not re.fullmatch(r"\|(?:-+\|)+", line.strip())
    ]
