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
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from app.mcp import wire
from app.mcp.context import LEGACY, RequestContext
from app.negotiation import NO_FEATURES, Features
from storage.events import Listener


@dataclass(eq=False)
class Peer:
    """One client over time (a 2025-era HTTP session, or a stdio connection): what
    ``notifications/cancelled`` needs to find its requests and streams."""

    streams: dict[Any, Listener] = field(default_factory=dict)  # listen request id → listener
    running: set[Any] = field(default_factory=set)  # ids of requests being answered
    cancelled: set[Any] = field(default_factory=set)  # of those, the ones the client gave up


@dataclass(eq=False)
class LegacySession:
    """One session. What ``initialize`` sent is kept as the compact JSON it arrived as, and
    parsed per request: 64 KiB of JSON can parse into 1.5 MB of Python objects (``[{}, ...]``),
    which a thousand sessions would hold for an hour."""

    protocol_version: str
    capabilities_json: bytes
    client_info_json: bytes  # b"null" when the client sent none (or not an object)
    features: Features = NO_FEATURES  # parsed from the capabilities once, at initialize
    id: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    initialized: bool = False
    subscriptions: set[str] = field(default_factory=set)  # resources/subscribe
    listener: Any = None  # the event-bus listener of the open GET stream, if any
    peer: Peer = field(default_factory=Peer)
    last_used: float = field(default_factory=time.monotonic)

    @property
    def client_capabilities(self) -> dict[str, Any]:
        capabilities: dict[str, Any] = json.loads(self.capabilities_json)
        return capabilities

    @property
    def client_info(self) -> dict[str, Any] | None:
        info: dict[str, Any] | None = json.loads(self.client_info_json)
        return info

    def context(self) -> RequestContext:
        return RequestContext(LEGACY, self.protocol_version, self.features, self)

    def touch(self) -> None:
        """Count as used now (a request, or the end of its notification stream)."""
        self.last_used = time.monotonic()

    @property
    def streaming(self) -> bool:
        return self.listener is not None


class SessionRegistry:
    """The live HTTP sessions, bounded in number and in idle time. Thread-safe: handlers run
    in worker threads."""

    def __init__(self, *, idle_timeout_s: float, max_sessions: int) -> None:
        if idle_timeout_s <= 0 or max_sessions < 1:
            raise ValueError("sessions need a positive idle timeout and room for at least one")
        self.idle_timeout_s = idle_timeout_s
        self.max_sessions = max_sessions
        self._sessions: dict[str, LegacySession] = {}
        self._lock = threading.Lock()

    def add(self, session: LegacySession) -> None:
        """Register a new session, making room if the table is full; -32603 (HTTP 503) when
        every session has an open stream."""
        with self._lock:
            now = time.monotonic()
            self._expire(now)
            if len(self._sessions) >= self.max_sessions:
                idle = [s for s in self._sessions.values() if not s.streaming]
                if not idle:
                    raise wire.McpError(
                        wire.INTERNAL_ERROR,
                        f"Server busy: {self.max_sessions} sessions are open, each with a "
                        "notification stream; end one (DELETE) or try again later",
                        http_status=503,
                    )
                del self._sessions[min(idle, key=lambda s: s.last_used).id]
            session.last_used = now
            self._sessions[session.id] = session

    def get(self, session_id: str) -> LegacySession | None:
        """The session, counted as used now; None if unknown or expired (and then forgotten)."""
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return None
            now = time.monotonic()
            if self._expired(session, now):
                del self._sessions[session_id]
                return None
            session.last_used = now
            return session

    def remove(self, session_id: str) -> LegacySession | None:
        """End the session; None if it was unknown or had already expired."""
        with self._lock:
            session = self._sessions.pop(session_id, None)
            if session is None or self._expired(session, time.monotonic()):
                return None
            return session

    def __len__(self) -> int:
        with self._lock:
            self._expire(time.monotonic())
            return len(self._sessions)

    def _expired(self, session: LegacySession, now: float) -> bool:
        return not session.streaming and now - session.last_used > self.idle_timeout_s

    def _expire(self, now: float) -> None:
        for session_id in [k for k, s in self._sessions.items() if self._expired(s, now)]:
            del self._sessions[session_id]
