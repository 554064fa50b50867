"""The change feed: change sets crossing the processes that share one database.

Every set published on a process's :class:`~storage.events.EventBus` is appended to
the ``change_log`` table, and every serving process follows that table, handing the
sets *other* processes appended to its own listeners (:meth:`EventBus.deliver`). A
process's own sets reach its listeners at once through the bus and are skipped in the
log (each row names its ``origin``). Before delivering another process's set, the
follower moves ``Database.generation``, so nothing cached from before that change (the
catalog cache) is served after it. So a subscriber hears about a change whichever
process made it: the indexing child of ``serve --processes N``, a replica sharing
PostgreSQL, a ``docshelf reindex`` run, or a read that built a missing format.

Appending happens on a writer thread (publishing never waits for the database); sets
queued together are written as one row. Following:

- SQLite: poll ``WHERE id > last`` every ``poll_s`` (an indexed, usually empty read).
- PostgreSQL: ``LISTEN`` on a channel each append ``NOTIFY``s in its transaction (an
  empty payload: a wake-up; the rows carry the sets), polling as a fallback.

Ids must become visible in id order, or a follower that has read id 7 would never see
a slower transaction's id 6. SQLite serialises writers (the id is taken under the write
lock held to the commit). PostgreSQL takes sequence values at insert and commits in any
order, so each append first takes a transaction-scoped advisory lock: appends (one per
indexed batch, few) commit one after another, in id order.

A follower starts at the newest row: nothing published before it started is replayed.
The writer prunes rows older than ``retain_s``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import secrets
import socket
import threading
import time
from datetime import UTC, datetime, timedelta
from select import select as wait_readable
from typing import Any

from sqlalchemy import delete, func, insert, select, text

from docshelf.storage.database import Database
from docshelf.storage.events import ChangeSet, EventBus
from docshelf.storage.models import ChangeRecord

log = logging.getLogger(__name__)

_LOG = ChangeRecord.metadata.tables["change_log"]
CHANNEL = "docshelf_changes"
LOCK_KEY = 0x646F637368656C66  # "docshelf": the advisory lock that orders appends
PAGE = 200  # rows read at a time
PRUNE_EVERY_S = 60.0
LISTEN_TIMEOUT_S = 2.0  # PostgreSQL: the fallback poll when LISTENing
RETRIES = 3


def process_token() -> str:
    """A name for this process in ``change_log.origin``, unique among processes alive."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{secrets.token_hex(4)}"


