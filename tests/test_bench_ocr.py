"""``python -m bench ocr --quick`` keeps working: the OCR benchmark's smoke run.

Two pages it builds, scanned at 200 dpi, read through the product converter in a
worker process; nothing judged: the table is printed, recall is high on clean
pages, and the other engine is either measured or said to be missing.
"""

from __future__ import annotations

import re

import pytest

from tests.support.bench import run_benchmark
from tests.support.scans import NEEDS_TESSERACT

# Slow (runs a benchmark end to end, RapidOCR too where installed): DOCSHELF_SLOW_TESTS=1
# runs it; .ci/run does.
pytestmark = pytest.mark.slow


@NEEDS_TESSERACT
def test_quick_ocr_benchmark_runs() -> None:
    run = run_benchmark("ocr", "--quick", timeout=600)
    assert run.returncode == 0, run.stderr
    row = re.search(r"^docshelf \(tesseract [\d.]+\)\s+200\s+2\s+(\d+\.\d)%", run.stdout, re.M)
    assert row is not None, run.stdout
    assert float(row.group(1)) >= 95.0
    assert "RapidOCR" in run.stdout  # measured beside it, or said to be not installed
    assert "PASS" not in run.stdout and "FAIL" not in run.stdout
