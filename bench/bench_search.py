"""Search, measured: query latency on a large index, and what keeping it current costs.

The targets are those of issue #10 (DESIGN D19):

* query latency over 100,000 documents: p50 <= 10 ms, p95 <= 50 ms (and the same
  figures at 10,000 for comparison);
* index-update cost per document: what the catalog pays for the name rows (timed
  side by side with the same inserts without them, and with the row trigger that
  first wrote them) and what the format builder pays to replace a document's
  content rows, one transaction each.

The index is the product's own: a database made by the migrations, documents
inserted into ``documents`` with their name rows as the indexer writes them
(:func:`storage.search.add_name_rows`), content rows inserted in bulk (the
builder's :func:`storage.search.replace_content`, one document at a time, is
timed on its own); queries go through :meth:`storage.search.SearchIndex.search`,
snippets included. Only the
text is synthetic (the converters are measured by ``python -m bench convert``):
a Zipf-distributed vocabulary of 30,000 made-up words, 70 % Markdown documents of
four sections and 30 % PDFs of four pages, about 400 words each.

Run ``python -m bench search`` (about 10 minutes and 1 GB of temporary disk),
``--quick`` for a smoke run without PASS/FAIL, ``--database-url`` for an empty
PostgreSQL database instead of a temporary SQLite file. See ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import insert, text

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from docshelf.converters.base import Segment  # noqa: E402
from docshelf.storage.database import Database  # noqa: E402
from docshelf.storage.models import Document, DocumentState  # noqa: E402
from docshelf.storage.search import (  # noqa: E402
    CONTENT_ROW,
    Filters,
    SearchIndex,
    add_name_rows,
    replace_content,
)

VOCABULARY = 30_000
SECTIONS = 4
WORDS_PER_SECTION = 100
BATCH = 1_000
SEED = 10
_DOCUMENTS = Document.metadata.tables["documents"]
_SEARCH_PARTS = Document.metadata.tables["search_parts"]


@dataclass(frozen=True)
class Target:
    limit: float
    unit: str


P50_TARGET = Target(10.0, "ms")
P95_TARGET = Target(50.0, "ms")


class Text:
    """Made-up words with a Zipf distribution, so posting lists are as skewed as in prose."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)
        syllables = [c + v for c in "bdfgklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai")]
        words: set[str] = set()
        while len(words) < VOCABULARY:
            words.add("".join(self.random.choices(syllables, k=self.random.randint(2, 4))))
        self.words = sorted(words, key=lambda w: (len(w), w))  # short words are common
        self.cumulative = list(itertools.accumulate(1 / rank for rank in range(1, VOCABULARY + 1)))

    def sample(self, count: int) -> list[str]:
        return self.random.choices(self.words, cum_weights=self.cumulative, k=count)

    def band(self, low: int, high: int) -> str:
        """A word whose frequency rank is between ``low`` and ``high``."""
        return self.words[self.random.randrange(low, high)]


def document(number: int, words: Text, now: datetime) -> tuple[dict[str, object], list[Segment]]:
    """The catalog row of document ``number`` and its content segments."""
    pdf = number % 10 >= 7
    path = f"folder-{number // 500:03d}/{'-'.join(words.sample(2))}-{number}"
    path += ".pdf" if pdf else ".md"
    row: dict[str, object] = {
        "id": number + 1,
        "shelf": "bench",
        "path": path,
        "uri": f"docshelf://bench/{path}",
        "name": path.rpartition("/")[2],
        "mime_type": "application/pdf" if pdf else "text/markdown",
        "size": 2_400,
        "mtime_ns": 0,
        "title": " ".join(words.sample(4)).capitalize(),
        "description": "",
        "facts": {},
        "state": DocumentState.READY,
        "modified_at": now,
        "indexed_at": now,
    }
    segments = []
    for index in range(1, SECTIONS + 1):
        heading = f"Page {index}" if pdf else " ".join(words.sample(2)).capitalize()
        part = f"pages={index}" if pdf else f"section={heading.lower().replace(' ', '-')}"
        segments.append(Segment(part, heading, " ".join(words.sample(WORDS_PER_SECTION))))
    return row, segments


