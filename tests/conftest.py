"""Shared fixtures: a real shelf, a real server process on loopback, a raw JSON-RPC client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.servers import RawClient, RunningServer, serve
from tests.support.shelves import make_shelf

pytest_plugins = ["tests.support.databases"]


@pytest.fixture(scope="session")
def shelf_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """One ``docshelf serve`` over a sample shelf, shared by the read-only protocol tests."""
    base = tmp_path_factory.mktemp("served")
    shelf = make_shelf(base / "shelf")
    with serve(shelf, base / "data", "--page-size", "3") as server:
        yield server


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
