"""The running service: every long-lived object, built once from the settings.

Both the HTTP server and the stdio server are a :class:`Runtime` plus a
transport; ``docshelf index`` is a Runtime without one.

A runtime either *indexes* (the default: the start-up catalog pass, the watcher) or is
a *replica* (``--no-index``; the extra processes of ``serve --processes N``): it serves
the index another process keeps. Whether it also builds pending formats in the
background, or only those its own reads need, is its conversion role
(:class:`app.roles.Role`). Either way, what it publishes goes into the change feed and,
when serving, it follows the feed (``storage.changefeed``).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Protocol, cast

from docshelf.app import metrics
from docshelf.app.heap import HeapTrimmer, fix_mmap_threshold, limit_arenas
from docshelf.app.mcp import roots
from docshelf.app.mcp.kernel import Kernel
from docshelf.app.mcp.prompts import PromptService
from docshelf.app.mcp.resources import ResourceService
from docshelf.app.mcp.sessions import SessionRegistry
from docshelf.app.mcp.tools import ToolService
from docshelf.app.roles import Role
from docshelf.app.settings import Settings
from docshelf.storage.bucket_poll import BucketPoller
from docshelf.storage.builder import FormatBuilder, Progress
from docshelf.storage.catalog import Catalog
from docshelf.storage.changefeed import ChangeFeed
from docshelf.storage.conversion import ConversionPool
from docshelf.storage.database import Database
from docshelf.storage.events import EventBus
from docshelf.storage.garbage import OrphanSweeper
from docshelf.storage.ignore_files import IgnoreRules
from docshelf.storage.indexer import Indexer, IndexReport
from docshelf.storage.jobs import JobRunner
from docshelf.storage.leases import Leases
from docshelf.storage.live_shelves import LiveShelves
from docshelf.storage.passes import timed_pass
from docshelf.storage.search import SearchIndex
from docshelf.storage.sessions import SessionTable
from docshelf.storage.shelves import ShelfSet, make_shelves
from docshelf.storage.store import open_store
from docshelf.storage.watcher import ShelfWatcher

log = logging.getLogger(__name__)
SWEEP_INTERVAL_S = 3600.0  # how often the indexing process sweeps the store for orphans


class EventLike(Protocol):
    """``threading.Event`` or a multiprocessing one."""

    def is_set(self) -> bool: ...
    def set(self) -> None: ...
    def wait(self, timeout: float | None = None) -> bool: ...


INSTRUCTIONS = (
    "docshelf serves a folder of documents as resources. Each resources/read returns the same "
    "document in several formats (the original, Markdown, plain text, JSON and PDF) as entries "
    "of contents[] sharing one URI; resources/metadata gives their sizes without the content. "
    "To find the right page, call search_documents; to see what is on the shelf (a folder, a "
    "kind of document, the newest), list_documents; read just a part of a long document with "
    "?pages=3-5 (PDF) or ?section=slug (headings) after its URI, or with read_document."
)


class Readiness:
    """Whether the catalog is current (``/readyz``): the first catalog pass has finished.

    Formats may still be building; that backlog is in ``/admin/status`` and
    ``/metrics``, not in readiness (DESIGN D11).

    The processes of ``serve --processes N`` share one: its flags and counts are then
    multiprocessing objects (:meth:`shared`), kept by the indexing process and read by
    every process's ``/readyz``. A replica with a readiness of its own is ready at once.
    """

    def __init__(
        self,
        *,
        finished: EventLike | None = None,
        catalogued: EventLike | None = None,
        counts: Any = None,
    ) -> None:
        self.shared = finished is not None
        self._finished: EventLike = finished or threading.Event()
        # Set once there is a catalog to list: at a warm start, or when the first pass ends.
        self.catalogued: EventLike = catalogued or threading.Event()
        self._counts: Any = counts if counts is not None else [0, 0]  # done, total
        self.error: str | None = None  # known to the process that ran the pass
        self.started_at = time.time()

    @classmethod
    def shared_by(cls, context: Any) -> Readiness:
        """One readiness for the processes a multiprocessing ``context`` starts."""
        return cls(
            finished=context.Event(), catalogued=context.Event(), counts=context.Array("q", 2)
        )

    def __getstate__(self) -> dict[str, Any]:
        if not self.shared:
            raise TypeError("only a shared readiness crosses processes")
        return {"finished": self._finished, "catalogued": self.catalogued, "counts": self._counts}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    @property
    def ready(self) -> bool:
        return self._finished.is_set()

    @property
    def done(self) -> int:
        return int(self._counts[0])

    @property
    def total(self) -> int:
        return int(self._counts[1])

    def progress(self, done: int, total: int) -> None:
        self._counts[0], self._counts[1] = done, total

    def finish(self, error: str | None = None) -> None:
        self.error = error
        self._finished.set()
        self.catalogued.set()


class Runtime:
    def __init__(self, settings: Settings, *, readiness: Readiness | None = None) -> None:
        # Before any thread of ours exists, so they all share the few arenas, and before the
        # first payload, so none moves the mmap threshold (app/heap.py).
        limit_arenas(settings.malloc_arenas)
        fix_mmap_threshold(settings.malloc_mmap_threshold)
        self.settings = settings
        ignore = IgnoreRules(tuple(settings.ignore), files=settings.ignore_files)
        # No shelf given: a stdio server serves its client's roots (app.mcp.roots), so its
        # set of shelves changes while serving. One set, shared by every part below.
        self.follows_roots = not settings.shelves and settings.index_on_start
        self.shelves = ShelfSet(
            make_shelves(settings.shelf_specs(), ignore), live=self.follows_roots
        )
        self.database = Database(settings.resolved_database_url)
        self.store = open_store(settings.store_spec)
        self.bus = EventBus()
        self.feed = ChangeFeed(self.database, self.bus, poll_s=settings.change_poll_ms / 1000)
        self.pool = ConversionPool(
            self.store,
            workers=settings.workers,
            timeout_s=settings.convert_timeout,
            memory_bytes=settings.convert_memory_mb * 1024 * 1024,
        )
        self.builder = FormatBuilder(
            self.database,
            self.store,
            self.pool,
            self.shelves,
            max_convert_bytes=int(settings.max_convert_mb * 1024 * 1024),
            render=settings.render,
            bus=self.bus,
            on_failure=metrics.observe_conversion_failure,
            on_recorded=metrics.observe_conversions,
            # Named as in the change feed: one name per process, host and pid in it.
            leases=Leases(self.database, self.feed.origin, settings.conversion_lease_s),
        )
        self.indexer = Indexer(self.database, self.builder, self.shelves, bus=self.bus)
        self.catalog = Catalog(self.database)
        self.readiness = readiness or Readiness()
        self.resources = ResourceService(
            self.catalog,
            self.store,
            self.shelves,
            page_size=settings.page_size,
            binary_cap=int(settings.binary_cap_mb * 1024 * 1024),
            builder=self.builder,
            max_read_bytes=int(settings.max_read_mb * 1024 * 1024),
            build_timeout_s=settings.convert_timeout + 10,
            read_wait_s=settings.read_wait,
            # A threading.Event, or its multiprocessing twin: only is_set() and wait() are used.
            catalogued=cast(threading.Event, self.readiness.catalogued),
        )
        self.bus.on_delivery(self.resources.forget)
        search = SearchIndex(self.database)
        instructions = (
            f"{INSTRUCTIONS} {roots.INSTRUCTIONS}" if self.follows_roots else INSTRUCTIONS
        )
        self.kernel = Kernel(
            self.resources,
            ToolService(self.resources, search),
            PromptService(self.resources, search),
            self.bus,
            metrics=metrics,
            instructions=instructions,
            keepalive_s=settings.keepalive_s,
            default_features=settings.negotiation_default(),
        )
        # 2025-era HTTP sessions, in the database: every serving process knows every one.
        self.sessions = SessionRegistry(
            SessionTable(self.database),
            self.bus,
            idle_timeout_s=settings.session_idle_timeout,
            max_sessions=settings.max_sessions,
        )
        self.started_at = time.time()
        # Reindex jobs (admin API, `docshelf reindex`); every finished pass feeds /metrics.
        self.jobs = JobRunner(self.database, self.indexer, observer=metrics.observe_index)
        self.heap = HeapTrimmer(settings.heap_trim_interval)
        self.watcher = ShelfWatcher(
            self.indexer,
            self.shelves,
            debounce_ms=settings.watch_debounce_ms,
            ignore_under=[settings.data_dir],
            observer=metrics.observe_index,
        )
        # What a killed process left in the store: swept by the indexing process.
        self.sweeper = OrphanSweeper(
            self.database,
            self.store,
            grace_s=settings.store_sweep_grace_s,
            interval_s=SWEEP_INTERVAL_S,
        )
        # Bucket shelves have no inotify: the indexing process lists them (storage.bucket_poll).
        self.poller = BucketPoller(
            self.indexer,
            list(self.shelves.values()),
            interval_s=settings.bucket_poll_s,
            observer=metrics.observe_index,
        )
        self._index_thread: threading.Thread | None = None
        self.roots: roots.RootsFollower | None = None
        if self.follows_roots:
            live = LiveShelves(
                self.shelves,
                self.database,
                self.indexer,
                self.builder,
                self.watcher,
                self.bus,
                ignore=ignore,
                watch=settings.watch,
                observer=metrics.observe_index,
            )
            catalogued = cast(threading.Event, self.readiness.catalogued)
            self.roots = roots.RootsFollower(live, self.kernel, catalogued)

    def open(self) -> None:
        """Upgrade the schema; the database is usable afterwards, and what this process
        publishes from now on reaches the others through the change feed."""
        self.database.upgrade()
        self.feed.publish()
        self.jobs.recover()
        if self.catalog.count() > 0:
            # A warm start serves the index it has at once; the pass reconciles behind it.
            self.readiness.catalogued.set()

    def index(
        self,
        *,
        force: bool = False,
        progress: Progress | None = None,
        build_progress: Progress | None = None,
    ) -> IndexReport:
        """One full pass over every shelf, formats included (``docshelf index``).

        ``progress`` follows the catalog pass, ``build_progress`` the conversion
        backlog after it (done, total).
        """
        return self.indexer.reconcile(
            force=force, progress=progress, wait=True, build_progress=build_progress
        )

    @property
    def indexing(self) -> bool:
        """Whether this process keeps the index (else it is a replica of one kept elsewhere)."""
        return self.settings.index_on_start

    @property
    def role(self) -> Role:
        """What this process does: index, convert in the background or on demand, serve."""
        return Role.of(self.settings)

    def start_background(self) -> None:
        """Follow the other processes' changes; build formats in the background if that is
        this process's role; when indexing, also the shelves (watcher) and the first
        catalog pass."""
        self.feed.follow()
        self.sessions.open()
        self.heap.start()
        if self.indexing:  # the OCR states follow the indexing process's settings
            self.builder.apply_ocr_settings()
        if self.role.converts == "background":
            self.pool.start()
            self.builder.start(reconcile_ocr=False)
        # Otherwise reads still build a format they need that is not stored yet
        # (FormatBuilder.ensure); the pool starts at the first such build.
        if not self.indexing:
            # A replica: the indexing process catalogs, watches and sweeps the store.
            if not self.readiness.shared:  # else the indexing process says when it is ready
                self.readiness.finish()
            return
        if self.settings.watch:
            self.watcher.start()
        self.sweeper.start()  # the indexing process sweeps the store (storage.garbage)
        if self.follows_roots:  # no shelf until the client gives its roots: nothing to pass
            self.readiness.finish()
            return
        self.start_initial_index()

    def start_initial_index(self) -> None:
        """Catalog in the background; ``/readyz`` turns 200 when the catalog is current."""

        def run() -> None:
            error = None
            try:
                with timed_pass(metrics.observe_index) as catalog:
                    report = catalog.report = self.indexer.reconcile(
                        progress=self.readiness.progress
                    )
                log.info(
                    "catalog current: %d files (%d added, %d changed, %d removed); "
                    "%d documents queued for conversion",
                    report.seen,
                    report.added,
                    report.changed,
                    report.removed,
                    self.builder.backlog(),
                )
            except Exception as exc:  # keep serving what the index already has
                log.exception("initial catalog pass failed")
                error = f"{type(exc).__name__}: {exc}"
            self.readiness.finish(error)
            if self.settings.watch:  # after the pass: a listing diffs against a current index
                self.poller.start()

        self._index_thread = threading.Thread(target=run, name="docshelf-index", daemon=True)
        self._index_thread.start()

    def close(self) -> None:
        """Stop within seconds: passes end after their batch, conversions in flight are
        abandoned (their documents stay pending and are built next time)."""
        self.heap.stop()
        self.sweeper.stop()
        self.indexer.stop()
        self.builder.close()
        self.pool.close()
        self.jobs.close()
        self.bus.close()
        self.watcher.stop()
        self.poller.stop()
        if self._index_thread is not None:
            self._index_thread.join(timeout=5)
        self.sessions.close()
        self.feed.close()  # after everything that publishes: what they published is written
        self.database.dispose()
