"""Folders as resources (SEP-2093, issue 28), measured: listing and reading a folder on a
large index.

Two shelves of 100,000 documents each, catalogued straight into a database made by
the migrations (the rows the indexer writes; no files, no conversion):

* ``deep``: everything under ``archive/`` — 20 year folders of 12 month folders of
  ~417 documents: one folder with 100,000 documents below it and few children;
* ``wide``: 10,000 folders of 10 documents at the shelf's root: a root with many
  sub-folders, whose children a naive listing would find by reading every path.

Timed in-process, as the kernel calls them (the handler, the index queries and the
JSON encoding; not HTTP, which ``python -m bench serve`` measures): ``resources/list``
of a folder (its first page, and every page of it), ``resources/read`` of a folder (a
card per child, the documents below each folder counted up to 1,000), and the flat
list's first page for reference. Targets (issue 28: "fast at 100,000 documents and deep
trees"): a folder's page p95 <= 25 ms, reading a folder p95 <= 100 ms.

Run ``python -m bench folders`` (about a minute; ``--quick``: 2,000 documents, nothing
judged; ``--database-url`` for an empty PostgreSQL database instead of a temporary
SQLite file). See ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import insert, text

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from docshelf.app.mcp.context import MODERN, RequestContext  # noqa: E402
from docshelf.app.mcp.params import ListResourcesParams, UriParams  # noqa: E402
from docshelf.app.runtime import Runtime  # noqa: E402
from docshelf.app.settings import Settings  # noqa: E402
from docshelf.storage.database import Database  # noqa: E402
from docshelf.storage.models import Document, DocumentState  # noqa: E402
from docshelf.storage.uris import build_uri  # noqa: E402

PAGE_TARGET_MS = 25.0
READ_TARGET_MS = 100.0
_CHUNK = 5_000


def catalog_row(shelf: str, path: str, modified: datetime) -> dict[str, object]:
    """The ``documents`` row the indexer writes for a small Markdown file at ``path``."""
    return {
        "shelf": shelf,
        "path": path,
        "uri": build_uri(shelf, path),
        "name": path.rpartition("/")[2],
        "mime_type": "text/markdown",
        "size": 2_400,
        "mtime_ns": 0,
        "title": path.rpartition("/")[2].removesuffix(".md"),
        "description": None,
        "facts": {},
        "state": DocumentState.READY,
        "modified_at": modified,
        "indexed_at": modified,
    }


def add_documents(database: Database, shelf: str, paths: Iterable[str]) -> int:
    """Catalogue ``paths`` on ``shelf`` in bulk; how many."""
    now = datetime.now(UTC)
    rows = [catalog_row(shelf, path, now) for path in paths]
    with database.engine.begin() as connection:
        for start in range(0, len(rows), _CHUNK):
            connection.execute(insert(Document), rows[start : start + _CHUNK])
    if database.engine.dialect.name == "postgresql":
        # What autovacuum does soon after a bulk insert: statistics, and the visibility map
        # that lets a count read the index alone (without it, every row's heap page).
        with database.engine.connect() as connection:
            connection.execution_options(isolation_level="AUTOCOMMIT").execute(
                text("VACUUM ANALYZE documents")
            )
    database.bump()
    return len(rows)


def deep_paths(total: int) -> list[str]:
    """``archive/yYYYY/mMM/note-N.md``: 240 month folders sharing ``total`` documents."""
    return [
        f"archive/y{2000 + n % 20}/m{n // 20 % 12 + 1:02d}/note-{n:06d}.md" for n in range(total)
    ]


def wide_paths(total: int) -> list[str]:
    """``team-NNNNN/note-N.md``: ``total / 10`` folders at the root, 10 documents each."""
    return [f"team-{n // 10:05d}/note-{n:06d}.md" for n in range(total)]


@dataclass(frozen=True, slots=True)
class Row:
    label: str
    timings: list[float]  # milliseconds
    target: float | None = None

    @property
    def p95(self) -> float:
        return sorted(self.timings)[int(0.95 * (len(self.timings) - 1))]

    @property
    def missed(self) -> bool:
        return self.target is not None and self.p95 > self.target

    def line(self, judged: bool) -> str:
        verdict = ""
        if self.target is not None:
            verdict = f"  target p95 <= {self.target:g} ms"
            if judged:
                verdict += "  FAIL" if self.missed else "  PASS"
        return f"{self.label:<62} {statistics.median(self.timings):8.2f} {self.p95:8.2f}{verdict}"


def timed(call: Callable[[], Any], repeats: int) -> list[float]:
    """Milliseconds of ``call`` and the JSON encoding of its result, ``repeats`` times."""
    call()  # warm: statements compiled, pages in the cache
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        json.dumps(call())
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def every_page(runtime: Runtime, ctx: RequestContext, uri: str) -> tuple[int, int]:
    """Page through the folder ``uri``: (pages, children)."""
    cursor, pages, children = None, 0, 0
    while True:
        result = runtime.kernel.folders.list_resources(ctx, ListResourcesParams(cursor, uri))
        pages += 1
        children += len(result["resources"])
        cursor = result.get("nextCursor")
        if cursor is None:
            return pages, children


def measure(runtime: Runtime, documents: int, repeats: int) -> list[Row]:
    ctx = RequestContext(MODERN, "2026-07-28", folders=True)
    flat = RequestContext(MODERN, "2026-07-28")
    folders = runtime.kernel.folders

    def listing(uri: str) -> Callable[[], Any]:
        return lambda: folders.list_resources(ctx, ListResourcesParams(None, uri))

    def reading(uri: str) -> Callable[[], Any]:
        return lambda: folders.read(ctx, UriParams(uri))

    n = f"{documents:,}"
    leaf = "docshelf://deep/archive/y2000/m01/"
    deep_pages, _ = every_page(runtime, ctx, leaf)
    wide_pages, wide_children = every_page(runtime, ctx, "docshelf://wide/")
    return [
        Row(
            "flat resources/list, first page (reference)",
            timed(lambda: folders.list_resources(flat, ListResourcesParams(None, None)), repeats),
        ),
        Row(
            f"list archive/ ({n} below, 20 folders)",
            timed(listing("docshelf://deep/archive/"), repeats),
            PAGE_TARGET_MS,
        ),
        Row(
            f"list the root of {wide_children:,} folders, first page",
            timed(listing("docshelf://wide/"), repeats),
            PAGE_TARGET_MS,
        ),
        Row(
            f"list the root of {wide_children:,} folders, all {wide_pages} pages",
            timed(lambda: every_page(runtime, ctx, "docshelf://wide/"), max(3, repeats // 20)),
        ),
        Row(
            f"list a month folder, all {deep_pages} pages",
            timed(lambda: every_page(runtime, ctx, leaf), repeats),
        ),
        Row(
            "read archive/ (20 folder cards)",
            timed(reading("docshelf://deep/archive/"), repeats),
            READ_TARGET_MS,
        ),
        Row(
            "read the root of many folders (100 folder cards)",
            timed(reading("docshelf://wide/"), repeats),
            READ_TARGET_MS,
        ),
        Row(
            "read a month folder (a card per document)",
            timed(reading(leaf), repeats),
            READ_TARGET_MS,
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench folders", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="2,000 documents, nothing judged")
    parser.add_argument(
        "--database-url", help="an empty PostgreSQL database (default: a temporary SQLite file)"
    )
    options = parser.parse_args(argv)
    documents = 1_000 if options.quick else 100_000
    repeats = 10 if options.quick else 100
    judged = not options.quick
    with tempfile.TemporaryDirectory(prefix="docshelf-bench-folders-") as folder:
        work = Path(folder)
        shelves = [work / "deep", work / "wide"]
        for shelf in shelves:
            shelf.mkdir()
        url = options.database_url or f"sqlite:///{work / 'index.db'}"
        runtime = Runtime(
            Settings.model_validate(
                {"shelves": [str(s) for s in shelves], "data_dir": work, "database_url": url}
            )
        )
        try:
            runtime.open()
            started = time.perf_counter()
            added = add_documents(runtime.database, "deep", deep_paths(documents))
            added += add_documents(runtime.database, "wide", wide_paths(documents))
            runtime.readiness.catalogued.set()
            seconds = time.perf_counter() - started
            engine = runtime.database.engine.dialect.name
            print(
                f"docshelf folders benchmark{' (quick)' if options.quick else ''}: {engine}, ",
                end="",
            )
            print(f"{added:,} documents catalogued in {seconds:.1f} s; {repeats} runs each")
            print(f"{'':<62} {'p50 ms':>8} {'p95 ms':>8}")
            rows = measure(runtime, documents, repeats)
            for row in rows:
                print(row.line(judged))
        finally:
            runtime.close()
    return 1 if judged and any(row.missed for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
