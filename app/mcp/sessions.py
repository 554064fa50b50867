"""Handshake-era sessions (2025-11-25 basic/lifecycle, basic/transports "Session Management").

A session remembers what ``initialize`` negotiated: the protocol version and the
client's capabilities. Streamable HTTP keeps many, keyed by ``Mcp-Session-Id``;
stdio has at most one, for the life of the process.

Nothing obliges a client to end its session (DELETE is a SHOULD), so the HTTP
registry bounds what clients can leave behind: a session unused for
``idle_timeout_s`` expires, and at ``max_sessions`` a new one takes the place of
the least recently used idle one. "Idle" means no request and no open
notification stream: a session whose client is listening is never dropped, and
only when every session is listening is a new one refused. A dropped session is
unknown from then on: 404, after which the client starts a new one ("Session
Management" 3 and 4). Evicting rather than refusing is the kinder failure:
refusing would let whoever fills the table lock every other client out for an
hour, while an evicted client recovers with one ``initialize``.

**Every serving process knows every session** (``serve --processes N``, replicas
behind a load balancer: any process may receive any request of a session). HTTP
sessions live in the database (``storage.sessions``), keyed by the SHA-256 of their
id; each process keeps what does not change (version, capabilities, parsed feature
tags) in a local object, answers from it while its row was found within ``CONFIRM_S``
and looks the row up otherwise, so a session ended anywhere is 404 everywhere within a
second (at once in the process that ended it). What the rules above need across processes:

- *Last use* is written at most every ``idle_timeout_s / 10`` (at most a minute) per
  session; this process's own later uses count too, so here the order is exact, and
  another process may expire a session up to that much early.
- *A stream* is claimed in the row by the process that holds it (one per session:
  the second GET, wherever it lands, is 409), which says so every ``BEAT_S``; a
  holder silent for ``STALE_S`` (killed) no longer counts, and at start a process
  releases the streams of processes on its host that are gone.
- *Subscriptions* are rows of their own. Before a change set reaches this process's
  session streams, the subscriptions of those sessions to the URIs it names are read
  afresh, in one query (:meth:`SessionRegistry.refresh`), so a ``resources/subscribe``
  answered by any process counts for the next change, wherever the stream is.
- *Ending* (DELETE, expiry, eviction) deletes the row; the process holding the
  stream ends it at once if it is the one that ended the session, else within
  ``CHECK_S``.

What stays per process: the ``initialized`` flag (nothing on HTTP depends on it) and
what ``notifications/cancelled`` needs (:class:`Peer`): a cancellation reaching
another process than the request it names is ignored, which the spec allows.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from docshelf.app.mcp import wire
from docshelf.app.mcp.context import LEGACY, RequestContext, declares_folders
from docshelf.app.mcp.outbound import ClientRequests
from docshelf.app.negotiation_features import NO_FEATURES, Features, parse_features
from docshelf.storage.events import ChangeSet, EventBus, Listener
from docshelf.storage.folders import folders_touched
from docshelf.storage.jobs import process_owner
from docshelf.storage.sessions import SessionRow, SessionsFull, SessionTable, session_key
from docshelf.storage.uris import document_of

log = logging.getLogger(__name__)

BEAT_S = 5.0  # a process says it still holds its streams this often
STALE_S = 20.0  # a stream whose holder has been silent this long no longer counts
CHECK_S = 1.0  # how often a process looks for its streamed sessions ended elsewhere
# A session whose row this process found this recently is served from memory, on the event
# loop (SessionRegistry.recent): a request path that asked the database on every request
# ran at a fraction of the speed. So a session ended in another process is still served
# here for at most this long; one ended in this process is gone at once.
CONFIRM_S = 1.0


@dataclass(eq=False)
class Peer:
    """One client over time (a 2025-era HTTP session, or a stdio connection): what
    ``notifications/cancelled`` needs to find its requests and streams, and where the
    answers to our own requests go."""

    streams: dict[Any, Listener] = field(default_factory=dict)  # listen request id → listener
    running: set[Any] = field(default_factory=set)  # ids of requests being answered
    cancelled: set[Any] = field(default_factory=set)  # of those, the ones the client gave up
    # The requests this server sends the client (stdio only: app.mcp.outbound).
    outbound: ClientRequests | None = None


@dataclass(eq=False)
class LegacySession:
    """One session. What ``initialize`` sent is kept as the compact JSON it arrived as, and
    parsed per request: 64 KiB of JSON can parse into 1.5 MB of Python objects (``[{}, ...]``),
    which a thousand sessions would hold for an hour."""

    protocol_version: str
    capabilities_json: bytes
    client_info_json: bytes  # b"null" when the client sent none (or not an object)
    features: Features = NO_FEATURES  # parsed from the capabilities once, at initialize
    folders: bool = False  # the capabilities declare the folders extension (declares_folders)
    id: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    initialized: bool = False
    # resources/subscribe; replaced, never changed in place (streams read it from other
    # threads). For an HTTP session, what the database said of the URIs of recent changes.
    subscriptions: frozenset[str] = frozenset()
    listener: Any = None  # the event-bus listener of the open GET stream, if any
    peer: Peer = field(default_factory=Peer)
    last_used: float = field(default_factory=time.time)  # seconds since the epoch
    confirmed_at: float = 0.0  # when this process last found the session's row (epoch s)
    registry: SessionRegistry | None = field(default=None, repr=False)  # HTTP sessions

    @property
    def key(self) -> str:
        return session_key(self.id)

    @property
    def client_capabilities(self) -> dict[str, Any]:
        capabilities: dict[str, Any] = json.loads(self.capabilities_json)
        return capabilities

    @property
    def client_info(self) -> dict[str, Any] | None:
        info: dict[str, Any] | None = json.loads(self.client_info_json)
        return info

    def context(self) -> RequestContext:
        return RequestContext(
            LEGACY, self.protocol_version, self.features, self, folders=self.folders
        )

    def touch(self) -> None:
        """Count as used now (a request, or the end of its notification stream)."""
        self.last_used = time.time()

    @property
    def streaming(self) -> bool:
        return self.listener is not None

    def subscribe(self, uri: str) -> None:
        """``resources/subscribe`` (may block: an HTTP session records it in the database)."""
        if self.registry is not None:
            self.registry.subscribe(self, uri)
        self.subscriptions = self.subscriptions | {uri}

    def unsubscribe(self, uri: str) -> None:
        if self.registry is not None:
            self.registry.unsubscribe(self, uri)
        self.subscriptions = self.subscriptions - {uri}


def _session_gone() -> wire.McpError:
    return wire.McpError(
        wire.INVALID_REQUEST, "Session not found: start a new one with initialize", http_status=404
    )


def _at(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


class SessionRegistry:
    """The live HTTP sessions of every process sharing the database, bounded in number and in
    idle time. Thread-safe; every method but :meth:`refresh` may block on the database, so the
    transport calls them off the event loop."""

    def __init__(
        self,
        table: SessionTable,
        bus: EventBus,
        *,
        idle_timeout_s: float,
        max_sessions: int,
        owner: str | None = None,
    ) -> None:
        if idle_timeout_s <= 0 or max_sessions < 1:
            raise ValueError("sessions need a positive idle timeout and room for at least one")
        self.table = table
        self.bus = bus
        self.idle_timeout_s = idle_timeout_s
        self.max_sessions = max_sessions
        self.owner = owner or process_owner()
        self.touch_every_s = min(idle_timeout_s / 10, 60.0)
        self._local: OrderedDict[str, LegacySession] = OrderedDict()  # by id, least recent first
        self._streaming: dict[str, LegacySession] = {}  # by key: the streams this process holds
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        bus.on_delivery(self.refresh)

    # -- life cycle ------------------------------------------------------------------------

    def open(self) -> None:
        """Release the streams dead processes on this host left claimed."""
        if released := self.table.release_orphans(self.owner):
            log.info("released %d session streams of processes that are gone", released)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # -- sessions --------------------------------------------------------------------------

    def add(self, session: LegacySession) -> None:
        """Register a new session, making room if the table is full; -32603 (HTTP 503) when
        every session has an open stream."""
        now = time.time()
        row = SessionRow(
            session.key,
            session.protocol_version,
            session.capabilities_json,
            session.client_info_json,
            _at(now),
            None,
            None,
        )
        try:
            evicted = self.table.create(
                row,
                max_sessions=self.max_sessions,
                idle_before=_at(now - self.idle_timeout_s),
                stale_before=_at(now - STALE_S),
                used_at=self._used_at(),
            )
        except SessionsFull:
            raise wire.McpError(
                wire.INTERNAL_ERROR,
                f"Server busy: {self.max_sessions} sessions are open, each with a "
                "notification stream; end one (DELETE) or try again later",
                http_status=503,
            ) from None
        session.registry = self
        session.last_used = session.confirmed_at = now
        with self._lock:
            if evicted is not None:
                self._forget_key(evicted)
            self._remember(session)

    def get(self, session_id: str) -> LegacySession | None:
        """The session, counted as used now; None if unknown or expired (and then forgotten)."""
        key = session_key(session_id)
        row = self.table.get(key)
        with self._lock:
            local = self._local.get(session_id)
        if row is None:
            self._forget(session_id)
            return None
        now = time.time()
        # Expired: gone, unless another process used it meanwhile (the delete checks).
        if self._expired(row, local, now) and self.table.delete(
            key, idle_before=_at(now - self.idle_timeout_s)
        ):
            self._forget(session_id)
            return None
        if now - row.last_used_at.timestamp() >= self.touch_every_s:
            self.table.touch(key, _at(now))
        if local is None:
            capabilities = json.loads(row.capabilities)
            local = LegacySession(
                row.protocol_version,
                row.capabilities,
                row.client_info,
                parse_features(capabilities),
                folders=declares_folders(capabilities),
                id=session_id,
                initialized=True,  # initialize happened, in some process
                registry=self,
            )
        local.last_used = local.confirmed_at = now
        with self._lock:
            self._remember(local)
        return local

    def recent(self, session_id: str) -> LegacySession | None:
        """The session, from memory, if this process found its row within ``CONFIRM_S``
        (counted as used now); else None, and the caller asks :meth:`get`. Never blocks."""
        with self._lock:
            local = self._local.get(session_id)
        now = time.time()
        if local is None or now - local.confirmed_at > CONFIRM_S:
            return None
        local.last_used = now
        return local

    def remove(self, session_id: str) -> LegacySession | None:
        """End the session everywhere; None if it was unknown or had already expired."""
        session = self.get(session_id)
        if session is None or not self.table.delete(session.key):
            return None
        self._forget(session_id)
        return session

    def __len__(self) -> int:
        now = time.time()
        return self.table.count(
            idle_before=_at(now - self.idle_timeout_s), stale_before=_at(now - STALE_S)
        )

    def _expired(self, row: SessionRow, local: LegacySession | None, now: float) -> bool:
        if (local is not None and local.streaming) or row.streaming(_at(now - STALE_S)):
            return False
        used = max(row.last_used_at.timestamp(), local.last_used if local is not None else 0.0)
        return now - used > self.idle_timeout_s

    def _used_at(self) -> dict[str, datetime]:
        """Uses this process knows of, for the table to weigh against its own record."""
        with self._lock:
            return {s.key: _at(s.last_used) for s in self._local.values()}

    def _remember(self, session: LegacySession) -> None:
        """(Under the lock.) Keep the local object, the most recently used last; at most
        ``max_sessions`` of them, those with a stream kept whatever their age."""
        self._local[session.id] = session
        self._local.move_to_end(session.id)
        while len(self._local) > self.max_sessions:
            oldest = next((s for s in self._local.values() if not s.streaming), None)
            if oldest is None:
                break
            del self._local[oldest.id]

    def _forget(self, session_id: str) -> None:
        with self._lock:
            session = self._local.pop(session_id, None)
        if session is not None and session.listener is not None:
            self.bus.end(session.listener)

    def _forget_key(self, key: str) -> None:
        """(Under the lock.) The session evicted: its local object goes too."""
        for session in [s for s in self._local.values() if s.key == key]:
            del self._local[session.id]
            if session.listener is not None:
                self.bus.end(session.listener)

    # -- streams ---------------------------------------------------------------------------

    def claim_stream(self, session: LegacySession) -> bool:
        """Make this process the holder of the session's GET stream; False if some process
        (this one included) holds it already."""
        if session.listener is not None:
            return False
        now = time.time()
        if not self.table.claim_stream(
            session.key, self.owner, _at(now), stale_before=_at(now - STALE_S)
        ):
            return False
        with self._lock:
            self._streaming[session.key] = session
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._watch_streams, name="docshelf-sessions", daemon=True
                )
                self._thread.start()
        return True

    def release_stream(self, session: LegacySession) -> None:
        """The stream ended: the session is idle from now."""
        with self._lock:
            self._streaming.pop(session.key, None)
        session.touch()
        self.table.release_stream(session.key, self.owner, _at(session.last_used))

    def _watch_streams(self) -> None:
        """End the streams of sessions ended by other processes; say every ``BEAT_S`` that
        this process still holds its streams."""
        beaten = time.monotonic()
        while not self._stop.wait(CHECK_S):
            with self._lock:
                held = dict(self._streaming)
            if not held:
                continue
            try:
                for key in held.keys() - self.table.existing(held):
                    session = held[key]
                    log.info("session %s… ended elsewhere; ending its stream", session.id[:8])
                    with self._lock:
                        self._streaming.pop(key, None)
                    self._forget(session.id)
                if time.monotonic() - beaten >= BEAT_S:
                    beaten = time.monotonic()
                    self.table.beat(held, self.owner, _at(time.time()))
            except Exception:
                log.warning("checking the open session streams failed", exc_info=True)

    # -- subscriptions ---------------------------------------------------------------------

    def subscribe(self, session: LegacySession, uri: str) -> None:
        if not self.table.subscribe(session.key, uri):
            self._forget(session.id)
            raise _session_gone()

    def unsubscribe(self, session: LegacySession, uri: str) -> None:
        self.table.unsubscribe(session.key, uri)

    def refresh(self, changes: ChangeSet) -> None:
        """Before ``changes`` reaches this process's session streams: what their sessions
        subscribe to among the URIs it names and the folders above them, as the database
        says now (an event-bus hook, in the thread that delivers the set)."""
        with self._lock:
            held = dict(self._streaming)
        if not held:
            return
        uris = changes.changed | changes.removed | folders_touched(changes)
        if not uris:
            return
        found = self.table.subscribed(held, uris)
        for key, session in held.items():
            kept = {uri for uri in session.subscriptions if document_of(uri) not in uris}
            session.subscriptions = frozenset(kept | found.get(key, set()))
