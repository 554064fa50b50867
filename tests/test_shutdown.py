"""Never wedged on the way out: a signal stops docshelf within seconds, exit code 0.

Issue "Nothing lost, nothing leaked, never wedged", item 10: Ctrl-C to the
process group hung in ``Pool.join()`` once conversion had started, and SIGTERM
during the start-up pass of a large shelf had not stopped the server 15 s later.
Real processes, real signals, a shelf big enough to be mid-pass and
mid-conversion when the signal lands.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.support.servers import child_env, docshelf_command, free_port

STOP_WITHIN_S = 10


def _busy_shelf(root: Path) -> Path:
    """3,000 Markdown files: the catalog pass and (eager) PDF rendering take a while."""
    root.mkdir()
    body = "# Title {n}\n\n" + "A paragraph of text that renders to a page. " * 40 + "\n"
    for folder in range(30):
        (root / f"f{folder:02}").mkdir()
        for number in range(100):
            (root / f"f{folder:02}" / f"doc-{number:03}.md").write_text(body.format(n=number))
    return root


@pytest.fixture(scope="module")
def busy_shelf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _busy_shelf(tmp_path_factory.mktemp("busy") / "shelf")


def _start(args: list[str], data: Path, **popen: object) -> subprocess.Popen[bytes]:
    log = (data / "process.log").open("wb")
    return subprocess.Popen(
        docshelf_command(*args),
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.PIPE,
        env=child_env(DOCSHELF_RENDER="eager", DOCSHELF_WORKERS="2"),
        **popen,  # type: ignore[arg-type]
    )


def _wait_for_work(port: int | None, data: Path) -> None:
    """Until conversions have started (the store has files) — the server is mid-work."""
    deadline = time.monotonic() + 60
    store = data / "representations"
    while time.monotonic() < deadline:
        if store.is_dir() and any(p.is_file() for p in store.rglob("*")):
            return
        if port is not None:
            with contextlib.suppress(httpx.TransportError):
                httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
        time.sleep(0.1)
    raise AssertionError("no conversion started within 60 s")


def _stopped(process: subprocess.Popen[bytes], data: Path) -> tuple[int, str, float]:
    started = time.monotonic()
    try:
        code = process.wait(timeout=STOP_WITHIN_S + 20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError(
            f"still running {STOP_WITHIN_S + 20} s after the signal:\n"
            + (data / "process.log").read_text(errors="replace")[-3000:]
        ) from None
    return code, (data / "process.log").read_text(errors="replace"), time.monotonic() - started


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT to the process group"])
def test_serve_stops_within_seconds_mid_pass_and_mid_conversion(
    busy_shelf: Path, tmp_path: Path, how: str
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    args = ["serve", "--root", str(busy_shelf), "--data-dir", str(data), "--port", str(port)]
    process = _start(args, data, start_new_session=True)
    _wait_for_work(port, data)
    if how == "SIGTERM":
        process.send_signal(signal.SIGTERM)
    else:
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C reaches every process in the group
    code, log, seconds = _stopped(process, data)
    assert code == 0, log[-3000:]
    assert seconds < STOP_WITHIN_S, f"took {seconds:.1f} s"
    assert "Traceback" not in log, log[-3000:]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stdio_stops_within_seconds_mid_conversion(
    busy_shelf: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    process = _start(["stdio", "--root", str(busy_shelf), "--data-dir", str(data)], data)
    _wait_for_work(None, data)
    process.send_signal(sig)
    code, log, seconds = _stopped(process, data)
    assert code == 0, log[-3000:]
    assert seconds < STOP_WITHIN_S, f"took {seconds:.1f} s"
    assert "Traceback" not in log, log[-3000:]


@pytest.mark.slow  # 42 s of a backlog abandoned and finished; .ci/run runs it
def test_a_restart_after_a_signal_finishes_what_was_abandoned(
    busy_shelf: Path, tmp_path: Path
) -> None:
    """Conversions in flight at the signal are redone: every document ends up built."""
    from docshelf.app.runtime import Runtime
    from docshelf.app.settings import Settings

    data = tmp_path / "data"
    data.mkdir()
    process = _start(["stdio", "--root", str(busy_shelf), "--data-dir", str(data)], data)
    _wait_for_work(None, data)
    process.send_signal(signal.SIGTERM)
    assert _stopped(process, data)[0] == 0
    runtime = Runtime(Settings(shelves=[str(busy_shelf)], data_dir=data, workers=2))
    runtime.open()
    try:
        report = runtime.index()
        assert report.seen == 3000 and not report.errors
        assert runtime.builder.backlog() == 0
    finally:
        runtime.close()


def test_ctrl_c_just_after_start_leaves_no_traceback(tmp_path: Path) -> None:
    """The conversion forkserver starts with the server and imports every converter before
    it ignores SIGINT itself: a Ctrl-C in that second was a KeyboardInterrupt traceback in
    it, and an EOFError in every worker slot waiting for it."""
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "a.md").write_text("# A\n")
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    args = ["serve", "--root", str(shelf), "--data-dir", str(data), "--port", str(port)]
    process = _start(args, data, start_new_session=True)
    deadline = time.monotonic() + 60
    while True:
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                break
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGINT)
    code, log, _ = _stopped(process, data)
    assert code == 0, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
