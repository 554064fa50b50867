"""Streamable HTTP at ``/mcp``: both eras on one endpoint (DESIGN D2).

Each step of a POST is one small function: media types, size, JSON, envelope,
then the era's own checks (2025-11-25: session and version headers;
2026-07-28: header-body consistency), then the core.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from app.mcp import codec, wire
from app.mcp.context import is_modern_request, modern_context, require_meta_fields
from app.mcp.notifications import ListenFilter, listen, session_stream
from app.mcp.server import Incoming, McpServer, parse_message, request_id_of
from app.mcp.sessions import LegacySession, SessionRegistry
from app.transports.body import read_body
from app.transports.headers import check_request_headers
from storage.events import EventBus

log = logging.getLogger(__name__)

MAX_BODY_BYTES = codec.MAX_MESSAGE_BYTES
# streamable-http "Receiving Messages": SSE responses SHOULD carry X-Accel-Buffering: no.
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


async def sse_events(messages: AsyncIterator[dict[str, Any] | None]) -> AsyncIterator[bytes]:
    """Frame messages as SSE events; ``None`` becomes a keep-alive comment line."""
    async for message in messages:
        if message is None:
            yield b": keep-alive\n\n"
        else:
            yield b"event: message\ndata: " + codec.encode(message) + b"\n\n"


def sse_response(
    messages: AsyncIterator[dict[str, Any] | None], **headers: str
) -> StreamingResponse:
    return StreamingResponse(
        sse_events(messages), media_type="text/event-stream", headers={**SSE_HEADERS, **headers}
    )


class MessageResponse(JSONResponse):
    """A JSON-RPC message as the body, written by :func:`app.mcp.codec.encode` (which, unlike
    Starlette's renderer, does not fail on a lone surrogate echoed from the request)."""

    def render(self, content: Any) -> bytes:
        return codec.encode(content)


def _error(
    error: wire.McpError, request_id: Any = None, headers: dict[str, str] | None = None
) -> MessageResponse:
    return MessageResponse(
        wire.error_response(request_id, error), status_code=error.http_status, headers=headers
    )


def _bad_request(
    message: str, status: int = 400, code: int = wire.INVALID_REQUEST
) -> MessageResponse:
    return _error(wire.McpError(code, message, http_status=status))


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


class StreamableHttpEndpoint:
    def __init__(
        self,
        server: McpServer,
        sessions: SessionRegistry,
        bus: EventBus,
        *,
        keepalive_s: float,
        body_timeout_s: float,
    ) -> None:
        self.server = server
        self.sessions = sessions
        self.bus = bus
        self.keepalive_s = keepalive_s
        self.body_timeout_s = body_timeout_s

    async def handle(self, request: Request) -> Response:
        if request.method == "POST":
            return await self.post(request)
        if request.method == "DELETE":
            return self.delete(request)
        return self.get(request)

    # -- GET: a 2025-era session's notification stream ------------------------------------

    def get(self, request: Request) -> Response:
        """2025-11-25 transports "Listening for Messages from the Server"."""
        if "text/event-stream" not in _media_types(request.headers.get("accept", "")):
            return _bad_request("Not Acceptable: GET must accept text/event-stream", 406)
        try:
            session = self._session(request)
        except wire.McpError as error:
            return _error(error)
        if session is None:
            # 2026-07-28 has no GET stream (streamable-http "Earlier Streamable HTTP Revisions").
            return Response(status_code=405, headers={"Allow": "POST"})
        if session.listener is not None:
            # "MUST NOT broadcast the same message across multiple streams": one stream a session.
            return _bad_request("Conflict: this session already has an open stream", 409)
        return sse_response(session_stream(self.bus, session, keepalive_s=self.keepalive_s))

    # -- POST ------------------------------------------------------------------------------

    async def post(self, request: Request) -> Response:
        content_type = request.headers.get("content-type", "")
        if "application/json" not in _media_types(content_type):
            return _bad_request(
                "Unsupported Media Type: Content-Type must be application/json", 415
            )
        if not accepts_json_and_sse(request.headers.get("accept", "")):
            return _bad_request(
                "Not Acceptable: Accept must list application/json and text/event-stream", 406
            )
        try:
            body = await read_body(request, limit=MAX_BODY_BYTES, timeout_s=self.body_timeout_s)
        except wire.McpError as error:
            return _error(error, headers={"Connection": "close"})
        except ClientDisconnect:
            return Response(status_code=400)  # nobody is left to read it
        try:
            raw = codec.decode(body)
        except wire.McpError as error:
            return _error(error)
        try:
            message = parse_message(raw)
            if message.kind == "response":
                return Response(status_code=202)  # we send no requests; nothing waits for it
            # Era routing (2026-07-28 basic/versioning "Backward Compatibility"): modern _meta or a
            # modern version header means 2026-07-28, where initialize/ping are unknown methods.
            if (
                is_modern_request(message.params)
                or request.headers.get(wire.HEADER_PROTOCOL_VERSION) in wire.MODERN_VERSIONS
            ):
                return await self._modern(request, message)
            if message.method == "initialize":
                return await self._initialize(message)
            return await self._legacy(request, message)
        except wire.McpError as error:
            return _error(error, request_id_of(raw))

    async def _initialize(self, message: Incoming) -> Response:
        if message.kind != "request":
            # A notification has no id to answer; a session nobody can learn the id of would
            # only take up room (2025-11-25 basic/lifecycle: initialize is a request).
            raise wire.McpError(
                wire.INVALID_REQUEST,
                'Invalid Request: initialize must be a request, with an "id"',
                http_status=400,
            )
        session, result = self.server.initialize(message.params)
        self.sessions.add(session)
        log.info("session %s… started (%s)", session.id[:8], session.protocol_version)
        return MessageResponse(
            wire.result_response(message.id, result),
            headers={"Mcp-Session-Id": session.id},
        )

    async def _modern(self, request: Request, message: Incoming) -> Response:
        assert message.method is not None
        # Order per the conformance probes of 2026-07-28: a malformed _meta is -32602 first, then
        # header-body mismatch (-32020), then an unsupported version (-32022).
        require_meta_fields(message.params)
        meta = message.params["_meta"]
        check_request_headers(
            request.headers, message.method, message.params, meta[wire.META_PROTOCOL_VERSION]
        )
        ctx = modern_context(message.params)
        if message.kind == "notification":
            return Response(status_code=202)
        if message.method == "subscriptions/listen":
            # basic/patterns/subscriptions: the response is an SSE stream that stays open.
            listen_filter = ListenFilter.from_params(message.params)
            return sse_response(
                listen(self.bus, message.id, listen_filter, keepalive_s=self.keepalive_s)
            )
        result = await self.server.call(message, ctx)
        return MessageResponse(wire.result_response(message.id, result))

    async def _legacy(self, request: Request, message: Incoming) -> Response:
        session = self._session(request)
        if session is None:
            raise wire.McpError(
                wire.INVALID_PARAMS,
                "Bad Request: no Mcp-Session-Id header and no _meta protocol version; "
                "send initialize first (2025 protocol) or include "
                f"{wire.META_PROTOCOL_VERSION} in params._meta (2026-07-28)",
                http_status=400,
            )
        header_version = request.headers.get(wire.HEADER_PROTOCOL_VERSION)
        if header_version is not None and header_version not in wire.LEGACY_VERSIONS:
            # 2025-11-25 transports "Protocol Version Header": invalid or unsupported → 400.
            raise wire.McpError(
                wire.INVALID_REQUEST,
                f"Bad Request: unsupported MCP-Protocol-Version {header_version!r}; "
                f"supported: {', '.join(wire.LEGACY_VERSIONS)}",
                http_status=400,
            )
        if message.kind == "notification":
            if message.method == "notifications/initialized":
                session.initialized = True
            return Response(status_code=202)
        result = await self.server.call(message, session.context())
        return MessageResponse(wire.result_response(message.id, result))

    def _session(self, request: Request) -> LegacySession | None:
        """The request's session; None without the header; 404 for an unknown one."""
        session_id = request.headers.get(wire.HEADER_SESSION_ID)
        if session_id is None:
            return None
        session = self.sessions.get(session_id)
        if session is None:
            # 2025-11-25 transports "Session Management" 3: terminated/unknown → 404.
            raise wire.McpError(
                wire.INVALID_REQUEST,
                "Session not found: start a new one with initialize",
                http_status=404,
            )
        return session

    # -- DELETE ----------------------------------------------------------------------------

    def delete(self, request: Request) -> Response:
        """2025-11-25 transports "Session Management" 5: DELETE ends the session."""
        session_id = request.headers.get(wire.HEADER_SESSION_ID)
        if session_id is None:
            return _bad_request("Bad Request: DELETE needs an Mcp-Session-Id header")
        session = self.sessions.remove(session_id)
        if session is None:
            return _bad_request("Session not found", 404)
        if session.listener is not None:
            self.bus.end(session.listener)
        log.info("session %s… ended by the client", session_id[:8])
        return Response(status_code=204)