def fill(database: Database, start: int, stop: int, words: Text, seen: list[str]) -> float:
    """Add documents ``start`` to ``stop`` with their content; seconds taken.

    One section in a hundred is kept in ``seen``: phrases are quoted from real text.
    """
    now = datetime.now(UTC)
    began = time.perf_counter()
    for first in range(start, stop, BATCH):
        made = [document(n, words, now) for n in range(first, min(stop, first + BATCH))]
        seen += [segments[0].text for row, segments in made if int(str(row["id"])) % 100 == 0]
        with database.session() as session:
            session.execute(insert(_DOCUMENTS), [row for row, _ in made])
            add_name_rows(session, [int(str(row["id"])) for row, _ in made])
            session.execute(
                insert(_SEARCH_PARTS),
                [
                    {
                        "document_id": row["id"],
                        "kind": CONTENT_ROW,
                        "part": s.part,
                        "title": s.title,
                        "body": s.text,
                    }
                    for row, segments in made
                    for s in segments
                ],
            )
    return time.perf_counter() - began


@dataclass(frozen=True)
class Query:
    kind: str
    text: str
    filters: Filters | None = None


def queries(words: Text, count: int, folders: int, seen: list[str]) -> list[Query]:
    """A mix of what models and people type, ``count`` of each kind."""
    made = []
    for _ in range(count):
        quoted = words.random.choice(seen).split()
        at = words.random.randrange(len(quoted) - 2)
        made += [
            Query("one common word", words.band(20, 200)),
            Query("one rare word", words.band(5_000, VOCABULARY)),
            Query("two words", f"{words.band(50, 2_000)} {words.band(50, 2_000)}"),
            Query("three words", " ".join(words.band(100, 5_000) for _ in range(3))),
            Query("phrase", '"' + " ".join(quoted[at : at + 3]) + '"'),
            Query("prefix", words.band(200, 3_000)[:4] + "*"),
            Query(
                "word in a folder",
                words.band(100, 2_000),
                Filters(path_prefix=f"folder-{words.random.randrange(folders):03d}/"),
            ),
        ]
    words.random.shuffle(made)
    return made


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def measure_queries(index: SearchIndex, batch: list[Query]) -> dict[str, list[float]]:
    """Milliseconds per query, by kind (after a warm-up over the first ten)."""
    for query in batch[:10]:
        index.search(query.text, filters=query.filters)
    timings: dict[str, list[float]] = {}
    for query in batch:
        began = time.perf_counter()
        index.search(query.text, filters=query.filters)
        timings.setdefault(query.kind, []).append((time.perf_counter() - began) * 1000)
    return timings


def measure_updates(database: Database, size: int, words: Text, count: int) -> list[float]:
    """Milliseconds to replace one document's content rows, one transaction each."""
    now = datetime.now(UTC)
    timings = []
    for number in words.random.sample(range(size), count):
        _, segments = document(number, words, now)
        began = time.perf_counter()
        with database.session() as session:
            replace_content(session, number + 1, segments)
        timings.append((time.perf_counter() - began) * 1000)
    return timings


def measure_name_rows(database_url: Callable[[str], str], count: int, words: Text) -> list[float]:
    """Microseconds per catalogued document with name rows, as the indexer writes them
    (one statement per batch), then per row from a trigger (the first design), then none."""
    now = datetime.now(UTC)
    rows = [document(n, words, now)[0] for n in range(count)]
    figures = []
    for how in ("batch", "trigger", "none"):
        database = Database(database_url(f"names-{how}"))
        database.upgrade()
        if how == "trigger":
            with database.engine.begin() as connection:
                connection.execute(text(_NAME_ROW_TRIGGER))
        began = time.perf_counter()
        for first in range(0, count, BATCH):
            with database.session() as session:
                batch = rows[first : first + BATCH]
                session.execute(insert(_DOCUMENTS), batch)
                if how == "batch":
                    add_name_rows(session, [int(str(row["id"])) for row in batch])
        figures.append((time.perf_counter() - began) / count * 1e6)
        database.dispose()
    return figures


_NAME_ROW_TRIGGER = """CREATE TRIGGER documents_search_ai AFTER INSERT ON documents BEGIN
    INSERT INTO search_parts(document_id, kind, part, title, body)
    VALUES (new.id, 0, '', new.title, new.path);
END"""


