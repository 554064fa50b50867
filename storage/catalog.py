"""Read-side queries over the index, returning plain records (no ORM objects escape).

The protocol layer answers ``resources/list`` and ``resources/metadata`` from
these records alone, without opening any document.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Select, bindparam, func, select

from docshelf.converters import offered_formats
from docshelf.storage.database import Database
from docshelf.storage.models import (
    Document,
    DocumentState,
    FormatFailure,
    OcrState,
    Representation,
)


@dataclass(frozen=True, slots=True)
class VariantRecord:
    """One format of a document: the original file, a stored variant, or one not built yet.

    ``store_key`` is set for a stored variant; ``size`` and ``sha256`` are None
    for a format that is offered but not built yet (DESIGN D11).
    """

    mime_type: str
    size: int | None
    sha256: str | None
    store_key: str | None
    original: bool = False

    @property
    def built(self) -> bool:
        return self.original or self.store_key is not None


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    id: int
    shelf: str
    path: str
    uri: str
    name: str
    title: str
    description: str | None
    mime_type: str
    size: int
    sha256: str | None
    page_count: int | None
    modified_at: datetime
    state: DocumentState
    error_reason: str | None
    error_message: str | None
    derived: tuple[VariantRecord, ...]
    # Formats of a ready document that could not be made (not among ``derived``).
    format_errors: tuple[FormatFailure, ...] = ()
    # Headings or bookmarks as (title, level, page); read for single documents only
    # (Catalog.get), not for listings.
    outline: tuple[tuple[str, int, int | None], ...] = ()
    # Whether pages only OCR reads were read (storage.models.OcrState; None: no such page).
    ocr: OcrState | None = None
    # What the index knows of those pages (Catalog.get only): {"pages": [...], "note": ...}.
    ocr_facts: Mapping[str, Any] = field(default_factory=dict)

    @property
    def original(self) -> VariantRecord:
        return VariantRecord(self.mime_type, self.size, self.sha256, None, original=True)

    @property
    def variants(self) -> tuple[VariantRecord, ...]:
        """The original first, then every derived format, built or not."""
        return (self.original, *self.derived)

    @property
    def pending(self) -> bool:
        return self.state == DocumentState.PENDING


_COLUMNS = (
    Document.id,
    Document.shelf,
    Document.path,
    Document.uri,
    Document.name,
    Document.title,
    Document.description,
    Document.mime_type,
    Document.size,
    Document.sha256,
    Document.page_count,
    Document.modified_at,
    Document.state,
    Document.error_reason,
    Document.error_message,
    Document.format_errors,
    Document.ocr,
)
_VARIANT_COLUMNS = (
    Representation.document_id,
    Representation.mime_type,
    Representation.size,
    Representation.sha256,
    Representation.store_key,
)


# The statements, built once: building one costs more than running it (SQLAlchemy's
# coercions), and a built statement hits the compiled cache every time. Read through a
# plain Connection: no ORM session, no unit of work, nothing to flush.
_BY_URI = select(*_COLUMNS, Document.facts).where(Document.uri == bindparam("uri"))
_FIRST_PAGE = select(*_COLUMNS).order_by(Document.uri).limit(bindparam("limit"))
_NEXT_PAGE = _FIRST_PAGE.where(Document.uri > bindparam("after"))
_ON_SHELVES = Document.shelf.in_(bindparam("shelves", expanding=True))
_FIRST_PAGE_ON, _NEXT_PAGE_ON = _FIRST_PAGE.where(_ON_SHELVES), _NEXT_PAGE.where(_ON_SHELVES)
_VARIANTS_OF_ONE = (
    select(*_VARIANT_COLUMNS)
    .where(Representation.document_id == bindparam("document_id"))
    .order_by(Representation.id)
)
_VARIANTS_OF_MANY = (
    select(*_VARIANT_COLUMNS)
    .where(Representation.document_id.in_(bindparam("document_ids", expanding=True)))
    .order_by(Representation.id)
)
_COUNT = select(func.count(Document.id))
_AT_PATHS = select(*_COLUMNS).where(
    Document.shelf == bindparam("shelf"), Document.path.in_(bindparam("paths", expanding=True))
)
_AT_PATHS_WITH_FACTS = _AT_PATHS.add_columns(Document.facts)


def _path_range(postgres: bool) -> tuple[Select[Any], Select[Any]]:
    """The paths of a shelf from ``low`` up to ``high``, and their count. Byte order on
    both engines: under PostgreSQL's language collations "a/b" sorts between "a-c" and
    "ab", so a prefix is a range only of ``path COLLATE "C"`` (its index: migration 0014)."""
    path = Document.path.collate("C") if postgres else Document.path
    where = (
        Document.shelf == bindparam("shelf"),
        path >= bindparam("low"),
        path < bindparam("high"),
    )
    paths = select(Document.path).where(*where).order_by(path).limit(bindparam("limit"))
    return paths, select(func.count(Document.id)).where(*where)


# Above every character a path can hold: the upper bound of a prefix range.
_PAST_PREFIX = "\U0010ffff"


def _derived(
    mime_type: str,
    name: str,
    state: DocumentState,
    failed: Collection[str],
    rows: Sequence[VariantRecord],
) -> tuple[VariantRecord, ...]:
    """The derived formats in D4 order: stored, or offered and not built yet; a pending
    document's stored rows are out of date, a failed format (``failed``) is not offered."""
    stored = {} if state == DocumentState.PENDING else {v.mime_type: v for v in rows}
    offered = (
        offered_formats(mime_type, name)
        if state in (DocumentState.PENDING, DocumentState.READY)
        else ()  # failed (or no converter): only what exists
    )
    ordered = [
        stored.get(m) or VariantRecord(m, None, None, None)
        for m in offered
        if m in stored or m not in failed
    ]
    return (*ordered, *(v for m, v in stored.items() if m not in offered))


