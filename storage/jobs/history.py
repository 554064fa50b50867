"""The ``jobs`` table: each job's row written as it moves along, and read back as records.

Rows are never deleted: once finished, a job stays as history (``GET /admin/jobs``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import ColumnElement, func, select

from docshelf.storage.database import Database
from docshelf.storage.indexer import COUNT_NAMES, FileError, IndexReport
from docshelf.storage.jobs.owners import owner_is_gone
from docshelf.storage.jobs.requests import JobRequest
from docshelf.storage.models import UNFINISHED_JOB_STATES, Job, JobState

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class JobCounts:
    """What a job's pass found, file by file (the fields of :class:`IndexReport` it keeps)."""

    seen: int
    added: int
    changed: int
    removed: int
    unchanged: int
    failed: int
    unsupported: int


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
        counts=JobCounts(**{name: getattr(job, name) for name in COUNT_NAMES}),
        progress=JobProgress(job.progress_done, job.progress_total),
        errors=tuple(FileError(e["path"], e["reason"], e["message"]) for e in job.errors or ()),
        message=job.message,
    )


class JobHistory:
    """The jobs of every process sharing the database, as this process (``owner``) sees them:
    it adds and moves along its own jobs' rows and reads anyone's."""

    def __init__(self, database: Database, owner: str) -> None:
        self.database = database
        self.owner = owner

    # -- writing --------------------------------------------------------------------------

    def add(self, request: JobRequest, trigger: str) -> int:
        """A new queued job for ``request``; its id."""
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
            return job.id

    def coalesce(self, job_id: int, merged: JobRequest) -> None:
        """One more request merged into queued ``job_id``, which now asks for ``merged``."""
        with self.database.session() as session:
            job = session.get_one(Job, job_id)
            job.paths = list(merged.paths) if merged.paths is not None else None
            job.force = merged.force
            job.requests += 1

    def start(self, job_id: int) -> None:
        self._update(job_id, state=JobState.RUNNING, started_at=datetime.now(UTC))

    def advance(self, job_id: int, done: int, total: int) -> None:
        self._update(job_id, progress_done=done, progress_total=total)

    def succeed(self, job_id: int, report: IndexReport) -> None:
        """The pass ran to its end: its counts and errors, and progress complete."""
        with self.database.session() as session:
            job = session.get_one(Job, job_id)
            job.state = JobState.SUCCEEDED
            job.finished_at = datetime.now(UTC)
            job.progress_done = job.progress_total
            job.errors = [
                {"path": e.path, "reason": e.reason, "message": e.message} for e in report.errors
            ]
            for name in COUNT_NAMES:
                setattr(job, name, getattr(report, name))

    def fail(self, job_id: int, message: str) -> None:
        self._update(job_id, state=JobState.FAILED, finished_at=datetime.now(UTC), message=message)

    def interrupt(self, job_ids: Sequence[int], message: str) -> None:
        if not job_ids:
            return
        now = datetime.now(UTC)
        with self.database.session() as session:
            for job_id in job_ids:
                job = session.get_one(Job, job_id)
                job.state = JobState.INTERRUPTED
                job.finished_at = now
                job.message = message

    def interrupt_orphans(self) -> int:
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

    def _update(self, job_id: int, **values: object) -> None:
        with self.database.session() as session:
            job = session.get_one(Job, job_id)
            for name, value in values.items():
                setattr(job, name, value)

    # -- reading --------------------------------------------------------------------------

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

    def unfinished_counts(self) -> dict[JobState, int]:
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

    def oldest_unfinished(self) -> datetime | None:
        """When this process's oldest queued or running job was requested (None when idle)."""
        return self._oldest_unfinished(Job.owner == self.owner)

    def oldest_unfinished_on_host(self) -> datetime | None:
        """When the oldest queued or running job of any process on this process's host was
        requested (owners are ``host:pid``; None when idle)."""
        host = self.owner.rpartition(":")[0]
        return self._oldest_unfinished(Job.owner.startswith(f"{host}:", autoescape=True))

    def _oldest_unfinished(self, owned: ColumnElement[bool]) -> datetime | None:
        query = select(func.min(Job.requested_at)).where(
            owned, Job.state.in_(UNFINISHED_JOB_STATES)
        )
        with self.database.session() as session:
            return session.scalar(query)
