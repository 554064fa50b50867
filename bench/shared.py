"""Where the benchmarks find the shared material: the PDF corpus and the spec pages.

It is not in the repository (``tests/data`` holds the few files the core suite
needs) but in a ``shared`` folder beside the checkout, or where
``$DOCSHELF_SHARED`` says. A benchmark without it runs on what it builds itself
and says what it skipped.
"""

from __future__ import annotations

import os
from pathlib import Path


def _shared() -> Path:
    """$DOCSHELF_SHARED, else the first ``shared`` folder beside the checkout or above it
    (a worktree at ``/work/wt/NAME`` finds ``/work/shared``)."""
    if "DOCSHELF_SHARED" in os.environ:
        return Path(os.environ["DOCSHELF_SHARED"])
    parents = Path(__file__).resolve().parents
    candidates = [parent / "shared" for parent in parents[2:4]]
    return next((c for c in candidates if c.is_dir()), candidates[0])


SHARED = _shared()
CORPUS_PDF = SHARED / "corpus" / "pdf"
SPEC = SHARED / "spec"
