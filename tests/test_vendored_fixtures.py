"""The copies in tests/data are the shared originals, byte for byte (when those are here)."""

from __future__ import annotations

import pytest

from tests.support.paths import CORPUS_PDF, FIXTURE_PDF, MCP_SCHEMAS, NEEDS_SHARED, SPEC


@NEEDS_SHARED
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_vendored_mcp_schemas_match_the_spec(version: str) -> None:
    vendored = (MCP_SCHEMAS / version / "schema.json").read_bytes()
    assert vendored == (SPEC / f"mcp-{version}" / "schema.json").read_bytes()


@NEEDS_SHARED
@pytest.mark.parametrize(
    "name", ["minimal-document.pdf", "pdflatex-4-pages.pdf", "libreoffice-writer-password.pdf"]
)
def test_vendored_pdfs_match_the_corpus(name: str) -> None:
    assert (FIXTURE_PDF / name).read_bytes() == (CORPUS_PDF / name).read_bytes()
