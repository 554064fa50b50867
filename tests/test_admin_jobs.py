"""Reindex jobs: progress, final counts, coalescing, history across restarts, the CLI path."""

from __future__ import annotations

import itertools
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from docshelf.app.runtime import Runtime
from docshelf.app.settings import Settings
from docshelf.storage.indexer import IndexReport
from docshelf.storage.jobs import JobRecord, JobRequest, process_owner
from docshelf.storage.models import Job, JobState
from tests.support.admin import TOKEN, Admin
from tests.support.servers import child_env, run_docshelf, serve

BIG_SHELF_FILES = 240  # four of the indexer's 64-file batches, so progress has steps to show


def make_big_shelf(root: Path, count: int = BIG_SHELF_FILES) -> Path:
    """Four folders of files, one that cannot be converted, and Markdown in every batch.

    Most files are opaque binary (no converter: quick to index); every 23rd is Markdown,
    which takes real conversion time, so each batch of the pass lasts long enough to be
    seen from outside.
    """
    for i in range(count - 1):
        folder = root / f"part-{i % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        if i % 23 == 0:
            (folder / f"note-{i:04d}.md").write_text(f"# Note {i}\n\nBody of note {i}.\n")
        else:
            (folder / f"blob-{i:04d}.bin").write_bytes(b"\x00\xff" + i.to_bytes(4, "big") * 64)
    (root / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\ngarbage")
    return root


def admin_env() -> dict[str, str]:
    return child_env(DOCSHELF_ADMIN_TOKEN=TOKEN)


@pytest.fixture(scope="module")
def big_shelf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_big_shelf(tmp_path_factory.mktemp("big") / "big")


def _watch_progress(
    admin: Admin, job_id: int, timeout: float = 240
) -> tuple[list[tuple[int, int]], dict[str, Any]]:
    """Poll a job until it ends; return every distinct (done, total) seen and the final job."""
    seen: list[tuple[int, int]] = []
    deadline = time.monotonic() + timeout
    while True:
        job = admin.job(job_id)
        point = (job["progress"]["done"], job["progress"]["total"])
        if not seen or seen[-1] != point:
            seen.append(point)
        if job["state"] not in ("queued", "running"):
            return seen, job
        assert time.monotonic() < deadline, job
        time.sleep(0.02)


def test_progress_moves_and_final_counts_match_the_folder(big_shelf: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    with serve(big_shelf, data, "--no-index", "--no-watch", env=admin_env()) as server:
        admin = Admin(server.base)
        job_id = admin.reindex()["job_id"]
        points, job = _watch_progress(admin, job_id)

        assert job["state"] == "succeeded", job
        dones = [done for done, _ in points]
        assert dones == sorted(dones), points
        assert any(0 < done < BIG_SHELF_FILES for done, _ in points), points
        assert points[-1] == (BIG_SHELF_FILES, BIG_SHELF_FILES)
        on_disk = [p for p in big_shelf.rglob("*") if p.is_file()]
        assert job["counts"] == {
            "seen": len(on_disk),
            "added": len(on_disk),
            "changed": 0,
            "removed": 0,
            "unchanged": 0,
            "failed": 1,
            "unsupported": len([p for p in on_disk if p.suffix == ".bin"]),  # opaque bytes
        }
        assert [(e["path"], e["reason"]) for e in job["errors"]] == [
            ("broken.pdf", job["errors"][0]["reason"])
        ]
        status = admin.get("/admin/status").json()
        assert status["documents"]["total"] == len(on_disk)
        by_mime = status["documents"]["by_mime_type"]
        assert by_mime["text/markdown"] == len([p for p in on_disk if p.suffix == ".md"])
        assert by_mime["application/pdf"] == 1 and sum(by_mime.values()) == len(on_disk)
        assert status["index_lag_seconds"] == 0
        admin.close()


def test_one_odd_path_never_fails_a_merged_job(big_shelf: Path, tmp_path: Path) -> None:
    """Issue 16.15: a path with a backslash or newline failed its job, and so every
    request merged into it. Odd names are names; a path that is not there is just absent."""
    with serve(big_shelf, tmp_path / "data", "--no-index", "--no-watch", env=admin_env()) as server:
        admin = Admin(server.base)
        first = admin.reindex({"shelf": "big", "force": True})
        while admin.job(first["job_id"])["state"] == "queued":
            time.sleep(0.01)
        odd = admin.reindex({"shelf": "big", "paths": ["no\\such\nfile.md", "tab\there/"]})
        real = admin.reindex({"shelf": "big", "paths": ["part-2/note-0046.md"]})
        assert real == {**odd, "coalesced": True}
        job = admin.wait_job(odd["job_id"])
        assert job["state"] == "succeeded", job
        assert job["paths"] == ["no\\such\nfile.md", "part-2/note-0046.md", "tab\there"]
        assert job["counts"]["seen"] == 1 and job["errors"] == []
        admin.close()


def test_requests_coalesce_while_queued_and_never_disturb_a_running_job(
    big_shelf: Path, tmp_path: Path
) -> None:
    with serve(big_shelf, tmp_path / "data", "--no-index", "--no-watch", env=admin_env()) as server:
        admin = Admin(server.base)
        first = admin.reindex({"shelf": "big", "force": True})
        while admin.job(first["job_id"])["state"] == "queued":
            time.sleep(0.01)
        second = admin.reindex({"shelf": "big", "paths": ["part-1"]})
        third = admin.reindex({"shelf": "big", "paths": ["part-2/note-0046.md"], "force": True})
        everything = admin.reindex()  # all shelves: a different target, so its own job
        lag = admin.get("/admin/status").json()["index_lag_seconds"]
        running = admin.job(first["job_id"])
        assert running["state"] == "running", "the first job ended too soon for this test"
        assert running["paths"] is None and running["requests"] == 1

        assert second["coalesced"] is False and second["job_id"] != first["job_id"]
        assert third == {**second, "coalesced": True}
        assert everything["coalesced"] is False and everything["job_id"] not in (
            first["job_id"],
            second["job_id"],
        )
        merged = admin.job(second["job_id"])
        assert merged["state"] == "queued" and merged["requests"] == 2
        assert merged["paths"] == ["part-1", "part-2/note-0046.md"] and merged["force"] is True
        assert lag > 0

        jobs = [
            admin.wait_job(j) for j in (first["job_id"], second["job_id"], everything["job_id"])
        ]
        assert [j["state"] for j in jobs] == ["succeeded"] * 3
        for earlier, later in itertools.pairwise(jobs):
            assert earlier["finished_at"] <= later["started_at"]
        in_part_1 = len(list((big_shelf / "part-1").iterdir()))
        assert jobs[1]["counts"]["changed"] == in_part_1 + 1  # forced: part-1 and one note
        admin.close()


def test_job_history_survives_a_restart_and_a_killed_job_is_interrupted(
    big_shelf: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    with serve(big_shelf, data, "--no-index", "--no-watch", env=admin_env()) as server:
        admin = Admin(server.base)
        done = admin.wait_job(admin.reindex({"shelf": "big"})["job_id"])
        killed_id = admin.reindex({"force": True})["job_id"]
        while admin.job(killed_id)["progress"]["done"] == 0:
            time.sleep(0.01)
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
        admin.close()

    with serve(big_shelf, data, "--no-index", "--no-watch", env=admin_env()) as server:
        admin = Admin(server.base)
        assert admin.job(done["id"]) == done
        killed = admin.job(killed_id)
        assert killed["state"] == "interrupted"
        assert "ended before it finished" in killed["message"] and killed["finished_at"]
        assert 0 < killed["progress"]["done"] < BIG_SHELF_FILES
        listed = {j["id"]: j["state"] for j in admin.get("/admin/jobs").json()["jobs"]}
        assert listed == {done["id"]: "succeeded", killed_id: "interrupted"}
        assert admin.get("/admin/status").json()["jobs"] == {"queued": 0, "running": 0}
        admin.close()


def test_cli_reindex_runs_the_same_job_path_and_prints_counts(tmp_path: Path) -> None:
    shelf = tmp_path / "docs"
    shelf.mkdir()
    (shelf / "a.md").write_text("# A\n")
    (shelf / "b.txt").write_text("b\n")
    data = tmp_path / "data"

    def reindex(*extra: str) -> subprocess.CompletedProcess[str]:
        return run_docshelf("reindex", "--root", str(shelf), "--data-dir", str(data), *extra)

    first = reindex()
    assert first.returncode == 0, first.stderr
    assert (
        "succeeded: indexed 2 files: 2 added, 0 changed, 0 unchanged, 0 removed, 0 failed"
        in first.stdout
    )
    forced = reindex("--path", "a.md", "--force")
    assert forced.returncode == 0, forced.stderr
    assert "indexed 1 files: 0 added, 1 changed" in forced.stdout
    bad = reindex("--shelf-name", "docs", "--path", "../x")
    assert bad.returncode == 2 and "contains '..'" in bad.stderr
    unknown = reindex("--shelf-name", "elsewhere")
    assert unknown.returncode == 2 and "unknown shelf 'elsewhere'" in unknown.stderr

    with serve(shelf, data, "--no-index", "--no-watch", env=admin_env()) as server:
        admin = Admin(server.base)
        jobs = admin.get("/admin/jobs").json()["jobs"]
        assert [(j["trigger"], j["state"], j["paths"], j["force"]) for j in jobs] == [
            ("cli", "succeeded", ["a.md"], True),
            ("cli", "succeeded", None, False),
        ]
        assert jobs[1]["counts"]["added"] == 2
        admin.close()


# -- the runner in-process, where the timing can be held still --------------------------------


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Runtime]:
    shelf = tmp_path / "docs"
    (shelf / "sub").mkdir(parents=True)
    for name in ("a.md", "b.md", "sub/c.md"):
        (shelf / name).write_text(f"# {name}\n")
    settings = Settings(shelves=[str(shelf)], data_dir=tmp_path / "data", workers=1, watch=False)  # type: ignore[call-arg]
    rt = Runtime(settings)
    rt.open()
    yield rt
    rt.close()


def record(runtime: Runtime, job_id: int) -> JobRecord:
    job = runtime.jobs.history.get(job_id)
    assert job is not None
    return job


def hold_reconcile(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Make every whole-shelf pass wait for the returned event before it starts."""
    gate = threading.Event()
    real = runtime.indexer.reconcile

    def gated(*args: Any, **kwargs: Any) -> IndexReport:
        gate.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(runtime.indexer, "reconcile", gated)
    return gate


def test_coalescing_rule_exactly(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = hold_reconcile(runtime, monkeypatch)
    jobs = runtime.jobs
    running = jobs.submit(JobRequest())
    deadline = time.monotonic() + 10
    while record(runtime, running.job_id).state != JobState.RUNNING:
        assert time.monotonic() < deadline
        time.sleep(0.01)

    paths = jobs.submit(JobRequest("docs", ("a.md",)))
    wider = jobs.submit(JobRequest("docs", ("./sub/",), force=True))
    whole = jobs.submit(JobRequest("docs"))
    every = jobs.submit(JobRequest())
    every_forced = jobs.submit(JobRequest(force=True))
    assert not paths.coalesced and wider.coalesced and whole.coalesced
    assert wider.job_id == whole.job_id == paths.job_id
    assert not every.coalesced and every.job_id not in (running.job_id, paths.job_id)
    assert every_forced.coalesced and every_forced.job_id == every.job_id
    merged = record(runtime, paths.job_id)
    assert merged.paths is None and merged.force and merged.requests == 3
    assert record(runtime, running.job_id).requests == 1

    gate.set()
    for job_id in (running.job_id, paths.job_id, every.job_id):
        jobs.wait(job_id, timeout=60)
    first, second, third = (
        record(runtime, j) for j in (running.job_id, paths.job_id, every.job_id)
    )
    assert [j.state for j in (first, second, third)] == [JobState.SUCCEEDED] * 3
    assert first.finished_at and second.started_at and second.finished_at and third.started_at
    assert first.finished_at <= second.started_at <= second.finished_at <= third.started_at
    assert second.counts.changed == 3  # forced over the whole shelf


def test_recovery_only_interrupts_jobs_of_dead_processes_on_this_host(runtime: Runtime) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    host = process_owner().rpartition(":")[0]
    owners = {
        "dead": f"{host}:{dead.stdout.strip()}",
        "alive": f"{host}:{alive.pid}",
        "remote": "another-host:1",
    }
    ids = {}
    with runtime.database.session() as session:
        for name, owner in owners.items():
            job = Job(
                trigger="api",
                owner=owner,
                state=JobState.RUNNING,
                requested_at=datetime.now(UTC),
                errors=[],
            )
            session.add(job)
            session.flush()
            ids[name] = job.id
    try:
        assert runtime.jobs.recover() == 1
    finally:
        alive.kill()
        alive.wait()
    states = {name: record(runtime, job_id).state for name, job_id in ids.items()}
    assert states == {"dead": "interrupted", "alive": "running", "remote": "running"}


def test_closing_stops_the_running_job_and_interrupts_queued_ones(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = hold_reconcile(runtime, monkeypatch)
    first = runtime.jobs.submit(JobRequest())
    queued = runtime.jobs.submit(JobRequest("docs", ("a.md",)))
    threading.Timer(0.3, gate.set).start()  # the pass starts after close() has begun
    runtime.jobs.close()
    stopped, never_started = record(runtime, first.job_id), record(runtime, queued.job_id)
    assert stopped.state == never_started.state == JobState.INTERRUPTED
    assert "shut down while this job ran" in (stopped.message or "")
    assert "shut down before this job started" in (never_started.message or "")
    with pytest.raises(RuntimeError, match="shutting down"):
        runtime.jobs.submit(JobRequest())
