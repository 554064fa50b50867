"""Property-based checks of the whole HTTP API against its own OpenAPI document (schemathesis)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.admin import TOKEN
from tests.support.servers import child_env, serve
from tests.support.shelves import make_shelf

# Every check except positive_data_acceptance: two rules cannot be said in JSON Schema — an
# opaque cursor must be one the server handed out, and `paths` needs `shelf` — so schema-valid
# requests can rightly be refused with 422.
CHECKS = ",".join(
    (
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
        "negative_data_rejection",
        "missing_required_header",
        "unsupported_method",
        "ignored_auth",
        "use_after_free",
        "ensure_resource_availability",
    )
)


def schemathesis_command() -> list[str]:
    beside = Path(sys.executable).with_name("schemathesis")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("schemathesis")
    if found is None:
        pytest.skip("schemathesis is not installed (pip install 'docshelf[test]')")
    return [found]


@pytest.mark.timeout(180)
def test_schemathesis_finds_no_server_error_and_no_schema_violation(tmp_path: Path) -> None:
    shelf = make_shelf(tmp_path / "shelf")
    with serve(shelf, tmp_path / "data", env=child_env(DOCSHELF_ADMIN_TOKEN=TOKEN)) as server:
        done = subprocess.run(
            [
                *schemathesis_command(),
                "run",
                f"{server.base}/openapi.json",
                "--header",
                f"Authorization: Bearer {TOKEN}",
                "--checks",
                CHECKS,
                "--max-examples",
                "15",
                "--workers",
                "1",
                "--seed",
                "20261123",
                "--generation-database",
                "none",
                "--request-timeout",
                "30",
                "--no-color",
            ],
            capture_output=True,
            text=True,
            timeout=150,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
        assert "Tested: 11" in done.stdout  # every operation, admin and probes alike
        assert "Internal Server Error" not in server.log()
