"""Admin read-side queries over the index: documents (filtered, paginated), counts, store size.

These are operator views with every column, unlike :mod:`storage.catalog`, which
serves the protocol layer's lean records.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import selectinload

from docshelf.app.admin.models import (
    DocumentCounts,
    DocumentDetail,
    DocumentSummary,
    LastError,
    RepresentationOut,
)
from docshelf.storage.database import Database
from docshelf.storage.models import Document, DocumentState, Representation

MAX_ID = 2**63 - 1
_CURSOR_PREFIX = "after:"


class InvalidCursor(ValueError):
    """A cursor this server did not hand out."""


def encode_cursor(last_id: int) -> str:
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{last_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    """The id after which the page starts; :class:`InvalidCursor` for anything else."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise InvalidCursor(cursor) from exc
    number = text.removeprefix(_CURSOR_PREFIX)
    if not text.startswith(_CURSOR_PREFIX) or not number.isdigit() or int(number) > MAX_ID:
        raise InvalidCursor(cursor)
    return int(number)


@dataclass(frozen=True, slots=True)
class DocumentFilter:
    shelf: str | None = None
    mime_type: str | None = None
    state: DocumentState | None = None
    path_prefix: str | None = None


def document_page(
    database: Database, where: DocumentFilter, after_id: int, limit: int
) -> tuple[list[DocumentSummary], str | None]:
    """Up to ``limit`` documents in id order after ``after_id``, and the next page's cursor."""
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
        query = query.where(Document.path.startswith(where.path_prefix, autoescape=True))
    with database.session() as session:
        docs = list(session.scalars(query))
        page = [
            DocumentSummary(
                id=doc.id,
                shelf=doc.shelf,
                path=doc.path,
                uri=doc.uri,
                title=doc.title,
                mime_type=doc.mime_type,
                size=doc.size,
                state=doc.state,
                modified_at=doc.modified_at,
                indexed_at=doc.indexed_at,
                representations=len(doc.representations),
                error_reason=doc.error_reason,
            )
            for doc in docs[:limit]
        ]
    next_cursor = encode_cursor(page[-1].id) if len(docs) > limit else None
    return page, next_cursor


def document_detail(database: Database, document_id: int) -> DocumentDetail | None:
    query = (
        select(Document)
        .options(selectinload(Document.representations))
        .where(Document.id == document_id)
    )
    with database.session() as session:
        doc = session.scalar(query)
        if doc is None:
            return None
        return DocumentDetail(
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
            mtime_ns=doc.mtime_ns,
            page_count=doc.page_count,
            language=doc.language,
            facts=dict(doc.facts or {}),
            converter=doc.converter,
            state=doc.state,
            modified_at=doc.modified_at,
            indexed_at=doc.indexed_at,
            representations=[
                RepresentationOut(
                    mime_type=r.mime_type,
                    size=r.size,
                    sha256=r.sha256,
                    store_key=r.store_key,
                    converter=r.converter,
                    converter_version=r.converter_version,
                )
                for r in doc.representations
            ],
            last_error=(
                LastError(reason=doc.error_reason, message=doc.error_message)
                if doc.error_reason
                else None
            ),
        )


def _count_by(database: Database, column: Any) -> dict[str, int]:
    query = select(column, func.count(Document.id)).group_by(column)
    with database.session() as session:
        return {key: count for key, count in session.execute(query).all()}


def document_counts(database: Database) -> tuple[DocumentCounts, dict[str, int]]:
    """Counts by MIME type and by state, and per shelf."""
    by_mime = _count_by(database, Document.mime_type)
    by_state = _count_by(database, Document.state)
    by_shelf = _count_by(database, Document.shelf)
    counts = DocumentCounts(total=sum(by_state.values()), by_mime_type=by_mime, by_state=by_state)
    return counts, by_shelf


def store_usage(database: Database) -> tuple[int, int]:
    """(distinct stored representations, their bytes); shared keys are counted once."""
    distinct = select(
        Representation.store_key, func.max(Representation.size).label("size")
    ).group_by(Representation.store_key)
    sub = distinct.subquery()
    with database.session() as session:
        row = session.execute(
            select(func.count(), func.coalesce(func.sum(sub.c.size), 0)).select_from(sub)
        ).one()
    return int(row[0]), int(row[1])
