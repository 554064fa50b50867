"""Scale-out with real processes: replicas sharing a database.

Changes cross processes through the database (``storage.changefeed``): a subscriber
hears about a change whichever process made it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import anyio
import pytest
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated

from tests.support.sdk import http_client
from tests.support.servers import MODERN, child_env, docshelf_command, serve
from tests.support.shelves import make_shelf

WAIT = 20  # seconds for a notification; the watcher and the feed answer in well under one


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
    with (
        serve(shelf, data, env=env) as indexer,
        serve(shelf, data, "--no-index", env=env, formats_built=False) as replica,
    ):
        async with http_client(replica.url, MODERN) as client:
            async with client.listen(
                resources_list_changed=True, resource_subscriptions=[uri]
            ) as sub:
                (shelf / "data.json").write_text('{"edited": "through the indexer"}')
                await _next(sub, ResourceUpdated)
                (shelf / "new.txt").write_text("new\n")
                await _next(sub, ResourcesListChanged)
            read = await client.read_resource(uri)
            listed = await client.list_resources()
        assert read.contents[0].text == '{"edited": "through the indexer"}'
        assert "docshelf://shelf/new.txt" in {r.uri for r in listed.resources}
        # The indexer indexed both changes; the replica neither watched nor indexed.
        assert "storage.watcher" in indexer.log()
        assert "storage.watcher" not in replica.log() and "watchfiles" not in replica.log()


async def _next(subscription, kind: type) -> object:  # type: ignore[no-untyped-def]
    with anyio.fail_after(WAIT):
        async for event in subscription:
            if isinstance(event, kind):
                return event
    raise AssertionError("subscription ended")


def test_a_replica_never_watches(tmp_path: Path) -> None:
    """Watching is indexing: a replica asked to watch is refused at the door."""
    done = subprocess.run(
        docshelf_command("serve", "--root", str(tmp_path), "--no-index"),
        env=child_env(DOCSHELF_WATCH="true"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "watching needs indexing" in done.stderr
