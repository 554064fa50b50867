"""Read-side queries over the index, returning plain records (no ORM objects escape).

The protocol layer answers ``resources/list`` and ``resources/metadata`` from
these records alone, without opening any document.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import selectinload

from converters import offered_formats
from storage.database import Database
from storage.models import Document, DocumentState


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
    state: str
    error_reason: str | None
    error_message: str | None
    derived: tuple[VariantRecord, ...]

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


def _derived(doc: Document) -> tuple[VariantRecord, ...]:
    """The derived formats in D4 order; a pending document's stored rows are out of date."""
    stored = (
        {}
        if doc.state == DocumentState.PENDING
        else {
            r.mime_type: VariantRecord(r.mime_type, r.size, r.sha256, r.store_key)
            for r in doc.representations
        }
    )
    offered = offered_formats(doc.mime_type, doc.name)
    if doc.state not in (DocumentState.PENDING, DocumentState.READY) or doc.error_reason:
        offered = ()  # failed (or no converter): only what exists
    ordered = [stored.get(m) or VariantRecord(m, None, None, None) for m in offered]
    return (*ordered, *(v for m, v in stored.items() if m not in offered))


def _record(doc: Document) -> DocumentRecord:
    return DocumentRecord(
        id=doc.id,
        shelf=doc.shelf,
        path=doc.path,
        uri=doc.uri,
        name=doc.name,
        title=doc.title,
        description=doc.description,
        mime_type=doc.mime_type,
        size=doc.size,
        sha256=doc.sha256,
        page_count=doc.page_count,
        modified_at=doc.modified_at,
        state=doc.state,
        error_reason=doc.error_reason,
        error_message=doc.error_message,
        derived=_derived(doc),
    )


class Catalog:
    def __init__(self, database: Database) -> None:
        self.database = database

    def page(self, after_uri: str | None, limit: int) -> tuple[list[DocumentRecord], bool]:
        """Up to ``limit`` documents in URI order after ``after_uri``, and whether more follow."""
        query = (
            select(Document).options(selectinload(Document.representations)).order_by(Document.uri)
        )
        if after_uri is not None:
            query = query.where(Document.uri > after_uri)
        with self.database.session() as session:
            docs = list(session.scalars(query.limit(limit + 1)))
            records = [_record(d) for d in docs[:limit]]
        return records, len(docs) > limit

    def get(self, uri: str) -> DocumentRecord | None:
        query = (
            select(Document)
            .options(selectinload(Document.representations))
            .where(Document.uri == uri)
        )
        with self.database.session() as session:
            doc = session.scalar(query)
            return _record(doc) if doc else None

    def count(self) -> int:
        with self.database.session() as session:
            return session.scalar(select(func.count(Document.id))) or 0
