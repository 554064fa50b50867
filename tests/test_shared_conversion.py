"""Conversion shared by every host (issue 27, item 3), with real docshelf processes.

Each "host" is a ``docshelf serve`` with a data folder of its own; they share one
PostgreSQL database (or, for today's single-host behaviour, one SQLite file). Every
process that is not ``--no-convert`` takes pending documents under a lease
(storage.leases); ``--log-level debug`` makes each process log one line per recorded
conversion ("recorded the conversion of URI"), which is how these tests count who
converted what, with nothing mocked.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import socket
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine, create_engine, func, select

from docshelf.app.roles import Role
from docshelf.app.settings import Settings
from docshelf.app.supervisor import Supervisor
from docshelf.storage.models import Document, DocumentState
from tests.support.paths import FIXTURE_PDF
from tests.support.servers import RawClient, RunningServer, child_env, run_docshelf, serve

# A multi-process suite (real servers, several per test): slow, so the README's command
# stays within its ten minutes; DOCSHELF_SLOW_TESTS=1 runs it, as .ci/run does.
pytestmark = pytest.mark.slow

LEASE_S = 3
MARGIN_S = 60  # the rest of the backlog, on one worker of a 2-core machine other tests share
RECORDED = re.compile(r"recorded the conversion of (\S+) \((\S+)\)")


def make_backlog(root: Path, count: int) -> Path:
    """``count`` documents that take a worker a few tenths of a second each (PDFs and long
    HTML pages, every one different), so a backlog lasts long enough to kill a host in."""
    root.mkdir(parents=True, exist_ok=True)
    pdf = FIXTURE_PDF / "pdflatex-4-pages.pdf"
    for number in range(count):
        if number % 2:
            shutil.copy(pdf, root / f"paper-{number:03}.pdf")
            continue
        words = random.Random(number).choices(["alpha", "beta", "gamma", "delta", "omega"], k=800)
        sections = "".join(
            f"<h2>Section {s}</h2><p>{' '.join(words)} {number}</p>" for s in range(120)
        )
        (root / f"page-{number:03}.html").write_text(f"<html><body>{sections}</body></html>")
    return root


def host_env(database_url: str, **extra: str) -> dict[str, str]:
    return child_env(
        DOCSHELF_DATABASE_URL=database_url,
        DOCSHELF_WORKERS="1",
        DOCSHELF_CONVERSION_LEASE_S=str(LEASE_S),
        DOCSHELF_LOG_LEVEL="debug",
        **extra,
    )


def recorded_by(server: RunningServer) -> Counter[str]:
    """URI → how many times this process recorded a conversion of it."""
    return Counter(uri for uri, _holder in RECORDED.findall(server.log()))


@pytest.fixture
def engine(postgres_url: str) -> Iterator[Engine]:
    engine = create_engine(postgres_url)
    try:
        yield engine
    finally:
        engine.dispose()


def pending(engine: Engine) -> int:
    with engine.connect() as connection:
        query = select(func.count(Document.id)).where(Document.state == DocumentState.PENDING)
        return int(connection.scalar(query) or 0)


def wait_for(condition: object, timeout: float, what: str) -> float:
    """Poll ``condition`` until true; returns the seconds it took."""
    started = time.monotonic()
    while not condition():  # type: ignore[operator]
        assert time.monotonic() - started < timeout, f"{what} not within {timeout} s"
        time.sleep(0.1)
    return time.monotonic() - started


def role_of(server: RunningServer) -> tuple[dict, dict]:
    ready = httpx.get(f"{server.base}/readyz", timeout=5).json()["role"]
    health = httpx.get(f"{server.base}/healthz", timeout=5).json()["process"]["role"]
    return ready, health


@contextmanager
def two_hosts(
    tmp_path: Path, documents: int, database_url: str
) -> Iterator[tuple[RunningServer, RunningServer]]:
    """An indexing host and a ``--no-index`` one, each with its data folder, on a backlog of
    ``documents`` catalogued from one shelf into one database."""
    shelf = make_backlog(tmp_path / "shelf", documents)
    env = host_env(database_url)
    with (
        serve(shelf, tmp_path / "a", env=env, formats_built=False) as indexer,
        serve(shelf, tmp_path / "b", "--no-index", env=env, formats_built=False) as replica,
    ):
        yield indexer, replica


def test_two_hosts_share_the_backlog_and_never_convert_a_document_twice(
    tmp_path: Path, postgres_url: str, engine: Engine
) -> None:
    with two_hosts(tmp_path, 40, postgres_url) as (indexer, replica):
        every = {"converts": "background", "serves": True}
        assert role_of(indexer)[0] == {"indexes": True, "watches": True, **every}
        assert role_of(replica) == ({"indexes": False, "watches": False, **every},) * 2
        wait_for(lambda: httpx.get(f"{indexer.base}/readyz").status_code == 200, 60, "catalog")
        wait_for(lambda: pending(engine) == 0, 120, "an empty backlog")
        time.sleep(1)  # the last debug lines reach the logs
        by_indexer, by_replica = recorded_by(indexer), recorded_by(replica)
    both = by_indexer + by_replica
    assert len(both) == 40, both
    assert set(both.values()) == {1}, {uri: n for uri, n in both.items() if n > 1}
    assert by_indexer and by_replica, "both hosts converted"


def test_a_host_killed_mid_backlog_leaves_its_documents_to_the_other(
    tmp_path: Path, postgres_url: str, engine: Engine
) -> None:
    with two_hosts(tmp_path, 60, postgres_url) as (indexer, replica):
        marker = f"%:{indexer.process.pid}:%"

        def held_by_indexer() -> list[int]:
            with engine.connect() as connection:
                query = select(Document.id).where(
                    Document.lease_holder.like(marker), Document.state == DocumentState.PENDING
                )
                return list(connection.scalars(query))

        # Mid-backlog: some documents done, and the indexing host holds some.
        wait_for(lambda: 0 < pending(engine) < 50 and held_by_indexer(), 120, "a backlog")
        orphans = held_by_indexer()
        os.kill(indexer.process.pid, signal.SIGKILL)
        indexer.process.wait()
        left = pending(engine)
        assert left > 0
        took = wait_for(lambda: pending(engine) == 0, LEASE_S + MARGIN_S, "an empty backlog")
        time.sleep(1)
        converted_by_replica = recorded_by(replica)
    with engine.connect() as connection:
        rows = connection.execute(
            select(Document.uri, Document.state, Document.lease_holder).where(
                Document.id.in_(orphans)
            )
        ).all()
    assert {(state, holder) for _, state, holder in rows} == {(DocumentState.READY, None)}
    assert any(converted_by_replica[uri] for uri, _, _ in rows), "the replica took them over"
    print(f"{left} documents left at the kill, 0 after {took:.1f} s (lease {LEASE_S} s)")


def test_no_convert_builds_nothing_in_the_background_but_what_its_reads_need(
    tmp_path: Path, postgres_url: str, engine: Engine
) -> None:
    """``--no-convert`` takes nothing from the backlog; a read there still gets its formats
    at once (a read must not wait on a queue nobody drains); a host that converts then
    drains the rest."""
    shelf = make_backlog(tmp_path / "shelf", 6)
    env = host_env(postgres_url)
    with serve(shelf, tmp_path / "a", "--no-convert", env=env, formats_built=False) as indexer:
        assert role_of(indexer)[0]["converts"] == "on-demand"
        assert role_of(indexer)[1]["converts"] == "on-demand"
        wait_for(lambda: httpx.get(f"{indexer.base}/readyz").status_code == 200, 60, "catalog")
        time.sleep(2)
        assert pending(engine) == 6
        client = RawClient(indexer.url)
        try:
            with engine.connect() as connection:
                query = select(Document.uri).where(Document.path == "page-000.html")
                uri = connection.scalar(query)
            read = client.modern("resources/read", {"uri": uri})
            assert read.status_code == 200, read.text
            types = {c.get("mimeType") for c in read.json()["result"]["contents"]}
            assert "text/markdown" in types, types
        finally:
            client.close()
        assert pending(engine) == 5
        with serve(shelf, tmp_path / "b", "--no-index", env=env, formats_built=False):
            wait_for(lambda: pending(engine) == 0, 60, "an empty backlog")
        assert sum(recorded_by(indexer).values()) == 1


def test_on_sqlite_only_the_indexing_process_builds_in_the_background(tmp_path: Path) -> None:
    """Today's single-host queue: a replica sharing the SQLite file builds only on demand."""
    shelf = make_backlog(tmp_path / "shelf", 8)
    database_url = f"sqlite:///{tmp_path / 'a' / 'docshelf.db'}"
    env = host_env(database_url)
    with (
        serve(shelf, tmp_path / "a", env=env) as indexer,  # waits for an empty backlog
        serve(shelf, tmp_path / "b", "--no-index", env=env) as replica,
    ):
        assert role_of(indexer)[0]["converts"] == "background"
        assert role_of(replica)[0] == {
            "indexes": False,
            "watches": False,
            "converts": "on-demand",
            "serves": True,
        }
        assert sum(recorded_by(indexer).values()) == 8
        assert not recorded_by(replica)


