"""The running service: every long-lived object, built once from the settings.

Both the HTTP server and the stdio server are a :class:`Runtime` plus a
transport; ``docshelf index`` is a Runtime without one.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

from app import metrics
from app.mcp.resources import ResourceService
from app.mcp.server import McpServer
from app.mcp.sessions import SessionRegistry
from app.settings import Settings
from storage.catalog import Catalog
from storage.conversion import ConversionPool
from storage.database import Database
from storage.events import EventBus
from storage.indexer import Indexer, IndexReport, Progress
from storage.jobs import JobRunner
from storage.shelves import IgnoreRules, make_shelves
from storage.store import RepresentationStore
from storage.watcher import ShelfWatcher

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "docshelf serves a folder of documents as resources. Each resources/read returns the same "
    "document in several formats (the original, Markdown, plain text, JSON and PDF) as entries "
    "of contents[] sharing one URI; resources/metadata gives their sizes without the content."
)


@dataclass
class Readiness:
    """Whether the first index pass has finished (``/readyz``), and how far it got."""

    ready: bool = False
    done: int = 0
    total: int = 0
    error: str | None = None
    started_at: float = field(default_factory=time.time)

    def progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total


class Runtime:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.shelves = make_shelves(settings.shelf_specs(), IgnoreRules(tuple(settings.ignore)))
        self.database = Database(settings.resolved_database_url)
        self.store = RepresentationStore(settings.store_dir)
        self.bus = EventBus()
        self.pool = ConversionPool(
            self.store,
            workers=settings.workers,
            timeout_s=settings.convert_timeout,
            memory_bytes=settings.convert_memory_mb * 1024 * 1024,
        )
        self.indexer = Indexer(
            self.database,
            self.store,
            self.pool,
            self.shelves,
            max_convert_bytes=int(settings.max_convert_mb * 1024 * 1024),
            bus=self.bus,
        )
        self.catalog = Catalog(self.database)
        self.resources = ResourceService(
            self.catalog,
            self.store,
            self.shelves,
            page_size=settings.page_size,
            binary_cap=int(settings.binary_cap_mb * 1024 * 1024),
        )
        self.server = McpServer(self.resources, instructions=INSTRUCTIONS)
        self.sessions = SessionRegistry(
            idle_timeout_s=settings.session_idle_timeout, max_sessions=settings.max_sessions
        )
        self.readiness = Readiness()
        self.started_at = time.time()
        # Reindex jobs (admin API, `docshelf reindex`); every finished pass feeds /metrics.
        self.jobs = JobRunner(self.database, self.indexer, observer=metrics.observe_index)
        self.watcher = ShelfWatcher(
            self.indexer,
            self.shelves,
            debounce_ms=settings.watch_debounce_ms,
            ignore_under=[settings.data_dir],
            observer=metrics.observe_index,
        )
        self._index_thread: threading.Thread | None = None

    def open(self) -> None:
        """Upgrade the schema; the database is usable afterwards."""
        self.database.upgrade()
        self.jobs.recover()

    def index(self, *, force: bool = False, progress: Progress | None = None) -> IndexReport:
        """One full pass over every shelf (``docshelf index``)."""
        return self.indexer.reconcile(force=force, progress=progress)

    def start_background(self) -> None:
        """Start following the shelves (watcher) and, unless disabled, the first index pass."""
        if self.settings.watch:
            self.watcher.start()
        if self.settings.index_on_start:
            self.start_initial_index()
        else:
            self.readiness.ready = True

    def start_initial_index(self) -> None:
        """Index in the background; ``/readyz`` turns 200 when the pass is done."""

        def run() -> None:
            try:
                started = time.perf_counter()
                report = self.indexer.reconcile(progress=self.readiness.progress)
                metrics.observe_index(report, time.perf_counter() - started)
                log.info(
                    "index ready: %d files (%d added, %d changed, %d removed, %d failed)",
                    report.seen,
                    report.added,
                    report.changed,
                    report.removed,
                    report.failed,
                )
            except Exception as exc:  # keep serving what the index already has
                log.exception("initial index pass failed")
                self.readiness.error = f"{type(exc).__name__}: {exc}"
            self.readiness.ready = True

        self._index_thread = threading.Thread(target=run, name="docshelf-index", daemon=True)
        self._index_thread.start()

    def close(self) -> None:
        self.jobs.close()
        self.bus.close()
        self.watcher.stop()
        if self._index_thread is not None:
            self._index_thread.join(timeout=30)
        self.pool.close()
        self.database.dispose()
