"""Scale-out with real processes: ``serve --processes N`` and replicas sharing a database.

Changes cross processes through the database (``storage.changefeed``): a subscriber
hears about a change whichever process holds its stream. ``/healthz`` names the
process that answered (``process.pid``, ``process.indexing``); one keep-alive
connection is served by one process. ``/metrics`` adds the processes up
(``tests/test_metrics_host.py``); what one process counted is in its own metrics file.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.to_thread
import httpx
import mcp_types as types
import pytest
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.shared.exceptions import MCPDeprecationWarning

from tests.support.host_metrics import metrics_folder, own_samples, value
from tests.support.sdk import http_client, next_event, read_metadata
from tests.support.servers import (
    LEGACY,
    LISTEN_HEADERS,
    MODERN,
    POST_HEADERS,
    child_env,
    docshelf_command,
    initialize_2025,
    listen_request,
    modern_meta,
    run_docshelf,
    serve,
)
from tests.support.shelves import make_shelf
from tests.support.supervisor import processes_of, serve_processes

WAIT = 20  # seconds for a notification; the watcher and the feed answer in well under one


# -- which process answers -------------------------------------------------------------------


def listeners_by_process(base: str, pids: set[int]) -> dict[int, int]:
    """Open notification streams per process (the ``docshelf_active_subscriptions`` gauge):
    a scrape adds the processes up, so each one's own figure is read from its metrics
    file."""
    folder = metrics_folder(next(iter(pids)))
    return {
        pid: int(value(own_samples(folder, pid), "docshelf_active_subscriptions")) for pid in pids
    }


# -- a 2026-07-28 listen stream, by hand -----------------------------------------------------


@dataclass(eq=False)
class ListenStream:
    """``subscriptions/listen`` on a connection of its own; collects what arrives."""

    url: str
    uri: str
    messages: list[dict] = field(default_factory=list)
    acknowledged: anyio.Event = field(default_factory=anyio.Event)
    updated: anyio.Event = field(default_factory=anyio.Event)
    list_changed: anyio.Event = field(default_factory=anyio.Event)

    async def run(self) -> None:
        body = listen_request(
            {"resourcesListChanged": True, "resourceSubscriptions": [self.uri]},
            meta=modern_meta(),
        )
        async with (
            httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as client,
            client.stream("POST", self.url, json=body, headers=LISTEN_HEADERS) as response,
        ):
            assert response.status_code == 200
            async for line in response.aiter_lines():
                if not line.startswith("data: "):
                    continue
                message = json.loads(line[len("data: ") :])
                self.messages.append(message)
                method = message.get("method")
                if method == "notifications/subscriptions/acknowledged":
                    self.acknowledged.set()
                elif method == "notifications/resources/updated":
                    if message["params"]["uri"] == self.uri:
                        self.updated.set()
                elif method == "notifications/resources/list_changed":
                    self.list_changed.set()


@pytest.mark.anyio
async def test_processes_2_a_listener_hears_a_change_whichever_process_holds_its_stream(
    tmp_path: Path,
) -> None:
    shelf = make_shelf(tmp_path / "shelf")
    uri = "docshelf://shelf/notes.txt"
    legacy_updated = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri == uri:
            legacy_updated.set()

    with serve_processes(shelf, tmp_path / "data", 2) as supervised:
        base, pids = supervised.base, set(supervised.processes)
        streams: list[ListenStream] = []
        async with (
            # The official SDK's 2025-era client: its POSTs and its GET stream go over
            # connections of their own, to whichever process accepts each.
            http_client(supervised.url, LEGACY, message_handler=on_message) as legacy,
            anyio.create_task_group() as group,
        ):
            with pytest.warns(MCPDeprecationWarning):
                await legacy.subscribe_resource(uri)
            # The kernel gives each new connection to whichever process accepts first: open
            # streams until each process holds at least one.
            for _ in range(24):
                stream = ListenStream(supervised.url, uri)
                streams.append(stream)
                group.start_soon(stream.run)
                with anyio.fail_after(WAIT):
                    await stream.acknowledged.wait()
                counts = await anyio.to_thread.run_sync(listeners_by_process, base, pids)
                if all(counts[pid] >= 1 for pid in pids):
                    break
            assert all(counts[pid] >= 1 for pid in pids), counts
            assert sum(counts.values()) >= len(streams), counts  # and the SDK's GET stream

            (shelf / "notes.txt").write_text("Edited under two processes.\n")
            (shelf / "added.md").write_text("# Added\n")
            with anyio.fail_after(WAIT):
                for stream in streams:
                    await stream.updated.wait()
                    await stream.list_changed.wait()
                await legacy_updated.wait()
            group.cancel_scope.cancel()
        # The process that does not index heard the change the indexing one made, and read
        # it back from the shared index.
        async with http_client(supervised.url, MODERN) as client:
            read = await client.read_resource(uri)
        assert read.contents[0].text == "Edited under two processes.\n"
        # Only the indexing process watched.
        watched_by = set(re.findall(r"storage\.watcher\[(\d+)\]", supervised.log()))
        assert watched_by == {str(supervised.indexing_pid)}


# -- a 2025-era session across processes ----------------------------------------------------


async def pinned(base: str, pid: int, tries: int = 100) -> httpx.AsyncClient:
    """A client whose one keep-alive connection the process ``pid`` accepted."""
    for _ in range(tries):
        client = httpx.AsyncClient(
            timeout=httpx.Timeout(10, read=None), limits=httpx.Limits(max_connections=1)
        )
        if (await client.get(f"{base}/healthz")).json()["process"]["pid"] == pid:
            return client
        await client.aclose()
    raise AssertionError(f"process {pid} accepted none of {tries} connections")


async def legacy_request(
    client: httpx.AsyncClient, url: str, session: str, method: str, params: dict | None = None
) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    headers = {**POST_HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}
    return await client.post(url, json=body, headers=headers)


@pytest.mark.anyio
async def test_processes_2_a_2025_session_started_on_one_process_is_used_from_the_other(
    tmp_path: Path,
) -> None:
    """Session Management across processes: the session starts (and subscribes) on the
    serving process, its GET stream is opened on the indexing one, which hears of the
    subscription when the change comes; one stream a session, whichever process is asked;
    DELETE on the first ends the stream on the second, and the session everywhere."""
    shelf = make_shelf(tmp_path / "shelf")
    uri = "docshelf://shelf/notes.txt"
    # Long keep-alive: each pinned connection stays with its process for the whole test.
    with serve_processes(
        shelf, tmp_path / "data", 2, "--keep-alive-timeout", "120", stop="SIGINT to the group"
    ) as supervised:
        base, url = supervised.base, supervised.url
        indexing = supervised.indexing_pid
        (serving,) = [pid for pid in supervised.processes if pid != indexing]
        here = await pinned(base, serving)
        there, there_too = await pinned(base, indexing), await pinned(base, indexing)
        messages: list[dict] = []
        opened, updated, ended = anyio.Event(), anyio.Event(), anyio.Event()
        session = await initialize_2025(here, url)

        async def stream() -> None:
            headers = {
                "Accept": "text/event-stream",
                "Mcp-Session-Id": session,
                "MCP-Protocol-Version": LEGACY,
            }
            async with there.stream("GET", url, headers=headers) as response:
                assert response.status_code == 200
                opened.set()
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        messages.append(json.loads(line[len("data: ") :]))
                        if messages[-1].get("method") == "notifications/resources/updated":
                            updated.set()
            ended.set()

        try:
            listed = await legacy_request(there_too, url, session, "resources/list")
            assert listed.status_code == 200 and listed.json()["result"]["resources"]
            async with anyio.create_task_group() as group:
                group.start_soon(stream)
                with anyio.fail_after(WAIT):
                    await opened.wait()
                headers = {"Accept": "text/event-stream", "Mcp-Session-Id": session}
                assert (await here.get(url, headers=headers)).status_code == 409
                assert (await there_too.get(url, headers=headers)).status_code == 409
                subscribed = await legacy_request(
                    here, url, session, "resources/subscribe", {"uri": uri}
                )
                assert subscribed.status_code == 200 and "result" in subscribed.json()
                (shelf / "notes.txt").write_text("Edited; heard on the other process.\n")
                with anyio.fail_after(WAIT):
                    await updated.wait()
                deleted = await here.delete(url, headers={"Mcp-Session-Id": session})
                assert deleted.status_code == 204
                with anyio.fail_after(WAIT):
                    await ended.wait()
            gone = await legacy_request(there_too, url, session, "resources/list")
            assert gone.status_code == 404
            assert (await legacy_request(here, url, session, "ping")).status_code == 404
        finally:
            for client in (here, there, there_too):
                await client.aclose()
    updates = [m["params"]["uri"] for m in messages if "params" in m and "uri" in m["params"]]
    assert set(updates) == {uri}, messages


# -- replicas sharing one database -----------------------------------------------------------


@pytest.mark.anyio
async def test_a_replica_sharing_the_database_tells_its_clients_what_the_indexer_changed(
    tmp_path: Path, database_url: str
) -> None:
    """``serve`` indexes and watches; ``serve --no-index`` on the same database (and data
    folder: the representation store) hears its changes. SQLite and PostgreSQL."""
    shelf = make_shelf(tmp_path / "shelf")
    data = tmp_path / "data"
    env = child_env(DOCSHELF_DATABASE_URL=database_url)
    uri = "docshelf://shelf/data.json"
    old, new = (shelf / "data.json").read_text(), '{"edited": "through the indexer"}'
    with (
        serve(shelf, data, env=env) as indexer,
        serve(shelf, data, "--no-index", env=env, formats_built=False) as replica,
    ):
        assert httpx.get(f"{replica.base}/healthz").json()["process"]["indexing"] is False
        async with http_client(replica.url, MODERN) as client:
            # The replica has the document in hand: its catalog cache holds the record.
            before = await read_metadata(client, uri)
            assert before.metadata[0].size == len(old)
            async with client.listen(
                resources_list_changed=True, resource_subscriptions=[uri]
            ) as sub:
                (shelf / "data.json").write_text(new)
                await next_event(sub, ResourceUpdated, WAIT)
                after = await read_metadata(client, uri)
                read = await client.read_resource(uri)
                (shelf / "new.txt").write_text("new\n")
                await next_event(sub, ResourcesListChanged, WAIT)
            listed = await client.list_resources()
        # Told of the change, the replica describes and reads the new version, in every format.
        assert after.metadata[0].size == len(new)
        assert read.contents[0].text == new
        texts = [getattr(c, "text", None) for c in read.contents]
        assert all("through the indexer" in t for t in texts if t is not None), texts
        assert "docshelf://shelf/new.txt" in {r.uri for r in listed.resources}
        # The indexer indexed both changes; the replica neither watched nor indexed.
        assert "docshelf.storage.watcher" in indexer.log()
        assert "docshelf.storage.watcher" not in replica.log() and "watchfiles" not in replica.log()


@pytest.mark.anyio
async def test_a_docshelf_reindex_run_is_heard_by_the_server_sharing_its_database(
    tmp_path: Path,
) -> None:
    """Any process that changes the index publishes through the database: here a
    ``docshelf reindex`` run while ``serve --no-watch`` serves the same data folder."""
    shelf = make_shelf(tmp_path / "shelf")
    data = tmp_path / "data"
    uri = "docshelf://shelf/notes.txt"
    with serve(shelf, data, "--no-watch", formats_built=False) as server:
        async with (
            http_client(server.url, MODERN) as client,
            client.listen(resources_list_changed=True, resource_subscriptions=[uri]) as sub,
        ):
            (shelf / "notes.txt").write_text("Reindexed by another process.\n")
            (shelf / "later.txt").write_text("later\n")
            done = await anyio.run_process(
                docshelf_command("reindex", "--root", str(shelf), "--data-dir", str(data)),
                env=child_env(),
                check=False,
            )
            assert done.returncode == 0, done.stderr
            heard: set[type] = set()
            with anyio.fail_after(WAIT):  # one change set: list_changed, then updated
                async for event in sub:
                    heard.add(type(event))
                    if {ResourceUpdated, ResourcesListChanged} <= heard:
                        break


def test_a_replica_never_watches(tmp_path: Path) -> None:
    """Watching is indexing: a replica asked to watch is refused at the door."""
    done = run_docshelf(
        "serve", "--root", str(tmp_path), "--no-index",
        env=child_env(DOCSHELF_WATCH="true"), timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "watching needs indexing" in done.stderr


# -- the supervisor's life cycle (every test above ends with a checked shutdown too) ---------


def test_a_dead_process_is_reported_and_replaced(tmp_path: Path) -> None:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "a.md").write_text("# A\n")
    with serve_processes(shelf, tmp_path / "data", 2) as supervised:
        (serving,) = [pid for pid, indexing in supervised.processes.items() if not indexing]
        os.kill(serving, signal.SIGKILL)
        deadline = time.monotonic() + 90
        while not set(processes_of(supervised.base, 1)) - set(supervised.processes):
            assert time.monotonic() < deadline, supervised.log()[-3000:]
        assert re.search(
            rf"process 1 \(serving, pid {serving}\) died: killed by SIGKILL", supervised.log()
        )
        assert len(processes_of(supervised.base, 2)) == 2
