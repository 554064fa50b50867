"""markitdown's own test vectors (``GENERAL_TEST_VECTORS`` of its test suite, kept in
``../shared/peer-suites``): its test files, and what the Markdown made of each must and must
not hold. Our converters are held to them too."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.support.paths import SHARED

PEER_SUITE = SHARED / "peer-suites" / "markitdown"
TEST_FILES = PEER_SUITE / "test_files"
NEEDS_PEERS = pytest.mark.skipif(
    not (PEER_SUITE / "vectors.json").is_file(), reason="needs ../shared/peer-suites (run .ci/run)"
)


def markitdown_vectors() -> list[dict[str, Any]]:
    """Every vector: a ``filename`` in :data:`TEST_FILES`, its ``mimetype``,
    ``must_include`` and ``must_not_include``."""
    vectors = json.loads((PEER_SUITE / "vectors.json").read_text(encoding="utf-8"))
    return vectors["GENERAL_TEST_VECTORS"]


def markitdown_vector(filename: str) -> dict[str, Any]:
    """The vector of ``filename``."""
    return next(v for v in markitdown_vectors() if v["filename"] == filename)


def normalized(markdown: str) -> str:
    """As the bench compares: list markers as ``*``, whitespace collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"(?m)^(\s*)- ", r"\1* ", markdown))
