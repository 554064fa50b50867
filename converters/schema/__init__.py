"""The JSON Schema of the ``application/json`` representation (docshelf.document/v1).

The schema file ships as package data so that servers can publish it and tests
can validate every JSON representation against it.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

DOCUMENT_SCHEMA_NAME = "docshelf.document/v1"
DOCUMENT_SCHEMA_ID = "https://docshelf.dev/schema/document/v1.json"
DOCUMENT_SCHEMA_FILE = "document-v1.json"


@cache
def _schema_text() -> str:
    return files(__name__).joinpath(DOCUMENT_SCHEMA_FILE).read_text(encoding="utf-8")


def document_schema() -> dict[str, Any]:
    """A fresh copy of the docshelf.document/v1 JSON Schema (draft 2020-12)."""
    schema: dict[str, Any] = json.loads(_schema_text())
    return schema
