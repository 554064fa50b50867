"""One official SDK client per transport and era, for a whole test module (a pytest plugin,
loaded by ``tests/conftest.py``).

A module's tests take ``peer``: the same connected ``mcp.Client`` serves all of them, over
Streamable HTTP to the session-scoped ``shelf_server`` and over stdio to ``docshelf stdio``
on the pre-indexed ``indexed_shelf``, in both eras (a stdio child costs seconds to start
and stop, an HTTP session next to nothing), so every test also proves that the session it
inherits still works. The module declares a module-scoped ``anyio_backend``, which the
module-scoped async ``peer`` needs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import pytest
from mcp import Client

from tests.support.sdk import http_client, sdk_mode, stdio_client
from tests.support.servers import LEGACY, MODERN


@dataclass(frozen=True)
class Peer:
    client: Client
    era: str


PEERS = [
    pytest.param((transport, era), id=f"{transport}-{era}")
    for transport in ("http", "stdio")
    for era in (MODERN, LEGACY)
]


@pytest.fixture(scope="module", params=PEERS)
def connect(request: pytest.FixtureRequest) -> tuple[str, Callable[[], Client]]:
    """The era and a factory of an unconnected SDK client; only the transport asked for
    starts its server (the session-scoped ``shelf_server`` or ``indexed_shelf``)."""
    transport, era = request.param
    if transport == "http":
        url = request.getfixturevalue("shelf_server").url
        return era, lambda: http_client(url, era, read_timeout_seconds=60)
    shelf, data = request.getfixturevalue("indexed_shelf")
    return era, lambda: stdio_client(
        str(shelf), str(data), mode=sdk_mode(era), read_timeout_seconds=60
    )


@pytest.fixture(scope="module")
async def peer(connect: tuple[str, Callable[[], Client]]) -> AsyncIterator[Peer]:
    era, make = connect
    async with make() as client:
        assert client.protocol_version == era
        yield Peer(client, era)
