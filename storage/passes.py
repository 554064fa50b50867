"""Timing an index pass and reporting it, one way for every pass: the start-up catalog,
a watched batch, a bucket listing, a shelf a client added, a reindex job.

The observer is the metrics sink (``app.metrics.observe_index``); storage never imports
it, it is handed one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from docshelf.storage.indexer import IndexReport

log = logging.getLogger(__name__)

#: Told what each finished pass did and how long it took, in seconds.
ReportObserver = Callable[[IndexReport, float], None]


@dataclass
class Pass:
    """One timed pass: the body sets ``report``; ``seconds`` is set when the body ends."""

    report: IndexReport | None = None
    seconds: float = 0.0


@contextmanager
def timed_pass(observer: ReportObserver | None = None) -> Iterator[Pass]:
    """Time the body (``perf_counter``); when it ends, hand ``observer`` the report it set
    and the seconds it took. A body that sets no report (it found nothing to do) or raises
    is not reported. An observer that fails is logged: it never fails the pass."""
    done = Pass()
    started = time.perf_counter()
    yield done
    done.seconds = time.perf_counter() - started
    if observer is not None and done.report is not None:
        try:
            observer(done.report, done.seconds)
        except Exception:
            log.exception("index report observer failed")
