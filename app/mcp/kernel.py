"""The protocol kernel: everything both transports share, decided in one place.

A transport hands the kernel one message's bytes and a :class:`Channel` (what it
knows about where the message came from: the session it names, its headers) and
gets back an :class:`Outcome` to frame: a :class:`Reply`, nothing
(:data:`ACCEPTED`), or a :class:`Stream` of messages to write as they come.
Parsing, era selection (2026-07-28 basic/versioning "Backward Compatibility"),
the 2025 handshake and its sessions, notifications in and out, cancellation,
the method table and metrics all live here, so a new method is one table row
and one handler on both transports.

Handlers are plain functions. Those that can answer from memory run on the
event loop; the first step that would block raises
:class:`~app.mcp.context.WouldBlock` and the kernel runs the handler again in a
worker thread (a thread hand-off costs more than a small read itself).
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import anyio

from docshelf.app.mcp import codec, wire
from docshelf.app.mcp.completion import Completer
from docshelf.app.mcp.context import (
    LEGACY,
    MODERN,
    SERVER_INFO,
    Era,
    RequestContext,
    WouldBlock,
    declares_folders,
    is_modern_request,
    modern_context,
    require_meta_fields,
)
from docshelf.app.mcp.envelope import (
    Incoming,
    Kind,
    invalid_request,
    is_notification,
    is_request_id,
    parse_message,
    request_id_of,
)
from docshelf.app.mcp.folders import FolderService
from docshelf.app.mcp.notifications import listen, session_stream
from docshelf.app.mcp.params import (
    CallToolParams,
    CompleteParams,
    GetPromptParams,
    InitializeParams,
    ListenParams,
    ListResourcesParams,
    NoParams,
    PageParams,
    UnsubscribeParams,
    UriParams,
)
from docshelf.app.mcp.prompts import PromptService
from docshelf.app.mcp.resources import ResourceService
from docshelf.app.mcp.sessions import LegacySession, Peer
from docshelf.app.mcp.tools import ToolService
from docshelf.app.negotiation import or_default
from docshelf.app.negotiation_features import EXTENSION_ID, NO_FEATURES, Features, parse_features
from docshelf.app.negotiation_text import describe, describe_default
from docshelf.storage.events import EventBus

log = logging.getLogger(__name__)

# What initialize may ask a session to keep, per field, as compact JSON.
MAX_STORED_BYTES = 64 * 1024

INITIALIZE = "initialize"
INITIALIZED = "notifications/initialized"
CANCELLED = "notifications/cancelled"
LISTEN = "subscriptions/listen"
# The metrics label of every method outside the kernel's own, so clients cannot create series.
OTHER_METHOD = "other"


# -- what the kernel returns ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reply:
    """One JSON-RPC response to send.

    ``status`` is what Streamable HTTP answers with. ``to_notification``: the error
    answers a notification, which stdio never answers (JSON-RPC 2.0) and HTTP
    answers with its status ("If the server cannot accept the input, it MUST
    return an HTTP error status code"). ``session_id``: initialize started this
    session.
    """

    message: dict[str, Any]
    status: int = 200
    to_notification: bool = False
    session_id: str | None = None


@dataclass(frozen=True, slots=True)
class Accepted:
    """A notification or response taken in; nothing to send (HTTP 202)."""


ACCEPTED = Accepted()


@dataclass(frozen=True, slots=True)
class Stream:
    """Messages to send as they come (``None`` = a quiet interval: a keep-alive on SSE)."""

    messages: AsyncIterator[dict[str, Any] | None]


Outcome = Reply | Accepted | Stream


# -- what the kernel asks of a transport ------------------------------------------------------


class Channel(Protocol):
    """What a transport knows about where a message came from. The kernel asks in the
    order the specs' checks go; each hook raises :class:`~app.mcp.wire.McpError`."""

    # stdio carries a session's notifications on the same pipe once the client is
    # initialized; Streamable HTTP on a GET stream the client opens.
    pushes_session_notifications: bool

    async def session(self) -> LegacySession | None:
        """The 2025-era session this message belongs to, if it names one (HTTP looks it up in
        the database every processes shares: app.mcp.sessions)."""

    async def start_session(self, session: LegacySession) -> None:
        """Keep a session initialize just started."""

    def peer(self) -> Peer | None:
        """Who to cancel requests and streams for; None where each message stands alone."""

    def claims_modern(self) -> bool:
        """Whether the transport itself says 2026-07-28 (an HTTP version header)."""

    def check_modern(self, message: Incoming, version: str) -> None:
        """The transport's own checks of a 2026-07-28 request (HTTP header-body consistency)."""

    def check_legacy(self) -> None:
        """The transport's own checks of a 2025-era request (HTTP version header)."""


# -- the method table ---------------------------------------------------------------------


class RequestMetrics(Protocol):
    """Where the kernel counts and times each request it answered (``app.metrics``)."""

    def record_request(self, method: str, error: BaseException | None, seconds: float) -> None:
        """``method``: a method of the kernel's or :data:`OTHER_METHOD`; ``error``: what the
        request ended with, None for a result."""


class Blocking(enum.Enum):
    NEVER = "never"  # answered from memory: always on the event loop
    MAYBE = "maybe"  # tried on the event loop; WouldBlock sends it to a worker thread
    ALWAYS = "always"  # straight to a worker thread (a database query every time)


ClientHook = Callable[[LegacySession, Peer | None], None]
"""Told of a 2025-era client's notification (:meth:`Kernel.on_notification`), with the
session and the peer to send requests to; it must not block (it starts its own work)."""


P = TypeVar("P")


@dataclass(frozen=True, slots=True)
class Method(Generic[P]):
    """One row of the method table: the parser of the method's params (from
    :mod:`app.mcp.params`) and the handler that takes what it returns — one ``P``, so the
    type checker holds each row's two together."""

    parse: Callable[[str, Mapping[str, Any]], P]
    handle: Callable[[RequestContext, P], dict[str, Any]]
    blocking: Blocking
    eras: frozenset[Era] = frozenset({LEGACY, MODERN})

    @staticmethod
    def of(
        parse: Callable[[str, Mapping[str, Any]], P],
        handle: Callable[[RequestContext, P], dict[str, Any]],
        blocking: Blocking,
        eras: frozenset[Era] = frozenset({LEGACY, MODERN}),
    ) -> Method[Any]:
        """A row of the table. Built here, not by ``Method(...)`` in a table typed
        ``Method[Any]``: that context would make ``P`` Any and let any parser pair with any
        handler; here ``P`` is inferred from the two alone, so a mismatch fails mypy."""
        return Method(parse, handle, blocking, eras)


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


class Kernel:
    def __init__(
        self,
        resources: ResourceService,
        tools: ToolService,
        prompts: PromptService,
        bus: EventBus,
        *,
        metrics: RequestMetrics,
        instructions: str,
        keepalive_s: float,
        default_features: Features = NO_FEATURES,
    ) -> None:
        self.resources = resources
        # resources/list, read, metadata and subscribe, with SEP-2093's folders (app.mcp.folders).
        self.folders = FolderService(resources)
        completer = Completer(resources)
        self.bus = bus
        self.metrics = metrics
        self.instructions = instructions
        # The operator's content negotiation default (DOCSHELF_DEFAULT_FEATURES), for every
        # client that negotiates nothing, in either era; server/discover says what it is.
        self.default_features = default_features
        self.discover_instructions = instructions
        if default_features.tags:
            described = describe_default(default_features, binary_cap=resources.binary_cap)
            self.discover_instructions = f"{instructions} {described}"
        self.keepalive_s = keepalive_s
        legacy_only = frozenset({LEGACY})
        self.methods: Mapping[str, Method[Any]] = {
            "ping": Method.of(NoParams.parse, lambda ctx, p: {}, Blocking.NEVER, legacy_only),
            "server/discover": Method.of(
                NoParams.parse, self._discover, Blocking.NEVER, frozenset({MODERN})
            ),
            "resources/list": Method.of(
                ListResourcesParams.parse, self.folders.list_resources, Blocking.ALWAYS
            ),
            "resources/templates/list": Method.of(
                PageParams.parse, resources.templates, Blocking.NEVER
            ),
            "resources/read": Method.of(UriParams.parse, self.folders.read, Blocking.MAYBE),
            # SEP "Resource Contents Metadata" §2
            "resources/metadata": Method.of(UriParams.parse, self.folders.metadata, Blocking.MAYBE),
            # An HTTP session's subscriptions are rows in the database (app.mcp.sessions).
            "resources/subscribe": Method.of(
                UriParams.parse, self._subscribe, Blocking.ALWAYS, legacy_only
            ),
            "resources/unsubscribe": Method.of(
                UnsubscribeParams.parse, self._unsubscribe, Blocking.ALWAYS, legacy_only
            ),
            # server/tools; a search is a query every time, a read may be answered from memory.
            "tools/list": Method.of(PageParams.parse, tools.list_tools, Blocking.NEVER),
            "tools/call": Method.of(CallToolParams.parse, tools.call, Blocking.ALWAYS),
            # server/prompts; getting one reads documents (and searches) every time.
            "prompts/list": Method.of(PageParams.parse, prompts.list_prompts, Blocking.NEVER),
            "prompts/get": Method.of(GetPromptParams.parse, prompts.get, Blocking.ALWAYS),
            # server/utilities/completion, for the shelves' resource template and the prompts.
            "completion/complete": Method.of(
                CompleteParams.parse, completer.complete, Blocking.MAYBE
            ),
        }
        # Method labels for /metrics: the table plus what the kernel answers itself; anything
        # else is OTHER_METHOD.
        self._labels = frozenset({*self.methods, INITIALIZE, INITIALIZED, CANCELLED, LISTEN})
        self._hooks: dict[str, list[ClientHook]] = {}

    def on_notification(self, method: str, hook: ClientHook) -> None:
        """Call ``hook`` when an initialized 2025-era session's client sends the notification
        ``method``; for ``notifications/initialized``, once, as the session becomes
        initialized (app.mcp.roots asks for the client's roots then)."""
        self._hooks.setdefault(method, []).append(hook)

    def _tell(self, method: str, session: LegacySession, channel: Channel) -> None:
        for hook in self._hooks.get(method, ()):
            try:
                hook(session, channel.peer())
            except Exception:
                log.exception("handling %s failed", method)

    def capabilities(self) -> dict[str, Any]:
        """What this server does — only what works."""
        return {
            # The watcher and reindex jobs publish changes: both notifications work.
            "resources": {"subscribe": True, "listChanged": True},
            # search_documents, read_document and list_documents; the list never changes
            # while serving.
            "tools": {"listChanged": False},
            # summarize_document, compare_documents, answer_from_shelf: a fixed set too.
            "prompts": {"listChanged": False},
            "completions": {},
            # Content negotiation SEP: servers advertise an empty settings object; so do we
            # for folders and per-resource capabilities (SEP-2093, app.mcp.folders).
            "extensions": {EXTENSION_ID: {}, wire.EXTENSION_FOLDERS: {}},
        }

    # -- one message in, one outcome out ---------------------------------------------------

    async def handle(self, body: bytes, channel: Channel) -> Outcome:
        """Answer one message. Every failure becomes its JSON-RPC error; every message is
        counted and timed for ``/metrics``, errors before dispatch included."""
        started = time.perf_counter()
        raw: Any = None
        label = OTHER_METHOD
        error: BaseException | None = None
        try:
            raw = codec.decode(body)
            message = parse_message(raw)
            if message.method in self._labels:
                label = message.method
            return await self._handle(message, channel)
        except Exception as exc:
            error = exc if isinstance(exc, wire.McpError) else _failed_before_dispatch(exc)
            return Reply(
                wire.error_response(request_id_of(raw), error),
                error.http_status,
                to_notification=is_notification(raw),
            )
        except BaseException as exc:
            error = exc
            raise
        finally:
            # Requests and errors count; a notification or a response taken in does not.
            if error is not None or (isinstance(raw, dict) and "id" in raw and "method" in raw):
                self.metrics.record_request(label, error, time.perf_counter() - started)

    def refused(self, error: wire.McpError) -> None:
        """Count a message a transport refused before the kernel saw it (too large, wrong
        media type, too slow): it reaches ``/metrics`` like every other error."""
        self.metrics.record_request(OTHER_METHOD, error, 0.0)

    async def _handle(self, message: Incoming, channel: Channel) -> Outcome:
        if message.kind is Kind.RESPONSE:
            # An answer to a request of ours (app.mcp.outbound; stdio only): matched by id.
            peer = channel.peer()
            if peer is not None and peer.outbound is not None and message.answer is not None:
                peer.outbound.settle(message.answer)
            return ACCEPTED
        if is_modern_request(message.params) or channel.claims_modern():
            # Order per the conformance probes of 2026-07-28: a malformed _meta is -32602
            # first, then the transport's own checks (header-body mismatch, -32020), then an
            # unsupported version (-32022).
            meta = require_meta_fields(message.params)
            channel.check_modern(message, meta[wire.META_PROTOCOL_VERSION])
            ctx = modern_context(meta)
        elif message.method == INITIALIZE:
            return await self._initialize(message, channel)
        else:
            session = await channel.session()
            if session is None and message.kind is Kind.NOTIFICATION and channel.peer() is not None:
                # A connection that is its own peer (stdio) may cancel without a session or
                # _meta: nothing else is at stake.
                return await self._notified(message, channel)
            if session is None:
                raise wire.McpError(
                    wire.INVALID_PARAMS,
                    "Bad Request: no session and no _meta protocol version; send initialize "
                    "first (2025 protocol) or include "
                    f"{wire.META_PROTOCOL_VERSION} in params._meta (2026-07-28)",
                    http_status=400,
                )
            channel.check_legacy()
            ctx = session.context()
        ctx.features = or_default(ctx.features, self.default_features)
        if message.kind is Kind.NOTIFICATION:
            return await self._notified(message, channel)
        if message.method == LISTEN and ctx.era is MODERN:
            return self._listen(message, channel)
        peer = channel.peer()
        if peer is None:
            return Reply(wire.result_response(message.id, await self.call(message, ctx)))
        peer.running.add(message.id)
        try:
            result = await self.call(message, ctx)
        finally:
            peer.running.discard(message.id)
        if message.id in peer.cancelled:
            peer.cancelled.discard(message.id)
            return ACCEPTED  # "SHOULD NOT send a response for the cancelled request"
        return Reply(wire.result_response(message.id, result))

    async def call(self, message: Incoming, ctx: RequestContext) -> dict[str, Any]:
        """Run a request's handler and return its era-finished result; raises McpError."""
        assert message.method is not None
        method = self.methods.get(message.method)
        if method is None or ctx.era not in method.eras:
            # 2026-07-28 streamable-http "Protocol Version Header": unknown method → 404 + -32601.
            raise wire.McpError(
                wire.METHOD_NOT_FOUND,
                f"Method not found: {message.method}",
                http_status=404 if ctx.era is MODERN else 200,
            )
        try:
            params = method.parse(message.method, message.params)
            result = None
            if method.blocking is not Blocking.ALWAYS:
                ctx.may_block = False
                try:
                    result = method.handle(ctx, params)
                except WouldBlock:
                    ctx.may_block = True
            if result is None:
                result = await anyio.to_thread.run_sync(method.handle, ctx, params)
        except wire.McpError:
            raise
        except Exception as exc:
            log.exception("internal error in %s", message.method)
            raise _internal_error(exc) from exc
        return ctx.era.finish(message.method, result, ctx.features, ctx.folders)

    # -- the 2025 handshake ------------------------------------------------------------------

    async def _initialize(self, message: Incoming, channel: Channel) -> Reply:
        """2025-11-25 basic/lifecycle "Initialization" and "Version Negotiation"."""
        if message.kind is not Kind.REQUEST:
            # A notification has no id to answer; a session nobody can learn the id of would
            # only take up room (initialize is a request).
            raise invalid_request('initialize must be a request, with an "id"')
        params = InitializeParams.parse(INITIALIZE, message.params)
        # "If the server supports the requested protocol version, it MUST respond with the same
        # version. Otherwise, the server MUST respond with another protocol version it supports."
        requested = params.protocol_version
        version = requested if requested in wire.LEGACY_VERSIONS else wire.LATEST_LEGACY
        features = parse_features(params.capabilities)
        session = LegacySession(
            version,
            _to_store("capabilities", params.capabilities),
            _to_store("clientInfo", params.client_info),
            features,
            folders=declares_folders(params.capabilities),
        )
        await channel.start_session(session)
        log.info("session %s… started (%s)", session.id[:8], version)
        negotiated = describe(
            features, binary_cap=self.resources.binary_cap, default=self.default_features
        )
        result = {
            "protocolVersion": version,
            "capabilities": self.capabilities(),
            "serverInfo": SERVER_INFO,
            # Content negotiation SEP: say in one sentence what was negotiated for the session.
            "instructions": f"{self.instructions} {negotiated}",
        }
        return Reply(wire.result_response(message.id, result), session_id=session.id)

    # -- notifications in and out ------------------------------------------------------------

    async def _notified(self, message: Incoming, channel: Channel) -> Outcome:
        if message.method == INITIALIZED:
            session = await channel.session()
            if session is not None and not session.initialized:
                session.initialized = True
                self._tell(INITIALIZED, session, channel)
                if channel.pushes_session_notifications:
                    # basic/lifecycle: no server notifications before "initialized".
                    return self.session_stream(session)
        elif message.method == CANCELLED:
            self._cancel(channel.peer(), message.params.get("requestId"))
        elif message.method in self._hooks:
            session = await channel.session()
            if session is not None and session.initialized:
                self._tell(message.method, session, channel)
        return ACCEPTED

    def _cancel(self, peer: Peer | None, request_id: object) -> None:
        """basic/utilities/cancellation: stop a stream and send nothing more for it, or drop the
        answer of a request still running. A requestId that cannot name a request, or names
        none of this peer's, is ignored ("Error Handling")."""
        if peer is None or not is_request_id(request_id):
            return
        listener = peer.streams.pop(request_id, None)
        if listener is not None:
            self.bus.end(listener)
        elif request_id in peer.running:
            peer.cancelled.add(request_id)

    def _listen(self, message: Incoming, channel: Channel) -> Stream:
        """2026-07-28 basic/patterns/subscriptions: a stream that stays open."""
        params = ListenParams.parse(LISTEN, message.params)
        peer = channel.peer()
        return Stream(
            listen(
                self.bus,
                message.id,
                params,
                keepalive_s=self.keepalive_s,
                open_streams=peer.streams if peer is not None else None,
            )
        )

    def session_stream(self, session: LegacySession) -> Stream:
        """A 2025-era session's notifications (HTTP GET; stdio after ``initialized``)."""
        return Stream(session_stream(self.bus, session, keepalive_s=self.keepalive_s))

    # -- handlers of the kernel's own ----------------------------------------------------------

    def _subscribe(self, ctx: RequestContext, params: UriParams) -> dict[str, Any]:
        """2025-11-25 server/resources "Subscriptions": this URI's updates on the session stream."""
        assert ctx.session is not None  # a legacy_only method: a 2025-era context has one
        ctx.session.subscribe(self.folders.subscription_uri(ctx, params.uri))
        return {}

    def _unsubscribe(self, ctx: RequestContext, params: UnsubscribeParams) -> dict[str, Any]:
        assert ctx.session is not None
        ctx.session.unsubscribe(params.uri)
        return {}

    def _discover(self, ctx: RequestContext, params: NoParams) -> dict[str, Any]:
        """2026-07-28 server/discover."""
        return {
            "supportedVersions": list(wire.SUPPORTED_VERSIONS),
            "capabilities": self.capabilities(),
            "instructions": self.discover_instructions,
        }


def _internal_error(exc: Exception, http_status: int = 200) -> wire.McpError:
    """-32603, naming the exception's type only (its message may hold paths or data)."""
    return wire.McpError(
        wire.INTERNAL_ERROR, f"Internal error: {type(exc).__name__}", http_status=http_status
    )


def _failed_before_dispatch(exc: Exception) -> wire.McpError:
    """A failure of the kernel's own steps before a handler ran (the handshake, a session
    lookup): answered like any error, with the request's id where it could be read, on
    every transport alike. HTTP 500: the server failed, not a handler on its input."""
    log.exception("internal error before dispatch")
    return _internal_error(exc, http_status=500)
