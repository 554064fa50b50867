"""The official MCP conformance suite against ``docshelf serve`` on a real shelf.

Runs the scenarios that fit a document server (shared/peers/README.md). A check
that cannot pass for a document server is listed, with its reason, in
``tests/conformance/expected-failures.txt``; every other check must pass, and a
listed check that starts passing fails this test so the list stays true.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.paths import NEEDS_SHARED, SHARED
from tests.support.servers import RunningServer, serve
from tests.support.shelves import make_shelf

PEERS = Path(os.environ.get("PEERS_DIR", Path.home() / ".cache" / "mcp-peers"))
SUITE = PEERS / "conformance" / "node_modules" / "@modelcontextprotocol" / "conformance"
EXPECTED = Path(__file__).parent / "conformance" / "expected-failures.txt"
CHECK_LINE = re.compile(
    r"\[(?P<check>[^\]]+?)\s*\]\s+(?P<status>SUCCESS|FAILURE|WARNING|INFO|SKIPPED)\b"
)
ANSI = re.compile(r"\x1b\[[0-9;]*m")

SCENARIOS = [
    ("2025-11-25", "server-initialize"),
    ("2025-11-25", "ping"),
    ("2025-11-25", "resources-list"),
    ("2025-11-25", "prompts-list"),
    ("2025-11-25", "server-session-lifecycle"),
    ("2025-11-25", "dns-rebinding-protection"),
    ("2026-07-28", "server-stateless"),
    ("2026-07-28", "resources-list"),
    ("2026-07-28", "prompts-list"),
    ("2026-07-28", "sep-2164-resource-not-found"),
    ("2026-07-28", "caching"),
    ("2026-07-28", "http-header-validation"),
    ("2026-07-28", "dns-rebinding-protection"),
]


def expected_failures() -> dict[tuple[str, str], set[str]]:
    expected: dict[tuple[str, str], set[str]] = {}
    for line in EXPECTED.read_text().splitlines():
        entry = line.split("#", 1)[0].split()
        if entry:
            version, scenario, check = entry
            expected.setdefault((version, scenario), set()).add(check)
    return expected


@pytest.fixture(scope="module")
def conformance_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    if not SUITE.is_dir():
        pytest.skip(f"conformance suite not installed at {SUITE}: run {SHARED}/peers/setup.sh")
    base = tmp_path_factory.mktemp("conformance")
    with serve(make_shelf(base / "shelf"), base / "data") as server:
        yield server


@NEEDS_SHARED
@pytest.mark.parametrize(("version", "scenario"), SCENARIOS, ids=[f"{v}-{s}" for v, s in SCENARIOS])
def test_conformance_scenario(
    conformance_server: RunningServer, version: str, scenario: str
) -> None:
    done = subprocess.run(
        [
            "bash",
            str(SHARED / "peers" / "conformance.sh"),
            conformance_server.url,
            "--scenario",
            scenario,
            "--spec-version",
            version,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    output = ANSI.sub("", done.stdout + done.stderr)
    statuses = [(m["check"], m["status"]) for m in CHECK_LINE.finditer(output)]
    assert statuses, f"no checks ran:\n{output}"
    failed = {check for check, status in statuses if status == "FAILURE"}
    allowed = expected_failures().get((version, scenario), set())
    assert failed == allowed, (
        f"unexpected failures {sorted(failed - allowed)}, "
        f"listed but passing {sorted(allowed - failed)}:\n{output}"
    )
