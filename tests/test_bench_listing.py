"""``python -m bench listing --quick`` keeps working: the listing benchmark's smoke run.

Two thousand documents, every order and filter, the pending counts and the catalog's
cost, nothing judged (a shared CI machine is no place for that): every row is printed
and the run exits 0.
"""

from __future__ import annotations

import pytest

from tests.support.bench import run_benchmark

# Slow (runs a benchmark end to end): DOCSHELF_SLOW_TESTS=1 runs it; .ci/run does.
pytestmark = pytest.mark.slow


def test_quick_listing_benchmark_runs() -> None:
    run = run_benchmark("listing", "--quick", timeout=120)
    assert run.returncode == 0, run.stderr
    for order in ("path", "modified", "size"):
        for page in ("first", "deep"):
            assert f"{order:<9} {'everything':<21} {page:<6}" in run.stdout
    assert "search's pending count, 100 % of 2,000 pending, folder" in run.stdout
    assert "µs/document with the listing's indexes" in run.stdout
    assert "PASS" not in run.stdout and "FAIL" not in run.stdout
