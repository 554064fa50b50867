"""``docshelf serve --processes N``: N serving processes on one port, one of them indexing.

The command upgrades the schema once and binds the listening socket once (both in
``app.startup``, so a database that cannot be reached or a port in use is one line
before anything starts); the supervisor then starts N children (multiprocessing,
``spawn``); each runs uvicorn on the inherited socket, and the kernel hands each new
connection to whichever child accepts it first. Child 0 is the indexing process, as
configured (start-up pass, watcher, background conversion); the others are replicas
(``Settings.index_on_start`` off): they serve, build only the formats their own reads
need, and hear the indexing child's changes through the change feed
(``storage.changefeed``), as every child does. They share one readiness, kept by the
indexing child, so ``/readyz`` means the same in each.

Signals: SIGINT or SIGTERM to the supervisor sends SIGTERM to every child (each ends
its notification streams and exits 0), waits up to ``shutdown_timeout`` + 5 s, kills
what is left, and exits 0. Ctrl-C reaches the children directly as well; same result.

A child that exits cleanly (status 0) was stopped on purpose — SIGTERM to it, or a
Ctrl-C that reached it before the supervisor — and the supervisor stops the others and
exits 0. A child that dies (a signal, a nonzero status) is reported (its pid, role and
exit status) and started again in its role: the other children keep serving, and their
clients' streams stay open, whereas exiting would drop every connection to recover from
one crash. Two cases are not retried, because a restart would only repeat them: a child
that dies before it serves (a database that cannot be reached, say), and a fifth death
within five minutes. Then the supervisor stops the others and exits 1, for whatever runs
it (systemd, compose's ``restart:``) to deal with.

Children stop by themselves if the supervisor disappears (``kill -9``): they check
their parent every second.

Metrics: the children keep theirs in files of a folder the supervisor makes for the run
(``app.metrics_folder``), so ``/metrics`` from any child is the host's; a dead child's
live gauges are removed before it is started again, and the folder when the service ends.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import wait
from types import FrameType
from typing import Any

from docshelf.app.metrics_folder import MetricsFolder
from docshelf.app.settings import Settings

log = logging.getLogger("docshelf.supervisor")

MAX_DEATHS = 5  # children that die after serving, within DEATH_WINDOW_S: give up
DEATH_WINDOW_S = 300.0
KILL_GRACE_S = 5.0  # beyond the shutdown timeout
STARTUP_FAILURE = 3  # a child's status when its server could not start (as uvicorn's)


def _child(settings: Settings, sock: socket.socket, readiness: Any, serving: Any) -> None:
    """One serving process (the target of a spawned child)."""
    # Until uvicorn takes the signals over, Ctrl-C must not end this one with a traceback;
    # the supervisor's SIGTERM stops it meanwhile.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from docshelf.app.cli import configure_logging
    from docshelf.app.http_server import run_http
    from docshelf.app.runtime import Runtime

    configure_logging(settings)
    runtime = Runtime(settings, readiness=readiness)
    parent = os.getppid()

    def watch_parent() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        log.warning("the supervisor (pid %d) is gone; stopping", parent)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch_parent, name="docshelf-parent", daemon=True).start()
    if not run_http(runtime, sock, on_started=serving.set):
        sys.exit(STARTUP_FAILURE)


@dataclass
class _Slot:
    number: int
    settings: Settings
    process: Any = None
    serving: Any = None  # set by the child once it serves

    @property
    def role(self) -> str:
        return "indexing" if self.settings.index_on_start else "serving"


class Supervisor:
    def __init__(self, settings: Settings, sock: socket.socket) -> None:
        self.settings = settings
        self.sock = sock
        self.context = multiprocessing.get_context("spawn")
        # Child 0 indexes if this configuration indexes; the rest are replicas. They share
        # this host's CPU: child 0 builds in the background (with --workers workers, as
        # one process would), the rest build what their reads need (app.roles).
        replica = settings.model_copy(
            update={"index_on_start": False, "watch": False, "convert": False}
        )
        self.slots = [_Slot(n, settings if n == 0 else replica) for n in range(settings.processes)]
        self.readiness: Any = None
        self._stop_signal: int | None = None
        self._wake_r, self._wake_w = os.pipe()
        self._deaths: deque[float] = deque()
        self.metrics = MetricsFolder()

    def run(self) -> int:
        from docshelf.app.runtime import Readiness

        if self.settings.index_on_start:
            self.readiness = Readiness.shared_by(self.context)
        host, port = self.sock.getsockname()[:2]
        signals = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.signal(sig, self._on_signal) for sig in signals}
        try:
            self.metrics.open()  # before any child imports prometheus-client
            log.info(
                "supervisor %d: %d processes serving http://%s:%d/mcp",
                os.getpid(),
                len(self.slots),
                host if ":" not in host else f"[{host}]",
                port,
            )
            for slot in self.slots:
                self._start(slot)
            return self._watch()
        finally:
            self._stop_all()
            self.metrics.close()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self.sock.close()
            os.close(self._wake_r)
            os.close(self._wake_w)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if self._stop_signal is None:
            self._stop_signal = signum
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def _start(self, slot: _Slot) -> None:
        slot.serving = self.context.Event()
        slot.process = self.context.Process(
            target=_child,
            args=(slot.settings, self.sock, self.readiness, slot.serving),
            name=f"docshelf-serve-{slot.number}",
        )
        # Started with SIGINT ignored, the child cannot be interrupted with a traceback while
        # it imports; uvicorn handles SIGINT once it serves. A Ctrl-C that lands in these
        # microseconds still stops the group: the other children exit 0 (see _watch).
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            slot.process.start()
        finally:
            signal.signal(signal.SIGINT, previous)
        log.info("process %d (%s) started: pid %d", slot.number, slot.role, slot.process.pid)

    def _watch(self) -> int:
        """Until a signal or a child's clean exit (0), or a death not worth a restart (1)."""
        while self._stop_signal is None:
            sentinels = {slot.process.sentinel: slot for slot in self.slots}
            ready = wait([*sentinels, self._wake_r])
            if self._stop_signal is not None:
                break
            for sentinel in ready:
                slot = sentinels.get(sentinel)  # type: ignore[call-overload]
                if slot is None:
                    continue
                slot.process.join()
                if slot.process.exitcode == 0:
                    # Stopped on purpose: a signal to it, or Ctrl-C to the whole group (which
                    # may reach a child before this process). The service stops with it.
                    log.info(
                        "process %d (pid %d) stopped; stopping the others",
                        slot.number,
                        slot.process.pid,
                    )
                    return 0
                if not self._restart(slot):
                    return 1
        log.info("signal %d: stopping %d processes", self._stop_signal, len(self.slots))
        return 0

    def _restart(self, slot: _Slot) -> bool:
        """Report a dead child and start it again, unless that would not help."""
        process = slot.process
        code = process.exitcode
        status = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        served = slot.serving.is_set()
        self.metrics.process_dead(process.pid)
        log.error(
            "process %d (%s, pid %d) died: %s%s",
            slot.number,
            slot.role,
            process.pid,
            status,
            "" if served else ", before it could serve",
        )
        if not served:
            log.error("not restarting it: it would fail the same way; stopping")
            return False
        now = time.monotonic()
        self._deaths.append(now)
        while self._deaths and now - self._deaths[0] > DEATH_WINDOW_S:
            self._deaths.popleft()
        if len(self._deaths) >= MAX_DEATHS:
            log.error("%d deaths in %d s: stopping", len(self._deaths), DEATH_WINDOW_S)
            return False
        self._start(slot)
        return True

    def _stop_all(self) -> None:
        alive = [s.process for s in self.slots if s.process is not None and s.process.is_alive()]
        for process in alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + self.settings.shutdown_timeout + KILL_GRACE_S
        for process in alive:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                log.warning("process pid %d did not stop in time; killing it", process.pid)
                process.kill()
                process.join()


def supervise(settings: Settings, sock: socket.socket) -> int:
    """Run ``settings.processes`` serving processes on ``sock`` until a signal; the exit
    status."""
    return Supervisor(settings, sock).run()