def test_a_lease_shorter_than_a_second_is_refused(tmp_path: Path) -> None:
    result = run_docshelf(
        "serve",
        "--root",
        str(tmp_path),
        "--data-dir",
        str(tmp_path / "data"),
        env=child_env(DOCSHELF_CONVERSION_LEASE_S="0"),
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "docshelf: DOCSHELF_CONVERSION_LEASE_S=0 is not valid: expected a number from 1 to 3600"
    )


def test_serve_help_documents_no_convert() -> None:
    result = run_docshelf("serve", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert "--no-convert build no formats in the background" in text
    assert "DOCSHELF_CONVERT=false" in text


@pytest.mark.parametrize(
    ("database_url", "overrides", "converts"),
    [
        ("postgresql+psycopg://u@db/docshelf", {}, "background"),
        ("postgresql+psycopg://u@db/docshelf", {"index_on_start": False}, "background"),
        ("postgresql+psycopg://u@db/docshelf", {"convert": False}, "on-demand"),
        (None, {}, "background"),  # SQLite: the indexing process
        (None, {"index_on_start": False}, "on-demand"),  # SQLite: a replica
    ],
)
def test_who_builds_in_the_background(
    tmp_path: Path, database_url: str | None, overrides: dict, converts: str
) -> None:
    settings = Settings(data_dir=tmp_path, database_url=database_url, **overrides)
    assert Role.of(settings).converts == converts


def test_serve_processes_builds_in_the_background_in_its_first_process_only(
    tmp_path: Path,
) -> None:
    """The children share one host's CPU: --workers conversion processes per host."""
    settings = Settings(
        data_dir=tmp_path, database_url="postgresql+psycopg://u@db/docshelf", processes=3
    )
    with socket.socket() as sock:
        slots = Supervisor(settings, sock).slots
    assert [Role.of(slot.settings).converts for slot in slots] == [
        "background",
        "on-demand",
        "on-demand",
    ]
