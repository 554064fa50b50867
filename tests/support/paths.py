"""Where the shared material lives: ``../shared`` beside the checkout (or $DOCSHELF_SHARED)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("DOCSHELF_SHARED", REPO.parent / "shared"))
SPEC = SHARED / "spec"
CORPUS_PDF = SHARED / "corpus" / "pdf"
