"""Documents listed by filters and in one of three orders, a page at a time (issue 28,
the ``list_documents`` tool).

Pages are cut by *keyset*, never by OFFSET: a page starts after the last row of the
one before, named by its sort value and a unique tie-breaker, so a deep page costs
what the first does, and documents added or removed meanwhile neither repeat a row
nor skip one that stayed. Each order has an index that yields it directly (migration
0016's for the newest and the largest; ``uq_documents_shelf_path`` for paths):

=========  ==============================  ==============================
order      ORDER BY                        the position after a row
=========  ==============================  ==============================
path       shelf, path                     (shelf, path)
modified   mtime_ns DESC, id DESC          (mtime_ns, id)
size       size DESC, id DESC              (size, id)
=========  ==============================  ==============================

The id breaks ties (files copied together share an mtime, small notes a size): it is
unique, never reused while the document exists, and a smaller index entry than a URI.
Both columns run the same way, so the position is one row-value comparison and the index
is read forwards or backwards as it was built.

``modified`` is the file's mtime, which ``documents.modified_at`` is derived from; in
nanoseconds it is an exact integer on both engines, so a position never falls between
two rows because a timestamp was rounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import ColumnElement, and_, false, func, or_, select, tuple_

from docshelf.storage.database import Database
from docshelf.storage.models import Document, DocumentState


class Sort(StrEnum):
    """The orders a listing comes in; the value is the tool's ``sort`` argument."""

    PATH = "path"  # by shelf, then path
    MODIFIED = "modified"  # newest first
    SIZE = "size"  # largest first


#: The last row of a page, as the next page starts after it: (shelf, path) for
#: :attr:`Sort.PATH`, (mtime_ns, id) for :attr:`Sort.MODIFIED`, (size, id) for :attr:`Sort.SIZE`.
Position = tuple[int | str, int | str]


@dataclass(frozen=True, slots=True)
class TypeFilter:
    """Which original types to list: any of ``mime_types``, or any type starting with
    ``prefix`` except those in ``excluded`` (a family's prefix leaves the types other
    families name to them; :mod:`converters.families`)."""

    mime_types: frozenset[str] = frozenset()
    prefix: str | None = None
    excluded: frozenset[str] = frozenset()

    def clause(self) -> ColumnElement[bool]:
        clauses: list[ColumnElement[bool]] = []
        if self.mime_types:
            clauses.append(Document.mime_type.in_(sorted(self.mime_types)))
        if self.prefix:
            under = func.substr(Document.mime_type, 1, len(self.prefix)) == self.prefix
            if self.excluded:
                under = and_(under, Document.mime_type.not_in(sorted(self.excluded)))
            clauses.append(under)
        return or_(*clauses) if clauses else false()


@dataclass(frozen=True, slots=True)
class ListingFilter:
    """Which documents to list; None leaves a column unfiltered."""

    shelf: str | None = None
    path_prefix: str | None = None
    types: TypeFilter | None = None
    modified_after_ns: int | None = None  # strictly later than this mtime
    # The shelves a server keeps to (ShelfSet.bound: a stdio server's roots), None: all.
    served: tuple[str, ...] | None = None

    def clauses(self, sort: Sort, *, planned: bool) -> list[ColumnElement[bool]]:
        """The filter's conditions; ``planned``: the engine keeps statistics to choose an
        index by (PostgreSQL). SQLite keeps none here, takes any equality on an indexed
        column for a few rows, and so listed a 100,000-document shelf newest first by
        sorting all of it; there the shelf is compared as an expression, which no index
        serves, so the order's own index is walked and the filter applied on the way
        (at worst one walk of the index, never a sort)."""
        clauses: list[ColumnElement[bool]] = []
        if self.shelf is not None:
            shelf = Document.shelf if planned or sort is Sort.PATH else Document.shelf + ""
            clauses.append(shelf == self.shelf)
        if self.served is not None:
            clauses.append(Document.shelf.in_(self.served) if self.served else false())
        if self.path_prefix:
            # As search's filter (storage.search.Filters): literal and case-sensitive, not LIKE.
            prefix = self.path_prefix
            clauses.append(func.substr(Document.path, 1, len(prefix)) == prefix)
        if self.types is not None:
            clauses.append(self.types.clause())
        if self.modified_after_ns is not None:
            clauses.append(Document.mtime_ns > self.modified_after_ns)
        return clauses


@dataclass(frozen=True, slots=True)
class ListedDocument:
    id: int
    uri: str
    shelf: str
    path: str
    title: str
    description: str | None
    mime_type: str
    size: int
    mtime_ns: int
    modified_at: datetime
    page_count: int | None
    state: DocumentState

    def position(self, sort: Sort) -> Position:
        """Where the page after this row starts, in ``sort`` order."""
        if sort is Sort.PATH:
            return (self.shelf, self.path)
        return (self.mtime_ns if sort is Sort.MODIFIED else self.size, self.id)


@dataclass(frozen=True, slots=True)
class Page:
    documents: list[ListedDocument]
    more: bool  # whether documents follow the last one
    total: int | None  # how many match the filter in all (asked for: first pages only)


_COLUMNS = (
    Document.id,
    Document.uri,
    Document.shelf,
    Document.path,
    Document.title,
    Document.description,
    Document.mime_type,
    Document.size,
    Document.mtime_ns,
    Document.modified_at,
    Document.page_count,
    Document.state,
)


def _key(sort: Sort) -> tuple[Any, Any]:
    """The two columns ``sort`` orders by, first to last."""
    if sort is Sort.PATH:
        return Document.shelf, Document.path
    return Document.mtime_ns if sort is Sort.MODIFIED else Document.size, Document.id


def _order(sort: Sort) -> list[Any]:
    """``sort``'s ORDER BY: ascending paths; newest or largest first, ties newest catalogued
    first (both columns descending: the index read backwards)."""
    columns = _key(sort)
    return list(columns) if sort is Sort.PATH else [column.desc() for column in columns]


def _after(sort: Sort, position: Position) -> ColumnElement[bool]:
    """Rows after ``position`` in ``sort`` order: one row-value comparison, which both
    engines answer with a seek into the order's index to the exact row (an OR of the
    two columns let PostgreSQL seek on the first one only, and scan its ties)."""
    key = tuple_(*_key(sort))
    return key > tuple_(*position) if sort is Sort.PATH else key < tuple_(*position)


class DocumentListing:
    """Read-only queries over ``documents`` for listings: plain records, one query a page
    (and one COUNT when the total is asked for)."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.planned = database.engine.dialect.name != "sqlite"

    def page(
        self,
        where: ListingFilter,
        sort: Sort,
        limit: int,
        after: Position | None = None,
        *,
        count: bool = False,
    ) -> Page:
        """Up to ``limit`` documents matching ``where`` in ``sort`` order after ``after``."""
        clauses = where.clauses(sort, planned=self.planned)
        query = select(*_COLUMNS).where(*clauses)
        if after is not None:
            query = query.where(_after(sort, after))
        query = query.order_by(*_order(sort)).limit(limit + 1)
        with self.database.engine.connect() as connection:
            rows = connection.execute(query).all()
            total = None
            if count:
                # Any index may serve a count: the shelf's is the best there is for one.
                counted = (
                    select(func.count())
                    .select_from(Document)
                    .where(*where.clauses(sort, planned=True))
                )
                total = int(connection.scalar(counted) or 0)
        documents = [ListedDocument(**row._asdict()) for row in rows[:limit]]
        return Page(documents, len(rows) > limit, total)
