"""``/metrics`` of ``serve --processes N`` is the host's (issue 27, item 5), on real processes.

The kernel hands each new connection to whichever child accepts it, so a scrape reaches one
child at random; with prometheus-client's multiprocess mode (``app.metrics_folder``,
``app.metrics_host``) every child answers with the host's totals: the requests of all of
them (of a dead one too), the live processes' streams, the database's figures once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from docshelf.app.metrics_folder import PREFIX, MetricsFolder
from tests.support.host_metrics import (
    Samples,
    metrics_folder,
    own_samples,
    scrape_from,
    total,
    value,
)
from tests.support.servers import RawClient, listen_stream
from tests.support.shelves import make_shelf
from tests.support.supervisor import processes_of, serve_processes

# A multi-process suite (real servers, several per test): slow, so the README's command
# stays within its ten minutes; DOCSHELF_SLOW_TESTS=1 runs it, as .ci/run does.
pytestmark = pytest.mark.slow

REQUESTS = "docshelf_mcp_requests_total"
BATCH = 8


def one_request(url: str) -> None:
    """``resources/list`` on a connection of its own: either child may accept it."""
    raw = RawClient(url)
    try:
        assert raw.modern("resources/list").status_code == 200
    finally:
        raw.close()


def spread_requests(url: str, folder: Path, pids: set[int]) -> int:
    """Requests on new connections, a batch at a time, until every child has answered some;
    how many were made."""
    made = 0
    with ThreadPoolExecutor(BATCH) as pool:
        for _ in range(25):
            list(pool.map(one_request, [url] * BATCH))
            made += BATCH
            if all(total(own_samples(folder, pid), REQUESTS) > 0 for pid in pids):
                return made
    raise AssertionError(f"{made} requests on new connections, not all children answered")


def scrapes_from_each(base: str, pids: set[int]) -> dict[int, Samples]:
    """A scrape answered by each child (new connections until each has answered one)."""
    found: dict[int, Samples] = {}
    deadline = time.monotonic() + 60
    while set(found) != pids:
        assert time.monotonic() < deadline, f"no scrape answered by {pids - set(found)}"
        pid, samples = scrape_from(base)
        if pid in pids:
            found[pid] = samples
    return found


@contextlib.contextmanager
def listening_process(url: str, base: str) -> Iterator[int]:
    """A ``subscriptions/listen`` stream, open once acknowledged; the pid holding it."""
    limits = httpx.Limits(max_connections=1)  # the stream goes over the connection pinned
    with httpx.Client(timeout=httpx.Timeout(10, read=None), limits=limits) as client:
        pid = int(client.get(f"{base}/healthz").json()["process"]["pid"])
        with listen_stream(url, {"resourcesListChanged": True}, client=client) as stream:
            assert stream.response.status_code == 200
            for message in stream.messages:
                if message.get("method") == "notifications/subscriptions/acknowledged":
                    break
            yield pid


def host_pids(samples: Samples) -> set[int]:
    return {
        int(dict(labels)["pid"])
        for (name, labels), _ in samples.items()
        if name == "docshelf_host_info"
    }


def test_processes_2_every_scrape_counts_the_requests_of_every_child(tmp_path: Path) -> None:
    shelf = make_shelf(tmp_path / "shelf")
    with serve_processes(shelf, tmp_path / "data", 2) as supervised:
        pids = set(supervised.processes)
        folder = metrics_folder(supervised.indexing_pid)
        assert folder.name.startswith(f"{PREFIX}{supervised.process.pid}-")
        made = spread_requests(supervised.url, folder, pids)
        by_child = {pid: total(own_samples(folder, pid), REQUESTS) for pid in pids}
        assert all(count > 0 for count in by_child.values()), by_child
        assert sum(by_child.values()) == made, by_child

        for pid, samples in scrapes_from_each(supervised.base, pids).items():
            # Whichever child answered: every request, and every child's latencies.
            assert value(samples, REQUESTS, method="resources/list", outcome="ok") == made, pid
            duration = "docshelf_mcp_request_duration_seconds_count"
            assert value(samples, duration, method="resources/list") == made, pid
            # The database's figures once, not once per child.
            assert value(samples, "docshelf_documents") == 9, pid
            assert 0 <= value(samples, "docshelf_conversion_backlog") <= 9, pid
            # The host, and the processes added up; each one's CPU and memory by pid.
            info = {dict(labels)["pid"]: dict(labels)["host"] for (name, labels), _ in
                    samples.items() if name == "docshelf_host_info"}  # fmt: skip
            assert info == {str(p): socket.gethostname() for p in pids}, info
            rss = {
                dict(labels)["pid"]
                for (name, labels), _ in samples.items()
                if name == "process_resident_memory_bytes"
            }
            assert rss == {str(p) for p in pids}
            # The start-up pass ran once, in the indexing child.
            assert value(samples, "docshelf_index_pass_duration_seconds_count") == 1
    assert not folder.exists(), "the supervisor leaves its metrics folder behind"


def test_a_dead_childs_counts_remain_and_its_live_gauges_leave(tmp_path: Path) -> None:
    shelf = make_shelf(tmp_path / "shelf")
    with serve_processes(shelf, tmp_path / "data", 2) as supervised:
        pids = set(supervised.processes)
        folder = metrics_folder(supervised.indexing_pid)
        made = spread_requests(supervised.url, folder, pids)
        replica = next(pid for pid, indexing in supervised.processes.items() if not indexing)
        with contextlib.ExitStack() as streams:
            held: dict[int, int] = dict.fromkeys(pids, 0)
            for _ in range(40):  # streams until each child holds at least one
                held[streams.enter_context(listening_process(supervised.url, supervised.base))] += 1
                if all(held.values()):
                    break
            assert all(held.values()), held
            _, samples = scrape_from(supervised.base)
            assert value(samples, "docshelf_active_subscriptions") == sum(held.values())

            os.kill(replica, signal.SIGKILL)
            deadline = time.monotonic() + 60
            while True:  # until the supervisor has started the replica again
                _, samples = scrape_from(supervised.base)
                live = host_pids(samples)
                if len(live) == 2 and replica not in live:
                    break
                assert time.monotonic() < deadline, live
                time.sleep(0.2)
            restarted = live - {supervised.indexing_pid}
            assert set(processes_of(supervised.base, 2)) == live
            for samples in scrapes_from_each(supervised.base, live).values():
                # The dead child's requests still count; its streams and host series are gone.
                assert value(samples, REQUESTS, method="resources/list", outcome="ok") == made
                subscriptions = value(samples, "docshelf_active_subscriptions")
                assert subscriptions == held[supervised.indexing_pid]
                assert host_pids(samples) == {supervised.indexing_pid, *restarted}
                assert str(replica) not in {dict(labels).get("pid") for (_name, labels) in samples}
    assert "died: killed by SIGKILL" in supervised.log()


def test_a_new_supervisor_removes_the_folders_of_killed_ones(tmp_path: Path) -> None:
    """A supervisor killed with ``kill -9`` cannot remove its folder; the next one to start
    on the machine does, and starts from an empty folder of its own (counters from 0)."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    abandoned = tmp_path / f"{PREFIX}{dead.pid}-abcd"
    abandoned.mkdir()
    (abandoned / "counter_1.db").write_bytes(b"\0" * 16)
    alive = tmp_path / f"{PREFIX}{os.getpid()}-efgh"  # a running supervisor's: kept
    alive.mkdir()
    unrelated = tmp_path / "docshelf-metrics-notes"
    unrelated.mkdir()

    folder = MetricsFolder(tmp_path)
    previous = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    path = folder.open()
    try:
        assert os.environ["PROMETHEUS_MULTIPROC_DIR"] == str(path)
        assert list(path.iterdir()) == []
        assert not abandoned.exists()
        assert alive.exists() and unrelated.exists()
    finally:
        folder.close()
    assert not path.exists()
    assert os.environ.get("PROMETHEUS_MULTIPROC_DIR") == previous
