"""Where test material lives.

The core suite needs only what ships in ``tests/data`` (a few real PDFs, the MCP
schemas). The shared material — the larger PDF corpus, the spec pages — sits in
``../shared`` beside the checkout (or ``$DOCSHELF_SHARED``) and feeds the extended
tests, which skip with :data:`NEEDS_SHARED` when it is absent (``.ci/run`` has it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
FIXTURE_PDF = DATA / "pdf"
MCP_SCHEMAS = DATA / "mcp-schema"
SHARED = Path(os.environ.get("DOCSHELF_SHARED", REPO.parent / "shared"))
SPEC = SHARED / "spec"
CORPUS_PDF = SHARED / "corpus" / "pdf"
HAVE_SHARED = CORPUS_PDF.is_dir() and SPEC.is_dir()
NEEDS_SHARED = pytest.mark.skipif(
    not HAVE_SHARED,
    reason=f"extended test: needs the shared corpus and spec pages at {SHARED}; put ../shared "
    "beside the checkout or set DOCSHELF_SHARED (.ci/run does)",
)
