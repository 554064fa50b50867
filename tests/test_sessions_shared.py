"""2025-era sessions shared through the database (``app.mcp.sessions``), SQLite and PostgreSQL.

Two registries on one database stand for two serving processes (each has its own bus,
local objects and owner name); ``tests/test_scale_out.py`` does the same with real
processes and real HTTP.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import anyio
import pytest
from sqlalchemy import insert, update

from docshelf.app.mcp import wire
from docshelf.app.mcp.sessions import STALE_S, LegacySession, SessionRegistry
from docshelf.storage.database import Database
from docshelf.storage.events import ChangeSet, EventBus, Listener
from docshelf.storage.models import SessionRecord, SessionSubscription
from docshelf.storage.sessions import SessionTable

pytestmark = pytest.mark.anyio


class Process:
    def __init__(self, url: str, name: str, **limits: float) -> None:
        self.database = Database(url)
        self.database.upgrade()
        self.bus = EventBus()
        self.sessions = SessionRegistry(
            SessionTable(self.database),
            self.bus,
            idle_timeout_s=limits.get("idle_timeout_s", 3600),
            max_sessions=int(limits.get("max_sessions", 1000)),
            owner=f"{socket.gethostname()}:test-{name}",
        )

    def close(self) -> None:
        self.sessions.close()
        self.bus.close()
        self.database.dispose()


@pytest.fixture
def made(database_url: str) -> Iterator[list[Process]]:
    processes: list[Process] = []
    yield processes
    for process in processes:
        process.close()


def new_session() -> LegacySession:
    return LegacySession("2025-11-25", b'{"roots":{}}', b'{"name":"t","version":"1"}')


def test_a_session_started_in_one_process_is_known_to_another(
    database_url: str, made: list[Process]
) -> None:
    one, two = Process(database_url, "1"), Process(database_url, "2")
    made += [one, two]
    session = new_session()
    one.sessions.add(session)
    there = two.sessions.get(session.id)
    assert there is not None and there is not session
    assert (there.protocol_version, there.client_capabilities) == ("2025-11-25", {"roots": {}})
    assert two.sessions.get("no-such-session") is None
    assert len(one.sessions) == len(two.sessions) == 1
    # Ended in one, unknown in both.
    assert two.sessions.remove(session.id) is not None
    assert one.sessions.get(session.id) is None and two.sessions.get(session.id) is None
    assert two.sessions.remove(session.id) is None


def test_the_table_holds_a_hash_of_the_id_not_the_id(
    database_url: str, made: list[Process]
) -> None:
    one = Process(database_url, "1")
    made.append(one)
    session = new_session()
    one.sessions.add(session)
    with one.database.engine.connect() as connection:
        keys = [row[0] for row in connection.exec_driver_sql("SELECT key FROM sessions")]
    assert keys == [session.key] and session.id not in keys


def test_the_least_recently_used_anywhere_is_evicted_at_the_cap(
    database_url: str, made: list[Process]
) -> None:
    one = Process(database_url, "1", max_sessions=3)
    two = Process(database_url, "2", max_sessions=3)
    made += [one, two]
    first, second, third = new_session(), new_session(), new_session()
    for session in (first, second, third):
        one.sessions.add(session)
    assert one.sessions.get(first.id) is not None  # `second` is now the least recently used
    fourth = new_session()
    one.sessions.add(fourth)
    assert two.sessions.get(second.id) is None
    assert all(two.sessions.get(s.id) is not None for s in (first, third, fourth))


def test_one_stream_a_session_whichever_process_asks_and_streams_are_never_evicted(
    database_url: str, made: list[Process]
) -> None:
    one = Process(database_url, "1", max_sessions=1)
    two = Process(database_url, "2", max_sessions=1)
    made += [one, two]
    session = new_session()
    one.sessions.add(session)
    there = two.sessions.get(session.id)
    assert there is not None
    assert two.sessions.claim_stream(there)
    assert not one.sessions.claim_stream(session)  # 409 in the other process
    with pytest.raises(wire.McpError) as refused:  # the only session streams: no room
        one.sessions.add(new_session())
    assert refused.value.http_status == 503
    two.sessions.release_stream(there)
    assert one.sessions.claim_stream(session)
    one.sessions.release_stream(session)
    one.sessions.add(new_session())  # idle now: evicted for the newcomer
    assert two.sessions.get(session.id) is None


def test_a_stream_whose_holder_fell_silent_no_longer_counts(
    database_url: str, made: list[Process]
) -> None:
    one, two = Process(database_url, "1"), Process(database_url, "2")
    made += [one, two]
    session = new_session()
    one.sessions.add(session)
    assert one.sessions.claim_stream(session)
    with one.database.engine.begin() as connection:  # its holder stopped beating long ago
        connection.execute(update(SessionRecord).values(stream_beat=_long_ago(STALE_S + 1)))
    there = two.sessions.get(session.id)
    assert there is not None and two.sessions.claim_stream(there)


def _long_ago(seconds: float) -> datetime:
    return datetime.now(UTC) - timedelta(seconds=seconds)


def test_an_idle_session_expires_everywhere_unless_used_anywhere(
    database_url: str, made: list[Process]
) -> None:
    one = Process(database_url, "1", idle_timeout_s=0.6)
    two = Process(database_url, "2", idle_timeout_s=0.6)
    made += [one, two]
    idle, busy = new_session(), new_session()
    one.sessions.add(idle)
    one.sessions.add(busy)
    deadline = time.monotonic() + 1.2
    while time.monotonic() < deadline:
        assert two.sessions.get(busy.id) is not None  # used in the other process
        time.sleep(0.1)
    assert one.sessions.get(busy.id) is not None
    assert one.sessions.get(idle.id) is None


def streamed_in_another(
    database_url: str, made: list[Process]
) -> tuple[Process, Process, LegacySession, LegacySession, Listener]:
    """A session started in process one whose GET stream process two holds (as the
    stream does: claimed in the row, a bus listener on the session)."""
    one, two = Process(database_url, "1"), Process(database_url, "2")
    made += [one, two]
    session = new_session()
    one.sessions.add(session)
    there = two.sessions.get(session.id)
    assert there is not None and two.sessions.claim_stream(there)
    there.listener = two.bus.listen()
    return one, two, session, there, there.listener


async def test_a_subscription_made_in_one_process_counts_for_a_stream_in_another(
    database_url: str, made: list[Process]
) -> None:
    _, two, session, there, listener = streamed_in_another(database_url, made)
    session.subscribe("docshelf://s/a.md")  # answered by the first process
    changes = ChangeSet(changed=frozenset({"docshelf://s/a.md", "docshelf://s/b.md"}))
    two.bus.publish(changes)
    with anyio.fail_after(5):
        assert await listener.queue.get() == changes
    assert there.subscriptions == {"docshelf://s/a.md"}
    session.unsubscribe("docshelf://s/a.md")
    two.bus.publish(changes)
    with anyio.fail_after(5):
        await listener.queue.get()
    assert there.subscriptions == frozenset()


async def test_a_session_ended_in_one_process_ends_its_stream_in_another(
    database_url: str, made: list[Process]
) -> None:
    one, _, session, _, listener = streamed_in_another(database_url, made)
    assert one.sessions.remove(session.id) is not None
    with anyio.fail_after(5):
        assert await listener.queue.get() is None  # the end of the stream


def test_streams_of_a_process_that_is_gone_are_released_at_start(
    database_url: str, made: list[Process]
) -> None:
    one = Process(database_url, "1")
    made.append(one)
    session = new_session()
    one.sessions.add(session)
    dead = f"{socket.gethostname()}:999999999"  # no such pid on this host
    with one.database.engine.begin() as connection:
        connection.execute(
            update(SessionRecord).values(stream_owner=dead, stream_beat=_long_ago(0))
        )
    assert not one.sessions.claim_stream(session)
    one.sessions.open()
    assert one.sessions.claim_stream(session)


def test_the_same_subscription_recorded_twice_at_once_is_kept_not_a_session_gone(
    database_url: str, made: list[Process]
) -> None:
    """Two requests subscribing a session to the same URI at once, in two processes (a
    client's retry, say). On PostgreSQL the second insert waits for the first's row and
    then meets it — a duplicate key, which was read as the session's foreign key failing:
    the client was told its session was gone (and this process forgot it). A duplicate
    means the subscription is recorded: the race is handled by answering success."""
    one, two = Process(database_url, "1"), Process(database_url, "2")
    made += [one, two]
    session = new_session()
    one.sessions.add(session)
    there = two.sessions.get(session.id)
    assert there is not None
    uri = "docshelf://s/a.md"
    outcome: list[BaseException | None] = []

    def subscribe_in_process_two() -> None:
        try:
            there.subscribe(uri)
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    with one.database.engine.connect() as first:
        recording = first.begin()  # process one's request, its row not yet committed
        first.execute(
            insert(SessionSubscription).values(session_key=session.key, uri=uri, document_uri=uri)
        )
        worker = threading.Thread(target=subscribe_in_process_two)
        worker.start()
        time.sleep(0.5)  # process two's request reaches the same row and waits for it
        recording.commit()
    worker.join(timeout=30)
    assert outcome == [None]
    assert two.sessions.get(session.id) is not None
    assert two.sessions.table.subscribed([session.key], [uri]) == {session.key: {uri}}
