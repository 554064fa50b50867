"""Prometheus metrics for ``/metrics`` (DESIGN D9, §14 "Beyond one machine").

One :class:`~prometheus_client.CollectorRegistry`, kept apart from prometheus-client's
global default so that only docshelf's own series (plus the standard process/platform/GC
collectors) are exposed, whatever libraries register.

Two modes, chosen when this module is imported:

- *One process* (``serve``, tests): the metric objects live in :data:`REGISTRY`, as they
  always have.
- *The processes of a host* (``serve --processes N``): the supervisor names a folder in
  ``PROMETHEUS_MULTIPROC_DIR`` before it starts the children (``app.metrics_folder``), so
  prometheus-client keeps every counter, histogram and live gauge in a memory-mapped file
  per process there, and a scrape of any child adds them all up
  (:class:`app.metrics_host.HostCollector`): the request counters are the host's, however
  the kernel spread the connections.

Either way, the gauges read from the database (documents, sessions, the backlogs, the index
lag) are read once, by the process answering the scrape (:class:`app.metrics_host
.DatabaseGauges`): each child would read the same figure, and adding them up would
multiply it by N. Every scrape names its host in ``docshelf_host_info{host, pid}``.

Label values are bounded: MCP methods outside the server's method table are
counted as ``other`` and outcomes are a fixed set of names, so a client cannot
grow the number of series.
"""

from __future__ import annotations

import enum
import functools
import logging
import math
import os
import socket
from collections.abc import Callable

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

from docshelf.app.mcp import wire
from docshelf.app.metrics_host import DatabaseGauges, HostCollector
from docshelf.storage.indexer import IndexReport

# Set by the supervisor of `serve --processes N` before its children import prometheus-client
# (which reads it then, once): the folder of the host's per-process metric files.
MULTIPROCESS_DIR = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None

REGISTRY = CollectorRegistry(auto_describe=True)
if MULTIPROCESS_DIR is None:
    for _collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
        REGISTRY.register(_collector)
    _OWN: CollectorRegistry | None = REGISTRY
else:
    # The metric objects below write to this process's files only; the registry serves
    # every live and dead process's files added up, plus each live one's CPU and memory.
    # Python's GC figures cannot be read from another process: left out.
    REGISTRY.register(HostCollector(MULTIPROCESS_DIR))
    REGISTRY.register(PLATFORM_COLLECTOR)
    _OWN = None
DATABASE_GAUGES = DatabaseGauges(
    {
        "docshelf_documents": "Documents in the index now.",
        "docshelf_conversion_backlog": (
            "Catalogued documents whose formats are still to be built (state pending)."
        ),
        "docshelf_ocr_backlog": (
            "Documents waiting for their OCR pass (pages that carry only pictures of text)."
        ),
        "docshelf_index_lag_seconds": (
            "Seconds since the oldest unfinished reindex work was requested; 0 when idle."
        ),
        "docshelf_active_sessions": "Handshake-era MCP sessions currently open over HTTP.",
    }
)
REGISTRY.register(DATABASE_GAUGES)

# The classic text format (what prometheus-client itself serves by default): every scraper reads it.
CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4


class Outcome(enum.StrEnum):
    """How an MCP request ended: the values of ``docshelf_mcp_requests``' outcome label."""

    OK = "ok"
    PARSE_ERROR = "parse_error"
    INVALID_REQUEST = "invalid_request"
    METHOD_NOT_FOUND = "method_not_found"
    INVALID_PARAMS = "invalid_params"
    INTERNAL_ERROR = "internal_error"  # a JSON-RPC -32603, or an exception that was not one
    RESOURCE_NOT_FOUND = "resource_not_found"
    ERROR = "error"  # any other JSON-RPC error code
    CANCELLED = "cancelled"  # not an Exception: the request's task was cancelled


_OUTCOMES = {
    wire.PARSE_ERROR: Outcome.PARSE_ERROR,
    wire.INVALID_REQUEST: Outcome.INVALID_REQUEST,
    wire.METHOD_NOT_FOUND: Outcome.METHOD_NOT_FOUND,
    wire.INVALID_PARAMS: Outcome.INVALID_PARAMS,
    wire.INTERNAL_ERROR: Outcome.INTERNAL_ERROR,
    wire.RESOURCE_NOT_FOUND_LEGACY: Outcome.RESOURCE_NOT_FOUND,
}

