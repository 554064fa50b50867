"""How much of the shelf a search could not read: documents whose text is not (yet) in the
index (issue 28, "honest search").

The catalog comes first (DESIGN D11): a document is listed, and searchable by its title
and path (its name row, ``storage.search.add_name_rows``), the moment its batch commits;
its content rows follow when the format builder has converted it. Until then it is
``pending``. A document that failed to convert, or that no converter reads
(``failed``, ``unsupported``), has no content rows at all. A search that does not say
so answers "nothing" where the truth is "not yet" or "not by its text" — so every
answer carries both counts, counted within the search's own filters.

The same holds, page by page, for a document converted without the text of its scanned
pages yet: OCR is a second pass, queued after every document's first (DESIGN D34).

One query over two indexes: ``(state, shelf, path, mime_type)`` (migration 0015), which
holds every column the count and the search's filters read, so the pending and unreadable
documents are counted without reading the table and the ready ones are never visited;
and ``ocr``, for the few documents OCR owes text to. On a settled shelf it costs next to
nothing; at 100,000 pending documents, a few milliseconds (bench/README.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import text

from docshelf.storage.database import Database
from docshelf.storage.models import DocumentState, OcrState
from docshelf.storage.search import Filters


@dataclass(frozen=True, slots=True)
class Completeness:
    """Documents within a search's filters whose text it did not read, or not all of it."""

    pending: int  # waiting for conversion: found by title and path until converted
    unsearchable: int  # failed or unsupported: only their titles and paths are searched
    ocr_pending: int  # converted, but their scanned pages wait for OCR (DESIGN D34)

    @property
    def complete(self) -> bool:
        return not (self.pending or self.unsearchable or self.ocr_pending)


def completeness(database: Database, filters: Filters | None = None) -> Completeness:
    """How many documents matching ``filters`` a search could not read in full, and why."""
    where, params = (filters or Filters()).where(database.engine.dialect.name)
    params.update(
        pending=str(DocumentState.PENDING),
        ready=str(DocumentState.READY),
        failed=str(DocumentState.FAILED),
        unsupported=str(DocumentState.UNSUPPORTED),
        ocr_pending=str(OcrState.PENDING),
    )
    # Two index searches in one statement (an OR of both scanned the table). SQLite, which
    # keeps no statistics here, took the shelf's index for a shelf filter (every document
    # of the shelf read to find the pending ones) and the state index for the OCR count
    # (every ready one): it is told which index to use — without filters the narrower
    # ``(state, size)``, which counts 100,000 pending documents in a quarter of the time.
    by_state = by_ocr = ""
    if database.engine.dialect.name == "sqlite":
        by_state = " INDEXED BY " + (
            "ix_documents_state_shelf_path" if where else "ix_documents_state_size"
        )
        by_ocr = " INDEXED BY ix_documents_ocr"
    sql = text(
        f"SELECT d.state AS what, count(*) AS documents FROM documents d{by_state}"
        f" WHERE d.state IN (:pending, :failed, :unsupported){where} GROUP BY d.state"
        " UNION ALL"
        " SELECT 'ocr' AS what, count(CASE WHEN d.state = :ready THEN 1 END) AS documents"
        f" FROM documents d{by_ocr} WHERE d.ocr = :ocr_pending{where}"
    )
    with database.engine.connect() as connection:
        counts = {str(what): int(number) for what, number in connection.execute(sql, params)}
    return Completeness(
        pending=counts.get(DocumentState.PENDING, 0),
        unsearchable=counts.get(DocumentState.FAILED, 0) + counts.get(DocumentState.UNSUPPORTED, 0),
        ocr_pending=counts.get("ocr", 0),
    )
