"""One bad file never stops a shelf, and nothing on a shelf can wedge the server.

Issue "Nothing lost, nothing leaked, never wedged", items 5, 6, 8 and 9: odd
names, symlink loops and FIFOs, on real folders, real SQLite and real servers.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from docshelf.app.runtime import Runtime
from docshelf.app.settings import Settings
from tests.support.admin import TOKEN, Admin
from tests.support.permissions import ordinary_permissions
from tests.support.runtimes import open_runtime
from tests.support.schema import validate
from tests.support.servers import LEGACY, MODERN, RawClient, RunningServer, child_env, serve

ODD_NAMES = {
    "back\\slash.md": "docshelf://shelf/back%5Cslash.md",
    "new\nline.md": "docshelf://shelf/new%0Aline.md",
    "tab\there.txt": "docshelf://shelf/tab%09here.txt",
    "bell\x07.txt": "docshelf://shelf/bell%07.txt",
}
INVALID_UTF8 = os.fsdecode(b"latin-\xe9t\xe9.md")


@pytest.fixture
def odd_shelf(tmp_path: Path) -> Path:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    for number in range(100):
        (shelf / f"plain-{number:03}.txt").write_text(f"plain {number}\n")
    for name in ODD_NAMES:
        (shelf / name).write_text(f"# {name!r}\n")
    (shelf / INVALID_UTF8).write_text("# not UTF-8 in its name\n")
    return shelf


def test_odd_names_are_percent_encoded_and_undecodable_ones_refused_alone(
    odd_shelf: Path, tmp_path: Path
) -> None:
    """Issue 16.5: one such name used to abort the whole pass (0 of 101 files served)."""
    runtime = open_runtime(odd_shelf, tmp_path / "data")
    try:
        report = runtime.index()
        uris = {r.uri for r in runtime.catalog.page(None, 1000)[0]}
    finally:
        runtime.close()
    assert set(ODD_NAMES.values()) <= uris
    assert len(uris) == 100 + len(ODD_NAMES)
    assert [(e.path, e.reason) for e in report.errors] == [("latin-\\xe9t\\xe9.md", "invalid_name")]


def test_a_watcher_batch_with_an_undecodable_name_still_indexes_the_rest(
    odd_shelf: Path, tmp_path: Path
) -> None:
    runtime = open_runtime(odd_shelf, tmp_path / "data")
    try:
        (odd_shelf / "fresh.md").write_text("# Fresh\n")
        report = runtime.indexer.refresh("shelf", [INVALID_UTF8, "fresh.md", "back\\slash.md"])
        assert report.changes.added == {"docshelf://shelf/fresh.md", ODD_NAMES["back\\slash.md"]}
        assert [e.reason for e in report.errors] == ["invalid_name"]
    finally:
        runtime.close()


def test_odd_names_are_served_under_their_encoded_uri(odd_shelf: Path, tmp_path: Path) -> None:
    with serve(odd_shelf, tmp_path / "data") as server:
        client = RawClient(server.url)
        session = client.initialize()
        for name, uri in ODD_NAMES.items():
            answer = client.legacy(session, "resources/read", {"uri": uri}).json()
            assert "result" in answer, answer
            validate(LEGACY, "ReadResourceResult", answer["result"])
            assert answer["result"]["contents"][0]["text"] == f"# {name!r}\n"
        client.close()


def test_a_symlink_loop_is_skipped_by_passes_and_watcher_batches(tmp_path: Path) -> None:
    """Issue 16.6: a loop raised RuntimeError from Path.resolve and broke the pass."""
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "ok.md").write_text("# OK\n")
    (shelf / "loop-a").symlink_to(shelf / "loop-b")
    (shelf / "loop-b").symlink_to(shelf / "loop-a")
    (shelf / "self.md").symlink_to(shelf / "self.md")
    runtime = open_runtime(shelf, tmp_path / "data")
    try:
        report = runtime.index()
        assert report.seen == 1 and not report.errors
        again = runtime.indexer.refresh("shelf", ["loop-a", "self.md", "ok.md"])
        assert not again.errors and again.unchanged == 1
    finally:
        runtime.close()


def _fifo_shelf(tmp_path: Path) -> Path:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "doc.md").write_text("# Doc\n")
    os.mkfifo(shelf / "pipe.md")
    return shelf


def test_a_fifo_on_the_shelf_never_blocks_a_pass(tmp_path: Path) -> None:
    """Issues 16.8 and 16.9: nothing but a regular file is ever opened, and never blocking."""
    shelf = _fifo_shelf(tmp_path)
    runtime = open_runtime(shelf, tmp_path / "data")
    outcome: list[object] = []

    def index() -> None:
        outcome.append(runtime.index())
        outcome.append(runtime.indexer.refresh("shelf", ["pipe.md", "doc.md"], wait=True))

    worker = threading.Thread(target=index, daemon=True)
    worker.start()
    worker.join(timeout=60)
    try:
        assert not worker.is_alive(), "a FIFO on the shelf blocked the indexer"
        assert {r.path for r in runtime.catalog.page(None, 10)[0]} == {"doc.md"}
    finally:
        runtime.close()


def test_a_file_swapped_for_a_fifo_cannot_wedge_the_server(tmp_path: Path) -> None:
    """Issue 16.8: ~45 reads of a FIFO exhausted the thread pool; /healthz still said 200."""
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "doc.md").write_text("# Doc\n")
    (shelf / "other.md").write_text("# Other\n")
    with serve(shelf, tmp_path / "data", env=_no_watch()) as server:
        (shelf / "doc.md").unlink()
        os.mkfifo(shelf / "doc.md")
        client = RawClient(server.url)
        session = client.initialize()

        def read(_: int) -> dict:
            with httpx.Client(timeout=20) as http:
                response = http.post(
                    server.url,
                    json={
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "resources/read",
                        "params": {"uri": "docshelf://shelf/doc.md"},
                    },
                    headers={
                        "Accept": "application/json, text/event-stream",
                        "Mcp-Session-Id": session,
                        "MCP-Protocol-Version": LEGACY,
                    },
                )
                return response.json()

        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=60) as pool:
            answers = list(pool.map(read, range(60)))
        assert time.monotonic() - started < 20
        assert {a["error"]["code"] for a in answers} == {-32002}
        listed = client.legacy(session, "resources/list").json()
        assert {r["name"] for r in listed["result"]["resources"]} >= {"other.md"}
        for probe in ("healthz", "readyz", "metrics"):
            assert httpx.get(f"{server.base}/{probe}", timeout=5).status_code == 200, probe
        client.close()


def _no_watch() -> dict[str, str]:
    from tests.support.servers import child_env

    return child_env(DOCSHELF_WATCH="false")


def test_healthz_says_503_when_no_request_thread_can_be_had(tmp_path: Path) -> None:
    """Issue 16.8: with every handler thread stuck, /healthz must stop saying 200."""
    import anyio
    import anyio.to_thread

    from docshelf.app.asgi import create_app

    shelf = tmp_path / "shelf"
    shelf.mkdir()
    runtime = Runtime(Settings(shelves=[str(shelf)], data_dir=tmp_path / "data", workers=1))
    app = create_app(runtime)
    release = threading.Event()

    async def probe() -> tuple[int, int]:
        limiter = anyio.to_thread.current_default_thread_limiter()
        limiter.total_tokens = 2
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            healthy = (await http.get("/healthz")).status_code
            async with anyio.create_task_group() as tasks:
                for _ in range(2):  # every thread blocked, as by reads that never return
                    tasks.start_soon(anyio.to_thread.run_sync, release.wait)
                await anyio.sleep(0.1)
                wedged = await http.get("/healthz")
                release.set()
            assert wedged.json()["status"] == "wedged"
            return healthy, wedged.status_code

    try:
        assert anyio.run(probe) == (200, 503)
    finally:
        release.set()
        runtime.close()


def _unreadable_folder_lines(server: RunningServer, folder: str) -> list[str]:
    return [line for line in server.log().splitlines() if f"cannot read folder {folder} " in line]


def _wait_for(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout}s: {what}"
        time.sleep(0.1)


def _listed(client: RawClient) -> set[str]:
    body = client.modern("resources/list").json()
    validate(MODERN, "ListResourcesResult", body["result"])
    return {resource["uri"] for resource in body["result"]["resources"]}


def test_an_unreadable_folder_is_one_warning_per_folder_in_passes_and_the_watcher(
    tmp_path: Path,
) -> None:
    """Issue 24 item 12: a sub-folder the server cannot read was skipped without a word.
    It is one WARNING line per folder — saying its files are not served, and why — at the
    start-up pass, not again at later passes or watcher batches while it stays unreadable;
    a folder that becomes unreadable while serving is said by the watcher; one that becomes
    readable is served again, and said again if it breaks again (once per folder each time
    it becomes unreadable, per process)."""
    preexec = ordinary_permissions()
    shelf = tmp_path / "shelf"
    (shelf / "private").mkdir(parents=True)
    (shelf / "private" / "secret.md").write_text("# Secret\n")
    (shelf / "open.md").write_text("# Open\n")
    (shelf / "private").chmod(0o000)
    env = child_env(DOCSHELF_ADMIN_TOKEN=TOKEN)
    try:
        with serve(shelf, tmp_path / "data", env=env, preexec_fn=preexec) as server:
            client = RawClient(server.url)
            admin = Admin(server.base)
            # The start-up pass: one line, what is not served and why.
            (line,) = _unreadable_folder_lines(server, "private")
            assert " WARNING " in line
            assert "(permission denied): its files are not served" in line
            assert _listed(client) == {"docshelf://shelf/open.md"}

            # Another full pass, and a watcher batch naming the folder: no second line.
            job = admin.wait_job(admin.reindex()["job_id"], timeout=30)
            assert job["state"] == "succeeded", job
            os.utime(shelf / "private")
            (shelf / "later").mkdir()
            (shelf / "later" / "note.md").write_text("# Later\n")
            _wait_for(lambda: "docshelf://shelf/later/note.md" in _listed(client), "later/ served")
            assert len(_unreadable_folder_lines(server, "private")) == 1

            # A folder that becomes unreadable while serving: the watcher says so, once.
            (shelf / "later").chmod(0o000)
            _wait_for(lambda: _unreadable_folder_lines(server, "later") != [], "later/ warned")
            _wait_for(
                lambda: "docshelf://shelf/later/note.md" not in _listed(client),
                "later/ no longer served",
            )

            # Readable again: served again. Unreadable again: said again.
            (shelf / "private").chmod(0o755)
            os.utime(shelf / "private")
            _wait_for(
                lambda: "docshelf://shelf/private/secret.md" in _listed(client), "private/ served"
            )
            (shelf / "private").chmod(0o000)
            _wait_for(
                lambda: len(_unreadable_folder_lines(server, "private")) == 2,
                "private/ warned again",
            )
            time.sleep(1)  # any repeat the watcher's batches would make
            assert len(_unreadable_folder_lines(server, "private")) == 2
            assert len(_unreadable_folder_lines(server, "later")) == 1
            assert "Traceback" not in server.log()
            admin.close()
            client.close()
    finally:
        for folder in ("private", "later"):
            if (shelf / folder).exists():
                (shelf / folder).chmod(0o755)
