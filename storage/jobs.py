"""Reindex jobs: requests recorded in the database and run, one at a time, by a worker thread.

A reindex can take minutes, so a request only records a job and returns its
id; one worker thread per process runs the jobs in request order. Each state
change (queued → running → succeeded / failed / interrupted), the counts,
the progress and the per-file errors are written to the ``jobs`` table, so a
job can be watched while it runs and stays as history after a restart.

Rules (the admin API documents them to operators):

* **One at a time.** Jobs run strictly one after another, so two passes never
  compete for a shelf or for the conversion pool. A running job is never
  interrupted or changed by a new request.
* **Coalescing.** A request whose target — one shelf, or all shelves — already
  has a *queued* job (not yet running) is merged into that job and gets its id:
  paths are united (no paths means the whole shelf and absorbs any list), and
  ``force`` is or-ed. A request arriving while its target's job *runs* queues a
  new job that runs after it.
* **Recovery.** Jobs left queued or running by a process that is gone (same
  host, pid no longer alive, or our own pid from an earlier life) are marked
  ``interrupted`` at start-up; their rows are kept.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePosixPath

from sqlalchemy import func, select

from docshelf.storage.database import Database
from docshelf.storage.indexer import FileError, Indexer, IndexReport
from docshelf.storage.models import UNFINISHED_JOB_STATES, Job, JobState

log = logging.getLogger(__name__)

ReportObserver = Callable[[IndexReport, float], None]
"""Told about every finished pass (its report and wall-clock seconds), e.g. to update metrics."""

COUNT_NAMES = ("seen", "added", "changed", "removed", "unchanged", "failed")


class UnknownShelf(LookupError):
    """A job names a shelf this process does not serve."""


class _Stopping(Exception):
    """Raised from the progress callback to end a pass early when the process shuts down."""


def normalize_path(raw: str) -> str:
    """A shelf-relative POSIX path in canonical form; ValueError says what is wrong."""
    if "\x00" in raw:
        raise ValueError(f"path {raw!r} contains a NUL character")
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"path {raw!r} is not valid Unicode (a lone surrogate)") from None
    if raw.startswith("/"):
        raise ValueError(
            f"path {raw!r} is absolute: paths are relative to the shelf's root, "
            "e.g. 'guides/intro.md'"
        )
    parts = [part for part in raw.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise ValueError(f"path {raw!r} contains '..': paths must stay inside the shelf")
    if not parts:
        raise ValueError(
            f"path {raw!r} names the shelf's root: leave paths out to reindex the whole shelf"
        )
    return str(PurePosixPath(*parts))


@dataclass(frozen=True, slots=True)
class JobRequest:
    """What to reindex: ``shelf`` None = every shelf; ``paths`` None = the whole shelf."""

    shelf: str | None = None
    paths: tuple[str, ...] | None = None
    force: bool = False

    def merged(self, other: JobRequest) -> JobRequest:
        """This request widened by ``other`` (same target): paths united, force or-ed."""
        paths = (
            None
            if self.paths is None or other.paths is None
            else tuple(sorted({*self.paths, *other.paths}))
        )
        return JobRequest(self.shelf, paths, self.force or other.force)


@dataclass(frozen=True, slots=True)
class Submission:
    job_id: int
    coalesced: bool  # True: merged into a job that was already queued


@dataclass(frozen=True, slots=True)
class JobCounts:
    """What a job's pass found, file by file (the fields of :class:`IndexReport` it keeps)."""

    seen: int
    added: int
    changed: int
    removed: int
    unchanged: int
    failed: int


@dataclass(frozen=True, slots=True)
class JobProgress:
    """Files handled so far out of those known so far, as last written to the job's row."""

    done: int
    total: int


@dataclass(frozen=True, slots=True)
class JobRecord:
    """A job as stored; times are timezone-aware UTC."""

    id: int
    shelf: str | None
    paths: tuple[str, ...] | None
    force: bool
    trigger: str
    owner: str
    requests: int
    state: JobState
    requested_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    counts: JobCounts
    progress: JobProgress
    errors: tuple[FileError, ...]
    message: str | None

    @property
    def finished(self) -> bool:
        return self.state.finished

    @property
    def error_count(self) -> int:
        return len(self.errors)


