"""Prometheus metrics for ``/metrics`` (DESIGN D9).

One :class:`~prometheus_client.CollectorRegistry` per process, kept apart from
prometheus-client's global default so that only docshelf's own series (plus the
standard process/platform/GC collectors) are exposed, whatever libraries
register. Tests run servers as separate processes, so each sees fresh counters.

Label values are bounded: MCP methods outside the server's method table are
counted as ``other`` and outcomes are a fixed set of names, so a client cannot
grow the number of series.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from prometheus_client import (
    CONTENT_TYPE_PLAIN_0_0_4,
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from docshelf.storage.indexer import IndexReport

REGISTRY = CollectorRegistry(auto_describe=True)
for _collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
    REGISTRY.register(_collector)

# The classic text format (what prometheus-client itself serves by default): every scraper reads it.
CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4

# JSON-RPC error code → outcome label.
_OUTCOMES = {
    -32700: "parse_error",
    -32600: "invalid_request",
    -32601: "method_not_found",
    -32602: "invalid_params",
    -32603: "internal_error",
    -32002: "resource_not_found",
}

MCP_REQUESTS = Counter(
    "docshelf_mcp_requests",
    "MCP requests handled, by JSON-RPC method and outcome (ok or the error's name).",
    ["method", "outcome"],
    registry=REGISTRY,
)
MCP_LATENCY = Histogram(
    "docshelf_mcp_request_duration_seconds",
    "Time to answer an MCP request, by JSON-RPC method.",
    ["method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
    registry=REGISTRY,
)
DOCUMENTS = Gauge(
    "docshelf_documents",
    "Documents in the index now.",
    registry=REGISTRY,
)
INDEXED_FILES = Counter(
    "docshelf_indexed_files",
    "Files handled by index passes, by result (added, changed, removed, unchanged, failed, "
    "unsupported).",
    ["result"],
    registry=REGISTRY,
)
CONVERSION_FAILURES = Counter(
    "docshelf_conversion_failures",
    "Files whose conversion failed during an index pass, by reason (encrypted, timeout, ...).",
    ["reason"],
    registry=REGISTRY,
)
INDEX_PASS_DURATION = Histogram(
    "docshelf_index_pass_duration_seconds",
    "Wall-clock time of one index pass (hashing and converting every changed file in it).",
    buckets=(0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600),
    registry=REGISTRY,
)
CONVERSION_BACKLOG = Gauge(
    "docshelf_conversion_backlog",
    "Catalogued documents whose formats are still to be built (state pending).",
    registry=REGISTRY,
)
OCR_BACKLOG = Gauge(
    "docshelf_ocr_backlog",
    "Documents waiting for their OCR pass (pages that carry only pictures of text).",
    registry=REGISTRY,
)
INDEX_LAG = Gauge(
    "docshelf_index_lag_seconds",
    "Seconds since the oldest unfinished reindex work was requested; 0 when idle.",
    registry=REGISTRY,
)
ACTIVE_SESSIONS = Gauge(
    "docshelf_active_sessions",
    "Handshake-era MCP sessions currently open over HTTP.",
    registry=REGISTRY,
)
ACTIVE_SUBSCRIPTIONS = Gauge(
    "docshelf_active_subscriptions",
    "Resource subscriptions currently held by clients.",
    registry=REGISTRY,
)


def outcome_of(error: BaseException | None) -> str:
    """A bounded label for how a request ended."""
    if error is None:
        return "ok"
    code = getattr(error, "code", None)
    if isinstance(code, int):
        return _OUTCOMES.get(code, "error")
    return "internal_error" if isinstance(error, Exception) else "cancelled"


def record_request(method: str, outcome: str, seconds: float) -> None:
    _requests(method, outcome).inc()
    _latency(method).observe(seconds)


# The labelled children, looked up once per label set (``labels()`` takes a lock and builds a
# key each call): the label values are bounded, so are these caches.
_requests = functools.lru_cache(maxsize=None)(
    lambda method, outcome: MCP_REQUESTS.labels(method=method, outcome=outcome)
)
_latency = functools.lru_cache(maxsize=None)(lambda method: MCP_LATENCY.labels(method=method))


@contextmanager
def track_request(method: str) -> Iterator[None]:
    """Count and time the request run inside the block, whatever its outcome."""
    started = time.perf_counter()
    error: BaseException | None = None
    try:
        yield
    except BaseException as exc:
        error = exc
        raise
    finally:
        record_request(method, outcome_of(error), time.perf_counter() - started)


def observe_index(report: IndexReport, seconds: float) -> None:
    """Fold one finished index pass into the counters (a :data:`storage.jobs.ReportObserver`)."""
    for result in ("added", "changed", "removed", "unchanged", "failed", "unsupported"):
        INDEXED_FILES.labels(result=result).inc(getattr(report, result))
    INDEX_PASS_DURATION.observe(seconds)


def observe_conversion_failure(reason: str) -> None:
    """Count one recorded conversion failure (the format builder calls this as it happens)."""
    CONVERSION_FAILURES.labels(reason=reason).inc()


def watch(
    *,
    sessions: Callable[[], float],
    subscriptions: Callable[[], float],
    documents: Callable[[], float],
    index_lag: Callable[[], float],
    backlog: Callable[[], float],
    ocr_backlog: Callable[[], float],
) -> None:
    """Read these gauges from the running service at scrape time, so they are never stale."""
    ACTIVE_SESSIONS.set_function(_never_failing(sessions))
    ACTIVE_SUBSCRIPTIONS.set_function(_never_failing(subscriptions))
    DOCUMENTS.set_function(_never_failing(documents))
    INDEX_LAG.set_function(_never_failing(index_lag))
    CONVERSION_BACKLOG.set_function(_never_failing(backlog))
    OCR_BACKLOG.set_function(_never_failing(ocr_backlog))


def _never_failing(read: Callable[[], float]) -> Callable[[], float]:
    """A gauge reading that is NaN, not an exception, when its source fails (say, the
    database is away): one broken gauge must not take the whole scrape down."""

    def reading() -> float:
        try:
            return float(read())
        except Exception:
            logging.getLogger(__name__).warning("a gauge could not be read", exc_info=True)
            return math.nan

    return reading


def exposition() -> bytes:
    """The registry in Prometheus text format."""
    return generate_latest(REGISTRY)