class ChangeFeed:
    """Publishes this process's change sets to the database and follows the others'."""

    def __init__(
        self,
        database: Database,
        bus: EventBus,
        *,
        poll_s: float = 0.2,
        retain_s: float = 600.0,
        origin: str | None = None,
    ) -> None:
        self.database = database
        self.bus = bus
        self.poll_s = poll_s
        self.retain_s = retain_s
        self.origin = origin or process_token()
        self.postgres = database.engine.dialect.name == "postgresql"
        self._listenable = self.postgres  # until the driver turns out not to LISTEN
        self.last_id: int | None = None  # the newest row this follower has read
        self._outbox: queue.SimpleQueue[ChangeSet | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._follower: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = os.pipe()  # close() writes to it: a follower waiting on LISTEN returns
        self._closed = False
        self._pruned_at = 0.0

    # -- publishing -----------------------------------------------------------------------

    def publish(self) -> None:
        """Append every set published on the bus from now on (the schema must exist)."""
        if self._writer is not None:
            return
        self._writer = threading.Thread(target=self._write, name="docshelf-feed-out", daemon=True)
        self._writer.start()
        self.bus.relay_to(self._enqueue)

    def _enqueue(self, changes: ChangeSet) -> None:
        if not self._closed:
            self._outbox.put(changes)

    def _write(self) -> None:
        while True:
            pending = [self._outbox.get()]
            with contextlib.suppress(queue.Empty):
                while True:
                    pending.append(self._outbox.get_nowait())
            changes = ChangeSet()
            for item in pending:
                if item is not None:
                    changes |= item
            if changes:
                self._append_retrying(changes)
            if time.monotonic() - self._pruned_at > PRUNE_EVERY_S:
                self._prune()
            if None in pending:
                return

    def _append_retrying(self, changes: ChangeSet) -> None:
        for attempt in range(1, RETRIES + 1):
            try:
                self.append(changes)
                return
            except Exception:
                if attempt == RETRIES:
                    log.exception(
                        "could not record a change set for the other processes "
                        "(%d URIs); their subscribers miss it",
                        len(changes.added | changes.removed | changes.changed | changes.refreshed),
                    )
                    return
                log.warning("recording a change set failed; retrying", exc_info=True)
                time.sleep(0.5 * attempt)

    def append(self, changes: ChangeSet) -> None:
        """Write one set to the log now (the writer thread's job; public for tests)."""
        row = {
            "origin": self.origin,
            "created_at": datetime.now(UTC),
            "added": sorted(changes.added),
            "removed": sorted(changes.removed),
            "changed": sorted(changes.changed),
            "refreshed": sorted(changes.refreshed),
        }
        with self.database.engine.begin() as connection:
            if self.postgres:
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK_KEY})
            connection.execute(insert(_LOG), row)
            if self.postgres:
                # Delivered at commit, so a follower woken by it finds the row.
                connection.execute(text("SELECT pg_notify(:channel, '')"), {"channel": CHANNEL})

    def _prune(self) -> None:
        self._pruned_at = time.monotonic()
        cutoff = datetime.now(UTC) - timedelta(seconds=self.retain_s)
        try:
            with self.database.engine.begin() as connection:
                connection.execute(delete(_LOG).where(_LOG.c.created_at < cutoff))
        except Exception:
            log.warning("pruning the change log failed", exc_info=True)

    # -- following ------------------------------------------------------------------------

    def follow(self) -> None:
        """Deliver the sets other processes append from now on to this process's listeners."""
        if self._follower is not None:
            return
        with contextlib.suppress(Exception):  # unreachable now: the thread retries
            self.last_id = self._newest()
        self._follower = threading.Thread(target=self._follow, name="docshelf-feed-in", daemon=True)
        self._follower.start()

    def _newest(self) -> int:
        with self.database.engine.connect() as connection:
            newest = connection.execute(select(func.max(_LOG.c.id))).scalar()
        return int(newest or 0)

    def _follow(self) -> None:
        listener: Any = None
        failures = 0
        while not self._stop.is_set():
            try:
                if self.last_id is None:
                    self.last_id = self._newest()
                if self._listenable and listener is None:
                    listener = self._listen()
                self.read_new()
                failures = 0
                self._wait(listener)
            except Exception:
                failures += 1
                if failures == 1 or failures % 60 == 0:
                    log.warning(
                        "following the change log failed (%d times in a row); retrying",
                        failures,
                        exc_info=failures == 1,
                    )
                listener = self._unlisten(listener)
                self._stop.wait(min(5.0, self.poll_s * failures))
        self._unlisten(listener)

    def read_new(self) -> int:
        """Deliver every row after the last one read that another process appended;
        returns how many were delivered."""
        delivered = 0
        while not self._stop.is_set():
            query = (
                select(
                    _LOG.c.id,
                    _LOG.c.origin,
                    _LOG.c.added,
                    _LOG.c.removed,
                    _LOG.c.changed,
                    _LOG.c.refreshed,
                )
                .where(_LOG.c.id > (self.last_id or 0))
                .order_by(_LOG.c.id)
                .limit(PAGE)
            )
            with self.database.engine.connect() as connection:
                rows = connection.execute(query).all()
            for row in rows:
                self.last_id = row.id
                if row.origin != self.origin:
                    # What this process has cached from the database is stale now (the
                    # catalog cache, storage.catalog): before anyone is told to read again.
                    self.database.bump()
                    self.bus.deliver(
                        ChangeSet(
                            *map(frozenset, (row.added, row.removed, row.changed, row.refreshed))
                        )
                    )
                    delivered += 1
            if len(rows) < PAGE:
                break
        return delivered

    def _listen(self) -> Any:
        """A dedicated PostgreSQL connection LISTENing on the channel; None when the driver
        cannot wait for notifications (then the follower polls)."""
        pooled = self.database.engine.raw_connection()
        driver: Any = pooled.driver_connection
        if not hasattr(driver, "notifies"):  # psycopg 3 has it; others poll
            pooled.close()
            log.info("this PostgreSQL driver cannot LISTEN; polling the change log instead")
            self._listenable = False
            return None
        pooled.detach()  # ours alone from now on, never back to the pool
        driver.rollback()
        driver.autocommit = True
        driver.execute(f"LISTEN {CHANNEL}")
        return driver

    def _wait(self, listener: Any) -> None:
        """Until a notification, the fallback poll's time, or :meth:`close`."""
        if listener is None:
            self._stop.wait(self.poll_s)
            return
        readable, _, _ = wait_readable([listener.fileno(), self._wake[0]], [], [], LISTEN_TIMEOUT_S)
        if listener.fileno() in readable:
            for _ in listener.notifies(timeout=0):  # consume what arrived; the rows are read next
                pass

    @staticmethod
    def _unlisten(listener: Any) -> None:
        if listener is not None:
            with contextlib.suppress(Exception):
                listener.close()

    # -- closing --------------------------------------------------------------------------

    def close(self, timeout: float = 5.0) -> None:
        """Stop following, and write what was published before (within ``timeout``)."""
        if self._closed:
            return
        self._stop.set()
        self._closed = True
        with contextlib.suppress(OSError):
            os.write(self._wake[1], b"x")
        if self._writer is not None:
            self._outbox.put(None)
            self._writer.join(timeout)
        if self._follower is not None:
            self._follower.join(timeout)
        for end in self._wake:
            with contextlib.suppress(OSError):
                os.close(end)
