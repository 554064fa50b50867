"""The JSON-RPC core: message parsing, era routing, and the method table.

Transports (Streamable HTTP, stdio) own framing and sessions; everything they
have in common lives here, so both eras behave the same on both transports.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio

from app.mcp import codec, wire
from app.mcp.context import MODERN, SERVER_INFO, RequestContext, is_modern_request, modern_context
from app.mcp.resources import ResourceService
from app.mcp.sessions import LegacySession
from app.metrics import track_request
from app.negotiation import EXTENSION_ID, describe, parse_features

log = logging.getLogger(__name__)

Handler = Callable[[RequestContext, Mapping[str, Any]], dict[str, Any]]

# What initialize may ask a session to keep, per field, as compact JSON.
MAX_STORED_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Incoming:
    """A well-formed JSON-RPC message from the client."""

    kind: str  # "request" | "notification" | "response"
    id: Any
    method: str | None
    params: dict[str, Any]


def parse_message(raw: Any) -> Incoming:
    """Validate the JSON-RPC 2.0 envelope; -32600 for anything that is not a message."""
    if not isinstance(raw, dict):
        raise wire.McpError(
            wire.INVALID_REQUEST,
            "Invalid Request: expected one JSON-RPC message object (batches are not supported)",
            http_status=400,
        )
    request_id = raw.get("id")
    if raw.get("jsonrpc") != wire.JSONRPC_VERSION:
        raise wire.McpError(
            wire.INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', http_status=400
        )
    if "id" in raw and (isinstance(request_id, bool) or not isinstance(request_id, str | int)):
        raise wire.McpError(
            wire.INVALID_REQUEST,
            "Invalid Request: id must be a string or an integer",
            http_status=400,
        )
    method = raw.get("method")
    if method is None:
        if "id" in raw and ("result" in raw or "error" in raw):
            return Incoming("response", request_id, None, {})
        raise wire.McpError(
            wire.INVALID_REQUEST, 'Invalid Request: "method" is missing', http_status=400
        )
    if not isinstance(method, str):
        raise wire.McpError(
            wire.INVALID_REQUEST, 'Invalid Request: "method" must be a string', http_status=400
        )
    params = raw.get("params", {})
    if not isinstance(params, dict):
        raise wire.McpError(
            wire.INVALID_REQUEST, 'Invalid Request: "params" must be an object', http_status=400
        )
    return Incoming("request" if "id" in raw else "notification", request_id, method, params)


def _to_store(name: str, value: object) -> bytes:
    """``value`` as the compact JSON a session keeps; -32602 if over ``MAX_STORED_BYTES``:
    a session keeps it for its whole life, so its size is bounded like the number of
    sessions is."""
    stored = codec.encode(value)
    if len(stored) > MAX_STORED_BYTES:
        raise wire.McpError(
            wire.INVALID_PARAMS,
            f"initialize: params.{name} is {len(stored)} bytes as JSON; a session keeps at "
            f"most {MAX_STORED_BYTES} (64 KiB) of it",
        )
    return stored


def request_id_of(raw: Any) -> Any:
    """The id of a possibly malformed message, for its error response (None if unreadable)."""
    if isinstance(raw, dict):
        value = raw.get("id")
        if isinstance(value, str | int) and not isinstance(value, bool):
            return value
    return None


class McpServer:
    def __init__(self, resources: ResourceService, *, instructions: str) -> None:
        self.resources = resources
        self.instructions = instructions
        # Methods served in both eras. Legacy-only and modern-only ones are added below.
        shared: dict[str, Handler] = {
            "resources/list": resources.list,
            "resources/templates/list": resources.templates,
            "resources/read": resources.read,
            "resources/metadata": resources.metadata,  # SEP "Resource Contents Metadata" §2
        }
        self._legacy: dict[str, Handler] = {
            **shared,
            "ping": lambda ctx, params: {},
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
        }
        # subscriptions/listen is streamed by the transports (see app.mcp.notifications).
        self._modern: dict[str, Handler] = {**shared, "server/discover": self._discover}

    # -- capabilities ----------------------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        """What this server does — only what works."""
        return {
            # The watcher and reindex jobs publish changes: both notifications work.
            "resources": {"subscribe": True, "listChanged": True},
            # Content negotiation SEP: servers advertise an empty settings object.
            "extensions": {EXTENSION_ID: {}},
        }

    # -- era routing -----------------------------------------------------------------------

    def initialize(self, params: Mapping[str, Any]) -> tuple[LegacySession, dict[str, Any]]:
        """2025-11-25 basic/lifecycle "Initialization" and "Version Negotiation"."""
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise wire.McpError(wire.INVALID_PARAMS, "initialize: protocolVersion must be a string")
        capabilities = params.get("capabilities", {})
        if not isinstance(capabilities, dict):
            raise wire.McpError(wire.INVALID_PARAMS, "initialize: capabilities must be an object")
        client_info = params.get("clientInfo")
        stored_capabilities = _to_store("capabilities", capabilities)
        stored_info = _to_store(
            "clientInfo", client_info if isinstance(client_info, dict) else None
        )
        # "If the server supports the requested protocol version, it MUST respond with the same
        # version. Otherwise, the server MUST respond with another protocol version it supports."
        version = requested if requested in wire.LEGACY_VERSIONS else wire.LATEST_LEGACY
        negotiated = describe(parse_features(capabilities), binary_cap=self.resources.binary_cap)
        session = LegacySession(version, stored_capabilities, stored_info)
        result = {
            "protocolVersion": version,
            "capabilities": self.capabilities(),
            "serverInfo": SERVER_INFO,
            # Content negotiation SEP: say in one sentence what was negotiated for the session.
            "instructions": f"{self.instructions} {negotiated}",
        }
        return session, result

    def context_for(self, message: Incoming, session: LegacySession | None) -> RequestContext:
        """The request's era and context: modern with a ``_meta`` version, else the session's."""
        if is_modern_request(message.params) or session is None:
            return modern_context(message.params)
        return session.context()

    # -- dispatch --------------------------------------------------------------------------

    async def call(self, message: Incoming, ctx: RequestContext) -> dict[str, Any]:
        """Run a request's handler and return its era-finished result; raises McpError.

        Every call is counted and timed for ``/metrics``; methods outside the table are
        labelled ``other`` so clients cannot create series at will.
        """
        assert message.method is not None
        known = message.method in self._legacy or message.method in self._modern
        with track_request(message.method if known else "other"):
            return await self._dispatch(message, ctx)

    async def _dispatch(self, message: Incoming, ctx: RequestContext) -> dict[str, Any]:
        assert message.method is not None
        table = self._modern if ctx.era is MODERN else self._legacy
        handler = table.get(message.method)
        if handler is None:
            # 2026-07-28 streamable-http "Protocol Version Header": unknown method → 404 + -32601.
            raise wire.McpError(
                wire.METHOD_NOT_FOUND,
                f"Method not found: {message.method}",
                http_status=404 if ctx.era is MODERN else 200,
            )
        try:
            result = await anyio.to_thread.run_sync(handler, ctx, message.params)
        except wire.McpError:
            raise
        except Exception as exc:
            log.exception("internal error in %s", message.method)
            raise wire.McpError(
                wire.INTERNAL_ERROR, f"Internal error: {type(exc).__name__}"
            ) from exc
        return ctx.era.finish(message.method, result, ctx.client_capabilities)

    def _subscribe(self, ctx: RequestContext, params: Mapping[str, Any]) -> dict[str, Any]:
        """2025-11-25 server/resources "Subscriptions": this URI's updates on the session stream."""
        record = self.resources.require(ctx, params)
        ctx.session.subscriptions.add(record.uri)
        return {}

    def _unsubscribe(self, ctx: RequestContext, params: Mapping[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise wire.McpError(wire.INVALID_PARAMS, "params.uri must be a string")
        ctx.session.subscriptions.discard(uri)
        return {}

    def _discover(self, ctx: RequestContext, params: Mapping[str, Any]) -> dict[str, Any]:
        """2026-07-28 server/discover."""
        return {
            "supportedVersions": list(wire.SUPPORTED_VERSIONS),
            "capabilities": self.capabilities(),
            "instructions": self.instructions,
        }
