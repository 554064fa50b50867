"""Shelves in a bucket (issue 27, item 2), on a real SeaweedFS S3 server.

The catalog pass lists objects page by page, detects types from a ranged GET, keeps the
ETag as the change key, and refuses odd keys with the reasons odd file names get; reads
stream with the read limit. In-process here; tests/test_bucket_serve.py runs a real
``docshelf serve`` over a bucket shelf.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Iterator
from multiprocessing import forkserver
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from docshelf.app.runtime import Runtime
from docshelf.app.settings import Settings
from docshelf.converters import FailureReason
from docshelf.converters.detect import HEAD_BYTES
from docshelf.storage import bucket_shelf, s3
from docshelf.storage.bucket_shelf import BucketShelf
from docshelf.storage.conversion import ConversionOutcome, ConversionTask, convert_file
from docshelf.storage.ignore_files import IgnoreRules
from docshelf.storage.models import Document
from docshelf.storage.s3 import S3Location
from docshelf.storage.shelves import Seen, make_shelves
from tests.support.object_store import SeaweedServer
from tests.support.servers import child_env, run_docshelf


@pytest.fixture(scope="module")
def module_bucket(s3_server: SeaweedServer) -> str:
    # One bucket for the module: each new bucket is a SeaweedFS collection that takes
    # several of the test server's volumes. Each test has a prefix of its own.
    return s3_server.new_bucket()


@pytest.fixture
def bucket(
    s3_server: SeaweedServer, module_bucket: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """The bucket, and this process configured to reach the server as docshelf would."""
    for name, value in s3_server.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(s3, "_clients", {})  # a client made before these variables: not ours
    yield module_bucket
    client = s3_server.client()
    for key in s3_server.keys(module_bucket):
        client.delete_object(Bucket=module_bucket, Key=key)


def put(s3_server: SeaweedServer, bucket: str, key: str, body: bytes) -> None:
    s3_server.client().put_object(Bucket=bucket, Key=key, Body=body)


@pytest.fixture
def runtime(bucket: str, tmp_path: Path, database_url: str) -> Iterator[Runtime]:
    settings = Settings(
        shelves=[f"docs=s3://{bucket}/p"],
        data_dir=tmp_path / "data",
        database_url=database_url,
        workers=1,
    )
    rt = Runtime(settings)
    rt.open()
    yield rt
    rt.close()


def calls(operation: str) -> list[dict[str, Any]]:
    """The parameters of every ``operation`` this process's S3 client sends from now on
    (botocore's own event hooks: the requests still go to the server)."""
    seen: list[dict[str, Any]] = []
    s3.s3_client().meta.events.register(
        f"provide-client-params.s3.{operation}", lambda params, **_: seen.append(dict(params))
    )
    return seen


def rows(runtime: Runtime) -> dict[str, Document]:
    with runtime.database.session() as session:
        query = session.query(Document).options(selectinload(Document.representations))
        return {d.path: d for d in query.all()}


def test_a_bucket_shelf_is_catalogued_page_by_page(
    s3_server: SeaweedServer, bucket: str, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bucket_shelf, "LIST_PAGE", 7)
    for number in range(30):
        put(s3_server, bucket, f"p/notes/{number:02}.md", f"# Note {number}\n".encode())
    put(s3_server, bucket, "p/page.html", b"<html><head><title>A page</title></head></html>")
    put(s3_server, bucket, "p/empty.txt", b"")
    put(s3_server, bucket, "p/.hidden.md", b"# ignored\n")  # the default ignore rules
    put(s3_server, bucket, "p/folder/", b"")  # a folder marker: a folder, not a document
    put(s3_server, bucket, "elsewhere.md", b"# not under the prefix\n")
    listed = calls("ListObjectsV2")

    report = runtime.indexer.reconcile()

    assert (report.added, report.failed) == (32, 0)
    assert len(listed) >= 5 and all(c["MaxKeys"] == 7 for c in listed)  # 32 keys, 7 a page
    found = rows(runtime)
    assert set(found) == {f"notes/{n:02}.md" for n in range(30)} | {"page.html", "empty.txt"}
    note = found["notes/07.md"]
    head = s3_server.client().head_object(Bucket=bucket, Key="p/notes/07.md")
    assert note.uri == "docshelf://docs/notes/07.md"
    assert note.change_key == head["ETag"].strip('"')
    assert note.mtime_ns == int(head["LastModified"].timestamp()) * 10**9
    assert (note.mime_type, note.title, note.size) == ("text/markdown", "Note 7", 9)
    assert (found["page.html"].mime_type, found["page.html"].title) == ("text/html", "A page")
    assert found["empty.txt"].size == 0
    again = runtime.indexer.reconcile()
    assert (again.unchanged, again.added, again.changed) == (32, 0, 0)


def test_types_are_detected_from_a_ranged_get_never_a_download(
    s3_server: SeaweedServer, bucket: str, runtime: Runtime
) -> None:
    big = b"%PDF-1.4\n" + b"0" * (6 * 1024 * 1024)
    put(s3_server, bucket, "p/big.pdf", big)
    gets = calls("GetObject")

    runtime.indexer.reconcile()

    assert [g["Range"] for g in gets] == [f"bytes=0-{HEAD_BYTES - 1}"]
    assert rows(runtime)["big.pdf"].mime_type == "application/pdf"


def test_an_object_rewritten_in_the_same_second_at_the_same_size_is_changed(
    s3_server: SeaweedServer, bucket: str, runtime: Runtime
) -> None:
    client = s3_server.client()
    for _ in range(5):  # the two writes must fall in one second (LastModified's unit)
        put(s3_server, bucket, "p/note.md", b"# First\n")
        runtime.indexer.reconcile()
        first = client.head_object(Bucket=bucket, Key="p/note.md")
        put(s3_server, bucket, "p/note.md", b"# Other\n")
        second = client.head_object(Bucket=bucket, Key="p/note.md")
        if first["LastModified"] == second["LastModified"]:
            break
        time.sleep(0.3)
    assert first["ContentLength"] == second["ContentLength"]
    assert first["LastModified"] == second["LastModified"]

    report = runtime.indexer.reconcile(wait=True)

    assert report.changed == 1
    row = rows(runtime)["note.md"]
    assert row.change_key == second["ETag"].strip('"') and row.state == "ready"
    text = next(r for r in row.representations if r.mime_type == "text/plain")
    assert b"Other" in runtime.store.get(text.store_key)


def test_workers_reach_the_bucket_whatever_their_forkserver_started_with(
    s3_server: SeaweedServer, tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Conversion workers are forked by a forkserver that started with the environment of
    its time; the AWS_* variables the serving process has are the ones its workers use
    (the full suite's run order started the forkserver before any test set them)."""
    for name in [n for n in os.environ if n.startswith("AWS_")]:
        monkeypatch.delenv(name)
    forkserver.ensure_running()  # started bare, as before anything set the variables
    bucket = s3_server.new_bucket()
    for name, value in s3_server.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(s3, "_clients", {})
    put(s3_server, bucket, "p/note.md", b"# Read by a worker\n")
    settings = Settings(
        shelves=[f"docs=s3://{bucket}/p"],
        data_dir=tmp_path / "data",
        database_url=database_url,
        store_url=f"s3://{bucket}/formats",
        workers=1,
    )
    runtime = Runtime(settings)
    runtime.open()
    try:
        runtime.indexer.reconcile(wait=True)
        row = rows(runtime)["note.md"]
        assert (row.state, row.error_message) == ("ready", None)
    finally:
        runtime.close()


def test_a_worker_reads_the_version_it_finds_and_records_its_change_key(
    s3_server: SeaweedServer, bucket: str, runtime: Runtime
) -> None:
    """Rewritten between the catalog pass and the conversion: what is recorded is the
    version the worker read, with that version's ETag (as a file's newer mtime is)."""
    put(s3_server, bucket, "p/note.md", b"# Catalogued\n")
    runtime.indexer.reconcile()
    put(s3_server, bucket, "p/note.md", b"# Rewritten before converting\n")
    now = s3_server.client().head_object(Bucket=bucket, Key="p/note.md")

    runtime.builder.drain()

    row = rows(runtime)["note.md"]
    assert (row.change_key, row.size) == (now["ETag"].strip('"'), now["ContentLength"])
    assert runtime.indexer.reconcile().unchanged == 1  # the next listing sees nothing new


def test_odd_keys_are_refused_with_the_reasons_odd_file_names_get(
    s3_server: SeaweedServer, bucket: str, runtime: Runtime
) -> None:
    long_key = "/".join(["é" * 60] * 6) + ".md"  # 1,100 bytes of key; a URI over 2,048
    put(s3_server, bucket, f"p/{long_key}", b"# long\n")
    put(s3_server, bucket, "p/new\nline.md", b"# served, encoded as a file's name is\n")
    report = runtime.indexer.reconcile()
    assert [(e.path, e.reason) for e in report.errors] == [(long_key, FailureReason.PATH_TOO_LONG)]
    assert rows(runtime)["new\nline.md"].uri == "docshelf://docs/new%0Aline.md"

    # SeaweedFS itself refuses '.' and '..' segments and folds '//' (other stores keep
    # them): what such a listing would say is refused by the same code as a file name.
    odd = {key: Seen(1, 0, "etag") for key in ("a//b.md", "./c.md", "d/../e.md")}
    refused = runtime.indexer.refresh("docs", sorted(odd), listed=odd)
    assert sorted((e.path, e.reason) for e in refused.errors) == [
        ("./c.md", FailureReason.INVALID_NAME),
        ("a//b.md", FailureReason.INVALID_NAME),
        ("d/../e.md", FailureReason.INVALID_NAME),
    ]
    assert (
        "path segment '' is not allowed" in {e.path: e for e in refused.errors}["a//b.md"].message
    )


def test_reads_stream_with_the_read_limit_and_a_vanished_object_is_gone(
    s3_server: SeaweedServer, bucket: str
) -> None:
    shelf = BucketShelf("docs", S3Location.parse(f"s3://{bucket}/p"), IgnoreRules())
    put(s3_server, bucket, "p/a.txt", b"x" * 5000)
    read = shelf.read("a.txt", limit=5000)
    assert (read.data, read.size, read.change_key) == (
        b"x" * 5000,
        5000,
        shelf.look("a.txt").change_key,
    )  # type: ignore[union-attr]
    with pytest.raises(OSError) as over:
        shelf.read("a.txt", limit=4999)
    assert over.value.errno == errno.EFBIG
    assert str(over.value) == "[Errno 27] 5000 bytes is over the limit of 4999"
    with pytest.raises(FileNotFoundError):
        shelf.read("gone.txt")
    assert shelf.look("gone.txt") is None
    assert shelf.head("a.txt", 10) == b"x" * 10


def test_a_bucket_that_cannot_be_listed_stops_the_start_in_one_line(
    s3_server: SeaweedServer, bucket: str
) -> None:
    with pytest.raises(ValueError) as missing:
        make_shelves([("docs", "s3://no-such-bucket-here/p")], IgnoreRules())
    assert str(missing.value) == (
        "shelf 'docs': cannot list s3://no-such-bucket-here/p (NoSuchBucket: The specified "
        "bucket does not exist); check the bucket name, and the AWS_* credentials, region "
        "and endpoint this process has"
    )
    with pytest.raises(ValueError) as malformed:
        Settings(shelves=["docs=s3://Not_A_Bucket/p"])
    assert "'Not_A_Bucket' is not a bucket name" in str(malformed.value)
    [shelf] = make_shelves([("docs", f"s3://{bucket}/p")], IgnoreRules())
    assert shelf.location == f"s3://{bucket}/p"


def test_the_listing_finds_changes_and_says_a_refused_key_once(
    s3_server: SeaweedServer, bucket: str, runtime: Runtime
) -> None:
    [shelf] = runtime.poller.shelves
    put(s3_server, bucket, "p/a.md", b"# A\n")
    put(s3_server, bucket, "p/" + "/".join(["é" * 60] * 6) + ".md", b"# too long a URI\n")
    first = runtime.poller.poll(shelf)
    assert first is not None and (first.added, first.failed) == (1, 1)
    assert runtime.poller.poll(shelf) is None  # nothing new: the refused key is not said again
    put(s3_server, bucket, "p/a.md", b"# B\n")
    assert runtime.poller.poll(shelf).changed == 1  # type: ignore[union-attr]
    s3_server.client().delete_object(Bucket=bucket, Key="p/a.md")
    assert runtime.poller.poll(shelf).removed == 1  # type: ignore[union-attr]
    assert set(rows(runtime)) == set()


def rewrite_within_one_second(
    s3_server: SeaweedServer, bucket: str, key: str, first: bytes, then: bytes, between: Any
) -> dict[str, Any]:
    """Write ``first``, run ``between``, write ``then`` (the same size) within one second
    of LastModified; the second write's HEAD."""
    client = s3_server.client()
    for _ in range(10):
        put(s3_server, bucket, key, first)
        before = client.head_object(Bucket=bucket, Key=key)
        result = between()
        put(s3_server, bucket, key, then)
        after = client.head_object(Bucket=bucket, Key=key)
        if before["LastModified"] == after["LastModified"]:
            return {"between": result, **after}
        time.sleep(0.2)
    raise AssertionError("no two writes fell within one second")


def test_an_outcome_for_a_version_the_row_no_longer_has_is_not_recorded(
    s3_server: SeaweedServer, bucket: str, runtime: Runtime
) -> None:
    """The builder's record check compares the change key too: a conversion of the old
    version (same size, same second) must not be recorded over the new one's row."""

    def catalogue_and_convert() -> tuple[ConversionTask, ConversionOutcome]:
        runtime.indexer.reconcile(force=True)
        with runtime.database.session() as session:
            doc = session.scalars(
                select(Document)
                .options(selectinload(Document.representations))
                .where(Document.path == "note.md")
            ).one()
            task = runtime.builder._task(doc, None)
        return task, convert_file(task, runtime.store)

    now = rewrite_within_one_second(
        s3_server, bucket, "p/note.md", b"# Older\n", b"# Newer\n", catalogue_and_convert
    )
    task, outcome = now["between"]
    assert runtime.indexer.reconcile().changed == 1  # the new ETag: changed, queued again
    recorded = runtime.builder._record([(task, outcome)])
    assert recorded.uris == {}
    row = rows(runtime)["note.md"]
    assert (row.change_key, row.state) == (now["ETag"].strip('"'), "pending")


def test_a_bucket_that_cannot_be_listed_stops_docshelf_in_one_line(
    s3_server: SeaweedServer, tmp_path: Path
) -> None:
    done = run_docshelf(
        "index",
        "--shelf",
        "docs=s3://no-such-bucket-here/p",
        "--data-dir",
        str(tmp_path / "data"),
        env=child_env(**s3_server.env()),
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "docshelf: shelf 'docs': cannot list s3://no-such-bucket-here/p (NoSuchBucket: The "
        "specified bucket does not exist); check the bucket name, and the AWS_* credentials, "
        "region and endpoint this process has"
    )


def test_ignore_files_in_a_bucket_apply_as_on_disk_and_each_listing_follows_them(
    s3_server: SeaweedServer, bucket: str, runtime: Runtime
) -> None:
    # Issue 28, item 5: a bucket synced from a project folder carries its .gitignore files.
    [shelf] = runtime.poller.shelves
    for key in ("a.md", "b.log", "sub/c.md", "sub/d.md", "build/x.md"):
        put(s3_server, bucket, f"p/{key}", b"# doc\n")
    put(s3_server, bucket, "p/.gitignore", b"*.log\nbuild/\n")
    put(s3_server, bucket, "p/sub/.docshelfignore", b"d.md\n")
    gets = calls("GetObject")
    runtime.poller.poll(shelf)
    assert set(rows(runtime)) == {"a.md", "sub/c.md"}
    # One GET for each ignore file the listing found, and the ranged GETs of new documents.
    assert sorted(g["Key"] for g in gets if "Range" not in g) == [
        "p/.gitignore",
        "p/sub/.docshelfignore",
    ]
    assert shelf.look("sub/d.md") is None and shelf.look("build/x.md") is None
    assert shelf.look("sub/c.md") is not None

    put(s3_server, bucket, "p/.gitignore", b"*.log\nbuild/\nsub/\n")  # now ignored: gone
    report = runtime.poller.poll(shelf)
    assert report is not None and report.changes.removed == {"docshelf://docs/sub/c.md"}

    s3_server.client().delete_object(Bucket=bucket, Key="p/.gitignore")  # back, but d.md
    runtime.poller.poll(shelf)
    assert set(rows(runtime)) == {"a.md", "b.log", "sub/c.md", "build/x.md"}
