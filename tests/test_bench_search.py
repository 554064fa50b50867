"""``python -m bench search --quick`` keeps working: the search benchmark's smoke run.

A thousand documents, a few queries of each kind, nothing judged (a shared CI
machine is no place for that): every row is printed and the run exits 0.
"""

from __future__ import annotations

import pytest

from tests.support.bench import run_benchmark

# Slow (runs a benchmark end to end): DOCSHELF_SLOW_TESTS=1 runs it; .ci/run does.
pytestmark = pytest.mark.slow

KINDS = [
    "one common word",
    "one rare word",
    "two words",
    "three words",
    "phrase",
    "prefix",
    "word in a folder",
    "all queries",
]


def test_quick_search_benchmark_runs() -> None:
    run = run_benchmark("search", "--quick", timeout=120)
    assert run.returncode == 0, run.stderr
    for kind in KINDS:
        assert f"1,000 {kind}" in run.stdout
    assert "content rows of one document replaced: p50" in run.stdout
    assert "µs/document with name rows" in run.stdout
    assert "PASS" not in run.stdout and "FAIL" not in run.stdout
