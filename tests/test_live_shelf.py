"""The shelf is live: file changes reach subscribed clients, in both eras and on both transports.

Real files are written, renamed and deleted under a running ``docshelf serve``
(or ``docshelf stdio``); the official SDK client waits for the notifications.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from functools import partial
from pathlib import Path

import anyio
import httpx
import mcp_types as types
import pytest
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from tests.support.sdk import http_client, next_event, read_metadata, stdio_client
from tests.support.servers import (
    LEGACY,
    MODERN,
    RawClient,
    RunningServer,
    listen_stream,
    serve,
)
from tests.support.shelves import make_shelf

pytestmark = pytest.mark.anyio

WAIT = 20  # seconds; the watcher answers in well under one


@pytest.fixture
def live(tmp_path: Path) -> Iterator[RunningServer]:
    with serve(make_shelf(tmp_path / "shelf"), tmp_path / "data") as server:
        yield server


async def test_2026_listen_gets_updated_then_reads_new_content(live: RunningServer) -> None:
    uri = "docshelf://shelf/notes.txt"
    async with http_client(live.url, MODERN) as client:
        async with client.listen(resources_list_changed=True, resource_subscriptions=[uri]) as sub:
            assert sub.honored.resources_list_changed is True
            assert sub.honored.resource_subscriptions == [uri]
            (live.shelf / "notes.txt").write_text("Edited while served.\n")
            event = await next_event(sub, ResourceUpdated, WAIT)
            assert event.uri == uri
        read = await client.read_resource(uri)
        metadata = await read_metadata(client, uri)
    assert read.contents[0].text == "Edited while served.\n"
    assert metadata.metadata[0].size == len("Edited while served.\n")
    assert metadata.metadata[0].annotations.last_modified is not None


async def test_2026_add_rename_delete_send_list_changed(live: RunningServer) -> None:
    async with (
        http_client(live.url, MODERN) as client,
        client.listen(resources_list_changed=True) as sub,
    ):
        (live.shelf / "new.md").write_text("# New\n")
        await next_event(sub, ResourcesListChanged, WAIT)
        assert (await client.read_resource("docshelf://shelf/new.md")).contents
        os.rename(live.shelf / "new.md", live.shelf / "renamed.md")
        await next_event(sub, ResourcesListChanged, WAIT)
        with pytest.raises(MCPError) as caught:
            await client.read_resource("docshelf://shelf/new.md")
        assert caught.value.error.code == -32602
        assert (await client.read_resource("docshelf://shelf/renamed.md")).contents
        shutil.rmtree(live.shelf / "papers")
        await next_event(sub, ResourcesListChanged, WAIT)
        listed = await client.list_resources()
    assert not any(r.uri.startswith("docshelf://shelf/papers/") for r in listed.resources)


async def test_2025_subscribe_gets_updated_on_the_session_stream(live: RunningServer) -> None:
    received: list[object] = []
    updated = anyio.Event()

    async def on_message(message: object) -> None:
        received.append(message)
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.set()

    uri = "docshelf://shelf/guides/field-guide.md"
    async with http_client(live.url, LEGACY, message_handler=on_message) as client:
        with pytest.warns(MCPDeprecationWarning):
            await client.subscribe_resource(uri)
        await anyio.sleep(0.5)  # the SDK opens its GET stream in the background
        # An editor's atomic save: write a temporary file, then rename it over the original.
        temporary = live.shelf / "guides" / "field-guide.md.tmp"
        temporary.write_text("# Field guide, second edition\n")
        os.replace(temporary, live.shelf / "guides" / "field-guide.md")
        with anyio.fail_after(WAIT):
            await updated.wait()
        read = await client.read_resource(uri)
    assert read.contents[0].text == "# Field guide, second edition\n"
    notes = [m for m in received if isinstance(m, types.ResourceUpdatedNotification)]
    assert notes[0].params.uri == uri


async def test_2025_list_changed_reaches_every_session_stream(live: RunningServer) -> None:
    sessions = 3
    changed = [anyio.Event() for _ in range(sessions)]

    async def on_message(heard: anyio.Event, message: object) -> None:
        if isinstance(message, types.ResourceListChangedNotification):
            heard.set()

    before = active_listeners(live)
    async with AsyncExitStack() as stack:
        for event in changed:
            client = http_client(live.url, LEGACY, message_handler=partial(on_message, event))
            await stack.enter_async_context(client)
        with anyio.fail_after(WAIT):  # each SDK session opens its GET stream in the background
            while await anyio.to_thread.run_sync(active_listeners, live) < before + sessions:
                await anyio.sleep(0.1)
        (live.shelf / "added.txt").write_text("hello\n")
        with anyio.move_on_after(WAIT):
            for event in changed:
                await event.wait()
    assert [event.is_set() for event in changed] == [True] * sessions


async def test_stdio_both_eras_hear_about_changes(tmp_path: Path) -> None:
    shelf = make_shelf(tmp_path / "shelf")
    uri = "docshelf://shelf/data.json"
    async with stdio_client(str(shelf), str(tmp_path / "data"), mode=MODERN) as client:
        await client.list_resources()
        async with client.listen(resource_subscriptions=[uri]) as sub:
            (shelf / "data.json").write_text('{"edited": true}')
            event = await next_event(sub, ResourceUpdated, WAIT)
            assert event.uri == uri

    updated = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.set()

    async with stdio_client(
        str(shelf), str(tmp_path / "data"), mode="legacy", message_handler=on_message
    ) as client:
        with pytest.warns(MCPDeprecationWarning):
            await client.subscribe_resource(uri)
        (shelf / "data.json").write_text('{"edited": 2}')
        with anyio.fail_after(WAIT):
            await updated.wait()


def test_raw_listen_stream_acks_first_with_the_subscription_id(live: RunningServer) -> None:
    # basic/patterns/subscriptions "Acknowledgment": first message, carrying the listen id.
    notifications = {"toolsListChanged": True, "resourcesListChanged": True}
    with listen_stream(live.url, notifications, "listen-7", timeout=WAIT) as stream:
        assert stream.response.headers["content-type"].startswith("text/event-stream")
        assert stream.response.headers["x-accel-buffering"] == "no"
        ack = next(stream.messages)
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "listen-7"}
    assert ack["params"]["notifications"] == {"resourcesListChanged": True}  # no tools here


def active_listeners(server: RunningServer) -> int:
    metrics = httpx.get(f"{server.base}/metrics", timeout=10).text
    match = re.search(r"^docshelf_active_subscriptions(?:\{[^}]*\})? ([0-9.e+]+)$", metrics, re.M)
    assert match, metrics
    return int(float(match.group(1)))


def test_disconnected_clients_leave_nothing_behind(live: RunningServer) -> None:
    before = active_listeners(live)
    for _ in range(5):
        with listen_stream(live.url, {"resourcesListChanged": True}, timeout=WAIT) as stream:
            next(stream.messages)  # the acknowledgement: the stream is open
            assert active_listeners(live) == before + 1
    for _ in range(100):  # the server notices each disconnect within moments
        if active_listeners(live) == before:
            break
        time.sleep(0.1)
    assert active_listeners(live) == before


def list_all_uris(raw: RawClient) -> set[str]:
    uris: set[str] = set()
    cursor = None
    while True:
        result = raw.modern("resources/list", {"cursor": cursor} if cursor else {}).json()["result"]
        uris |= {r["uri"] for r in result["resources"]}
        cursor = result.get("nextCursor")
        if cursor is None:
            return uris


def test_a_bulk_copy_is_absorbed_and_a_deleted_folder_forgotten(
    live: RunningServer, tmp_path: Path
) -> None:
    source = tmp_path / "bulk"
    for folder in range(10):
        (source / f"part-{folder}").mkdir(parents=True)
        for n in range(30):
            (source / f"part-{folder}" / f"note-{n}.txt").write_text(f"note {folder}/{n}\n")
    raw = RawClient(live.url)
    before = list_all_uris(raw)
    shutil.copytree(source, live.shelf / "bulk")
    deadline = time.monotonic() + 120
    while len(list_all_uris(raw) - before) < 300:
        assert time.monotonic() < deadline, "the bulk copy was not absorbed in time"
        time.sleep(0.5)
    assert (
        raw.modern("resources/read", {"uri": "docshelf://shelf/bulk/part-9/note-29.txt"}).json()[
            "result"
        ]["contents"][0]["text"]
        == "note 9/29\n"
    )
    shutil.rmtree(live.shelf / "bulk")
    while list_all_uris(raw) != before:
        assert time.monotonic() < deadline, "the deleted folder was not forgotten in time"
        time.sleep(0.5)
    raw.close()


def test_startup_reconciliation_catches_what_changed_while_down(tmp_path: Path) -> None:
    shelf, data = make_shelf(tmp_path / "shelf"), tmp_path / "data"
    with serve(shelf, data):
        pass
    (shelf / "notes.txt").write_text("Changed while the server was down.\n")
    (shelf / "table.csv").unlink()
    (shelf / "arrived.md").write_text("# Arrived\n")
    with serve(shelf, data) as server:
        raw = RawClient(server.url)
        notes = raw.modern("resources/read", {"uri": "docshelf://shelf/notes.txt"}).json()
        assert notes["result"]["contents"][0]["text"] == "Changed while the server was down.\n"
        gone = raw.modern("resources/read", {"uri": "docshelf://shelf/table.csv"}).json()
        assert gone["error"]["code"] == -32602
        arrived = raw.modern("resources/metadata", {"uri": "docshelf://shelf/arrived.md"}).json()
        assert arrived["result"]["metadata"][0]["title"] == "Arrived"
        raw.close()


def test_legacy_streams_end_with_their_session_and_leave_nothing_behind(
    live: RunningServer,
) -> None:
    raw = RawClient(live.url)
    before = active_listeners(live)
    session = raw.initialize()
    headers = {
        "Accept": "text/event-stream",
        "Mcp-Session-Id": session,
        "MCP-Protocol-Version": LEGACY,
    }
    with httpx.stream("GET", live.url, headers=headers, timeout=WAIT) as stream:
        assert stream.status_code == 200
        for _ in range(50):
            if active_listeners(live) == before + 1:
                break
            time.sleep(0.1)
        assert active_listeners(live) == before + 1
        # DELETE ends the session and, with it, its open stream (the server closes it).
        deleted = time.monotonic()
        assert raw.http.delete(live.url, headers={"Mcp-Session-Id": session}).status_code == 204
        messages = [line for line in stream.iter_lines() if line.startswith("data:")]
        ended_after = time.monotonic() - deleted
    assert messages == []  # nothing changed on the shelf: the stream ends without a word
    assert ended_after < 5  # closed with the session, not at the next keep-alive (15 s)
    for _ in range(50):
        if active_listeners(live) == before:
            break
        time.sleep(0.1)
    assert active_listeners(live) == before
    raw.close()
