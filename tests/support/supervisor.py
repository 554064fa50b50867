"""``docshelf serve --processes N`` as a user runs it: started in a session of its own,
each process told apart by the pid ``/healthz`` names, and stopped with a checked shutdown."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.support.servers import child_env, docshelf_command, free_port

STOP_WITHIN_S = 10


def _pid_of(client: httpx.Client, base: str) -> tuple[int, bool]:
    process = client.get(f"{base}/healthz").json()["process"]
    return int(process["pid"]), bool(process["indexing"])


def processes_of(base: str, count: int, timeout: float = 90) -> dict[int, bool]:
    """pid → indexing, for ``count`` processes answering on ``base`` (new connections until
    each has answered at least once)."""
    seen: dict[int, bool] = {}
    deadline = time.monotonic() + timeout
    while len(seen) < count:
        assert time.monotonic() < deadline, f"only {seen} answered within {timeout} s"
        with contextlib.suppress(httpx.TransportError), httpx.Client(timeout=5) as client:
            pid, indexing = _pid_of(client, base)
            seen[pid] = indexing
    return seen


@dataclass
class Supervised:
    """A running ``docshelf serve --processes N``."""

    process: subprocess.Popen[bytes]
    base: str
    log_path: Path
    processes: dict[int, bool]  # pid → indexing, as they were at start

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    @property
    def indexing_pid(self) -> int:
        (pid,) = [p for p, indexing in self.processes.items() if indexing]
        return pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie is gone too, once its parent (the supervisor, also gone) no longer waits.
    with contextlib.suppress(FileNotFoundError):
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    return True


@contextlib.contextmanager
def serve_processes(
    shelf: Path, data: Path, count: int, *args: str, stop: str = "SIGTERM"
) -> Iterator[Supervised]:
    """``serve --processes count`` in a session of its own, once every process answers.

    Every run ends with a checked shutdown: ``stop`` is SIGTERM to the supervisor or
    "SIGINT to the group" (Ctrl-C); either way every process is gone within
    ``STOP_WITHIN_S``, the status is 0, and the log has no traceback.
    """
    data.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log_path = data / "supervisor.log"
    command = docshelf_command(
        "serve", "--root", str(shelf), "--data-dir", str(data), "--port", str(port),
        "--processes", str(count), *args,
    )  # fmt: skip
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            command, stdout=log_file, stderr=subprocess.STDOUT, env=child_env(),
            start_new_session=True,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:  # the shared catalog is current
            assert process.poll() is None, log_path.read_text(errors="replace")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                    break
            assert time.monotonic() < deadline, log_path.read_text(errors="replace")
            time.sleep(0.1)
        processes = processes_of(base, count)
        assert sum(processes.values()) == 1, processes  # exactly one indexes
        supervised = Supervised(process, base, log_path, processes)
        yield supervised
        everyone = set(processes) | set(processes_of(base, count))
        if stop == "SIGTERM":
            process.send_signal(signal.SIGTERM)
        else:
            os.killpg(process.pid, signal.SIGINT)  # Ctrl-C reaches every process in the group
        started = time.monotonic()
        try:
            code = process.wait(timeout=STOP_WITHIN_S + 20)
        except subprocess.TimeoutExpired:
            raise AssertionError(supervised.log()[-3000:]) from None
        seconds = time.monotonic() - started
        log = supervised.log()
        assert code == 0, log[-3000:]
        assert seconds < STOP_WITHIN_S, f"{stop} took {seconds:.1f} s"
        assert "Traceback" not in log, log[-3000:]
        assert all(_gone(pid) for pid in everyone), everyone
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
