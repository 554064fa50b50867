"""Handshake-era sessions (2025-11-25 basic/lifecycle, basic/transports "Session Management").

A session remembers what ``initialize`` negotiated: the protocol version and the
client's capabilities. Streamable HTTP keeps many, keyed by ``Mcp-Session-Id``;
stdio has at most one, for the life of the process.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field
from typing import Any

from app.mcp.context import LEGACY, RequestContext


@dataclass(eq=False)
class LegacySession:
    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None
    id: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    initialized: bool = False
    subscriptions: set[str] = field(default_factory=set)  # resources/subscribe
    listener: Any = None  # the event-bus listener of the open GET stream, if any

    def context(self) -> RequestContext:
        return RequestContext(
            LEGACY, self.protocol_version, self.client_capabilities, self.client_info, self
        )


class SessionRegistry:
    """The live HTTP sessions. Thread-safe: handlers run in worker threads."""

    def __init__(self) -> None:
        self._sessions: dict[str, LegacySession] = {}
        self._lock = threading.Lock()

    def add(self, session: LegacySession) -> None:
        with self._lock:
            self._sessions[session.id] = session

    def get(self, session_id: str) -> LegacySession | None:
        with self._lock:
            return self._sessions.get(session_id)

    def remove(self, session_id: str) -> LegacySession | None:
        with self._lock:
            return self._sessions.pop(session_id, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)
