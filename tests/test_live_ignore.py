"""Ignore files on a live shelf (issue 28, item 5), both eras.

Under a running ``docshelf serve`` with its watcher, an ignore file written, edited or
removed changes what is served: a file it comes to exclude leaves the catalog exactly as a
deleted file does (``list_changed``, and ``resources/updated`` to its subscribers), one it
stops excluding comes back, and a change inside an ignored folder is no event at all.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from tests.support.schema import validate_error, validate_response
from tests.support.sdk import http_client, next_event
from tests.support.servers import LEGACY, MODERN, NOT_FOUND, RawClient, RunningServer, serve
from tests.support.shelves import write_tree

pytestmark = pytest.mark.anyio

WAIT = 20  # seconds; the watcher answers in well under one
QUIET = 1.5  # seconds with no event that show a change was dropped (debounce is 0.2)


def small_shelf(root: Path) -> Path:
    """Text files only: the server is ready (every format built) in moments."""
    return write_tree(
        root,
        {
            "notes.txt": "Plain notes.\nSecond line.\n",
            "table.csv": "city,population\nBerlin,3850809\n",
            "guides/field-guide.md": "# Field guide\n\nNotes are filed by week.\n",
            "build/ignored-at-start.md": "# never served\n",
            ".gitignore": "build/\n",
        },
    )


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """One server for the module: each test changes files of its own (and the root's
    .gitignore keeps ``build/`` whatever a test writes to it)."""
    base = tmp_path_factory.mktemp("live-ignore")
    with serve(small_shelf(base / "shelf"), base / "data") as server:
        yield server


async def events_until(subscription: Any, wanted: set[tuple[type, str | None]]) -> set:
    """The (kind, uri) of each event the subscription yields until ``wanted`` are all seen."""
    seen: set[tuple[type, str | None]] = set()
    with anyio.fail_after(WAIT):
        async for event in subscription:
            seen.add((type(event), getattr(event, "uri", None)))
            if wanted <= seen:
                return seen
    raise AssertionError(f"subscription ended having seen {seen}")


def listed_uris(raw: RawClient) -> set[str]:
    """Every URI ``resources/list`` pages through (2026-07-28), each page schema-checked."""
    uris: set[str] = set()
    cursor = None
    while True:
        response = raw.modern("resources/list", {"cursor": cursor} if cursor else {}).json()
        validate_response(MODERN, "ListResourcesResult", response)
        uris |= {resource["uri"] for resource in response["result"]["resources"]}
        cursor = response["result"].get("nextCursor")
        if cursor is None:
            return uris


async def test_2026_a_file_that_becomes_ignored_leaves_as_a_deleted_one_does(
    live: RunningServer,
) -> None:
    deleted, ignored = "docshelf://shelf/table.csv", "docshelf://shelf/notes.txt"
    async with (
        http_client(live.url, MODERN) as client,
        client.listen(
            resources_list_changed=True, resource_subscriptions=[deleted, ignored]
        ) as sub,
    ):
        (live.shelf / "table.csv").unlink()
        on_delete = await events_until(
            sub, {(ResourcesListChanged, None), (ResourceUpdated, deleted)}
        )
        (live.shelf / ".gitignore").write_text("build/\nnotes.txt\n")
        on_ignore = await events_until(
            sub, {(ResourcesListChanged, None), (ResourceUpdated, ignored)}
        )
        assert {kind for kind, _ in on_ignore} == {kind for kind, _ in on_delete}
        for uri in (deleted, ignored):
            with pytest.raises(MCPError) as caught:
                await client.read_resource(uri)
            assert caught.value.error.code == NOT_FOUND[MODERN]
        assert ignored not in {r.uri for r in (await client.list_resources()).resources}

        (live.shelf / ".gitignore").write_text("build/\n")  # no longer ignored: back
        await next_event(sub, ResourcesListChanged, WAIT)
        read = await client.read_resource(ignored)
    assert read.contents[0].text == "Plain notes.\nSecond line.\n"


async def test_2025_a_nested_ignore_file_and_a_docshelfignore_that_re_includes(
    live: RunningServer,
) -> None:
    uri = "docshelf://shelf/guides/field-guide.md"
    received: list[object] = []

    async def on_message(message: object) -> None:
        received.append(message)

    async def wait_for(kind: type) -> None:
        with anyio.fail_after(WAIT):
            while not any(isinstance(m, kind) for m in received):
                await anyio.sleep(0.05)

    async with http_client(live.url, LEGACY, message_handler=on_message) as client:
        with pytest.warns(MCPDeprecationWarning):
            await client.subscribe_resource(uri)
        await anyio.sleep(0.5)  # the SDK opens its GET stream in the background
        (live.shelf / "guides" / ".gitignore").write_text("*.md\n")
        await wait_for(types.ResourceUpdatedNotification)
        await wait_for(types.ResourceListChangedNotification)
        updated = [m for m in received if isinstance(m, types.ResourceUpdatedNotification)]
        assert updated[0].params.uri == uri
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
        assert caught.value.error.code == NOT_FOUND[LEGACY]

        received.clear()
        (live.shelf / "guides" / ".docshelfignore").write_text("!field-guide.md\n")
        await wait_for(types.ResourceListChangedNotification)
        read = await client.read_resource(uri)
    assert read.contents[0].text.startswith("# Field guide")


async def test_changes_inside_an_ignored_folder_are_no_events(live: RunningServer) -> None:
    async with (
        http_client(live.url, MODERN) as client,
        client.listen(resources_list_changed=True) as sub,
    ):
        for n in range(50):
            (live.shelf / "build" / f"out-{n}.md").write_text(f"# generated {n}\n")
        (live.shelf / "build" / "ignored-at-start.md").unlink()
        os.makedirs(live.shelf / "deep" / "build" / "x")  # build/ at any depth
        (live.shelf / "deep" / "build" / "x" / "y.md").write_text("# also ignored\n")
        with anyio.move_on_after(QUIET) as quiet:
            await next_event(sub, ResourcesListChanged, WAIT)
        assert quiet.cancelled_caught, "a change inside an ignored folder was announced"
        (live.shelf / "visible.md").write_text("# Visible\n")
        await next_event(sub, ResourcesListChanged, WAIT)
    raw = RawClient(live.url)
    uris = listed_uris(raw)
    assert "docshelf://shelf/visible.md" in uris
    assert not any("/build/" in uri for uri in uris)
    raw.close()


def test_both_eras_see_an_ignored_file_as_not_found(live: RunningServer) -> None:
    raw = RawClient(live.url)
    assert "docshelf://shelf/build/ignored-at-start.md" not in listed_uris(raw)
    params = {"uri": "docshelf://shelf/build/ignored-at-start.md"}
    modern = raw.modern("resources/read", params).json()
    validate_error(MODERN, modern)
    assert modern["error"]["code"] == NOT_FOUND[MODERN]
    session = raw.initialize()
    listed = raw.legacy(session, "resources/list").json()
    validate_response(LEGACY, "ListResourcesResult", listed)
    assert all("/build/" not in r["uri"] for r in listed["result"]["resources"])
    legacy = raw.legacy(session, "resources/read", params).json()
    validate_error(LEGACY, legacy)
    assert legacy["error"]["code"] == NOT_FOUND[LEGACY]
    raw.close()
