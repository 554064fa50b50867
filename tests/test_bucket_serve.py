"""A real ``docshelf serve --shelf docs=s3://BUCKET/PREFIX`` on a real SeaweedFS (issue 27,
item 2): clients list and read a bucket's documents, and a put or delete in the bucket
reaches a subscriber through the periodic listing and through a bucket notification
(POST /admin/shelves/docs/notify)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated

from tests.support.object_store import SeaweedServer
from tests.support.sdk import http_client, next_event
from tests.support.servers import MODERN, RunningServer, child_env, serve

# A multi-process suite (real servers, several per test): slow, so the README's command
# stays within its ten minutes; DOCSHELF_SLOW_TESTS=1 runs it, as .ci/run does.
pytestmark = [pytest.mark.anyio, pytest.mark.slow]

TOKEN = "bucket-notify-test-token"
WAIT = 20  # seconds for a change to be heard: one listing (0.5 s here) and the feed


@pytest.fixture(scope="module")
def bucket(s3_server: SeaweedServer) -> str:
    return s3_server.new_bucket()  # one for the module: each is a collection of volumes


def put(s3_server: SeaweedServer, bucket: str, key: str, body: bytes) -> None:
    s3_server.client().put_object(Bucket=bucket, Key=key, Body=body)


def bucket_server(
    s3_server: SeaweedServer, bucket: str, tmp_path: Path, poll_s: float
) -> Iterator[tuple[RunningServer, str]]:
    prefix = f"shelf-{uuid.uuid4().hex[:8]}"
    put(s3_server, bucket, f"{prefix}/page.html", b"<h1>Bucket page</h1><p>From S3.</p>")
    put(s3_server, bucket, f"{prefix}/guide/notes.txt", b"Notes kept in a bucket.\n")
    local = tmp_path / "local"
    local.mkdir()
    (local / "here.txt").write_text("A folder shelf beside the bucket.\n")
    env = child_env(
        **s3_server.env(), DOCSHELF_BUCKET_POLL_S=str(poll_s), DOCSHELF_ADMIN_TOKEN=TOKEN
    )
    shelf = f"docs=s3://{bucket}/{prefix}"
    with serve(local, tmp_path / "data", "--shelf", shelf, env=env) as server:
        yield server, prefix


@pytest.fixture
def polled(
    s3_server: SeaweedServer, bucket: str, tmp_path: Path
) -> Iterator[tuple[RunningServer, str]]:
    yield from bucket_server(s3_server, bucket, tmp_path, poll_s=0.5)


@pytest.fixture
def notified(
    s3_server: SeaweedServer, bucket: str, tmp_path: Path
) -> Iterator[tuple[RunningServer, str]]:
    yield from bucket_server(s3_server, bucket, tmp_path, poll_s=3600)  # notifications only


async def test_a_bucket_shelf_is_listed_and_read_beside_a_folder_shelf(
    polled: tuple[RunningServer, str],
) -> None:
    server, _prefix = polled
    async with http_client(server.url, MODERN) as client:
        listed = await client.list_resources()
        page = await client.read_resource("docshelf://docs/page.html")
        notes = await client.read_resource("docshelf://docs/guide/notes.txt")
    uris = {r.uri for r in listed.resources}
    assert {
        "docshelf://docs/page.html",
        "docshelf://docs/guide/notes.txt",
        "docshelf://local/here.txt",
    } <= uris
    by_type = {c.mime_type: c for c in page.contents}
    assert by_type["text/html"].text == "<h1>Bucket page</h1><p>From S3.</p>"  # the original
    assert "# Bucket page" in by_type["text/markdown"].text
    assert notes.contents[0].text == "Notes kept in a bucket.\n"


async def test_a_put_and_a_delete_in_the_bucket_reach_a_subscriber_by_the_listing(
    s3_server: SeaweedServer, bucket: str, polled: tuple[RunningServer, str]
) -> None:
    server, prefix = polled
    uri = "docshelf://docs/guide/notes.txt"
    async with (
        http_client(server.url, MODERN) as client,
        client.listen(resources_list_changed=True, resource_subscriptions=[uri]) as sub,
    ):
        put(s3_server, bucket, f"{prefix}/new.md", b"# New in the bucket\n")
        await next_event(sub, ResourcesListChanged, WAIT)
        assert (await client.read_resource("docshelf://docs/new.md")).contents
        put(s3_server, bucket, f"{prefix}/guide/notes.txt", b"Edited in the bucket.\n")
        event = await next_event(sub, ResourceUpdated, WAIT)
        assert event.uri == uri  # type: ignore[attr-defined]
        assert (await client.read_resource(uri)).contents[0].text == "Edited in the bucket.\n"
        s3_server.client().delete_object(Bucket=bucket, Key=f"{prefix}/new.md")
        await next_event(sub, ResourcesListChanged, WAIT)
        listed = await client.list_resources()
    assert "docshelf://docs/new.md" not in {r.uri for r in listed.resources}


async def test_a_bucket_notification_refreshes_the_keys_it_names_at_once(
    s3_server: SeaweedServer, bucket: str, notified: tuple[RunningServer, str]
) -> None:
    server, prefix = notified
    admin = httpx.AsyncClient(
        base_url=server.base, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
    )
    key = f"{prefix}/from a webhook.md"
    event = {  # as MinIO's webhook sends it: the key URL-encoded, a space as '+'
        "EventName": "s3:ObjectCreated:Put",
        "Key": f"{bucket}/{key}",
        "Records": [
            {
                "eventName": "s3:ObjectCreated:Put",
                "s3": {
                    "bucket": {"name": bucket},
                    "object": {"key": key.replace(" ", "+"), "size": 20},
                },
            }
        ],
    }
    async with (
        admin,
        http_client(server.url, MODERN) as client,
        client.listen(resources_list_changed=True) as sub,
    ):
        put(s3_server, bucket, key, b"# Told by a webhook\n")
        answer = await admin.post("/admin/shelves/docs/notify", json=event)
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"shelf": "docs", "keys": 1, "added": 1, "changed": 0, "removed": 0}
        await next_event(sub, ResourcesListChanged, WAIT)
        read = await client.read_resource("docshelf://docs/from%20a%20webhook.md")
        assert read.contents[0].text == "# Told by a webhook\n"

        unknown = await admin.post("/admin/shelves/nope/notify", json=event)
        assert (unknown.status_code, unknown.json()) == (404, {"detail": "no shelf 'nope'"})
        folder = await admin.post("/admin/shelves/local/notify", json=event)
        assert folder.status_code == 409
        assert folder.json()["detail"] == (
            "shelf 'local' is a folder: its changes are watched, not notified"
        )
        malformed = await admin.post("/admin/shelves/docs/notify", json={"Records": [{}]})
        assert (malformed.status_code, malformed.json()["detail"]) == (
            400,
            "not an S3 event notification: Records[0] has no s3.object.key; expected "
            '{"Records": [{"s3": {"bucket": {"name": ...}, "object": {"key": ...}}}]}',
        )
        garbled = await admin.post("/admin/shelves/docs/notify", content=b"not json")
        assert garbled.status_code == 400
        assert garbled.json()["detail"].startswith(
            "not an S3 event notification: the body is not JSON"
        )
        anonymous = await httpx.AsyncClient(base_url=server.base).post(
            "/admin/shelves/docs/notify", json=event
        )
        assert anonymous.status_code == 401
