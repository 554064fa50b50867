"""The change feed (``storage.changefeed``) on a real database, SQLite and PostgreSQL.

Two feeds on one database stand for two processes (each has its own origin token,
bus and connections); the real-process tests are in ``tests/test_scale_out.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import anyio
import pytest
from sqlalchemy import func, select

from docshelf.storage.changefeed import ChangeFeed
from docshelf.storage.database import Database
from docshelf.storage.events import ChangeSet, EventBus, Listener
from docshelf.storage.models import ChangeRecord

pytestmark = pytest.mark.anyio


class Process:
    """What one process has: a database handle, a bus, a feed."""

    def __init__(self, url: str, *, retain_s: float = 600.0, poll_s: float = 0.05) -> None:
        self.database = Database(url)
        self.database.upgrade()
        self.bus = EventBus()
        self.feed = ChangeFeed(self.database, self.bus, poll_s=poll_s, retain_s=retain_s)

    def start(self) -> Process:
        self.feed.publish()
        self.feed.follow()
        return self

    def close(self) -> None:
        self.feed.close()
        self.bus.close()
        self.database.dispose()


@pytest.fixture
def processes(database_url: str) -> Iterator[list[Process]]:
    made: list[Process] = []
    yield made
    for process in made:
        process.close()


async def _received(listener: Listener, count: int, timeout: float = 10) -> list[ChangeSet]:
    sets = []
    with anyio.fail_after(timeout):
        while len(sets) < count:
            changes = await listener.queue.get()
            assert changes is not None
            sets.append(changes)
    return sets


async def _nothing_more(listener: Listener, wait: float = 0.5) -> None:
    await anyio.sleep(wait)
    assert listener.queue.empty(), listener.queue.get_nowait()


async def test_a_set_published_in_one_process_reaches_the_others_once(
    database_url: str, processes: list[Process]
) -> None:
    one, two = Process(database_url).start(), Process(database_url).start()
    processes += [one, two]
    here, there = one.bus.listen(), two.bus.listen()
    changes = ChangeSet(
        added=frozenset({"docshelf://s/a.md"}), changed=frozenset({"docshelf://s/b.md"})
    )
    one.bus.publish(changes)
    assert await _received(here, 1, timeout=1) == [changes]  # locally at once
    assert await _received(there, 1) == [changes]
    # Neither hears it a second time: the publisher skips its own rows in the log.
    await _nothing_more(here)
    await _nothing_more(there)


async def test_a_follower_starts_at_the_newest_row_and_replays_nothing(
    database_url: str, processes: list[Process]
) -> None:
    early = Process(database_url).start()
    processes.append(early)
    early.feed.append(ChangeSet(changed=frozenset({"docshelf://s/old.md"})))
    late = Process(database_url).start()
    processes.append(late)
    listener = late.bus.listen()
    await _nothing_more(listener)
    fresh = ChangeSet(removed=frozenset({"docshelf://s/new.md"}))
    early.bus.publish(fresh)
    assert await _received(listener, 1) == [fresh]


async def test_concurrent_appends_from_many_processes_are_all_delivered(
    database_url: str, processes: list[Process]
) -> None:
    """Ids become visible in id order (PostgreSQL: the advisory lock), so a follower
    reading while others append skips none."""
    follower = Process(database_url).start()
    writers = [Process(database_url) for _ in range(4)]
    processes += [follower, *writers]
    listener = follower.bus.listen()
    per_writer = 25

    def write(number: int, writer: Process) -> None:
        for n in range(per_writer):
            writer.feed.append(ChangeSet(changed=frozenset({f"docshelf://s/{number}-{n}.md"})))

    threads = [threading.Thread(target=write, args=(i, w)) for i, w in enumerate(writers)]
    for thread in threads:
        thread.start()
    sets = await _received(listener, per_writer * len(writers), timeout=60)
    for thread in threads:
        thread.join()
    uris = {uri for changes in sets for uri in changes.changed}
    assert len(uris) == per_writer * len(writers)


async def test_old_rows_are_pruned_and_ids_are_never_reused(
    database_url: str, processes: list[Process]
) -> None:
    writer = Process(database_url, retain_s=0.0)
    processes.append(writer)
    for n in range(3):
        writer.feed.append(ChangeSet(changed=frozenset({f"docshelf://s/{n}.md"})))
    follower = Process(database_url).start()
    processes.append(follower)
    before = follower.feed.last_id
    writer.feed._prune()  # retain 0 s: everything goes
    with writer.database.session() as session:
        assert session.scalar(select(func.count(ChangeRecord.id))) == 0
    listener = follower.bus.listen()
    writer.feed.append(ChangeSet(added=frozenset({"docshelf://s/after.md"})))
    (heard,) = await _received(listener, 1)
    assert heard.added == {"docshelf://s/after.md"}
    assert follower.feed.last_id is not None and before is not None
    assert follower.feed.last_id > before  # an emptied table does not restart the ids


async def test_postgresql_followers_are_woken_by_notify_not_the_poll(postgres_url: str) -> None:
    """The fallback poll on PostgreSQL is a second apart; NOTIFY delivers in milliseconds."""
    import time

    one, two = Process(postgres_url).start(), Process(postgres_url, poll_s=1.0).start()
    try:
        listener = two.bus.listen()
        await anyio.sleep(0.3)  # the follower is LISTENing
        for n in range(5):
            started = time.monotonic()
            one.bus.publish(ChangeSet(changed=frozenset({f"docshelf://s/{n}.md"})))
            await _received(listener, 1)
            assert time.monotonic() - started < 0.25, f"set {n} took the poll's way"
    finally:
        one.close()
        two.close()
