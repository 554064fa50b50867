"""The operators' read queries over the index: documents filtered and in id order, counts,
the representation store's size.

Unlike :mod:`storage.catalog`, which serves the protocol layer lean records, these
hand back whole :class:`Document` rows with their representations loaded, every column
an operator may want; the session is closed by then (nothing lazy is left to load).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import selectinload

from docshelf.storage.database import Database
from docshelf.storage.models import Document, DocumentState, Representation


@dataclass(frozen=True, slots=True)
class DocumentFilter:
    """Which documents to list; None (or an empty prefix) leaves a column unfiltered."""

    shelf: str | None = None
    mime_type: str | None = None
    state: DocumentState | None = None
    path_prefix: str | None = None


@dataclass(frozen=True, slots=True)
class DocumentCounts:
    by_mime_type: dict[str, int]
    by_state: dict[str, int]
    by_shelf: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.by_state.values())


@dataclass(frozen=True, slots=True)
class StoreUsage:
    representations: int  # distinct stored representations: a shared store key counts once
    bytes: int


def documents_after(
    database: Database, where: DocumentFilter, after_id: int, limit: int
) -> tuple[list[Document], bool]:
    """Up to ``limit`` documents in id order after ``after_id``, and whether more follow."""
    query = (
        select(Document)
        .options(selectinload(Document.representations))
        .where(Document.id > after_id)
        .order_by(Document.id)
        .limit(limit + 1)
    )
    if where.shelf is not None:
        query = query.where(Document.shelf == where.shelf)
    if where.mime_type is not None:
        query = query.where(Document.mime_type == where.mime_type)
    if where.state is not None:
        query = query.where(Document.state == where.state)
    if where.path_prefix:
        # Not LIKE: SQLite's ignores case, and "Guides/" listed "guides/" too. The same
        # comparison as search's filter (storage.search): literal and case-sensitive.
        prefix = where.path_prefix
        query = query.where(func.substr(Document.path, 1, len(prefix)) == prefix)
    with database.session() as session:
        documents = list(session.scalars(query))
    return documents[:limit], len(documents) > limit


def document(database: Database, document_id: int) -> Document | None:
    """The document with its representations, or None."""
    query = (
        select(Document)
        .options(selectinload(Document.representations))
        .where(Document.id == document_id)
    )
    with database.session() as session:
        return session.scalar(query)


def _count_by(database: Database, column: Any) -> dict[str, int]:
    query = select(column, func.count(Document.id)).group_by(column)
    with database.session() as session:
        return {key: count for key, count in session.execute(query).all()}


def document_counts(database: Database) -> DocumentCounts:
    return DocumentCounts(
        by_mime_type=_count_by(database, Document.mime_type),
        by_state=_count_by(database, Document.state),
        by_shelf=_count_by(database, Document.shelf),
    )


def store_usage(database: Database) -> StoreUsage:
    """What the representation store holds, counted from the index."""
    distinct = select(
        Representation.store_key, func.max(Representation.size).label("size")
    ).group_by(Representation.store_key)
    sub = distinct.subquery()
    with database.session() as session:
        row = session.execute(
            select(func.count(), func.coalesce(func.sum(sub.c.size), 0)).select_from(sub)
        ).one()
    return StoreUsage(int(row[0]), int(row[1]))
