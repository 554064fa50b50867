"""PostgreSQL, the supported database for deployments that outgrow one machine (DESIGN D6, D10).

These run against the real server named by ``DOCSHELF_TEST_DATABASE_URL`` (``.ci/run``
starts one from Debian's packages) and skip, with that reason, without it. Each test
gets a database of its own (``tests/support/databases.py``). The indexer's suite
(``test_indexer.py``) runs on PostgreSQL too, through the ``database_url`` fixture.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import anyio
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from docshelf.storage.catalog import Catalog
from docshelf.storage.database import Database, alembic_config
from docshelf.storage.models import FOLDER_INDEX, Base, Document, DocumentState, Representation
from tests.support.sdk import http_client
from tests.support.servers import MODERN, serve
from tests.support.servers import child_env as clean_env
from tests.support.shelves import make_shelf

# Big values the schema must hold: a 5 GiB file and a nanosecond mtime both overflow int32.
FIVE_GIB = 5 * 1024**3
MTIME_NS = 1_764_000_000_123_456_789


def _document(uri: str, path: str, **fields: object) -> Document:
    now = datetime.now(UTC)
    values: dict[str, object] = {
        "shelf": "shelf",
        "path": path,
        "uri": uri,
        "name": path,
        "mime_type": "text/plain",
        "size": 1,
        "mtime_ns": 1,
        "sha256": "0" * 64,
        "title": path,
        "facts": {},
        "state": DocumentState.READY,
        "modified_at": now,
        "indexed_at": now,
    }
    values.update(fields)
    return Document(**values)


def _not_the_search_engines_own(
    obj: object, name: str | None, type_: str, reflected: bool, compare_to: object
) -> bool:
    # Alembic reflects a PostgreSQL index without its columns' collation: the folder index
    # is checked by its definition below instead. Migration 0017's indexes rank and filter
    # a search without reading every match (tests/test_search_postgres.py).
    return name not in {
        "tsv",
        "ix_search_parts_tsv",
        FOLDER_INDEX,
        "ix_search_parts_rank_keys",
        "ix_documents_path_prefix",
    }


def test_migrations_build_the_models_schema_and_go_down_and_up_again(postgres_url: str) -> None:
    database = Database(postgres_url)
    try:
        database.upgrade()
        with database.engine.connect() as connection:
            assert connection.dialect.name == "postgresql"
            # the migrations produce exactly what the ORM models describe, on PostgreSQL, apart from
            # the search engine's own generated tsvector column and its GIN index (migration 0007)
            # and the indexes that rank and filter without reading every match (0017)
            context = MigrationContext.configure(
                connection, opts={"include_object": _not_the_search_engines_own}
            )
            assert compare_metadata(context, Base.metadata) == []
            # Migration 0014: folders are byte-order ranges whatever the database's collation.
            definition = connection.scalar(
                text("SELECT indexdef FROM pg_indexes WHERE indexname = :name"),
                {"name": FOLDER_INDEX},
            )
            assert definition is not None and definition.endswith('(shelf, path COLLATE "C")')
            head = ScriptDirectory.from_config(alembic_config(database.engine)).get_current_head()
            assert MigrationContext.configure(connection).get_current_revision() == head
        columns = {c["name"]: c["type"] for c in inspect(database.engine).get_columns("documents")}
        assert str(columns["facts"]) == "JSON"
        assert str(columns["size"]) == str(columns["mtime_ns"]) == "BIGINT"
        assert (
            str(columns["modified_at"]) == "TIMESTAMP" and columns["modified_at"].timezone is True
        )
        assert str(columns["uri"]) == "VARCHAR(8192)"
        command.downgrade(alembic_config(database.engine), "base")
        assert set(inspect(database.engine).get_table_names()) == {"alembic_version"}
        database.upgrade()
        assert {"documents", "representations"} <= set(inspect(database.engine).get_table_names())
    finally:
        database.dispose()


def test_big_numbers_json_and_time_zones_round_trip(postgres_url: str) -> None:
    database = Database(postgres_url)
    try:
        database.upgrade()
        modified = datetime(2026, 3, 29, 1, 30, tzinfo=timezone(timedelta(hours=-7)))
        facts = {
            "outline": [{"title": "Straße ✓", "page": 1}],
            "pages": 117,
            "ratio": 0.5,
            "none": None,
        }
        uri = "docshelf://shelf/Stra%C3%9Fe%20plan.md"
        with database.session() as session:
            doc = _document(
                uri,
                "Straße plan.md",
                size=FIVE_GIB,
                mtime_ns=MTIME_NS,
                facts=facts,
                modified_at=modified,
            )
            doc.representations.append(
                Representation(
                    mime_type="application/pdf",
                    size=FIVE_GIB + 1,
                    sha256="1" * 64,
                    store_key="k",
                    converter="test",
                    converter_version="1",
                )
            )
            session.add(doc)
        record = Catalog(database).get(uri)
        assert record is not None
        pdf = next(v for v in record.derived if v.mime_type == "application/pdf")
        assert record.size == FIVE_GIB and pdf.size == FIVE_GIB + 1
        assert record.modified_at == modified and record.modified_at.utcoffset() == timedelta(0)
        with database.session() as session:
            stored = session.query(Document).one()
            assert stored.mtime_ns == MTIME_NS and stored.facts == facts
    finally:
        database.dispose()


def test_catalog_pages_visit_every_document_once_in_order(postgres_url: str) -> None:
    database = Database(postgres_url)
    try:
        database.upgrade()
        paths = [
            "a.md",
            "B.md",
            "b.md",
            "Straße.md",
            "z/0.txt",
            "ä.txt",
            "10.txt",
            "9.txt",
            "_x.md",
            "~y",
        ]
        with database.session() as session:
            session.add_all(_document(f"docshelf://shelf/{p}", p) for p in paths)
        catalog, seen, cursor = Catalog(database), [], None
        while True:
            page, more = catalog.page(cursor, 3)
            seen += [r.uri for r in page]
            if not more:
                break
            cursor = page[-1].uri
        assert sorted(seen) == sorted(f"docshelf://shelf/{p}" for p in paths)
        assert len(seen) == len(set(seen)) == len(paths)
    finally:
        database.dispose()


def test_an_indexer_and_a_read_replica_share_postgresql(tmp_path: Path, postgres_url: str) -> None:
    """DESIGN D10: ``docshelf index`` fills PostgreSQL; ``docshelf serve --no-index`` serves it.

    Both are configured as ``compose.postgres.yml`` does: through
    ``DOCSHELF_*`` variables only, sharing the data dir (the representation store).
    """
    import subprocess
    import sys

    shelf = make_shelf(tmp_path / "shelf")
    data = tmp_path / "data"
    env = clean_env(
        DOCSHELF_DATABASE_URL=postgres_url, DOCSHELF_SHELVES=str(shelf), DOCSHELF_DATA_DIR=str(data)
    )
    indexed = subprocess.run(
        [sys.executable, "-m", "docshelf.app", "index"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert indexed.returncode == 0, indexed.stderr
    assert "indexed 9 files: 9 added" in indexed.stdout
    assert not (data / "docshelf.db").exists()  # the index is in PostgreSQL, not SQLite

    async def read_through_the_replica(url: str) -> tuple[set[str], list[str]]:
        with anyio.fail_after(60):
            async with http_client(url, MODERN) as client:
                names = {r.name for r in (await client.list_resources()).resources}
                read = await client.read_resource("docshelf://shelf/data.json")
        return names, [c.mime_type or "" for c in read.contents]

    with serve(shelf, data, "--no-index", env=env) as replica:
        names, mime_types = anyio.run(read_through_the_replica, replica.url)
    assert {"notes.txt", "data.json", "papers/pdflatex-4-pages.pdf"} <= names
    assert mime_types[0] == "application/json" and "text/markdown" in mime_types
