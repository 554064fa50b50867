"""``python -m bench soak --quick`` keeps working: the churn soak's smoke run.

A few seconds of ``docshelf serve --processes 2`` under the soak's writer and
clients, every process sampled; nothing judged (memory slopes need the full
45 minutes): every table is printed, every process of the tree is found, the
clients got answers without unexpected errors, and the run exits 0.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.paths import REPO
from tests.support.servers import child_env


@pytest.mark.slow  # a benchmark-harness run: DOCSHELF_SLOW_TESTS=1 (.ci/run)
@pytest.mark.timeout(180)
def test_quick_soak_samples_every_process_and_judges_nothing() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "soak", "--quick"],
        cwd=REPO,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=170,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "docshelf churn soak (quick): serve --processes 2" in out
    assert "RSS (MB) of each process over the run" in out
    for process in ("supervisor", "serve-0", "serve-1", "forkserver-0", "worker-0a"):
        assert f"| {process} " in out, f"no row for {process}:\n{out}"
    assert "unexpected errors: 0" in out, out
    assert "session ended" in out and "listen: acknowledged" in out, out
    assert "PASS" not in out and "FAIL" not in out  # a quick run judges nothing
    assert "none judged (quick run)" in out
