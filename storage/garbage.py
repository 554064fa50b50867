"""Releasing stored variants: the store follows the database, never the other way round.

A stored variant is content-addressed, so two documents (or the old and new
rows of one document re-converted to the same bytes) can share a key. A key is
deleted only after the transaction that dropped its last row has committed, and
only if no committed row still references it (issue "Nothing lost", item 1: a
forced reindex used to delete the very files it had just written).

A process killed between writing a variant and committing its row leaves an
object no row will ever name (issue 27: ``kill -9`` of any host). The indexing
process sweeps them: a key older than the grace period that no committed row
references is deleted (:class:`OrphanSweeper`). The grace period must outlast
the longest conversion (a worker writes a document's variants one by one and
its row commits after the last), so a variant in flight is never taken for one.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Iterable

from sqlalchemy import select

from docshelf.storage.database import Database
from docshelf.storage.models import Representation
from docshelf.storage.periodic import Periodic
from docshelf.storage.store import Store

log = logging.getLogger(__name__)


def release_unreferenced(database: Database, store: Store, keys: Iterable[str]) -> int:
    """Delete those of ``keys`` that no committed representation row references; count them."""
    candidates = sorted(set(keys))
    if not candidates:
        return 0
    with database.session() as session:
        referenced = set(
            session.scalars(
                select(Representation.store_key).where(Representation.store_key.in_(candidates))
            )
        )
    released = 0
    for key in candidates:
        if key not in referenced:
            store.delete(key)
            released += 1
    return released


SWEEP_BATCH = 1000  # keys looked up in the index at a time


def sweep_orphans(database: Database, store: Store, *, grace_s: float) -> int:
    """Delete the keys written more than ``grace_s`` seconds ago that no committed row
    references (what a killed process left); count them."""
    swept = 0
    listed = store.keys_before(time.time() - grace_s)
    while batch := list(itertools.islice(listed, SWEEP_BATCH)):
        swept += release_unreferenced(database, store, batch)
    return swept


class OrphanSweeper(Periodic):
    """The indexing process's sweep: once at start, then every ``interval_s`` (a store or
    database hiccup: the next sweep tries again)."""

    def __init__(
        self, database: Database, store: Store, *, grace_s: float, interval_s: float
    ) -> None:
        super().__init__(
            "docshelf-sweep",
            interval_s,
            self.sweep,
            failure="sweeping the store for objects no row names failed",
            at_start=True,
        )
        self.database = database
        self.store = store
        self.grace_s = grace_s

    def sweep(self) -> None:
        swept = sweep_orphans(self.database, self.store, grace_s=self.grace_s)
        if swept:
            log.info("swept %d stored objects no row names (%s)", swept, self.store.location)
