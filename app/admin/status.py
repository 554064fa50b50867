"""``GET /admin/status``: one look at the whole service, and the index-lag figure."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from docshelf.app import __version__
from docshelf.app.admin.models import (
    DocumentCounts,
    JobsStatus,
    ShelfStatus,
    Status,
    StoreStatus,
)
from docshelf.app.runtime import Runtime
from docshelf.storage.inventory import document_counts, store_usage
from docshelf.storage.models import JobState


def index_lag_seconds(runtime: Runtime, *, host: bool = False) -> float:
    """Seconds since the oldest unfinished indexing work of this process was requested.

    Unfinished work is a queued or running reindex job, or the start-up pass
    while ``/readyz`` still says 503. 0 when idle: the index has caught up with
    everything it was asked to do. ``host``: the jobs of every process on this host
    (``serve --processes N``, where ``/metrics`` describes the host and a job runs in
    whichever process received it); the start-up pass's readiness is theirs already.
    """
    lags = [0.0]
    history = runtime.jobs.history
    oldest = history.oldest_unfinished_on_host() if host else history.oldest_unfinished()
    if oldest is not None:
        lags.append((datetime.now(UTC) - oldest).total_seconds())
    if not runtime.readiness.ready:
        lags.append(time.time() - runtime.readiness.started_at)
    return max(lags)


def build_status(runtime: Runtime) -> Status:
    counts = document_counts(runtime.database)
    usage = store_usage(runtime.database)
    pending = runtime.jobs.history.unfinished_counts()
    return Status(
        version=__version__,
        uptime_seconds=round(time.time() - runtime.started_at, 3),
        ready=runtime.readiness.ready,
        shelves=[
            ShelfStatus(
                name=shelf.name, root=shelf.location, documents=counts.by_shelf.get(shelf.name, 0)
            )
            for shelf in runtime.shelves.values()
        ],
        documents=DocumentCounts.model_validate(counts),
        representation_store=StoreStatus(
            path=runtime.store.location, representations=usage.representations, bytes=usage.bytes
        ),
        index_lag_seconds=round(index_lag_seconds(runtime), 3),
        conversion_backlog=runtime.builder.backlog(max_age_s=0.5),
        ocr_backlog=runtime.builder.ocr_backlog(max_age_s=0.5),
        jobs=JobsStatus(queued=pending[JobState.QUEUED], running=pending[JobState.RUNNING]),
        sessions=len(runtime.sessions),
    )