def load_average() -> str:
    """The machine's load (1, 5 and 15 minutes): what the timings shared the cores with."""
    return " / ".join(f"{load:.2f}" for load in os.getloadavg())


def postgres_sizes(database: Database) -> str:
    """What the search index takes on PostgreSQL: the rows and every index on them, and of
    those the rank keys (migration 0017)."""
    with database.engine.connect() as connection:
        total, keys = connection.execute(
            text(
                "SELECT pg_total_relation_size('search_parts'),"
                " pg_relation_size('ix_search_parts_rank_keys')"
            )
        ).one()
    return f"{total / 1e6:,.0f} MB with its indexes, of which the rank keys {keys / 1e6:,.0f} MB"


def verdict(figure: float, target: Target, judged: bool) -> str:
    if not judged:
        return ""
    if figure <= target.limit:
        return "PASS"
    return f"FAIL by {figure - target.limit:.1f} {target.unit} ({figure / target.limit:.1f}x)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench search", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1,000 documents, nothing judged")
    parser.add_argument(
        "--database-url", help="an empty PostgreSQL database (default: temporary SQLite files)"
    )
    options = parser.parse_args(argv)
    sizes = [1_000] if options.quick else [10_000, 100_000]
    per_kind = 5 if options.quick else 60
    judged = not options.quick
    words = Text(SEED)
    with tempfile.TemporaryDirectory(prefix="docshelf-bench-search-") as folder:

        def url_for(name: str) -> str:
            return options.database_url or f"sqlite:///{Path(folder) / name}.db"

        database = Database(url_for("index"))
        database.upgrade()
        index = SearchIndex(database)
        print(f"load average at the start: {load_average()}")
        print(f"engine: {database.engine.dialect.name}; {SECTIONS} parts of ", end="")
        print(f"{WORDS_PER_SECTION} words per document; {per_kind} queries of each kind")
        print(f"{'documents':>10} {'kind':<18} {'p50 ms':>8} {'p95 ms':>8}")
        filled, seen = 0, list[str]()
        p50 = p95 = 0.0  # over all queries at the last size: the judged figures
        for size in sizes:
            seconds = fill(database, filled, size, words, seen)
            print(f"{size:>10,} filled {size - filled:,} documents in {seconds:.1f} s", end="")
            print(f" ({(size - filled) / seconds:,.0f} documents/s, bulk)")
            filled = size
            timings = measure_queries(index, queries(words, per_kind, size // 500, seen))
            for kind, values in sorted(timings.items()):
                p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
                print(f"{size:>10,} {kind:<18} {p50:8.2f} {p95:8.2f}")
            every = [value for values in timings.values() for value in values]
            p50, p95 = percentile(every, 0.5), percentile(every, 0.95)
            last = size == sizes[-1]
            print(f"{size:>10,} {'all queries':<18} {p50:8.2f} {p95:8.2f}", end="  ")
            print(f"p50 {verdict(p50, P50_TARGET, judged and last)}", end="  ")
            print(f"p95 {verdict(p95, P95_TARGET, judged and last)}")
            updates = measure_updates(database, size, words, 20 if options.quick else 300)
            print(
                f"{size:>10,} content rows of one document replaced: "
                f"p50 {statistics.median(updates):.2f} ms, p95 {percentile(updates, 0.95):.2f} ms"
            )
        if database.engine.dialect.name == "sqlite":
            size_mb = (Path(folder) / "index.db").stat().st_size / 1e6
            print(f"index database at {filled:,} documents: {size_mb:,.0f} MB")
        else:
            print(f"search_parts at {filled:,} documents: {postgres_sizes(database)}")
        database.dispose()
        if options.database_url is None:
            count = 2_000 if options.quick else 20_000
            batch, trigger, none = measure_name_rows(url_for, count, words)
            print(
                f"catalogue {count:,} documents: {batch:.1f} µs/document with name rows "
                f"({batch / none:.2f}x), {trigger:.1f} with a row trigger ({trigger / none:.2f}x), "
                f"{none:.1f} without"
            )
    print(f"load average at the end: {load_average()}")
    failed = judged and (p50 > P50_TARGET.limit or p95 > P95_TARGET.limit)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
