"""The two conversion queues, as queries: what is queued, how much, what failed (DESIGN D11, D34).

A document is *pending* while its first formats are still to be built, and *OCR-pending*
once it is ready but waits for its OCR pass; both queues are bounded to the shelves this
server serves, since processes sharing a database may serve different shelves. The
builder takes documents from them (:mod:`storage.leases`), and ``/readyz``,
``/admin/status`` and ``/metrics`` count them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence

from sqlalchemy import ColumnElement, and_, func, or_, select

from docshelf.converters import FailureReason
from docshelf.storage.database import Database
from docshelf.storage.models import Document, DocumentState, OcrState

Conditions = tuple[ColumnElement[bool], ...]


class Queues:
    """The pending and OCR-pending documents on ``shelves``, and their counts."""

    def __init__(self, database: Database, shelves: Collection[str]) -> None:
        self.database = database
        # Read at every query: the builder's shelf set, which may change while serving.
        self._shelves = shelves
        self._counts: dict[str, tuple[float, int]] = {}  # queue: (when counted, count)

    @property
    def shelves(self) -> list[str]:
        """The shelves' names now."""
        return list(self._shelves)

    def pending(self) -> Conditions:
        """The queue: documents on these shelves whose formats are to be built."""
        return Document.state == DocumentState.PENDING, Document.shelf.in_(self.shelves)

    def ocr_pending(self) -> Conditions:
        """The OCR queue: ready documents on these shelves waiting for their OCR pass."""
        return (
            Document.state == DocumentState.READY,
            Document.ocr == OcrState.PENDING,
            Document.shelf.in_(self.shelves),
        )

    def in_order(self) -> Sequence[Conditions]:
        """The queues in the order they are served: the OCR pass only once nothing cheaper
        is to be had (DESIGN D34)."""
        return self.pending(), self.ocr_pending()

    def either(self) -> ColumnElement[bool]:
        """A document still in one of the queues."""
        return or_(and_(*self.pending()), and_(*self.ocr_pending()))

    def count(self, queue_of: Callable[[], Conditions], max_age_s: float = 0.0) -> int:
        """How many documents ``queue_of`` holds; a count ``max_age_s`` recent will do (probes
        and scrapes pass 0.5 s, so a client polling ``/readyz`` does not slow the pass it
        is waiting for: counting 50,000 rows on every poll did)."""
        counted_at, count = self._counts.get(queue_of.__name__, (0.0, 0))
        if max_age_s and time.monotonic() - counted_at < max_age_s:
            return count
        with self.database.session() as session:
            count = session.scalar(select(func.count(Document.id)).where(*queue_of())) or 0
        self._counts[queue_of.__name__] = (time.monotonic(), count)
        return count

    def failures(self, uris: Collection[str]) -> list[tuple[str, str, str]]:
        """(path, reason, message) of those of ``uris`` whose conversion failed, or that
        nothing reads (reason ``unsupported``)."""
        found: list[tuple[str, str, str]] = []
        ordered = sorted(uris)
        with self.database.session() as session:
            for start in range(0, len(ordered), 500):
                query = select(Document.path, Document.error_reason, Document.error_message).where(
                    Document.uri.in_(ordered[start : start + 500]),
                    or_(
                        Document.state == DocumentState.FAILED,
                        # a converter ran and found it unreadable (no converter: the catalog
                        # pass counted it)
                        and_(
                            Document.state == DocumentState.UNSUPPORTED,
                            Document.converter.is_not(None),
                        ),
                    ),
                )
                found.extend(
                    (path, reason or FailureReason.ERROR, message or "")
                    for path, reason, message in session.execute(query)
                )
        return sorted(found)
