"""Which era a request is in, and what that changes — in one place.

Handlers build era-neutral results; :class:`Era` adds what its protocol version
requires (``resultType``, caching hints and ``serverInfo`` in 2026-07-28) and
picks the era's error codes. No handler checks a version string.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, Protocol

from docshelf.app import __version__
from docshelf.app.mcp import wire
from docshelf.app.negotiation import shapes_output
from docshelf.app.negotiation_features import NO_FEATURES, Features, parse_features

SERVER_INFO = {"name": "docshelf", "title": "docshelf", "version": __version__}


class CacheHint(NamedTuple):
    """2026-07-28 server/utilities/caching "Cacheable Results": a result's ``ttlMs`` and
    ``cacheScope``."""

    ttl_ms: int
    scope: Literal["public", "private"]


CACHE_HINTS: dict[str, CacheHint] = {
    "server/discover": CacheHint(3_600_000, "public"),
    "resources/templates/list": CacheHint(3_600_000, "public"),
    "resources/list": CacheHint(60_000, "public"),
    # The same three tools for everyone; their shelf list changes only with a restart.
    "tools/list": CacheHint(3_600_000, "public"),
    # The same three prompts for everyone, for as long as the server runs.
    "prompts/list": CacheHint(3_600_000, "public"),
    # A read's contents[] depend on the client's negotiated features, which are not part
    # of the cache key (caching "Cache Key": method + params): never shared between
    # callers, and not reusable at all when features shaped it (see cache_hints).
    "resources/read": CacheHint(60_000, "private"),
}


def cache_hints(method: str, features: Features, folders: bool = False) -> CacheHint | None:
    """The hints of a cacheable result, or None for other methods. A result the
    client's declarations shaped — its feature tags a read, its folders opt-in (SEP-2093:
    root folders, ``capabilities``) a list or a read — differs from another client's
    answer to the same method and params: never shared, never reused."""
    hints = CACHE_HINTS.get(method)
    if hints and (
        (method == "resources/read" and shapes_output(features))
        or (folders and method in ("resources/list", "resources/read"))
    ):
        return CacheHint(
            0, "private"
        )  # "If ttlMs is 0, the response SHOULD be considered immediately stale"
    return hints


@dataclass(frozen=True, slots=True)
class Era:
    name: str
    resource_not_found_code: int
    stamps_results: bool

    def finish(
        self, method: str, result: dict[str, Any], features: Features, folders: bool = False
    ) -> dict[str, Any]:
        """Add the era's required result fields to a handler's result."""
        if not self.stamps_results:
            return result
        # 2026-07-28 basic/index "Result Responses": every result MUST include resultType.
        result.setdefault("resultType", "complete")
        meta = result.setdefault("_meta", {})
        meta.setdefault(wire.META_SERVER_INFO, SERVER_INFO)
        hints = cache_hints(method, features, folders)
        if hints:
            result.setdefault("ttlMs", hints.ttl_ms)
            result.setdefault("cacheScope", hints.scope)
        return result

    def resource_not_found(self, uri: object, message: str = "Resource not found") -> wire.McpError:
        # 2025-11-25 server/resources: -32002; 2026-07-28 server/resources "Error Handling": -32602.
        return wire.McpError(self.resource_not_found_code, message, {"uri": uri})


LEGACY = Era("legacy", wire.RESOURCE_NOT_FOUND_LEGACY, stamps_results=False)
MODERN = Era("modern", wire.INVALID_PARAMS, stamps_results=True)


class WouldBlock(Exception):
    """Raised by a handler running on the event loop (``may_block`` False) at the first
    step that would wait on the database or the disk: the kernel runs it again in a
    worker thread. Handlers that can answer from memory never leave the loop."""


class SessionSubscriptions(Protocol):
    """What a handler may do with the 2025-era session it runs in
    (:class:`app.mcp.sessions.LegacySession`): ``resources/subscribe`` and ``unsubscribe``;
    either may block (an HTTP session's subscriptions are rows in the database)."""

    def subscribe(self, uri: str) -> None: ...

    def unsubscribe(self, uri: str) -> None: ...


@dataclass(slots=True)
class RequestContext:
    """Everything a handler may know about who is asking, in which era, parsed once."""

    era: Era
    protocol_version: str
    features: Features = NO_FEATURES  # the content negotiation extension's feature tags
    session: SessionSubscriptions | None = None  # the 2025-era session, if any
    # The client declared wire.EXTENSION_FOLDERS (SEP-2093): its Resources carry
    # ``capabilities`` and an unscoped resources/list answers with the shelves' folders.
    folders: bool = False
    may_block: bool = True  # False on the event loop: raise WouldBlock instead of waiting


def require_meta_fields(params: dict[str, Any]) -> dict[str, Any]:
    """basic/index "_meta": "A request missing any required field is malformed; the server
    MUST reject it with JSON-RPC error code -32602 (Invalid params). On HTTP, the response
    status MUST be 400 Bad Request."
    """
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise wire.McpError(
            wire.INVALID_PARAMS,
            f"Invalid params: missing _meta; every request must carry {wire.META_PROTOCOL_VERSION} "
            f"and {wire.META_CLIENT_CAPABILITIES} (or start a 2025 session with initialize)",
            http_status=400,
        )
    if not isinstance(meta.get(wire.META_PROTOCOL_VERSION), str):
        raise wire.McpError(
            wire.INVALID_PARAMS,
            f"Invalid params: _meta field {wire.META_PROTOCOL_VERSION} must be a string",
            http_status=400,
        )
    if not isinstance(meta.get(wire.META_CLIENT_CAPABILITIES), dict):
        raise wire.McpError(
            wire.INVALID_PARAMS,
            f"Invalid params: _meta field {wire.META_CLIENT_CAPABILITIES} must be an object",
            http_status=400,
        )
    return meta


def modern_context(meta: dict[str, Any]) -> RequestContext:
    """The context of a 2026-07-28 request from its checked ``_meta`` (basic/index
    "Statelessness"); a version we do not serve is ``UnsupportedProtocolVersion``."""
    version = meta[wire.META_PROTOCOL_VERSION]
    if version not in wire.MODERN_VERSIONS:
        raise wire.unsupported_version(version)
    capabilities = meta[wire.META_CLIENT_CAPABILITIES]
    return RequestContext(
        MODERN, version, parse_features(capabilities), folders=declares_folders(capabilities)
    )


def declares_folders(client_capabilities: object) -> bool:
    """Whether a client's capabilities (``initialize``'s, or a 2026-07-28 request's
    ``_meta`` ones) declare :data:`wire.EXTENSION_FOLDERS`: under ``extensions`` (2026-07-28
    basic "Extensions": "values are per-extension settings objects") or under
    ``experimental``, the 2025-11-25 schema's place for what it does not name. Its
    settings object is empty: anything but an object there is not a declaration."""
    if not isinstance(client_capabilities, dict):
        return False
    return any(
        isinstance(place, dict) and isinstance(place.get(wire.EXTENSION_FOLDERS), dict)
        for place in (
            client_capabilities.get("extensions"),
            client_capabilities.get("experimental"),
        )
    )


def is_modern_request(params: object) -> bool:
    """A request carrying the modern per-request ``_meta`` version field (basic/versioning)."""
    return (
        isinstance(params, dict)
        and isinstance(params.get("_meta"), dict)
        and wire.META_PROTOCOL_VERSION in params["_meta"]
    )
