"""``docshelf`` processes started as a user starts them, for benchmarks and tests.

Every benchmark that times the server runs the real ``docshelf`` command in a
child process, on a loopback port of its own, with none of the caller's
``DOCSHELF_*`` variables: the figures are those of a fresh install, whatever the
shell running the benchmark has set. The tests start their servers the same way
(``tests/support/servers.py`` builds on this module); the benchmarks import
nothing from the tests.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def docshelf_command(*args: str) -> list[str]:
    """``docshelf ARGS`` on this interpreter (the benchmark's virtual environment)."""
    return [sys.executable, "-m", "docshelf.app", *args]


def child_env(**extra: str) -> dict[str, str]:
    """The environment without ``DOCSHELF_*``, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env.update(extra)
    return env


def stop(process: subprocess.Popen[bytes], timeout: float = 15) -> None:
    """SIGTERM, then SIGKILL if the process has not exited within ``timeout`` seconds."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@dataclass
class RunningServer:
    url: str  # the MCP endpoint
    base: str
    process: subprocess.Popen[bytes]
    shelf: Path
    data_dir: Path
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@contextmanager
def serve(
    shelf: Path,
    data_dir: Path,
    *extra_args: str,
    ready_timeout: float = 120.0,
    env: dict[str, str] | None = None,
    roots: Sequence[str] | None = None,
    formats_built: bool = True,
    preexec_fn: Callable[[], None] | None = None,
) -> Iterator[RunningServer]:
    """A real ``docshelf serve`` on loopback, once its catalog is current.

    ``formats_built``: also wait until the background conversion backlog is
    empty, so every document's formats are settled and background conversion
    stays out of whatever is measured or checked next. ``preexec_fn``: run in the
    child before it starts (tests drop root's permission overrides with it).
    """
    port = free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    log_path = data_dir / f"server-{port}.log"
    root_args = [a for r in (roots if roots is not None else [str(shelf)]) for a in ("--root", r)]
    command = docshelf_command(
        "serve", *root_args, "--data-dir", str(data_dir), "--port", str(port), *extra_args
    )
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            command,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env=env or child_env(),
            preexec_fn=preexec_fn,
        )
    base = f"http://127.0.0.1:{port}"
    server = RunningServer(f"{base}/mcp", base, process, shelf, data_dir, log_path)
    try:
        deadline = time.monotonic() + ready_timeout
        while not _ready(base, formats_built):
            if process.poll() is not None:
                raise RuntimeError(f"docshelf exited with {process.returncode}:\n{server.log()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"docshelf was not ready in {ready_timeout}s:\n{server.log()}")
            time.sleep(0.1)
        yield server
    finally:
        stop(process)


def _ready(base: str, formats_built: bool) -> bool:
    """Whether ``/readyz`` says the catalog is current (and, if asked, no conversion is left)."""
    try:
        ready = httpx.get(f"{base}/readyz", timeout=2)
    except httpx.TransportError:
        return False
    return ready.status_code == 200 and (
        not formats_built or ready.json()["conversion_backlog"] == 0
    )
