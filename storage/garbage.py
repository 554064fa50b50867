"""Releasing stored variants: the store follows the database, never the other way round.

A stored variant is content-addressed, so two documents (or the old and new
rows of one document re-converted to the same bytes) can share a key. A key is
deleted only after the transaction that dropped its last row has committed, and
only if no committed row still references it (issue "Nothing lost", item 1: a
forced reindex used to delete the very files it had just written).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from sqlalchemy import select

from docshelf.storage.database import Database
from docshelf.storage.models import Representation
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
