"""The job queue of one process and the worker thread that runs it (rules: :mod:`storage.jobs`)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from docshelf.storage.database import Database
from docshelf.storage.indexer import Indexer, IndexReport
from docshelf.storage.jobs.history import JobHistory, JobRecord
from docshelf.storage.jobs.owners import process_owner
from docshelf.storage.jobs.requests import JobRequest, Submission
from docshelf.storage.passes import ReportObserver, timed_pass

log = logging.getLogger(__name__)


class _Stopping(Exception):
    """Raised from the progress callback to end a pass early when the process shuts down."""


SAVE_EVERY = 25  # files between writes of a running job's progress


@dataclass(frozen=True, slots=True)
class LiveProgress:
    """A running job's progress to the file (``docshelf reindex`` draws it)."""

    catalog: tuple[int, int]  # (done, total) over every shelf so far
    formats: tuple[int, int] | None  # (built, total) of the shelf's formats, once it waits


class _JobProgress:
    """Progress over one or more shelves: ``done`` never goes back; ``total`` grows per shelf.

    The pass reports every file and the formats it waits for as they are built: :attr:`live`
    follows both; the job's row is written every :data:`SAVE_EVERY` files and at the end of
    each shelf.
    """

    def __init__(self, save: Callable[[int, int], None], stopping: threading.Event) -> None:
        self._save = save
        self._stopping = stopping
        self._base = 0
        self._current_total = 0
        self.live = LiveProgress((0, 0), None)

    def next_shelf(self) -> None:
        self._base += self._current_total
        self._current_total = 0
        self.live = LiveProgress(self.live.catalog, None)

    def __call__(self, done: int, total: int) -> None:
        if self._stopping.is_set():
            raise _Stopping
        self._current_total = total
        catalog = (self._base + done, self._base + total)
        self.live = LiveProgress(catalog, None)
        if done % SAVE_EVERY == 0 or done == total:
            self._save(*catalog)

    def formats_built(self, built: int, total: int) -> None:
        self.live = LiveProgress(self.live.catalog, (built, total))


