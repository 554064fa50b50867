"""Real docshelf processes for tests: ``docshelf serve`` on a free loopback port, and a
hand-made JSON-RPC client for what an SDK would never send."""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.docshelf_process import (
    RunningServer,
    child_env,
    docshelf_command,
    free_port,
    serve,
    stop,
)

# One way to start docshelf as a user does, shared with the benchmarks (which import
# nothing from the tests): re-exported here for the tests.
from bench.modern_client import LISTEN_HEADERS, listen_request

__all__ = [
    "CLIENT_INFO",
    "LEGACY",
    "LISTEN_HEADERS",
    "MODERN",
    "NOT_FOUND",
    "POST_HEADERS",
    "ListenStream",
    "RawClient",
    "RunningServer",
    "child_env",
    "docshelf_command",
    "free_port",
    "initialize_2025",
    "listen_request",
    "listen_stream",
    "modern_meta",
    "run_docshelf",
    "serve",
    "stop",
]

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
# The error code of a resource that does not exist: 2025-11-25 server/resources -32002,
# 2026-07-28 server/resources "Error Handling" -32602.
NOT_FOUND = {MODERN: -32602, LEGACY: -32002}
CLIENT_INFO = {"name": "docshelf-tests", "version": "1.0"}


def run_docshelf(
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 300,
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``docshelf ARGS`` run to its end, as a user runs it: output captured as text.

    ``preexec_fn``: run in the child before it starts (``tests.support.permissions``)."""
    return subprocess.run(
        docshelf_command(*args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env or child_env(),
        cwd=cwd,
        preexec_fn=preexec_fn,
    )


def modern_meta(capabilities: dict | None = None) -> dict:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
    }


POST_HEADERS = {"Accept": "application/json, text/event-stream"}


async def initialize_2025(client: httpx.AsyncClient, url: str) -> str:
    """A 2025-11-25 session by hand (basic/lifecycle: ``initialize``, then
    ``notifications/initialized``); its ``Mcp-Session-Id``."""
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": CLIENT_INFO}
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    response = await client.post(url, json=body, headers=POST_HEADERS)
    assert response.status_code == 200, response.text
    session = response.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    headers = {**POST_HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}
    assert (await client.post(url, json=note, headers=headers)).status_code == 202
    return session


@dataclass(frozen=True)
class ListenStream:
    """A raw ``subscriptions/listen`` as it was sent and as it is being answered."""

    request: dict
    response: httpx.Response
    #: Each JSON-RPC message in the order it arrives: the events of the stream (the first
    #: one acknowledges the listen), or the one JSON body of a refusal. Kept by the caller:
    #: a loop that leaves it does not close the stream; leaving the ``with`` does.
    messages: Iterator[dict]


@contextlib.contextmanager
def listen_stream(
    url: str,
    notifications: dict,
    request_id: int | str = 1,
    meta: dict | None = None,
    *,
    client: httpx.Client | None = None,
    timeout: float = 30,
) -> Iterator[ListenStream]:
    """POST a 2026-07-28 ``subscriptions/listen`` for ``notifications`` and hold its stream
    open for the ``with`` (basic/patterns/subscriptions). ``client``: send it on that
    client's connection (a test that must know which process holds the stream)."""
    request = listen_request(notifications, request_id, meta or modern_meta())
    with contextlib.ExitStack() as stack:
        http = client or stack.enter_context(httpx.Client(timeout=timeout))
        response = stack.enter_context(
            http.stream("POST", url, json=request, headers=LISTEN_HEADERS)
        )
        yield ListenStream(request, response, _messages(response))


def _messages(response: httpx.Response) -> Iterator[dict]:
    if not response.headers.get("content-type", "").startswith("text/event-stream"):
        response.read()
        yield response.json()
        return
    for line in response.iter_lines():
        if line.startswith("data:"):
            yield json.loads(line[len("data:") :])


class RawClient:
    """Hand-made JSON-RPC over HTTP, for the cases an SDK would never send."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx.Client(timeout=30)
        self._next_id = 0

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def post(
        self, body: object, headers: dict[str, str] | None = None, raw: bytes | None = None
    ) -> httpx.Response:
        base_headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        base_headers.update(headers or {})
        # ASCII JSON text: a string the test sends may hold a lone surrogate ("\ud800"), which
        # JSON can escape but no UTF-8 encoder takes.
        content = raw if raw is not None else json.dumps(body, separators=(",", ":")).encode()
        return self.http.post(self.url, content=content, headers=base_headers)

    def modern(
        self,
        method: str,
        params: dict | None = None,
        *,
        capabilities: dict | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        params = dict(params or {})
        params["_meta"] = modern_meta(capabilities)
        request_headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
        if method == "resources/read" and isinstance(params.get("uri"), str):
            uri = params["uri"]
            if uri.isascii():
                request_headers["Mcp-Name"] = uri
            else:
                import base64

                request_headers["Mcp-Name"] = (
                    "=?base64?" + base64.b64encode(uri.encode()).decode() + "?="
                )
        request_headers.update(headers or {})
        return self.post(
            {"jsonrpc": "2.0", "id": self.next_id(), "method": method, "params": params},
            request_headers,
        )

    def initialize(self, version: str = LEGACY, capabilities: dict | None = None) -> str:
        response = self.post(
            {
                "jsonrpc": "2.0",
                "id": self.next_id(),
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": capabilities or {},
                    "clientInfo": CLIENT_INFO,
                },
            }
        )
        assert response.status_code == 200, response.text
        session = response.headers["mcp-session-id"]
        note = self.post(
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"Mcp-Session-Id": session, "MCP-Protocol-Version": version},
        )
        assert note.status_code == 202, note.text
        return session

    def legacy(
        self, session: str, method: str, params: dict | None = None, version: str = LEGACY
    ) -> httpx.Response:
        return self.post(
            {"jsonrpc": "2.0", "id": self.next_id(), "method": method, "params": params or {}},
            {"Mcp-Session-Id": session, "MCP-Protocol-Version": version},
        )

    def close(self) -> None:
        self.http.close()