def _record(job: Job) -> JobRecord:
    return JobRecord(
        id=job.id,
        shelf=job.shelf,
        paths=tuple(job.paths) if job.paths is not None else None,
        force=job.force,
        trigger=job.trigger,
        owner=job.owner,
        requests=job.requests,
        state=job.state,
        requested_at=job.requested_at,
        started_at=job.started_at,
        finished_at=job.finished_at,
        counts=JobCounts(*(getattr(job, name) for name in COUNT_NAMES)),
        progress=JobProgress(job.progress_done, job.progress_total),
        errors=tuple(FileError(e["path"], e["reason"], e["message"]) for e in job.errors or ()),
        message=job.message,
    )


def process_owner() -> str:
    """This process's name in ``Job.owner``: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def owner_is_gone(owner: str, me: str) -> bool:
    """Whether the process named ``owner`` can no longer be running its jobs.

    Only processes on this host can be checked; another host's jobs are left
    alone. Our own pid counts as gone: a fresh process has no jobs in memory, so
    a row with its pid comes from an earlier process that had the same pid (a
    restarted container, typically).
    """
    host, _, pid_text = owner.rpartition(":")
    if host != me.rpartition(":")[0] or not pid_text.isdigit():
        return False
    if owner == me:
        return True
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, under another user
        return False
    return False


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
    """Queues reindex jobs, runs them on one worker thread, and answers questions about them."""

    def __init__(
        self,
        database: Database,
        indexer: Indexer,
        *,
        observer: ReportObserver | None = None,
        owner: str | None = None,
    ) -> None:
        self.database = database
        self.indexer = indexer
        self.observer = observer
        self.owner = owner or process_owner()
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
        if request.shelf is not None and request.shelf not in self.indexer.shelves:
            raise UnknownShelf(
                f"unknown shelf {request.shelf!r}; this server has: {', '.join(self.shelf_names)}"
            )
        if request.paths is None:
            return request
        if request.shelf is None:
            raise ValueError("paths are relative to a shelf: name the shelf as well")
        if not request.paths:
            raise ValueError("paths is empty: leave it out to reindex the whole shelf")
        paths = tuple(sorted({normalize_path(p) for p in request.paths}))
        return JobRequest(request.shelf, paths, request.force)

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
                    with self.database.session() as session:
                        job = session.get_one(Job, job_id)
                        job.paths = list(merged.paths) if merged.paths is not None else None
                        job.force = merged.force
                        job.requests += 1
                    return Submission(job_id, coalesced=True)
            with self.database.session() as session:
                job = Job(
                    shelf=request.shelf,
                    paths=list(request.paths) if request.paths is not None else None,
                    force=request.force,
                    trigger=trigger,
                    owner=self.owner,
                    requests=1,
                    state=JobState.QUEUED,
                    requested_at=datetime.now(UTC),
                    errors=[],
                )
                session.add(job)
                session.flush()
                job_id = job.id
            self._queued[job_id] = request
            self._ensure_worker()
            self._cond.notify_all()
        return Submission(job_id, coalesced=False)

    def wait(self, job_id: int, timeout: float | None = None) -> JobRecord | None:
        """The job once it has finished, or as it stands when ``timeout`` runs out."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while job_id in self._queued or self._running == job_id:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    break
                self._cond.wait(remaining)
        return self.get(job_id)

    # -- reading --------------------------------------------------------------------------

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

    def get(self, job_id: int) -> JobRecord | None:
        with self.database.session() as session:
            job = session.get(Job, job_id)
            return _record(job) if job is not None else None

    def recent(self, limit: int = 50, state: JobState | None = None) -> list[JobRecord]:
        """The newest jobs first."""
        query = select(Job).order_by(Job.id.desc()).limit(limit)
        if state is not None:
            query = query.where(Job.state == state)
        with self.database.session() as session:
            return [_record(job) for job in session.scalars(query)]

    def pending_counts(self) -> dict[JobState, int]:
        """How many jobs are queued and running, in any process sharing the database."""
        query = (
            select(Job.state, func.count(Job.id))
            .where(Job.state.in_(UNFINISHED_JOB_STATES))
            .group_by(Job.state)
        )
        counts = dict.fromkeys(UNFINISHED_JOB_STATES, 0)
        with self.database.session() as session:
            counts.update({state: n for state, n in session.execute(query).all()})
        return counts

    def oldest_pending(self) -> datetime | None:
        """When this process's oldest queued or running job was requested (None when idle)."""
        query = select(func.min(Job.requested_at)).where(
            Job.owner == self.owner, Job.state.in_(UNFINISHED_JOB_STATES)
        )
        with self.database.session() as session:
            return session.scalar(query)

    # -- life cycle -----------------------------------------------------------------------

    def recover(self) -> int:
        """Mark jobs a dead process left queued or running as interrupted; return how many."""
        now = datetime.now(UTC)
        count = 0
        with self.database.session() as session:
            for job in session.scalars(select(Job).where(Job.state.in_(UNFINISHED_JOB_STATES))):
                if owner_is_gone(job.owner, self.owner):
                    job.state = JobState.INTERRUPTED
                    job.finished_at = now
                    job.message = (
                        f"the process that ran this job ({job.owner}) ended before it finished"
                    )
                    count += 1
        if count:
            log.warning("marked %d job(s) of an earlier process as interrupted", count)
        return count

    def close(self, timeout: float = 30.0) -> None:
        """Stop: queued jobs are marked interrupted, a running one stops at its next batch."""
        with self._cond:
            self._stopping.set()
            abandoned = list(self._queued)
            self._queued.clear()
            self._cond.notify_all()
        self._finish_many(abandoned, "the server shut down before this job started")
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
                self._update(job_id, state=JobState.RUNNING, started_at=datetime.now(UTC))
            try:
                self._execute(job_id, request)
            finally:
                with self._cond:
                    self._running = None
                    self._cond.notify_all()

    def _execute(self, job_id: int, request: JobRequest) -> None:
        started = time.perf_counter()
        progress = _JobProgress(
            lambda done, total: self._update(job_id, progress_done=done, progress_total=total),
            self._stopping,
        )
        self._progress = (job_id, progress)
        try:
            report = self._index(request, progress)
        except _Stopping:
            self._finish_many([job_id], "the server shut down while this job ran; run it again")
            return
        except Exception as exc:
            log.exception("reindex job %d failed", job_id)
            self._update(
                job_id,
                state=JobState.FAILED,
                finished_at=datetime.now(UTC),
                message=f"{type(exc).__name__}: {exc}",
            )
            return
        elapsed = time.perf_counter() - started
        self._last_report = (job_id, report)
        job = self.get(job_id)
        total = job.progress.total if job is not None else 0
        self._update(
            job_id,
            state=JobState.SUCCEEDED,
            finished_at=datetime.now(UTC),
            progress_done=total,
            progress_total=total,
            errors=[
                {"path": e.path, "reason": e.reason, "message": e.message} for e in report.errors
            ],
            **{name: getattr(report, name) for name in COUNT_NAMES},
        )
        log.info(
            "reindex job %d done in %.1fs: %d files (%d added, %d changed, %d removed, %d failed)",
            job_id,
            elapsed,
            report.seen,
            report.added,
            report.changed,
            report.removed,
            report.failed,
        )
        if self.observer is not None:
            try:
                self.observer(report, elapsed)
            except Exception:  # an observer must never turn a finished job into a failure
                log.exception("index report observer failed")

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

    # -- persistence ----------------------------------------------------------------------

    def _update(self, job_id: int, **values: object) -> None:
        with self.database.session() as session:
            job = session.get_one(Job, job_id)
            for name, value in values.items():
                setattr(job, name, value)

    def _finish_many(self, job_ids: Sequence[int], message: str) -> None:
        if not job_ids:
            return
        now = datetime.now(UTC)
        with self.database.session() as session:
            for job_id in job_ids:
                job = session.get_one(Job, job_id)
                job.state = JobState.INTERRUPTED
                job.finished_at = now
                job.message = message
