"""What a killed process leaves in the store is swept (issue 27: "stored objects match rows
(no orphans) after kill -9 of any host"; DESIGN D16).

A process killed between writing a format and committing its row leaves an object no row
will ever name. ``sweep_orphans`` deletes the keys older than the grace period that no
committed row references, in the folder store and in a bucket alike; a key a row names,
and a key younger than the grace period (a conversion still in flight), stay. A bucket's
unfinished multipart uploads that old are aborted; a folder's temp files that old removed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from docshelf.storage.database import Database
from docshelf.storage.garbage import sweep_orphans
from docshelf.storage.models import Document, DocumentState, Representation
from docshelf.storage.s3 import S3Location
from docshelf.storage.store import RepresentationStore, Store, store_key
from docshelf.storage.store_s3 import S3Store
from tests.support.object_store import SeaweedServer

NAMED = store_key("a" * 64, "markdown", "3", "text/markdown")
ORPHAN = store_key("b" * 64, "markdown", "3", "text/markdown")


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    database = Database(f"sqlite:///{tmp_path / 'index.db'}")
    database.upgrade()
    now = datetime.now(UTC)
    with database.session() as session:
        document = Document(
            shelf="shelf",
            path="a.md",
            uri="docshelf://shelf/a.md",
            name="a.md",
            mime_type="text/markdown",
            size=1,
            mtime_ns=1,
            sha256="a" * 64,
            title="a",
            facts={},
            state=DocumentState.READY,
            modified_at=now,
            indexed_at=now,
        )
        document.representations.append(
            Representation(
                mime_type="text/markdown",
                size=1,
                sha256="0" * 64,
                store_key=NAMED,
                converter="markdown",
                converter_version="3",
            )
        )
        session.add(document)
    yield database
    database.dispose()


@pytest.fixture(params=["folder", "bucket"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "folder":
        return RepresentationStore(tmp_path / "store")
    s3_server: SeaweedServer = request.getfixturevalue("s3_server")
    where = S3Location.parse(f"s3://{s3_server.new_bucket()}/formats")
    return S3Store(where, client=s3_server.client())


def test_an_object_no_row_names_is_swept_once_older_than_the_grace_period(
    database: Database, store: Store
) -> None:
    store.put(NAMED, b"named")
    store.put(ORPHAN, b"left by a killed worker")
    # Younger than the grace period: maybe a conversion whose row is not committed yet.
    assert sweep_orphans(database, store, grace_s=3600) == 0
    assert store.get(ORPHAN) == b"left by a killed worker"
    time.sleep(1.1)  # S3's Last-Modified has whole seconds
    assert sweep_orphans(database, store, grace_s=0) == 1
    with pytest.raises(FileNotFoundError):
        store.get(ORPHAN)
    assert store.get(NAMED) == b"named"
    assert sweep_orphans(database, store, grace_s=0) == 0


def test_a_folder_stores_temp_file_of_a_dead_writer_is_removed(
    database: Database, tmp_path: Path
) -> None:
    store = RepresentationStore(tmp_path / "store")
    store.put(NAMED, b"named")
    left = store.root / NAMED.rsplit("/", 1)[0] / ".tmp-deadbeef"
    left.write_bytes(b"half a format")
    os.utime(left, (time.time() - 7200, time.time() - 7200))
    assert sweep_orphans(database, store, grace_s=3600) == 0
    assert not left.exists() and store.get(NAMED) == b"named"


def test_a_buckets_unfinished_multipart_upload_is_aborted(
    database: Database, s3_server: SeaweedServer
) -> None:
    bucket = s3_server.new_bucket()
    client = s3_server.client()
    store = S3Store(S3Location.parse(f"s3://{bucket}/formats"), client=client)
    started = client.create_multipart_upload(Bucket=bucket, Key=f"formats/{ORPHAN}")
    client.upload_part(
        Bucket=bucket,
        Key=f"formats/{ORPHAN}",
        UploadId=started["UploadId"],
        PartNumber=1,
        Body=b"part of a big format",
    )
    time.sleep(1.1)
    sweep_orphans(database, store, grace_s=0)
    listed = client.list_multipart_uploads(Bucket=bucket, Prefix="formats/")
    assert listed.get("Uploads", []) == []
