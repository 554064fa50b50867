"""Running a benchmark of ``bench/`` as a user does: ``python -m bench NAME`` from the checkout."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping

from tests.support.paths import REPO


def run_benchmark(
    name: str, *args: str, timeout: float, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m bench NAME ARGS``, its output captured as text (never raises on exit)."""
    return subprocess.run(
        [sys.executable, "-m", "bench", name, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
