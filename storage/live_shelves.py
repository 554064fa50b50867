"""Shelves added and removed while serving: the folders a stdio client gives as roots.

:meth:`LiveShelves.serve` makes the served folders exactly the ones asked for. A new
one is a shelf like any configured one: checked, watched, catalogued by a pass (whose
change sets tell subscribers, as any pass's do), its pending documents converted. A
shelf no longer asked for stops being served at once: no reads, no watching, no
conversion, and its documents leave this process's listings (the catalog and search of
a live set keep to its shelves, :meth:`ShelfSet.bound`); this process's listeners hear
them removed, as they would of deleted files.

Its rows stay in the index. The database is the data folder every docshelf of this
user shares by default: another server (another client's window) may serve the same
folder at this moment, and a folder given again later — the same workspace reopened —
comes back with its URIs and its converted formats, after a pass that catches up with
what changed meanwhile.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select

from docshelf.storage.builder import FormatBuilder
from docshelf.storage.database import Database
from docshelf.storage.events import ChangeSet, EventBus
from docshelf.storage.indexer import Indexer
from docshelf.storage.models import Document
from docshelf.storage.passes import ReportObserver, timed_pass
from docshelf.storage.shelves import IgnoreRules, Shelf, ShelfSet
from docshelf.storage.watcher import ShelfWatcher

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ShelfChange:
    """What one :meth:`LiveShelves.serve` did: shelf names added and removed, the folders
    it could not serve after all, with why (one line each), and whether listeners were
    told of documents listed or unlisted (an empty folder's shelf lists none)."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    refused: tuple[tuple[Path, str], ...] = ()
    announced: bool = False

    def __bool__(self) -> bool:
        return bool(self.added or self.removed)


class LiveShelves:
    """The folder shelves of a :class:`ShelfSet` that is ``live``, changed while serving."""

    def __init__(
        self,
        shelves: ShelfSet,
        database: Database,
        indexer: Indexer,
        builder: FormatBuilder,
        watcher: ShelfWatcher,
        bus: EventBus,
        *,
        ignore: IgnoreRules,
        watch: bool,
        observer: ReportObserver | None = None,
    ) -> None:
        self.shelves = shelves
        self.database = database
        self.indexer = indexer
        self.builder = builder
        self.watcher = watcher
        self.bus = bus
        self.ignore = ignore
        self.watch = watch
        self.observer = observer
        self._lock = threading.Lock()

    def folders(self) -> dict[str, Path]:
        """The folder shelves served now: name → root."""
        return {n: s.root for n, s in self.shelves.items() if isinstance(s, Shelf)}

    def serve(self, wanted: Mapping[str, Path]) -> ShelfChange:
        """Serve exactly ``wanted`` (shelf name → resolved folder) from now on: removes
        first, then adds, each new shelf catalogued before this returns. Blocks (a
        catalog pass): call it from a worker thread."""
        with self._lock:
            current = self.folders()
            gone = tuple(n for n, root in current.items() if wanted.get(n) != root)
            announced = False
            for name in gone:
                announced |= self._remove(name)
            added: list[str] = []
            refused: list[tuple[Path, str]] = []
            for name, root in wanted.items():
                if current.get(name) == root:
                    continue
                try:
                    announced |= self._add(Shelf(name, root, self.ignore))
                except ValueError as exc:  # gone or unreadable since it was looked at
                    refused.append((root, str(exc)))
                else:
                    added.append(name)
            return ShelfChange(tuple(added), gone, tuple(refused), announced)

    def _uris(self, name: str) -> frozenset[str]:
        with self.database.session() as session:
            return frozenset(session.scalars(select(Document.uri).where(Document.shelf == name)))

    def _remove(self, name: str) -> bool:
        """Stop serving a shelf; whether listeners heard of documents leaving the list."""
        self.shelves.remove(name)
        self.watcher.unfollow(name)
        # To this process's listeners only: the rows stay (the module's docstring), and
        # another process serving the same folder still serves them.
        uris = self._uris(name)
        self.bus.deliver(ChangeSet(removed=uris))
        log.info("shelf %s is no longer served (its root is gone)", name)
        return bool(uris)

    def _add(self, shelf: Shelf) -> bool:
        """Serve a new shelf, catalogued; whether listeners heard of documents listed."""
        shelf.check()
        known = self._uris(shelf.name)
        self.shelves.add(shelf)
        self.builder.adopt(shelf.name)
        if self.watch:
            self.watcher.follow(shelf)  # before the pass: nothing changed during it is missed
        if known:  # what an earlier session catalogued is listed again at once
            self.bus.deliver(ChangeSet(added=known))
        with timed_pass(self.observer) as run:
            report = run.report = self.indexer.reconcile([shelf.name])
        log.info(
            "shelf %s (%s) served: %d files (%d added, %d changed, %d removed) in %.2f s",
            shelf.name,
            shelf.root,
            report.seen,
            report.added,
            report.changed,
            report.removed,
            run.seconds,
        )
        return bool(known or report.changes.list_changed)
