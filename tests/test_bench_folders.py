"""``python -m bench folders --quick`` keeps working: the folders benchmark's smoke run.

Two thousand documents, a few runs of each row, nothing judged (a shared CI machine is
no place for that): every row is printed and the run exits 0.
"""

from __future__ import annotations

import pytest

from tests.support.bench import run_benchmark

# Slow (runs a benchmark end to end): DOCSHELF_SLOW_TESTS=1 runs it; .ci/run does.
pytestmark = pytest.mark.slow

ROWS = [
    "flat resources/list, first page (reference)",
    "list archive/ (1,000 below, 20 folders)",
    "list the root of 100 folders, first page",
    "list the root of 100 folders, all 1 pages",
    "list a month folder, all 1 pages",
    "read archive/ (20 folder cards)",
    "read the root of many folders (100 folder cards)",
    "read a month folder (a card per document)",
]


def test_quick_folders_benchmark_runs() -> None:
    run = run_benchmark("folders", "--quick", timeout=120)
    assert run.returncode == 0, run.stderr
    assert "docshelf folders benchmark (quick): sqlite, 2,000 documents catalogued" in run.stdout
    for row in ROWS:
        assert row in run.stdout, f"no row {row!r} in:\n{run.stdout}"
    assert "PASS" not in run.stdout and "FAIL" not in run.stdout
