"""The ``sessions`` tables: 2025-era HTTP sessions every serving process shares.

The policy (idle expiry, the cap, eviction, one stream a session) is
``app.mcp.sessions``'; this module is its SQL, one short transaction per call.
Creating a session counts and evicts and inserts in one transaction that holds
the write lock throughout (SQLite: it begins with a write; PostgreSQL: an
advisory lock), so the cap holds when several processes create sessions at once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, func, insert, or_, select, text, update
from sqlalchemy.exc import IntegrityError

from docshelf.storage.database import Database
from docshelf.storage.jobs.owners import owner_is_gone
from docshelf.storage.models import SessionRecord, SessionSubscription

_SESSIONS = SessionRecord.metadata.tables["sessions"]
_SUBSCRIPTIONS = SessionRecord.metadata.tables["session_subscriptions"]
LOCK_KEY = 0x646F637373657373  # "docssess": the advisory lock around creating a session
_IN_CHUNK = 500  # keys or URIs per IN (...)

assert SessionSubscription.__tablename__ == "session_subscriptions"


def session_key(session_id: str) -> str:
    """What the table keys a session by: the SHA-256 of its id, never the id itself."""
    return hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()


@dataclass(frozen=True, slots=True)
class SessionRow:
    key: str
    protocol_version: str
    capabilities: bytes
    client_info: bytes
    last_used_at: datetime
    stream_owner: str | None
    stream_beat: datetime | None

    def streaming(self, stale_before: datetime) -> bool:
        """Whether some process holds its stream and said so recently."""
        return (
            self.stream_owner is not None
            and self.stream_beat is not None
            and self.stream_beat >= stale_before
        )


def _last_use(candidate: Any, used_at: Mapping[str, datetime]) -> datetime:
    recorded: datetime = candidate.last_used_at
    return max(recorded, used_at.get(candidate.key, recorded))


class SessionsFull(Exception):
    """Every session at the cap has an open stream: none may be evicted."""


def _chunks(values: Collection[str]) -> list[list[str]]:
    ordered = sorted(values)
    return [ordered[i : i + _IN_CHUNK] for i in range(0, len(ordered), _IN_CHUNK)]


class SessionTable:
    def __init__(self, database: Database) -> None:
        self.database = database
        self.postgres = database.engine.dialect.name == "postgresql"

    # -- one session -----------------------------------------------------------------------

    def get(self, key: str) -> SessionRow | None:
        query = select(*(_SESSIONS.c[name] for name in SessionRow.__slots__)).where(
            _SESSIONS.c.key == key
        )
        with self.database.engine.connect() as connection:
            row = connection.execute(query).first()
        return SessionRow(**row._mapping) if row is not None else None

    def touch(self, key: str, now: datetime) -> None:
        with self.database.engine.begin() as connection:
            connection.execute(
                update(_SESSIONS)
                .where(_SESSIONS.c.key == key, _SESSIONS.c.last_used_at < now)
                .values(last_used_at=now)
            )

    def create(
        self,
        row: SessionRow,
        *,
        max_sessions: int,
        idle_before: datetime,
        stale_before: datetime,
        used_at: Mapping[str, datetime],
    ) -> str | None:
        """Insert ``row``, first dropping expired sessions and, at ``max_sessions``, the
        least recently used one without a stream; returns the key it evicted. ``used_at``:
        later uses this process knows of than the table holds. SessionsFull when every
        session at the cap is streaming."""
        idle = and_(
            _SESSIONS.c.last_used_at < idle_before,
            or_(_SESSIONS.c.stream_owner.is_(None), _SESSIONS.c.stream_beat < stale_before),
        )
        evicted = None
        with self.database.engine.begin() as connection:
            if self.postgres:
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK_KEY})
            # A write first (a no-op): SQLite's driver begins a transaction only at a write,
            # so from here on this one holds the write lock and what it counts stays true.
            connection.execute(delete(_SESSIONS).where(_SESSIONS.c.key == row.key))
            expired = connection.execute(select(_SESSIONS.c.key).where(idle)).scalars().all()
            expired = [k for k in expired if used_at.get(k, idle_before) < idle_before]
            for chunk in _chunks(expired):
                connection.execute(delete(_SESSIONS).where(_SESSIONS.c.key.in_(chunk)))
            live = connection.execute(select(func.count()).select_from(_SESSIONS)).scalar() or 0
            if live >= max_sessions:
                candidates = connection.execute(
                    select(_SESSIONS.c.key, _SESSIONS.c.last_used_at).where(
                        or_(
                            _SESSIONS.c.stream_owner.is_(None),
                            _SESSIONS.c.stream_beat < stale_before,
                        )
                    )
                ).all()
                if not candidates:
                    raise SessionsFull
                evicted = min(candidates, key=lambda c: _last_use(c, used_at)).key
                connection.execute(delete(_SESSIONS).where(_SESSIONS.c.key == evicted))
            connection.execute(
                insert(_SESSIONS).values(
                    key=row.key,
                    protocol_version=row.protocol_version,
                    capabilities=row.capabilities,
                    client_info=row.client_info,
                    created_at=row.last_used_at,
                    last_used_at=row.last_used_at,
                )
            )
        return evicted

    def delete(self, key: str, *, idle_before: datetime | None = None) -> bool:
        """End the session (its subscriptions go with it); with ``idle_before``, only if it
        was last used before then (an expiry that another process's use has not undone)."""
        condition = _SESSIONS.c.key == key
        if idle_before is not None:
            condition = and_(condition, _SESSIONS.c.last_used_at < idle_before)
        with self.database.engine.begin() as connection:
            return connection.execute(delete(_SESSIONS).where(condition)).rowcount > 0

    # -- streams ---------------------------------------------------------------------------

    def claim_stream(self, key: str, owner: str, now: datetime, *, stale_before: datetime) -> bool:
        """Make ``owner`` the holder of the session's stream, unless another process holds
        it (and said so since ``stale_before``)."""
        with self.database.engine.begin() as connection:
            claimed = connection.execute(
                update(_SESSIONS)
                .where(
                    _SESSIONS.c.key == key,
                    or_(
                        _SESSIONS.c.stream_owner.is_(None),
                        _SESSIONS.c.stream_beat < stale_before,
                    ),
                )
                .values(stream_owner=owner, stream_beat=now, last_used_at=now)
            )
            return claimed.rowcount > 0

    def release_stream(self, key: str, owner: str, now: datetime) -> None:
        """The stream ended: idle from now (not from the session's last request)."""
        with self.database.engine.begin() as connection:
            connection.execute(
                update(_SESSIONS)
                .where(_SESSIONS.c.key == key, _SESSIONS.c.stream_owner == owner)
                .values(stream_owner=None, stream_beat=None, last_used_at=now)
            )

    def beat(self, keys: Collection[str], owner: str, now: datetime) -> None:
        """``owner`` still holds these streams."""
        with self.database.engine.begin() as connection:
            for chunk in _chunks(keys):
                connection.execute(
                    update(_SESSIONS)
                    .where(_SESSIONS.c.key.in_(chunk), _SESSIONS.c.stream_owner == owner)
                    .values(stream_beat=now)
                )

    def existing(self, keys: Collection[str]) -> set[str]:
        """Those of ``keys`` still in the table."""
        found: set[str] = set()
        with self.database.engine.connect() as connection:
            for chunk in _chunks(keys):
                query = select(_SESSIONS.c.key).where(_SESSIONS.c.key.in_(chunk))
                found.update(connection.execute(query).scalars())
        return found

    def release_orphans(self, me: str) -> int:
        """Release the streams of processes on this host that are gone (a restart): their
        clients reconnect at once rather than after the holder's beat goes stale."""
        with self.database.engine.connect() as connection:
            owners = (
                connection.execute(
                    select(_SESSIONS.c.stream_owner)
                    .where(_SESSIONS.c.stream_owner.is_not(None))
                    .distinct()
                )
                .scalars()
                .all()
            )
        gone = [owner for owner in owners if owner_is_gone(owner, me)]
        if not gone:
            return 0
        with self.database.engine.begin() as connection:
            return connection.execute(
                update(_SESSIONS)
                .where(_SESSIONS.c.stream_owner.in_(gone))
                .values(stream_owner=None, stream_beat=None)
            ).rowcount

    # -- subscriptions ---------------------------------------------------------------------

    def subscribe(self, key: str, uri: str) -> bool:
        """Record a subscription; False if the session is gone.

        A failed insert is one of two races: the session ended meanwhile (its foreign
        key), or another request recorded the same subscription at once (PostgreSQL: the
        insert waits for that row, then meets it) — then it is recorded, as asked.
        """
        try:
            with self.database.engine.begin() as connection:
                connection.execute(
                    delete(_SUBSCRIPTIONS).where(
                        _SUBSCRIPTIONS.c.session_key == key, _SUBSCRIPTIONS.c.uri == uri
                    )
                )
                connection.execute(
                    insert(_SUBSCRIPTIONS).values(
                        session_key=key, uri=uri, document_uri=uri.partition("?")[0]
                    )
                )
        except IntegrityError:
            return bool(self.existing([key]))
        return True

    def unsubscribe(self, key: str, uri: str) -> None:
        with self.database.engine.begin() as connection:
            connection.execute(
                delete(_SUBSCRIPTIONS).where(
                    _SUBSCRIPTIONS.c.session_key == key, _SUBSCRIPTIONS.c.uri == uri
                )
            )

    def subscribed(self, keys: Collection[str], uris: Collection[str]) -> dict[str, set[str]]:
        """Which subscriptions each of ``keys`` has to ``uris`` or their parts (sessions with
        none left out)."""
        found: dict[str, set[str]] = {}
        with self.database.engine.connect() as connection:
            for key_chunk in _chunks(keys):
                for uri_chunk in _chunks(uris):
                    query = select(_SUBSCRIPTIONS.c.session_key, _SUBSCRIPTIONS.c.uri).where(
                        _SUBSCRIPTIONS.c.session_key.in_(key_chunk),
                        _SUBSCRIPTIONS.c.document_uri.in_(uri_chunk),
                    )
                    for key, uri in connection.execute(query):
                        found.setdefault(key, set()).add(uri)
        return found

    # -- all of them -----------------------------------------------------------------------

    def count(self, *, idle_before: datetime, stale_before: datetime) -> int:
        """Sessions not expired."""
        live = or_(
            _SESSIONS.c.last_used_at >= idle_before,
            and_(_SESSIONS.c.stream_owner.is_not(None), _SESSIONS.c.stream_beat >= stale_before),
        )
        with self.database.engine.connect() as connection:
            query = select(func.count()).select_from(_SESSIONS).where(live)
            return int(connection.execute(query).scalar() or 0)
