"""Shared fixtures: a real shelf, a real server process on loopback, a raw JSON-RPC client."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.servers import RawClient, RunningServer, run_docshelf, serve
from tests.support.shelves import make_shelf
from tests.support.wheel import build_wheel

pytest_plugins = [
    "tests.support.databases",
    "tests.support.object_store",
    "tests.support.peers",
]

#: Set to 1 to run the slow suites too (packaging, benchmark harnesses); .ci/run does.
SLOW_TESTS = "DOCSHELF_SLOW_TESTS"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"slow: a packaging or benchmark-harness suite, run when {SLOW_TESTS}=1"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the slow suites, saying how to run them, so the core suite stays within its
    ten minutes on two cores (README); ``-m slow`` or DOCSHELF_SLOW_TESTS=1 runs them."""
    if os.environ.get(SLOW_TESTS) == "1" or "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason=f"slow suite: {SLOW_TESTS}=1 runs it (.ci/run does)")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def shelf_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """One ``docshelf serve`` over a sample shelf, shared by the read-only protocol tests."""
    base = tmp_path_factory.mktemp("served")
    shelf = make_shelf(base / "shelf")
    with serve(shelf, base / "data", "--page-size", "3") as server:
        yield server


@pytest.fixture(scope="session")
def indexed_shelf(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A sample shelf indexed ahead of time by ``docshelf index``, for ``docshelf stdio``."""
    base = tmp_path_factory.mktemp("stdio")
    shelf, data = make_shelf(base / "shelf"), base / "data"
    done = run_docshelf("index", "--root", str(shelf), "--data-dir", str(data))
    assert done.returncode == 0, done.stderr
    return shelf, data


@pytest.fixture(scope="session")
def docshelf_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a clean copy of this checkout, once per session."""
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture
def raw(shelf_server: RunningServer) -> Iterator[RawClient]:
    client = RawClient(shelf_server.url)
    yield client
    client.close()


@pytest.fixture
def sample_shelf(tmp_path: Path) -> Path:
    return make_shelf(tmp_path / "shelf")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
