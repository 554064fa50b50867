"""Taking queued documents under a lease, so hosts sharing a database share the backlog.

Issue 27, item 3: "the backlog lives in PostgreSQL, taken with ``SELECT … FOR UPDATE SKIP
LOCKED`` under a lease; … a host that dies mid-task loses nothing: its lease expires and
another host takes the task." A process that builds in the background takes the next
queued documents by writing its name (:func:`storage.changefeed.process_token`: host, pid
and a random part) and an expiry into ``documents.lease_holder`` / ``lease_expires``
(migration 0013):

- A document is *free* when nobody holds it or its lease ran out (the holder died, or
  stalled longer than the lease). Only free documents are taken.
- PostgreSQL: the candidates are selected ``FOR UPDATE SKIP LOCKED`` and leased in the
  same transaction, so two hosts never take the same document and never wait for each
  other's claim. Expiry is reckoned on the database's clock (``now()``), because hosts'
  clocks differ; the lease's length is the only thing each host brings.
- SQLite (one machine, so one clock: this process's): SQLite has no row locks and the
  driver begins its transaction at the first write, so the lease is an ``UPDATE … WHERE``
  the document is still free, ``RETURNING`` what it took; writers are serialised, so
  a document another process took meanwhile is not taken again.
- While its tasks run, the holder renews every lease it holds three times per lease
  (:meth:`Leases.renew`, a heartbeat thread), so an OCR pass that takes many minutes
  keeps its documents. Recording an outcome clears the lease in the same transaction
  (:meth:`Leases.settle`); a process that stops hands back what it still held.

On-demand work takes no lease: a read converts what it needs at once, whoever holds the
document (the recorder already tolerates two hosts recording the same document).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, case, func, or_, select, update
from sqlalchemy.orm import InstrumentedAttribute

from docshelf.storage.database import Database
from docshelf.storage.models import Document
from docshelf.storage.periodic import Periodic
from docshelf.storage.queues import Conditions

log = logging.getLogger(__name__)

DEFAULT_LEASE_S = 60.0
BEATS_PER_LEASE = 3  # renewals per lease: two may be missed before another host takes over
#: Statements that write only lease columns change nothing a reader sees (storage.database).
LEASE_ONLY = {"catalog_unchanged": True}


class Leases:
    """This process's leases on queued documents: taking, renewing and handing them back."""

    def __init__(self, database: Database, holder: str, lease_s: float = DEFAULT_LEASE_S) -> None:
        if lease_s <= 0:
            raise ValueError(f"a conversion lease must last more than 0 s, not {lease_s}")
        self.database = database
        self.holder = holder
        self.lease_s = lease_s
        self._database_clock = database.engine.dialect.name == "postgresql"
        self._held: set[int] = set()
        self._lock = threading.Lock()
        self._heartbeat = Periodic(
            "docshelf-leases",
            lease_s / BEATS_PER_LEASE,
            self.renew,  # a database hiccup: the next beat tries again
            failure=f"the conversion leases of {holder} could not be renewed",
        )

    # -- the clock ------------------------------------------------------------------------

    def _now(self) -> ColumnElement[datetime] | datetime:
        """Now, by the database's clock where hosts share it (PostgreSQL), else this one's."""
        return func.now() if self._database_clock else datetime.now(UTC)

    def _until(self) -> ColumnElement[datetime] | datetime:
        return self._now() + timedelta(seconds=self.lease_s)

    def _free(self) -> ColumnElement[bool]:
        return or_(Document.lease_expires.is_(None), Document.lease_expires < self._now())

    # -- taking ---------------------------------------------------------------------------

    def claim(
        self,
        queues: Sequence[Conditions],
        limit: int,
        *,
        busy: Collection[int] = (),
        first: Collection[int] = (),
    ) -> list[int]:
        """Lease up to ``limit`` free documents from the first of ``queues`` that has any,
        ``first`` before the rest, then smallest first; ``busy``: documents this process
        converts already (on demand: unleased). Returns the ids taken."""
        if limit <= 0:
            return []
        order: list[ColumnElement[Any] | InstrumentedAttribute[int]] = [Document.size, Document.id]
        if first:
            order.insert(0, case((Document.id.in_(list(first)), 0), else_=1))
        for conditions in queues:
            with self.database.session() as session:
                candidates = (
                    select(Document.id)
                    .where(*conditions, self._free(), Document.id.not_in(list(busy)))
                    .order_by(*order)
                    .limit(limit)
                    .with_for_update(skip_locked=True)
                )
                ids = list(session.scalars(candidates))
                if not ids:
                    continue
                taken = list(
                    session.scalars(
                        update(Document)
                        .where(Document.id.in_(ids), *conditions, self._free())
                        .values(lease_holder=self.holder, lease_expires=self._until())
                        .returning(Document.id)
                        .execution_options(synchronize_session=False, **LEASE_ONLY)
                    )
                )
            if taken:
                with self._lock:
                    self._held.update(taken)
                self._heartbeat.start()
                return taken
        return []

    # -- holding --------------------------------------------------------------------------

    def held(self) -> set[int]:
        with self._lock:
            return set(self._held)

    def renew(self) -> int:
        """Push back the expiry of every lease this process holds; returns how many it
        still held (one another process took after it ran out is converted twice, and
        recorded twice: harmless, and logged)."""
        ids = self.held()
        if not ids:
            return 0
        with self.database.session() as session:
            renewed = len(
                session.scalars(
                    update(Document)
                    .where(Document.id.in_(ids), Document.lease_holder == self.holder)
                    .values(lease_expires=self._until())
                    .returning(Document.id)
                    .execution_options(synchronize_session=False, **LEASE_ONLY)
                ).all()
            )
        if renewed < len(ids):
            log.info(
                "%d of the %d conversion leases of %s had run out and were taken by another "
                "process (this one was stalled longer than %g s)",
                len(ids) - renewed,
                len(ids),
                self.holder,
                self.lease_s,
            )
        return renewed

    def settle(self, doc: Document) -> None:
        """Clear this process's lease on ``doc`` (its outcome is being recorded in the same
        transaction). Another process's lease is left alone: it is converting the document
        too, or has died and its lease runs out."""
        if doc.lease_holder == self.holder:
            doc.lease_holder = None
            doc.lease_expires = None

    def forget(self, ids: Iterable[int]) -> None:
        """Stop renewing these leases (their outcomes are recorded, or given up)."""
        with self._lock:
            self._held.difference_update(ids)

    def close(self) -> None:
        """Stop renewing, and hand back every lease still held so another process takes
        those documents now rather than once the leases run out."""
        self._heartbeat.stop()
        ids = self.held()
        if not ids:
            return
        try:
            with self.database.session() as session:
                session.execute(
                    update(Document)
                    .where(Document.id.in_(ids), Document.lease_holder == self.holder)
                    .values(lease_holder=None, lease_expires=None)
                    .execution_options(synchronize_session=False, **LEASE_ONLY)
                )
        except Exception:  # shutting down with the database gone: the leases run out
            log.warning("could not hand back %d conversion leases; they run out", len(ids))
        self.forget(ids)
