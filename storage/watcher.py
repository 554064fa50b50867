"""Following the shelves live: watchfiles batches → indexer refreshes (DESIGN D7).

watchfiles (inotify on Linux) already debounces: it yields one set of changes
once the folder has been quiet for ``debounce_ms``. Each folder shelf has its own
watch, whose batches go to :meth:`Indexer.refresh` for that shelf, which publishes
what changed on the event bus. A rename arrives as a delete plus an add; a deleted
folder arrives as its path, which ``refresh`` expands to every document under it.
Changes to ignored paths are dropped here (:meth:`Shelf.following`), all but those to an
ignore file, which ``refresh`` turns into a new walk of the folder that file governs.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import watchfiles

from docshelf.storage.indexer import Indexer, IndexReport
from docshelf.storage.passes import ReportObserver, timed_pass
from docshelf.storage.shelves import AnyShelf, Shelf, ShelfSet

log = logging.getLogger(__name__)


class ShelfWatcher:
    """One watching thread per folder shelf (:class:`_FolderWatch`), so a shelf added or
    removed while serving (a stdio client's roots) starts or stops its own thread and no
    other shelf's watch is interrupted: a restarted watch would miss what changed while
    it set up again."""

    def __init__(
        self,
        indexer: Indexer,
        shelves: ShelfSet | Sequence[AnyShelf],
        *,
        debounce_ms: int = 200,
        ignore_under: Sequence[Path] = (),
        observer: ReportObserver | None = None,
    ) -> None:
        self.shelves = ShelfSet.of(shelves)
        self.indexer = indexer
        self.debounce_ms = debounce_ms
        self.ignore_under = [p.resolve() for p in ignore_under]
        self.observer = observer
        self._watches: dict[str, _FolderWatch] = {}
        self._lock = threading.Lock()
        self._started = False

    def start(self) -> None:
        """Watch every folder shelf, and from now on each one :meth:`follow` is given."""
        with self._lock:
            self._started = True
        for shelf in self.shelves.values():
            self.follow(shelf)

    def follow(self, shelf: AnyShelf) -> None:
        """Watch ``shelf`` too (a bucket shelf is listed instead: storage.bucket_poll)."""
        if not isinstance(shelf, Shelf):
            return
        with self._lock:
            if not self._started or shelf.name in self._watches:
                return
            watch = self._watches[shelf.name] = _FolderWatch(self, shelf)
        watch.start()

    def unfollow(self, shelf_name: str) -> None:
        """Stop watching one shelf."""
        with self._lock:
            watch = self._watches.pop(shelf_name, None)
        if watch is not None:
            watch.stop()

    def stop(self) -> None:
        with self._lock:
            self._started = False
            watches, self._watches = list(self._watches.values()), {}
        for watch in watches:
            watch._stop.set()  # all at once: each then takes up to a step to notice
        for watch in watches:
            watch.stop()

    def _relative(self, shelf: Shelf, raw_path: str) -> str | None:
        path = Path(raw_path)
        if any(path.is_relative_to(p) for p in self.ignore_under):
            return None
        relative = shelf.relative(path)
        if relative is None or relative == ".":
            return None
        if shelf.ignore.ignores(relative) and shelf.ignore.governed(relative) is None:
            return None  # the patterns alone rule it out (.git): no file is read
        return relative

    def handle(self, shelf: Shelf, changes: set[tuple[watchfiles.Change, str]]) -> None:
        """Apply one batch of file-system changes under ``shelf``'s root to its index.

        Each shelf's own watch reports its own paths: a folder that is on two shelves
        (one root inside another) is indexed on both.
        """
        paths = {r for _change, raw in changes if (r := self._relative(shelf, raw)) is not None}
        if not paths or self.shelves.get(shelf.name) is not shelf:
            return  # nothing of ours, or the shelf was removed while the batch waited
        try:
            with timed_pass(self.observer) as run:
                paths = set(shelf.following(paths))  # the ignore files' verdict, read once
                if not paths:
                    return  # only ignored paths changed: no event
                report = run.report = self.indexer.refresh(shelf.name, sorted(paths))
        except Exception:  # one bad batch must not stop the watcher
            log.exception("refreshing %d paths on shelf %s failed", len(paths), shelf.name)
            return
        followed(shelf.name, report)


def followed(shelf_name: str, report: IndexReport) -> None:
    """What one refresh a follower made did, in one log line."""
    log.info(
        "shelf %s: %d added, %d changed, %d removed",
        shelf_name,
        report.added,
        report.changed,
        report.removed,
    )


class _FolderWatch:
    """The thread that watches one folder shelf (watchfiles: inotify on Linux) until
    ``_stop`` is set."""

    def __init__(self, watcher: ShelfWatcher, shelf: Shelf) -> None:
        self.watcher = watcher
        self.shelf = shelf
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="docshelf-watch", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def _run(self) -> None:
        import watchfiles  # ~0.15 s to import: paid by the watcher thread, not at start-up

        for changes in watchfiles.watch(
            self.shelf.root,
            watch_filter=lambda _change, raw: self.watcher._relative(self.shelf, raw) is not None,
            debounce=self.watcher.debounce_ms,
            step=50,
            stop_event=self._stop,
            raise_interrupt=False,
            ignore_permission_denied=True,
        ):
            self.watcher.handle(self.shelf, changes)
