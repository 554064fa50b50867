"""Background work done every so often on a thread of its own, until the process stops:
the heap trim (app.heap), the store's orphan sweep (storage.garbage), the bucket listing
(storage.bucket_poll) and the conversion leases' heartbeat (storage.leases)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class Periodic:
    """Calls ``work`` every ``interval_s`` seconds on a daemon thread named ``name`` (first
    at once with ``at_start``) until :meth:`stop`. A round that raises is logged with
    ``failure`` and the next round tries again: a passing hiccup (a database, a bucket) must
    not end the work for the rest of the process's life."""

    def __init__(
        self,
        name: str,
        interval_s: float,
        work: Callable[[], object],
        *,
        failure: str,
        at_start: bool = False,
    ) -> None:
        self.name = name
        self.interval_s = interval_s
        self.work = work
        self.failure = failure
        self.at_start = at_start
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread; again, or once stopped, does nothing."""
        with self._lock:
            if self._thread is not None or self._stop.is_set():
                return
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    def stop(self, timeout_s: float = 10) -> None:
        """End the thread: the round in progress finishes; the wait between rounds does not."""
        self._stop.set()
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=timeout_s)

    def _run(self) -> None:
        if self.at_start:
            self._round()
        while not self._stop.wait(self.interval_s):
            self._round()

    def _round(self) -> None:
        try:
            self.work()
        except Exception:
            log.exception(self.failure)
