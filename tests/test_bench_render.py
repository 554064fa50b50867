"""``python -m bench render --quick`` keeps working: the rendering benchmark's smoke run.

One fresh process for each renderer (before issue 24 and now) and one without
the warm-up, nothing judged: every phase is printed, the two renderers give the
same PDF, and the run exits 0.
"""

from __future__ import annotations

import re

import pytest

from tests.support.bench import run_benchmark

# Slow (runs a benchmark end to end): DOCSHELF_SLOW_TESTS=1 runs it; .ci/run does.
pytestmark = pytest.mark.slow

PHASES = [
    "imports the forkserver preloads",
    "worker warm-up",
    "first lazy render after the warm-up",
    "a second render in the same process",
    "first render without a warm-up",
]


def test_quick_render_benchmark_runs() -> None:
    run = run_benchmark("render", "--quick", timeout=300)
    assert run.returncode == 0, run.stderr
    assert re.search(r"\(8,276 words, \d+ pages\)", run.stdout), run.stdout
    for phase in PHASES:
        assert phase in run.stdout
    assert "same PDF bytes, before and now: yes; same page text (PDFium): yes" in run.stdout
    assert "PASS" not in run.stdout and "FAIL" not in run.stdout
