"""``python -m bench families`` keeps working (issue 25: catalog speed on every family)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bench.shared import SHARED

pytestmark = pytest.mark.slow


@pytest.mark.skipif(
    not (SHARED / "peer-suites" / "markitdown" / "test_files").is_dir(),
    reason="needs markitdown's test files in ../shared/peer-suites (run .ci/run)",
)
def test_families_bench_times_a_small_shelf() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "families", "--files", "300", "--rounds", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "300 files, catalog current in" in done.stdout
    assert "files/s" in done.stdout and ("PASS" in done.stdout or "FAIL" in done.stdout)
