"""The front door: refuse requests whose Host, Origin or other single-valued header is sent
twice (400, :func:`~app.transports.headers.repeated_single_value`), then those from origins
and hosts we do not serve (DNS-rebinding protection).

2026-07-28 streamable-http "Security & Endpoint": "Servers MUST validate the
Origin header on all incoming connections [...] If the Origin header is present
and invalid, servers MUST respond with HTTP 403 Forbidden. The HTTP response
body MAY comprise a JSON-RPC error response that has no id."

An allowed origin without a port (``http://localhost``) admits that scheme and
host on any port; with a port, only that port. The Host header is checked the
same way against the allowed hosts — always, whatever address the server binds:
a rebinding attack arrives with the attacker's host name, and a server bound to
``0.0.0.0`` (the container image) is as reachable from a rebound browser as one
bound to loopback. The loopback names are always allowed; deployments reached
under another name list it with ``--allowed-host``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from docshelf.app.mcp import wire
from docshelf.app.transports.headers import repeated_single_value, request_headers

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")


def _split_origin(origin: str) -> tuple[str, str, int | None] | None:
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    return parts.scheme.lower(), host, port


def _split_host(value: str) -> tuple[str, int | None] | None:
    parsed = _split_origin(f"http://{value}")
    return (parsed[1], parsed[2]) if parsed else None


class OriginPolicy:
    """Which ``Origin`` and ``Host`` values to serve. There is no "any host": the Host check
    cannot be switched off, only widened by naming hosts."""

    def __init__(self, allowed_origins: Iterable[str], allowed_hosts: Iterable[str]) -> None:
        self._origins = []
        for origin in allowed_origins:
            parsed = _split_origin(origin)
            if parsed is None:
                raise ValueError(
                    f"allowed origin {origin!r} is not of the form scheme://host[:port]"
                )
            self._origins.append(parsed)
        self._host_verdicts: dict[str, bool] = {}
        self._hosts: list[tuple[str, int | None]] = []
        for host in allowed_hosts:
            parsed_host = _split_host(host)
            if parsed_host is None:
                raise ValueError(f"allowed host {host!r} is not of the form host[:port]")
            self._hosts.append(parsed_host)

    def origin_allowed(self, origin: str) -> bool:
        parsed = _split_origin(origin)
        if parsed is None:
            return False
        scheme, host, port = parsed
        return any(
            scheme == s and host == h and (p is None or port == p) for s, h, p in self._origins
        )

    def host_allowed(self, host_header: str) -> bool:
        """Whether to answer under this Host; remembered for the few names a server sees."""
        known = self._host_verdicts.get(host_header)
        if known is None:
            known = self._host_allowed(host_header)
            if len(self._host_verdicts) < 64:  # bounded: clients choose what they send
                self._host_verdicts[host_header] = known
        return known

    def _host_allowed(self, host_header: str) -> bool:
        parsed = _split_host(host_header)
        if parsed is None:
            return False
        host, port = parsed
        return any(host == h and (p is None or port == p) for h, p in self._hosts)


class OriginGuard:
    """ASGI middleware applying an :class:`OriginPolicy` to every HTTP request."""

    def __init__(self, app: ASGIApp, policy: OriginPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            # Before the checks below: with two Origins or two Hosts, which would they check?
            repeated = repeated_single_value(scope)
            if repeated is not None:
                await _refuse(send, repeated)
                return
            headers = request_headers(scope)
            origin = headers.get("origin")
            if origin is not None and not self.policy.origin_allowed(origin):
                await _forbid(send, f"Forbidden: origin {origin!r} is not allowed")
                return
            host = headers.get("host", "")
            if not self.policy.host_allowed(host):
                await _forbid(
                    send,
                    f"Forbidden: Host {host!r} is not a name this server answers to "
                    "(DNS-rebinding protection); to reach it under that name, add it with "
                    "--allowed-host or DOCSHELF_ALLOWED_HOSTS",
                )
                return
        await self.app(scope, receive, send)


async def _forbid(send: Send, message: str) -> None:
    await _refuse(send, wire.McpError(wire.INVALID_REQUEST, message, http_status=403))


async def _refuse(send: Send, error: wire.McpError) -> None:
    body = json.dumps(wire.error_response(None, error)).encode()
    await send(
        {
            "type": "http.response.start",
            "status": error.http_status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
