"""Shared fixtures: the real corpus, the document schema, converted results.

Conversions of corpus files are cached for the session: the 117-page GeoTopo
PDF takes seconds, and several tests look at the same results.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest

from docshelf.converters import ConversionResult, convert, document_schema
from tests.support.paths import CORPUS_PDF, SPEC

ENCRYPTED_PDF = "libreoffice-writer-password.pdf"

PDF_FILES = sorted(path.name for path in CORPUS_PDF.glob("*.pdf"))
READABLE_PDFS = [name for name in PDF_FILES if name != ENCRYPTED_PDF]
SPEC_PAGES = sorted(str(path.relative_to(SPEC)) for path in SPEC.glob("*/*.mdx"))
SPEC_SCHEMAS = sorted(str(path.relative_to(SPEC)) for path in SPEC.glob("*/schema.json"))

MIME_BY_SUFFIX = {
    ".pdf": "application/pdf",
    ".mdx": "text/markdown",
    ".md": "text/markdown",
    ".json": "application/json",
    ".html": "text/html",
    ".csv": "text/csv",
    ".txt": "text/plain",
}

Convert = Callable[[Path], ConversionResult]


@pytest.fixture(scope="session")
def expected_pages() -> dict[str, int]:
    """Page counts from the corpus's own files.json, by file basename."""
    listing = json.loads((CORPUS_PDF / "files.json").read_text(encoding="utf-8"))
    return {Path(entry["path"]).name: entry["pages"] for entry in listing["data"]}


@pytest.fixture(scope="session")
def schema_validator() -> jsonschema.protocols.Validator:
    schema = document_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture(scope="session")
def converted() -> Convert:
    """Convert a real file once per session (MIME type from its suffix)."""
    cache: dict[Path, ConversionResult] = {}

    def run(path: Path) -> ConversionResult:
        if path not in cache:
            cache[path] = convert(path.read_bytes(), MIME_BY_SUFFIX[path.suffix], path.name)
        return cache[path]

    return run
