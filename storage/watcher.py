"""Following the shelves live: watchfiles batches → indexer refreshes (DESIGN D7).

watchfiles (inotify on Linux) already debounces: it yields one set of changes
once the folder has been quiet for ``debounce_ms``. Each batch is split by
shelf and handed to :meth:`Indexer.refresh`, which publishes what changed on the
event bus. A rename arrives as a delete plus an add; a deleted folder arrives as
its path, which ``refresh`` expands to every document under it. Changes to ignored
paths are dropped here (:meth:`Shelf.following`), all but those to an ignore file, which
``refresh`` turns into a new walk of the folder that file governs.
"""

from __future__ import annotations

import abc
import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import watchfiles

from docshelf.storage.indexer import Indexer, IndexReport
from docshelf.storage.shelves import AnyShelf, Shelf

log = logging.getLogger(__name__)


class Follower(abc.ABC):
    """A daemon thread that follows some shelves until stopped: the watcher (folders)
    and the bucket listing (storage.bucket_poll)."""

    thread_name = "docshelf-follow"

    def __init__(self, shelves: Sequence[AnyShelf]) -> None:
        self.shelves = list(shelves)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @abc.abstractmethod
    def _run(self) -> None:
        """Follow until ``_stop`` is set."""

    def start(self) -> None:
        if not self.shelves or self._thread is not None:
            return  # none of this kind: nothing to follow
        self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None


class ShelfWatcher(Follower):
    thread_name = "docshelf-watch"

    def __init__(
        self,
        indexer: Indexer,
        shelves: Sequence[AnyShelf],
        *,
        debounce_ms: int = 200,
        ignore_under: Sequence[Path] = (),
        observer: Callable[[IndexReport, float], None] | None = None,
    ) -> None:
        # Folders only: a bucket shelf is followed by listing it (storage.bucket_poll).
        self.folders = [shelf for shelf in shelves if isinstance(shelf, Shelf)]
        super().__init__(self.folders)
        self.indexer = indexer
        self.debounce_ms = debounce_ms
        self.ignore_under = [p.resolve() for p in ignore_under]
        self.observer = observer

    def _locate(self, raw_path: str) -> tuple[Shelf, str] | None:
        path = Path(raw_path)
        if any(path.is_relative_to(p) for p in self.ignore_under):
            return None
        for shelf in self.folders:
            relative = shelf.relative(path)
            if relative is None or relative == ".":
                continue
            if shelf.ignore.ignores(relative) and shelf.ignore.governed(relative) is None:
                return None  # the patterns alone rule it out (.git): no file is read
            return shelf, relative
        return None

    def _accepts(self, _change: watchfiles.Change, raw_path: str) -> bool:
        return self._locate(raw_path) is not None

    def handle(self, changes: set[tuple[watchfiles.Change, str]]) -> None:
        """Apply one batch of file-system changes to the index."""
        by_shelf: dict[Shelf, set[str]] = defaultdict(set)
        for _change, raw_path in changes:
            located = self._locate(raw_path)
            if located:
                shelf, relative = located
                by_shelf[shelf].add(relative)
        for shelf, changed in by_shelf.items():
            name = shelf.name
            started = time.perf_counter()
            try:
                paths = shelf.following(changed)  # ignored paths are no events
                if not paths:
                    continue
                report = self.indexer.refresh(name, sorted(paths))
            except Exception:  # one bad batch must not stop the watcher
                log.exception("refreshing %d paths on shelf %s failed", len(changed), name)
                continue
            if self.observer is not None:
                self.observer(report, time.perf_counter() - started)
            log.info(
                "shelf %s: %d added, %d changed, %d removed",
                name,
                report.added,
                report.changed,
                report.removed,
            )

    def _run(self) -> None:
        roots = [str(shelf.root) for shelf in self.folders]
        import watchfiles  # ~0.15 s to import: paid by the watcher thread, not at start-up

        for changes in watchfiles.watch(
            *roots,
            watch_filter=self._accepts,
            debounce=self.debounce_ms,
            step=50,
            stop_event=self._stop,
            raise_interrupt=False,
            ignore_permission_denied=True,
        ):
            self.handle(changes)
