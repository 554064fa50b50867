"""A real ``docshelf serve`` whose formats live in a bucket (issue 27, item 1), against a
real SeaweedFS S3 server: every format lands in the bucket under the configured prefix,
reads answer what a folder-store server answers, the data folder holds nothing but the
bounded cache, an object deleted behind docshelf's back is rebuilt on read, and after an
edit and a deletion the bucket holds exactly the keys the index names (no orphans, D16).
A bucket that is not there stops the start with one line (exit 3)."""

from __future__ import annotations

import base64
import sqlite3
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.support.object_store import SeaweedServer
from tests.support.sdk import http_client, raw_read
from tests.support.servers import MODERN, child_env, run_docshelf, serve
from tests.support.shelves import make_shelf

# A multi-process suite (real servers, several per test): slow, so the README's command
# stays within its ten minutes; DOCSHELF_SLOW_TESTS=1 runs it, as .ci/run does.
pytestmark = pytest.mark.slow

PREFIX = "formats"
READ = [  # what the sample shelf serves with formats (the PDF, and two that fail, aside)
    "guides/field-guide.md",
    "notes.txt",
    "data.json",
    "table.csv",
    "page.html",
    "Straße plan.md",
]
CACHE_MB = 1


def uri(path: str) -> str:
    return "docshelf://shelf/" + path.replace(" ", "%20").replace("ß", "%C3%9F")


def row_keys(data: Path) -> set[str]:
    """The store keys every committed representation row names (the index, read directly)."""
    with sqlite3.connect(data / "docshelf.db") as db:
        rows = db.execute("SELECT store_key FROM representations WHERE store_key IS NOT NULL")
        return {key for (key,) in rows}


def keys_of(data: Path, path: str) -> set[str]:
    with sqlite3.connect(data / "docshelf.db") as db:
        rows = db.execute(
            "SELECT r.store_key FROM representations r JOIN documents d ON d.id = r.document_id "
            "WHERE d.path = ?",
            (path,),
        )
        return {key for (key,) in rows}


def bucket_keys(s3_server: SeaweedServer, bucket: str) -> set[str]:
    return {k.removeprefix(f"{PREFIX}/") for k in s3_server.keys(bucket, f"{PREFIX}/")}


def read_all(url: str) -> dict[str, list[tuple[str, Any]]]:
    """Each document's formats as a client reads them: (MIME type, text or bytes)."""

    async def reads() -> dict[str, list[tuple[str, Any]]]:
        found = {}
        async with http_client(url, MODERN) as client:
            for path in READ:
                result = await raw_read(client, uri(path))
                found[path] = [
                    (c["mimeType"], c.get("text") or base64.b64decode(c.get("blob", "")))
                    for c in result["contents"]
                ]
        return found

    return anyio.run(reads)


def comparable(contents: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """A rendered PDF embeds the time it was made: compared by its kind, the rest exactly."""
    return [(m, b"%PDF" if m == "application/pdf" else c) for m, c in contents]


def files_beyond_the_cache(data: Path) -> list[Path]:
    """Files in the data folder other than the index, the server's log and the cache."""
    return [
        p
        for p in data.rglob("*")
        if p.is_file()
        and not p.name.startswith(("docshelf.db", "server-"))
        and "store-cache" not in p.parts
    ]


def wait_for(check: Any, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def test_a_server_keeps_every_format_in_the_bucket_and_none_on_its_disk(
    tmp_path: Path, s3_server: SeaweedServer
) -> None:
    shelf = make_shelf(tmp_path / "shelf")
    with serve(shelf, tmp_path / "folder-data") as folder_server:
        expected = read_all(folder_server.url)

    bucket = s3_server.new_bucket()
    data = tmp_path / "data"
    env = child_env(
        DOCSHELF_STORE_URL=f"s3://{bucket}/{PREFIX}",
        DOCSHELF_STORE_CACHE_MB=str(CACHE_MB),
        **s3_server.env(),
    )
    with serve(shelf, data, env=env) as server:
        # Every format the index names is an object under the prefix, and nothing else is.
        indexed = row_keys(data)
        assert indexed and bucket_keys(s3_server, bucket) == indexed
        assert not (data / "representations").exists() and files_beyond_the_cache(data) == []
        status = httpx.get(f"{server.base}/readyz").json()
        assert status["conversion_backlog"] == 0

        # An object lost behind docshelf's back is rebuilt by the read that misses it.
        lost = keys_of(data, "data.json")
        for key in lost:
            s3_server.client().delete_object(Bucket=bucket, Key=f"{PREFIX}/{key}")
        got = read_all(server.url)
        assert {p: comparable(c) for p, c in got.items()} == {
            p: comparable(c) for p, c in expected.items()
        }
        assert "stored text/markdown of docshelf://shelf/data.json is missing" in server.log()
        assert lost <= bucket_keys(s3_server, bucket)
        # The reads rendered PDFs: in the bucket too; on disk only the bounded cache.
        assert bucket_keys(s3_server, bucket) == row_keys(data) > indexed
        assert files_beyond_the_cache(data) == []
        cached = [p for p in (data / "store-cache").iterdir() if not p.name.startswith(".")]
        assert cached and sum(p.stat().st_size for p in cached) <= CACHE_MB * 1024 * 1024

        # An edit and a deletion: the old formats leave the bucket once no row names them.
        old_notes = keys_of(data, "notes.txt")
        (shelf / "notes.txt").write_text("Rewritten notes.\n")
        (shelf / "table.csv").unlink()
        wait_for(
            lambda: (
                keys_of(data, "table.csv") == set()
                and keys_of(data, "notes.txt") - old_notes
                and bucket_keys(s3_server, bucket) == row_keys(data)
            ),
            "the bucket did not come to hold exactly the keys the index names",
        )
        assert not old_notes & bucket_keys(s3_server, bucket)
        assert "Traceback" not in server.log()


def test_a_bucket_that_is_not_there_stops_the_start_in_one_line(
    tmp_path: Path, s3_server: SeaweedServer
) -> None:
    shelf = make_shelf(tmp_path / "shelf")
    env = child_env(DOCSHELF_STORE_URL="s3://no-such-bucket-here/formats", **s3_server.env())
    done = run_docshelf("index", "--root", str(shelf), "--data-dir", str(tmp_path / "d"), env=env)
    assert done.returncode == 3, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "docshelf: there is no bucket no-such-bucket-here "
        "(DOCSHELF_STORE_URL=s3://no-such-bucket-here/formats) at "
        f"{s3_server.endpoint}; create it, or name another"
    )
    assert not (tmp_path / "d" / "representations").exists()
