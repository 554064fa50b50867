"""Listing and honest search, measured: ``list_documents`` pages and the pending count at
100,000 documents (issue 28).

The targets: a page of 50 in every order, unfiltered, p50 <= 10 ms, and p95 <= 50 ms over
every order and filter, first pages and deep ones (after 20,000 rows: a keyset page must
cost what the first does). Besides, unjudged: the count every search answer now carries
(documents pending, unsearchable, waiting for OCR) with 10 % and with all documents
pending, and what the listing's two indexes (migration 0016) cost the catalog per
document.

The index is the product's own (the migrations' schema), catalog rows inserted in
batches of 1,000 as the indexer writes them (name rows included); pages go through
:class:`storage.listing.DocumentListing`, counts through
:func:`storage.completeness.completeness`. One shelf of 90 % of the documents and
another of 10 %, folders of 500, eleven types, sizes and mtimes spread at random.

Run ``python -m bench listing`` (about 5 minutes), ``--quick`` for a smoke run without
PASS/FAIL, ``--database-url`` for an empty PostgreSQL database instead of a temporary
SQLite file. See ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from sqlalchemy import insert, text, update

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from docshelf.storage.completeness import completeness  # noqa: E402
from docshelf.storage.database import Database  # noqa: E402
from docshelf.storage.listing import (  # noqa: E402
    DocumentListing,
    ListingFilter,
    Position,
    Sort,
    TypeFilter,
)
from docshelf.storage.models import Document, DocumentState  # noqa: E402
from docshelf.storage.search import Filters, add_name_rows  # noqa: E402

SEED = 28
BATCH = 1_000
PAGE = 50
DEEP = 20_000  # rows before a deep page
P50_TARGET_MS = 10.0
P95_TARGET_MS = 50.0
BASE_NS = 1_700_000_000_000_000_000
_DOCUMENTS = Document.metadata.tables["documents"]
TYPES = ["application/pdf"] * 3 + ["text/markdown"] * 5 + ["image/png", "text/plain", "text/csv"]
LISTING_INDEXES = ("ix_documents_mtime", "ix_documents_size")


def rows(start: int, stop: int, rng: random.Random) -> list[dict[str, object]]:
    now = datetime.now(UTC)
    made = []
    for number in range(start, stop):
        shelf = "small" if number % 10 == 0 else "main"
        path = f"folder-{number // 500:03d}/document-{number:06d}.md"
        mtime_ns = BASE_NS + rng.randrange(10**17)
        made.append(
            {
                "shelf": shelf,
                "path": path,
                "uri": f"docshelf://{shelf}/{path}",
                "name": path.rpartition("/")[2],
                "mime_type": rng.choice(TYPES),
                "size": rng.choice([1_000, 2_400, rng.randrange(10**7)]),
                "mtime_ns": mtime_ns,
                "title": f"Document {number}",
                "facts": {},
                "state": DocumentState.READY,
                "modified_at": datetime.fromtimestamp(mtime_ns / 1e9, UTC),
                "indexed_at": now,
            }
        )
    return made


def fill(database: Database, count: int, rng: random.Random) -> float:
    """Catalogue ``count`` documents as the indexer does; seconds taken."""
    started = time.perf_counter()
    for start in range(0, count, BATCH):
        with database.session() as session:
            ids = (
                session.connection()
                .execute(
                    insert(_DOCUMENTS).returning(_DOCUMENTS.c.id), rows(start, start + BATCH, rng)
                )
                .scalars()
                .all()
            )
            add_name_rows(session, ids)
    return time.perf_counter() - started


def timed(call: Callable[[], object], repeat: int) -> list[float]:
    call()  # warm
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return times


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


FILTERS: dict[str, ListingFilter] = {
    "everything": ListingFilter(),
    "the small shelf": ListingFilter(shelf="small"),
    "the main shelf": ListingFilter(shelf="main"),
    "one folder (0.5 %)": ListingFilter(path_prefix="folder-150/"),
    "type pdf": ListingFilter(types=TypeFilter(frozenset({"application/pdf"}))),
    "type image/": ListingFilter(types=TypeFilter(prefix="image/")),
    "modified after (1 %)": ListingFilter(modified_after_ns=BASE_NS + 99 * 10**15),
}


def deep_position(listing: DocumentListing, where: ListingFilter, sort: Sort) -> Position | None:
    """The position after about :data:`DEEP` rows (or the last row, if fewer match)."""
    after: Position | None = None
    walked = 0
    while walked < DEEP:
        page = listing.page(where, sort, 1_000, after)
        if not page.documents:
            break
        after = page.documents[-1].position(sort)
        walked += len(page.documents)
        if not page.more:
            break
    return after


def verdict(value: float, limit: float, judged: bool) -> str:
    if not judged:
        return ""
    return "PASS" if value <= limit else f"FAIL by {value - limit:.1f} ms"


def measure_pages(database: Database, repeat: int, judged: bool) -> bool:
    listing = DocumentListing(database)
    print(f"{'order':<9} {'filter':<21} {'page':<6} {'p50 ms':>8} {'p95 ms':>8}")
    failed = False
    for sort in Sort:
        for name, where in FILTERS.items():
            deep = deep_position(listing, where, sort)
            for label, after in (("first", None), ("deep", deep)):
                # The tool counts the total on first pages only.
                page = partial(listing.page, where, sort, PAGE, after, count=after is None)
                times = timed(page, repeat)
                p50, p95 = statistics.median(times), percentile(times, 0.95)
                marks = f"p95 {verdict(p95, P95_TARGET_MS, judged)}" if judged else ""
                if judged and name == "everything":
                    marks = f"p50 {verdict(p50, P50_TARGET_MS, judged)}  {marks}"
                    failed |= p50 > P50_TARGET_MS
                failed |= judged and p95 > P95_TARGET_MS
                print(f"{sort.value:<9} {name:<21} {label:<6} {p50:8.2f} {p95:8.2f}  {marks}")
    return failed


def settle(database: Database) -> None:
    """On PostgreSQL, what autovacuum does soon after a bulk write (inserts included, since
    PostgreSQL 13): statistics, and the visibility map that lets a count stay in its index."""
    if database.engine.dialect.name == "postgresql":
        with database.engine.connect() as connection:
            connection.execution_options(isolation_level="AUTOCOMMIT").execute(
                text("VACUUM ANALYZE documents")
            )


def measure_counts(database: Database, count: int, repeat: int) -> None:
    for share in (10, 100):
        with database.session() as session:
            pending = DocumentState.PENDING if share == 100 else DocumentState.READY
            session.execute(update(Document).values(state=pending))
            if share == 10:
                session.execute(
                    update(Document)
                    .where(Document.id % 10 == 3)
                    .values(state=DocumentState.PENDING)
                )
        settle(database)
        for name, filters in (
            ("no filter", Filters()),
            ("shelf", Filters(shelf="small")),
            ("type", Filters(mime_type="application/pdf")),
            ("folder", Filters(path_prefix="folder-150/")),
        ):
            times = timed(partial(completeness, database, filters), repeat)
            print(
                f"search's pending count, {share} % of {count:,} pending, {name:<9}: "
                f"p50 {statistics.median(times):6.2f} ms, p95 {percentile(times, 0.95):6.2f} ms"
            )


def measure_catalog_cost(url_for: Callable[[str], str], count: int) -> None:
    """µs per catalogued document with and without the listing's indexes, alternated."""
    costs: dict[bool, list[float]] = {True: [], False: []}
    for attempt in range(4):
        with_indexes = attempt % 2 == 0
        database = Database(url_for(f"catalog-{attempt}"))
        database.upgrade()
        if not with_indexes:
            with database.engine.begin() as connection:
                for index in LISTING_INDEXES:
                    connection.execute(text(f"DROP INDEX {index}"))
        seconds = fill(database, count, random.Random(SEED))
        costs[with_indexes].append(seconds / count * 1e6)
        database.dispose()
    with_, without = min(costs[True]), min(costs[False])
    print(
        f"catalogue {count:,} documents: {with_:.1f} µs/document with the listing's indexes, "
        f"{without:.1f} without (+{with_ - without:.1f} µs, {with_ / without:.2f}x; best of 2)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench listing", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="2,000 documents, nothing judged")
    parser.add_argument(
        "--database-url", help="an empty PostgreSQL database (default: temporary SQLite files)"
    )
    options = parser.parse_args(argv)
    count = 2_000 if options.quick else 100_000
    repeat = 5 if options.quick else 40
    judged = not options.quick
    with tempfile.TemporaryDirectory(prefix="docshelf-bench-listing-") as folder:

        def url_for(name: str) -> str:
            return options.database_url or f"sqlite:///{Path(folder) / name}.db"

        database = Database(url_for("index"))
        database.upgrade()
        seconds = fill(database, count, random.Random(SEED))
        engine = database.engine.dialect.name
        settle(database)
        print(
            f"engine: {engine}; {count:,} documents catalogued in {seconds:.1f} s; pages of {PAGE}"
        )
        failed = measure_pages(database, repeat, judged)
        measure_counts(database, count, repeat)
        database.dispose()
        if options.database_url is None:
            measure_catalog_cost(url_for, 2_000 if options.quick else 50_000)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
