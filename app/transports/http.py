"""Streamable HTTP at ``/mcp``: both eras on one endpoint, framed (DESIGN D2).

This module owns what is HTTP's alone: media types, the body limit and
deadline, the 2026-07-28 header-body consistency check, the ``Mcp-Session-Id``
and ``MCP-Protocol-Version`` headers, and status codes. Everything else is the
kernel's (:mod:`app.mcp.kernel`). It is a bare ASGI app: a read passes through
no framework middleware on its way to the kernel and back.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.to_thread
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from docshelf.app.mcp import codec, wire
from docshelf.app.mcp.envelope import Incoming
from docshelf.app.mcp.kernel import Accepted, Kernel, Outcome, Reply, Stream
from docshelf.app.mcp.sessions import LegacySession, Peer, SessionRegistry
from docshelf.app.transports.body import ClientGone, read_body
from docshelf.app.transports.headers import check_request_headers, request_headers
from docshelf.storage.events import EventBus

log = logging.getLogger(__name__)

MAX_BODY_BYTES = codec.MAX_MESSAGE_BYTES
# streamable-http "Receiving Messages": SSE responses SHOULD carry X-Accel-Buffering: no.
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
_JSON = (b"content-type", b"application/json")


async def sse_events(messages: AsyncIterator[dict[str, Any] | None]) -> AsyncIterator[bytes]:
    """Frame messages as SSE events; ``None`` becomes a keep-alive comment line."""
    async for message in messages:
        if message is None:
            yield b": keep-alive\n\n"
        else:
            yield b"event: message\ndata: " + codec.encode(message) + b"\n\n"


def _media_types(header: str) -> set[str]:
    return {part.split(";", 1)[0].strip().lower() for part in header.split(",") if part.strip()}


def accepts_json_and_sse(accept: str) -> bool:
    """streamable-http "Sending Messages" 2: Accept lists application/json and text/event-stream."""
    types = _media_types(accept)
    if "*/*" in types:
        return True
    json_ok = bool({"application/json", "application/*"} & types)
    sse_ok = bool({"text/event-stream", "text/*"} & types)
    return json_ok and sse_ok


async def _send(
    send: Send, status: int, body: bytes = b"", headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    # A 204 has no body, and so no Content-Length either (RFC 9110 §8.6).
    head = [] if status == 204 else [(b"content-length", str(len(body)).encode())]
    head.extend(headers or ())
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


async def _send_error(
    send: Send, error: wire.McpError, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = codec.encode(wire.error_response(None, error))
    await _send(send, error.http_status, body, [_JSON, *(headers or ())])


def _refusal(message: str, status: int) -> wire.McpError:
    return wire.McpError(wire.INVALID_REQUEST, message, http_status=status)


class HttpChannel:
    """One POST, as the kernel sees it (:class:`app.mcp.kernel.Channel`)."""

    pushes_session_notifications = False

    def __init__(self, sessions: SessionRegistry, headers: dict[str, str]) -> None:
        self.sessions = sessions
        self.headers = headers
        self._session: LegacySession | None = None

    async def session(self) -> LegacySession | None:
        """The session the ``Mcp-Session-Id`` header names; None without one; 404 if unknown.
        Sessions are in the database every serving process shares: one this process
        confirmed within a second is served from memory, any other is looked up off the loop
        (app.mcp.sessions)."""
        session_id = self.headers.get(wire.HEADER_SESSION_ID)
        if session_id is None:
            return None
        if self._session is None:
            self._session = self.sessions.recent(session_id) or await anyio.to_thread.run_sync(
                self.sessions.get, session_id
            )
            if self._session is None:
                # 2025-11-25 transports "Session Management" 3: terminated/unknown → 404.
                raise _refusal("Session not found: start a new one with initialize", 404)
        return self._session

    async def start_session(self, session: LegacySession) -> None:
        await anyio.to_thread.run_sync(self.sessions.add, session)

    def peer(self) -> Peer | None:
        # Only a 2025-era request has looked its session up; a 2026 one stands alone.
        return self._session.peer if self._session is not None else None

    def claims_modern(self) -> bool:
        # 2026-07-28 basic/versioning "Backward Compatibility": a modern version header.
        return self.headers.get(wire.HEADER_PROTOCOL_VERSION) in wire.MODERN_VERSIONS

    def check_modern(self, message: Incoming, version: str) -> None:
        assert message.method is not None
        check_request_headers(self.headers, message.method, message.params, version)

    def check_legacy(self) -> None:
        header_version = self.headers.get(wire.HEADER_PROTOCOL_VERSION)
        if header_version is not None and header_version not in wire.LEGACY_VERSIONS:
            # 2025-11-25 transports "Protocol Version Header": invalid or unsupported → 400.
            raise _refusal(
                f"Bad Request: unsupported MCP-Protocol-Version {header_version!r}; "
                f"supported: {', '.join(wire.LEGACY_VERSIONS)}",
                400,
            )


class StreamableHttpEndpoint:
    """The ``/mcp`` ASGI app."""

    def __init__(
        self,
        kernel: Kernel,
        sessions: SessionRegistry,
        bus: EventBus,
        *,
        body_timeout_s: float,
    ) -> None:
        self.kernel = kernel
        self.sessions = sessions
        self.bus = bus
        self.body_timeout_s = body_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = request_headers(scope)
        method = scope["method"]
        if method == "POST":
            await self.post(headers, scope, receive, send)
        elif method == "GET":
            await self.get(headers, scope, receive, send)
        elif method == "DELETE":
            await self.delete(headers, send)
        else:
            await _send(send, 405, headers=[(b"allow", b"GET, POST, DELETE")])

    # -- POST ------------------------------------------------------------------------------

    async def post(
        self, headers: dict[str, str], scope: Scope, receive: Receive, send: Send
    ) -> None:
        if "application/json" not in _media_types(headers.get("content-type", "")):
            error = _refusal("Unsupported Media Type: Content-Type must be application/json", 415)
            return await self._refuse(send, error)
        if not accepts_json_and_sse(headers.get("accept", "")):
            error = _refusal(
                "Not Acceptable: Accept must list application/json and text/event-stream", 406
            )
            return await self._refuse(send, error)
        length = headers.get("content-length")
        try:
            body = await read_body(
                receive,
                length.encode() if length is not None else None,
                limit=MAX_BODY_BYTES,
                timeout_s=self.body_timeout_s,
            )
        except wire.McpError as error:
            return await self._refuse(send, error, [(b"connection", b"close")])
        except ClientGone:
            return await _send(send, 400)  # nobody is left to read it
        outcome = await self.kernel.handle(body, HttpChannel(self.sessions, headers))
        await self._respond(outcome, scope, receive, send)

    async def _refuse(
        self, send: Send, error: wire.McpError, headers: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        self.kernel.refused(error)
        await _send_error(send, error, headers)

    async def _respond(self, outcome: Outcome, scope: Scope, receive: Receive, send: Send) -> None:
        if isinstance(outcome, Reply):
            extra = [_JSON]
            if outcome.session_id is not None:
                extra.append((b"mcp-session-id", outcome.session_id.encode()))
            await _send(send, outcome.status, codec.encode(outcome.message), extra)
        elif isinstance(outcome, Accepted):
            await _send(send, 202)
        else:
            await self._stream(outcome, scope, receive, send)

    @staticmethod
    async def _stream(stream: Stream, scope: Scope, receive: Receive, send: Send) -> None:
        response = StreamingResponse(
            sse_events(stream.messages), media_type="text/event-stream", headers=SSE_HEADERS
        )
        await response(scope, receive, send)

    # -- GET: a 2025-era session's notification stream ------------------------------------

    async def get(
        self, headers: dict[str, str], scope: Scope, receive: Receive, send: Send
    ) -> None:
        """2025-11-25 transports "Listening for Messages from the Server"."""
        if "text/event-stream" not in _media_types(headers.get("accept", "")):
            error = _refusal("Not Acceptable: GET must accept text/event-stream", 406)
            return await self._refuse(send, error)
        try:
            session = await HttpChannel(self.sessions, headers).session()
        except wire.McpError as error:
            return await self._refuse(send, error)
        if session is None:
            # 2026-07-28 has no GET stream (streamable-http "Earlier Streamable HTTP Revisions").
            return await _send(send, 405, headers=[(b"allow", b"POST")])
        if not await anyio.to_thread.run_sync(self.sessions.claim_stream, session):
            # "MUST NOT broadcast the same message across multiple streams": one stream a
            # session, whichever process holds it.
            conflict = "Conflict: this session already has an open stream"
            return await self._refuse(send, _refusal(conflict, 409))
        try:
            await self._stream(self.kernel.session_stream(session), scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):  # also when shutdown cancels the stream
                await anyio.to_thread.run_sync(self.sessions.release_stream, session)

    # -- DELETE ----------------------------------------------------------------------------

    async def delete(self, headers: dict[str, str], send: Send) -> None:
        """2025-11-25 transports "Session Management" 5: DELETE ends the session."""
        session_id = headers.get(wire.HEADER_SESSION_ID)
        if session_id is None:
            missing = "Bad Request: DELETE needs an Mcp-Session-Id header"
            return await self._refuse(send, _refusal(missing, 400))
        session = await anyio.to_thread.run_sync(self.sessions.remove, session_id)
        if session is None:
            return await self._refuse(send, _refusal("Session not found", 404))
        if session.listener is not None:
            self.bus.end(session.listener)
        log.info("session %s… ended by the client", session_id[:8])
        await _send(send, 204)
