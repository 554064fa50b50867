"""2026-07-28 requests over plain httpx, for benchmarks that poll a server.

The SDK's client is what users run, but a poll loop that lists a shelf every
fraction of a second wants one kept-alive connection and nothing on top: each
request carries the era's ``_meta`` and its ``MCP-Protocol-Version``,
``Mcp-Method`` and (for reads) ``Mcp-Name`` headers, and nothing else.
"""

from __future__ import annotations

import base64

import httpx

MODERN = "2026-07-28"
CLIENT_INFO = {"name": "docshelf-bench", "version": "1.0"}


def modern_meta() -> dict:
    """The ``_meta`` every 2026-07-28 request carries (no client capabilities)."""
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        "io.modelcontextprotocol/clientCapabilities": {},
    }


# Headers of a raw ``subscriptions/listen`` POST (2026-07-28, basic/patterns/subscriptions):
# the answer is an event stream whose first message acknowledges the listen.
LISTEN_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": "subscriptions/listen",
}


def listen_request(
    notifications: dict, request_id: int | str = 1, meta: dict | None = None
) -> dict:
    """The body of a raw ``subscriptions/listen`` request for ``notifications``
    (``{"resourcesListChanged": True}``, ``{"resourceSubscriptions": [uri]}``, ...);
    send it with :data:`LISTEN_HEADERS`."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "subscriptions/listen",
        "params": {"_meta": meta or modern_meta(), "notifications": notifications},
    }


def name_header(uri: str) -> str:
    """``Mcp-Name`` for ``uri``: itself, or base64 in an encoded word when not ASCII."""
    if uri.isascii():
        return uri
    return "=?base64?" + base64.b64encode(uri.encode()).decode() + "?="


class ModernClient:
    """One kept-alive connection to an MCP endpoint, 2026-07-28 requests only."""

    def __init__(self, url: str, timeout: float = 30) -> None:
        self.url = url
        self.http = httpx.Client(timeout=timeout)
        self._next_id = 0

    def modern(self, method: str, params: dict | None = None) -> httpx.Response:
        self._next_id += 1
        params = {**(params or {}), "_meta": modern_meta()}
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": method,
        }
        if method == "resources/read" and isinstance(params.get("uri"), str):
            headers["Mcp-Name"] = name_header(params["uri"])
        body = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        return self.http.post(self.url, json=body, headers=headers)

    def close(self) -> None:
        self.http.close()
