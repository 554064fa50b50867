"""``python -m bench serve --quick`` keeps working: the serving benchmark's smoke run.

It starts docshelf, the SDK reference server and the bare Starlette floor on a
small shelf and drives them with the benchmark's own load generator; no figure
is judged (a shared CI machine is no place for that), only that every row is
printed and the run exits 0.
"""

from __future__ import annotations

import pytest

from tests.support.bench import run_benchmark
from tests.support.servers import child_env

# Slow (runs a benchmark end to end): DOCSHELF_SLOW_TESTS=1 runs it; .ci/run does.
pytestmark = pytest.mark.slow

ROWS = [
    "read, 8 clients: docshelf / SDK requests/s",
    "read, 8 clients: docshelf / SDK p99",
    "server CPU per small read, docshelf, 8 clients",
    "resources/metadata p50,",
    "--processes 2 / 1 requests/s",
    "read, 1 client: docshelf / SDK requests/s",
    "all formats, 8 clients: docshelf / SDK (original)",
    "floor 1: in-process base64 + json.dumps, per read",
    "floor 2: bare Starlette, 8 clients",
    "bare Starlette / docshelf requests/s, 8 clients",
    "load generator CPU per request",
]


@pytest.mark.timeout(180)
def test_quick_serving_benchmark_runs() -> None:
    done = run_benchmark("serve", "--quick", env=child_env(), timeout=170)
    assert done.returncode == 0, done.stdout + done.stderr
    for row in ROWS:
        assert row in done.stdout, f"no row {row!r} in:\n{done.stdout}"
    assert "PASS" not in done.stdout and "FAIL" not in done.stdout  # a quick run judges nothing
    assert "docshelf serving benchmark (quick)" in done.stdout