class JobRunner:
    """Queues reindex jobs and runs them on one worker thread; :attr:`history` holds them."""

    def __init__(
        self,
        database: Database,
        indexer: Indexer,
        *,
        observer: ReportObserver | None = None,
        owner: str | None = None,
    ) -> None:
        self.indexer = indexer
        self.observer = observer
        self.owner = owner or process_owner()
        self.history = JobHistory(database, self.owner)
        self._cond = threading.Condition()
        self._queued: dict[int, JobRequest] = {}  # insertion order = run order
        self._running: int | None = None
        self._progress: tuple[int, _JobProgress] | None = None  # the running job's
        self._last_report: tuple[int, IndexReport] | None = None  # the last one run here
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def shelf_names(self) -> list[str]:
        return list(self.indexer.shelves)

    # -- submitting -----------------------------------------------------------------------

    def validate(self, request: JobRequest) -> JobRequest:
        """The request with canonical paths; UnknownShelf or ValueError says what is wrong."""
        return request.validated(self.shelf_names)

    def submit(self, request: JobRequest, *, trigger: str = "api") -> Submission:
        """Queue ``request`` (or merge it into its target's queued job) and return the job id."""
        request = self.validate(request)
        with self._cond:
            if self._stopping.is_set():
                raise RuntimeError("the job runner is shutting down")
            for job_id, queued in self._queued.items():
                if queued.shelf == request.shelf:
                    merged = queued.merged(request)
                    self._queued[job_id] = merged
                    self.history.coalesce(job_id, merged)
                    return Submission(job_id, coalesced=True)
            job_id = self.history.add(request, trigger)
            self._queued[job_id] = request
            self._ensure_worker()
            self._cond.notify_all()
        return Submission(job_id, coalesced=False)

    def wait(self, job_id: int, timeout: float | None = None) -> JobRecord | None:
        """The job once it has finished, or as it stands when ``timeout`` runs out."""
        self.finished_within(job_id, timeout)
        return self.history.get(job_id)

    def finished_within(self, job_id: int, timeout: float | None = None) -> bool:
        """Whether ``job_id`` is neither queued nor running here, waiting up to ``timeout``
        for it; asks only this process's queue, not the database (a poll can be frequent)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while job_id in self._queued or self._running == job_id:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(remaining)
        return True

    # -- what only this process knows -----------------------------------------------------

    def report(self, job_id: int) -> IndexReport | None:
        """The full report of ``job_id`` if it was the last job to succeed in this process
        (``docshelf reindex``: its ``failures`` include the files failed before and
        unchanged since, which the stored job counts but does not list)."""
        last = self._last_report
        return last[1] if last is not None and last[0] == job_id else None

    def live_progress(self, job_id: int) -> LiveProgress | None:
        """``job_id``'s progress to the file while it runs in this process, else None
        (the stored progress lags by up to :data:`SAVE_EVERY` files)."""
        running = self._progress
        return running[1].live if running is not None and running[0] == job_id else None

    # -- life cycle -----------------------------------------------------------------------

    def recover(self) -> int:
        """At start-up: mark jobs a dead process left queued or running as interrupted;
        return how many."""
        return self.history.interrupt_orphans()

    def close(self, timeout: float = 30.0) -> None:
        """Stop: queued jobs are marked interrupted, a running one stops at its next batch."""
        with self._cond:
            self._stopping.set()
            abandoned = list(self._queued)
            self._queued.clear()
            self._cond.notify_all()
        self.history.interrupt(abandoned, "the server shut down before this job started")
        if self._thread is not None:
            self._thread.join(timeout)

    def _ensure_worker(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._work, name="docshelf-jobs", daemon=True)
            self._thread.start()

    # -- the worker -----------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._queued and not self._stopping.is_set():
                    self._cond.wait()
                if self._stopping.is_set():
                    return
                job_id, request = next(iter(self._queued.items()))
                del self._queued[job_id]
                self._running = job_id
                self.history.start(job_id)
            try:
                self._execute(job_id, request)
            finally:
                with self._cond:
                    self._running = None
                    self._cond.notify_all()

    def _execute(self, job_id: int, request: JobRequest) -> None:
        progress = _JobProgress(
            lambda done, total: self.history.advance(job_id, done, total), self._stopping
        )
        self._progress = (job_id, progress)
        with timed_pass(self.observer) as run:
            try:
                report = run.report = self._index(request, progress)
            except _Stopping:
                stopped = "the server shut down while this job ran; run it again"
                self.history.interrupt([job_id], stopped)
                return
            except Exception as exc:
                log.exception("reindex job %d failed", job_id)
                self.history.fail(job_id, f"{type(exc).__name__}: {exc}")
                return
        self._last_report = (job_id, report)
        self.history.succeed(job_id, report)
        log.info(
            "reindex job %d done in %.1fs: %d files (%d added, %d changed, %d removed, %d failed)",
            job_id,
            run.seconds,
            report.seen,
            report.added,
            report.changed,
            report.removed,
            report.failed,
        )

    def _index(self, request: JobRequest, progress: _JobProgress) -> IndexReport:
        report = IndexReport()
        names: Sequence[str] = [request.shelf] if request.shelf is not None else self.shelf_names
        for name in names:
            progress.next_shelf()
            if request.paths is None:
                part = self.indexer.reconcile(
                    [name],
                    force=request.force,
                    progress=progress,
                    wait=True,
                    build_progress=progress.formats_built,
                )
            else:
                # refresh() reports no progress: the job shows 0/N until it is done, then N/N.
                progress(0, len(request.paths))
                part = self.indexer.refresh(name, request.paths, force=request.force, wait=True)
            report.merge(part)
        return report
