"""Following bucket shelves: a periodic listing, diffed against the index (issue 27, item 2).

A bucket has no inotify. The indexing process lists each bucket shelf every
``bucket_poll_s`` seconds (DOCSHELF_BUCKET_POLL_S), compares each object's size,
LastModified and ETag with the index's row, and hands the keys that differ — new,
changed, gone — to :meth:`Indexer.refresh` with what the listing said of them, so
subscribers are told as they are of a file's change (the watcher's path, DESIGN D7).
Where the operator configures bucket notifications (POST /admin/shelves/NAME/notify)
a change is seen at once; the listing still catches what a notification missed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sqlalchemy import select

from docshelf.storage.indexer import Indexer, IndexReport
from docshelf.storage.models import Document
from docshelf.storage.passes import ReportObserver, timed_pass
from docshelf.storage.periodic import Periodic
from docshelf.storage.shelves import AnyShelf, Seen, Shelf
from docshelf.storage.watcher import followed

log = logging.getLogger(__name__)


class BucketPoller(Periodic):
    """One thread that lists every bucket shelf in turn, each ``interval_s`` seconds."""

    def __init__(
        self,
        indexer: Indexer,
        shelves: Sequence[AnyShelf],
        *,
        interval_s: float = 10.0,
        observer: ReportObserver | None = None,
    ) -> None:
        super().__init__(
            "docshelf-poll", interval_s, self.poll_all, failure="listing bucket shelves failed"
        )
        self.shelves = [shelf for shelf in shelves if not isinstance(shelf, Shelf)]
        self.indexer = indexer
        self.observer = observer
        # Keys refused with a reason (an odd name), as listed then: said once, not at
        # every listing, until the object changes.
        self._refused: dict[str, dict[str, Seen]] = {}
        self._failing: set[str] = set()

    def _indexed(self, shelf: AnyShelf) -> dict[str, Seen]:
        columns = (Document.path, Document.size, Document.mtime_ns, Document.change_key)
        with self.indexer.database.session() as session:
            rows = session.execute(select(*columns).where(Document.shelf == shelf.name))
            return {row.path: Seen.of(row) for row in rows}

    def poll(self, shelf: AnyShelf) -> IndexReport | None:
        """List ``shelf`` once and refresh the keys that differ from the index; the
        refresh's report, or None when nothing did."""
        with timed_pass(self.observer) as run:
            listed = dict(shelf.walk())
            indexed = self._indexed(shelf)
            refused = self._refused.get(shelf.name, {})
            changed = sorted(
                path
                for path in listed.keys() | indexed.keys()
                if listed.get(path) != indexed.get(path)
                and (path not in refused or refused[path] != listed.get(path))
            )
            if not changed:
                return None
            report = run.report = self.indexer.refresh(shelf.name, changed, listed=listed)
            self._refused[shelf.name] = {
                error.path: listed[error.path] for error in report.errors if error.path in listed
            }
        followed(shelf.name, report)
        return report

    def poll_all(self) -> None:
        """One round; a shelf that cannot be listed is said once, and tried again next round."""
        for shelf in self.shelves:
            try:
                self.poll(shelf)
            except Exception as exc:  # one unreachable bucket must not stop the others
                if shelf.name not in self._failing:
                    self._failing.add(shelf.name)
                    log.warning(
                        "shelf %s: cannot list %s (%s); trying again every %g s",
                        shelf.name,
                        shelf.location,
                        exc,
                        self.interval_s,
                    )
            else:
                if shelf.name in self._failing:
                    self._failing.discard(shelf.name)
                    log.info("shelf %s: %s can be listed again", shelf.name, shelf.location)

    def start(self) -> None:
        if self.shelves:  # else nothing to list
            super().start()
