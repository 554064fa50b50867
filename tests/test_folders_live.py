"""A folder's subscriber hears of every document added, changed or removed below it
(SEP-2093 §2 ``capabilities.subscribe`` on folders), in both eras.

Real files are written and deleted in sub-folders of a running ``docshelf serve``; the
official SDK client (2025-11-25 ``resources/subscribe``, 2026-07-28 ``Client.listen``) and
a raw ``subscriptions/listen`` stream wait for ``notifications/resources/updated`` under
the folder's URI. Every notification is checked against its era's schema.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import anyio
import mcp_types as types
import pytest
from mcp.client.subscriptions import ResourceUpdated
from mcp.shared.exceptions import MCPDeprecationWarning

from tests.support import sep2093
from tests.support.schema import validate
from tests.support.sdk import folders_extension, http_client, next_event, raw_folder_list
from tests.support.servers import (
    LEGACY,
    MODERN,
    RunningServer,
    listen_stream,
    modern_meta,
    serve,
)

pytestmark = pytest.mark.anyio

WAIT = 20  # seconds; the watcher answers in well under one
# Each test changes files in folders of its own, on one server.
ONE = "docshelf://shelf/one/"
THREE = "docshelf://shelf/three/"
QUIET = "docshelf://shelf/quiet/"


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    base = tmp_path_factory.mktemp("live-folders")
    shelf = base / "shelf"
    for folder in ("one", "two/deeper", "three", "quiet"):
        (shelf / folder).mkdir(parents=True)
        (shelf / folder / "note.md").write_text(f"# A note in {folder}\n")
    with serve(shelf, base / "data") as server:
        yield server


async def test_2025_a_folder_subscriber_hears_of_a_file_written_in_a_sub_folder(
    live: RunningServer,
) -> None:
    received: list[types.ResourceUpdatedNotification] = []
    updated = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            received.append(message)
            updated.set()

    extensions = [folders_extension()]
    async with http_client(
        live.url, LEGACY, message_handler=on_message, extensions=extensions
    ) as client:
        with pytest.warns(MCPDeprecationWarning):
            await client.subscribe_resource(ONE)
            await client.subscribe_resource(QUIET)
        await anyio.sleep(0.5)  # the SDK opens its GET stream in the background
        (live.shelf / "one" / "new").mkdir()
        (live.shelf / "one" / "new" / "chapter.md").write_text("# A new chapter\n")
        with anyio.fail_after(WAIT):
            await updated.wait()
        await anyio.sleep(1.0)  # anything else the change would (wrongly) have said
        listed = await raw_folder_list(client, ONE)
    # Once when catalogued, maybe again when its formats are built (as a document's
    # subscriber hears); never for the folder nothing changed in.
    assert {n.params.uri for n in received} == {ONE}
    for note in received:
        message = {
            "jsonrpc": "2.0",
            **note.model_dump(by_alias=True, mode="json", exclude_none=True),
        }
        validate(LEGACY, "ResourceUpdatedNotification", message)
    # What the notification invites: listing the folder again, which shows what is new.
    assert "docshelf://shelf/one/new/" in [r["uri"] for r in listed["resources"]]


async def test_2026_listen_to_a_folder_hears_of_a_change_deep_below_it(
    live: RunningServer,
) -> None:
    async with (
        http_client(live.url, MODERN, extensions=[folders_extension()]) as client,
        client.listen(resource_subscriptions=["docshelf://shelf/"]) as sub,
    ):
        assert sub.honored.resource_subscriptions == ["docshelf://shelf/"]
        (live.shelf / "two" / "deeper" / "note.md").write_text("# Revised\n")
        event = await next_event(sub, ResourceUpdated, WAIT)
    assert event.uri == "docshelf://shelf/"


def test_2026_a_raw_listen_stream_names_the_folder_when_a_file_below_goes(
    live: RunningServer,
) -> None:
    """basic/patterns/subscriptions: each notification carries the listen request's id."""
    meta = modern_meta(sep2093.OPTED_IN)
    notifications = {"resourceSubscriptions": [THREE, QUIET]}
    with listen_stream(live.url, notifications, "folders-1", meta, timeout=WAIT) as stream:
        validate(MODERN, "JSONRPCRequest", stream.request)
        ack = next(stream.messages)
        shutil.rmtree(live.shelf / "three")
        note = next(stream.messages)
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert note == {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {
            "uri": THREE,
            "_meta": {"io.modelcontextprotocol/subscriptionId": "folders-1"},
        },
    }
    validate(MODERN, "ResourceUpdatedNotification", note)