def _format_errors(state: DocumentState, column: object) -> tuple[FormatFailure, ...]:
    """A ready document's failed formats (a pending one's are of content it no longer has)."""
    return FormatFailure.of_column(column) if state == DocumentState.READY else ()


def _without_facts(values: dict[str, Any]) -> dict[str, Any]:
    """A row's values with its ``facts`` JSON (if read) turned into the record's outline."""
    if "facts" not in values:
        return values
    facts = values.pop("facts")
    ocr = facts.get("ocr") if isinstance(facts, dict) else None
    values["ocr_facts"] = ocr if isinstance(ocr, dict) else {}
    outline = facts.get("outline") if isinstance(facts, dict) else None
    values["outline"] = tuple(
        (e["title"], int(e.get("level") or 1), e.get("page"))
        for e in (outline if isinstance(outline, list) else ())
        if isinstance(e, dict) and isinstance(e.get("title"), str)
    )
    return values


class NotCached(LookupError):
    """``Catalog.get(..., cached_only=True)`` found no current entry: asking would block."""


class Catalog:
    """Read-side queries, in SQLAlchemy Core: a listing builds no ORM objects (a page of
    100 documents took ~50 ms through the ORM with selectinload, most of it loading).

    Single documents are cached by URI, each entry tagged with the database
    generation it was read under (:attr:`storage.database.Database.generation`):
    any commit in this process that writes the catalog's tables, or a change another
    process announced, makes every entry stale at once. Coarse, and so never wrong about what this
    process wrote; between bursts of indexing, reads of the same documents cost
    no query at all, which lets them be answered without leaving the event loop.
    """

    def __init__(self, database: Database, *, cache_size: int = 8192) -> None:
        self.database = database
        self.cache_size = cache_size
        self._cache: OrderedDict[str, tuple[int, DocumentRecord | None]] = OrderedDict()
        self._cache_generation = 0  # the generation every entry in the cache was read under
        self._cache_lock = threading.Lock()
        self._paths, self._path_count = _path_range(database.engine.dialect.name == "postgresql")

    @property
    def cached(self) -> int:
        """Documents held in the cache."""
        return len(self._cache)

    def _records(
        self, connection: Connection, query: Select[*tuple[Any, ...]], params: dict[str, Any]
    ) -> list[DocumentRecord]:
        rows = connection.execute(query, params).all()
        variants: dict[int, list[VariantRecord]] = {row.id: [] for row in rows}
        if len(variants) == 1:
            stored = connection.execute(_VARIANTS_OF_ONE, {"document_id": rows[0].id})
        elif variants:
            stored = connection.execute(_VARIANTS_OF_MANY, {"document_ids": list(variants)})
        else:
            stored = None
        for vid, mime, size, sha, key in stored or ():
            variants[vid].append(VariantRecord(mime, size, sha, key))
        records = []
        for row in rows:
            values = _without_facts(row._asdict())
            failed = _format_errors(row.state, values.pop("format_errors"))
            derived = _derived(
                row.mime_type,
                row.name,
                row.state,
                {f.mime_type for f in failed},
                variants[row.id],
            )
            records.append(DocumentRecord(**values, derived=derived, format_errors=failed))
        return records

    def page(
        self, after_uri: str | None, limit: int, shelves: Sequence[str] | None = None
    ) -> tuple[list[DocumentRecord], bool]:
        """Up to ``limit`` documents in URI order after ``after_uri``, and whether more
        follow; only those on ``shelves`` if given (ShelfSet.bound)."""
        params: dict[str, Any] = {"limit": limit + 1, "after": after_uri}
        if shelves is None:
            query = _FIRST_PAGE if after_uri is None else _NEXT_PAGE
        else:
            query = _FIRST_PAGE_ON if after_uri is None else _NEXT_PAGE_ON
            params["shelves"] = list(shelves)
        with self.database.engine.connect() as connection:
            records = self._records(connection, query, params)
        return records[:limit], len(records) > limit

    def at_paths(
        self, shelf: str, paths: Sequence[str], *, outlines: bool = False
    ) -> list[DocumentRecord]:
        """The documents at ``paths`` on ``shelf`` that are indexed, in the order given (a
        folder's files: storage.folders). ``outlines``: with each one's outline, as
        :meth:`get` reads it (for a few documents, not for listings)."""
        if not paths:
            return []
        query = _AT_PATHS_WITH_FACTS if outlines else _AT_PATHS
        with self.database.engine.connect() as connection:
            found = self._records(connection, query, {"shelf": shelf, "paths": list(paths)})
        by_path = {record.path: record for record in found}
        return [by_path[path] for path in paths if path in by_path]

    def get(
        self, uri: str, *, cached_only: bool = False, fresh: bool = False
    ) -> DocumentRecord | None:
        """The document at ``uri``, or None.

        ``cached_only``: raise :class:`NotCached` rather than query (the caller is on
        the event loop). ``fresh``: query even if a current entry exists (the caller
        found the entry's stored file gone: the index may have moved on).
        """
        if not fresh:
            with self._cache_lock:
                entry = self._cache.get(uri)
                if entry is not None and entry[0] == self.database.generation:
                    self._cache.move_to_end(uri)
                    return entry[1]
        if cached_only:
            raise NotCached(uri)
        generation = self.database.generation
        with self.database.engine.connect() as connection:
            records = self._records(connection, _BY_URI, {"uri": uri})
        record = records[0] if records else None
        if generation == self.database.generation:  # nothing was written meanwhile
            with self._cache_lock:
                if generation != self._cache_generation:
                    # Older entries are never handed out again; kept, those of files since
                    # deleted would fill the cache on a churning shelf.
                    self._cache.clear()
                    self._cache_generation = generation
                self._cache[uri] = (generation, record)
                self._cache.move_to_end(uri)
                if len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return record

    def paths(self, shelf: str, prefix: str, limit: int) -> tuple[list[str], int]:
        """Up to ``limit`` paths on ``shelf`` starting with ``prefix``, in order, and how
        many there are in all (a range scan of the (shelf, path) index, no LIKE escaping)."""
        params = {"shelf": shelf, "low": prefix, "high": prefix + _PAST_PREFIX, "limit": limit}
        with self.database.engine.connect() as connection:
            paths = list(connection.scalars(self._paths, params))
            total = (
                len(paths) if len(paths) < limit else connection.scalar(self._path_count, params)
            )
        return paths, int(total or 0)

    def count(self) -> int:
        with self.database.engine.connect() as connection:
            return connection.scalar(_COUNT) or 0