MCP_REQUESTS = Counter(
    "docshelf_mcp_requests",
    "MCP requests handled, by JSON-RPC method and outcome (ok or the error's name).",
    ["method", "outcome"],
    registry=_OWN,
)
MCP_LATENCY = Histogram(
    "docshelf_mcp_request_duration_seconds",
    "Time to answer an MCP request, by JSON-RPC method.",
    ["method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
    registry=_OWN,
)
INDEXED_FILES = Counter(
    "docshelf_indexed_files",
    "Files handled by index passes, by result (added, changed, removed, unchanged, failed, "
    "unsupported).",
    ["result"],
    registry=_OWN,
)
CONVERSIONS = Counter(
    "docshelf_conversions",
    "Documents whose conversion this process recorded (background or for a read); every "
    "host converts, so sum across hosts for the service's rate.",
    registry=_OWN,
)
CONVERSION_FAILURES = Counter(
    "docshelf_conversion_failures",
    "Files whose conversion failed during an index pass, by reason (encrypted, timeout, ...).",
    ["reason"],
    registry=_OWN,
)
INDEX_PASS_DURATION = Histogram(
    "docshelf_index_pass_duration_seconds",
    "Wall-clock time of one index pass (hashing and converting every changed file in it).",
    buckets=(0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600),
    registry=_OWN,
)
# A process's own figure, set as it changes; across processes the live ones are added up
# (a dead process's streams are gone with it).
ACTIVE_SUBSCRIPTIONS = Gauge(
    "docshelf_active_subscriptions",
    "Resource subscriptions currently held by clients.",
    registry=_OWN,
    multiprocess_mode="livesum",
)
# One series per serving process (its pid), while it lives: the host's name, and which
# processes a scrape added up. Across processes prometheus-client adds the pid label itself.
HOST_INFO = Gauge(
    "docshelf_host_info",
    "1 for each live serving process: the host it runs on (the machine's hostname, not the "
    "scrape target) and its pid.",
    ["host"] if MULTIPROCESS_DIR else ["host", "pid"],
    registry=_OWN,
    multiprocess_mode="liveall",
)


def outcome_of(error: BaseException | None) -> Outcome:
    """A bounded label for how a request ended."""
    if error is None:
        return Outcome.OK
    code = getattr(error, "code", None)
    if isinstance(code, int):
        return _OUTCOMES.get(code, Outcome.ERROR)
    return Outcome.INTERNAL_ERROR if isinstance(error, Exception) else Outcome.CANCELLED


def record_request(method: str, error: BaseException | None, seconds: float) -> None:
    """Count and time one MCP request (:class:`app.mcp.kernel.RequestMetrics`)."""
    _requests(method, outcome_of(error)).inc()
    _latency(method).observe(seconds)


# The labelled children, looked up once per label set (``labels()`` takes a lock and builds a
# key each call): the label values are bounded, so are these caches.
_requests = functools.lru_cache(maxsize=None)(
    lambda method, outcome: MCP_REQUESTS.labels(method=method, outcome=outcome)
)
_latency = functools.lru_cache(maxsize=None)(lambda method: MCP_LATENCY.labels(method=method))


def observe_index(report: IndexReport, seconds: float) -> None:
    """Fold one finished index pass into the counters (a :data:`storage.passes.ReportObserver`)."""
    for result in ("added", "changed", "removed", "unchanged", "failed", "unsupported"):
        INDEXED_FILES.labels(result=result).inc(getattr(report, result))
    INDEX_PASS_DURATION.observe(seconds)


def observe_conversions(count: int) -> None:
    """Count conversions this process recorded (the format builder calls this)."""
    CONVERSIONS.inc(count)


def observe_conversion_failure(reason: str) -> None:
    """Count one recorded conversion failure (the format builder calls this as it happens)."""
    CONVERSION_FAILURES.labels(reason=reason).inc()


def watch(
    *,
    sessions: Callable[[], float],
    documents: Callable[[], float],
    index_lag: Callable[[], float],
    backlog: Callable[[], float],
    ocr_backlog: Callable[[], float],
) -> Callable[[int], None]:
    """Read the database's gauges at scrape time, so they are never stale, and name this
    process in ``docshelf_host_info``; the function that keeps the streams gauge current."""
    DATABASE_GAUGES.watch(
        {
            "docshelf_active_sessions": _never_failing(sessions),
            "docshelf_documents": _never_failing(documents),
            "docshelf_index_lag_seconds": _never_failing(index_lag),
            "docshelf_conversion_backlog": _never_failing(backlog),
            "docshelf_ocr_backlog": _never_failing(ocr_backlog),
        }
    )
    host = {"host": socket.gethostname()}
    if MULTIPROCESS_DIR is None:
        host["pid"] = str(os.getpid())
    HOST_INFO.labels(**host).set(1)
    return ACTIVE_SUBSCRIPTIONS.set


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
