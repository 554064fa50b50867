"""The indexer on real SQLite files and real folders (DESIGN D6, D7)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from docshelf.app.runtime import Runtime
from docshelf.storage.models import DocumentState
from tests.support.paths import CORPUS_PDF, NEEDS_SHARED
from tests.support.runtimes import open_runtime
from tests.support.servers import child_env, run_docshelf

SAMPLE_FILES = {
    "guides/field-guide.md",
    "notes.txt",
    "data.json",
    "table.csv",
    "page.html",
    "Straße plan.md",
    "papers/pdflatex-4-pages.pdf",
    "papers/libreoffice-writer-password.pdf",
    "papers/broken.pdf",
}


@pytest.fixture
def runtime(sample_shelf: Path, tmp_path: Path, database_url: str) -> Iterator[Runtime]:
    rt = open_runtime(sample_shelf, tmp_path / "data", database_url=database_url)
    yield rt
    rt.close()


@pytest.mark.sqlite_only
def test_sqlite_runs_in_wal_mode_with_foreign_keys(runtime: Runtime, tmp_path: Path) -> None:
    with runtime.database.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 10_000
    tables = (
        sqlite3.connect(tmp_path / "data" / "docshelf.db")
        .execute("select name from sqlite_master where type='table'")
        .fetchall()
    )
    assert {"documents", "representations", "alembic_version"} <= {t[0] for t in tables}


def test_first_pass_records_every_file_with_mime_title_and_hash(
    runtime: Runtime, sample_shelf: Path
) -> None:
    report = runtime.index()
    assert report.seen == 9 and report.added == 9 and report.removed == 0
    records = {r.path: r for r in runtime.catalog.page(None, 100)[0]}
    assert set(records) == SAMPLE_FILES
    assert records["guides/field-guide.md"].mime_type == "text/markdown"
    assert records["guides/field-guide.md"].title == "Field Guide"
    assert records["data.json"].mime_type == "application/json"
    assert records["table.csv"].mime_type == "text/csv"
    assert records["page.html"].mime_type == "text/html"
    assert records["page.html"].title == "A page"
    assert records["notes.txt"].title == "notes.txt"  # no heading: the file name
    assert records["papers/pdflatex-4-pages.pdf"].page_count == 4
    import hashlib

    assert (
        records["notes.txt"].sha256
        == hashlib.sha256((sample_shelf / "notes.txt").read_bytes()).hexdigest()
    )


def test_broken_and_encrypted_pdfs_are_listed_with_the_reason(runtime: Runtime) -> None:
    report = runtime.index()
    assert {e.path: e.reason for e in report.errors} == {
        "papers/broken.pdf": "corrupt",
        "papers/libreoffice-writer-password.pdf": "encrypted",
    }
    encrypted = runtime.catalog.get("docshelf://shelf/papers/libreoffice-writer-password.pdf")
    assert encrypted is not None and encrypted.state == DocumentState.FAILED
    assert encrypted.error_reason == "encrypted" and encrypted.derived == ()


def test_second_pass_skips_unchanged_files(runtime: Runtime) -> None:
    runtime.index()
    again = runtime.index()
    assert again.unchanged == again.seen == 9
    assert again.added == again.changed == again.removed == 0
    assert not again.changes


def test_touched_but_identical_file_is_not_reconverted(
    runtime: Runtime, sample_shelf: Path
) -> None:
    runtime.index()
    before = runtime.catalog.get("docshelf://shelf/notes.txt")
    assert before is not None
    stored = {v.store_key: runtime.store.root / v.store_key for v in before.derived if v.store_key}
    written = {key: path.stat().st_mtime_ns for key, path in stored.items()}
    target = sample_shelf / "notes.txt"
    os.utime(target, ns=(10**18, 10**18))  # 2001-09-09
    report = runtime.index()
    # The catalog cannot know a touched file is identical without reading it: it queues it,
    # and the builder, finding the same bytes and converter, converts nothing.
    assert report.changed == 1 and report.unchanged == 8
    record = runtime.catalog.get("docshelf://shelf/notes.txt")
    assert record is not None and record.modified_at.year == 2001
    assert record.state == "ready" and record.derived == before.derived
    assert {key: path.stat().st_mtime_ns for key, path in stored.items()} == written


def test_changed_added_and_removed_files_are_followed(runtime: Runtime, sample_shelf: Path) -> None:
    runtime.index()
    (sample_shelf / "notes.txt").write_text("New notes.\n")
    (sample_shelf / "table.csv").unlink()
    (sample_shelf / "fresh.md").write_text("# Fresh\n")
    report = runtime.index()
    assert (report.added, report.changed, report.removed) == (1, 1, 1)
    assert report.changes.added == {"docshelf://shelf/fresh.md"}
    assert report.changes.removed == {"docshelf://shelf/table.csv"}
    assert report.changes.changed == {"docshelf://shelf/notes.txt"}
    assert runtime.catalog.get("docshelf://shelf/table.csv") is None
    notes = runtime.catalog.get("docshelf://shelf/notes.txt")
    assert notes is not None and notes.size == len("New notes.\n")


def test_index_survives_a_restart(sample_shelf: Path, tmp_path: Path, database_url: str) -> None:
    first = open_runtime(sample_shelf, tmp_path / "data", database_url=database_url)
    first.index()
    first.close()
    second = open_runtime(sample_shelf, tmp_path / "data", database_url=database_url)
    try:
        report = second.index()
        assert report.unchanged == 9 and second.catalog.count() == 9
    finally:
        second.close()


def test_symlink_leaving_the_shelf_is_not_indexed(
    sample_shelf: Path, tmp_path: Path, database_url: str
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("outside")
    (sample_shelf / "escape.txt").symlink_to(secret)
    (sample_shelf / "inside.txt").symlink_to(sample_shelf / "notes.txt")
    rt = open_runtime(sample_shelf, tmp_path / "data", database_url=database_url)
    try:
        rt.index()
        assert rt.catalog.get("docshelf://shelf/escape.txt") is None
        assert rt.catalog.get("docshelf://shelf/inside.txt") is not None
    finally:
        rt.close()


@NEEDS_SHARED
def test_the_whole_corpus_indexes_and_reports_sizes(tmp_path: Path, database_url: str) -> None:
    shelf = tmp_path / "corpus"
    shutil.copytree(CORPUS_PDF, shelf)
    rt = open_runtime(shelf, tmp_path / "data", database_url=database_url, workers=2)
    try:
        report = rt.index()
        expected = {
            Path(e["path"]).name: e["pages"]
            for e in json.loads((CORPUS_PDF / "files.json").read_text())["data"]
        }
        pdfs = sorted(p.name for p in shelf.glob("*.pdf"))
        assert report.seen == len(pdfs) + 2  # files.json and LICENSE are documents too
        for name in pdfs:
            record = rt.catalog.get(f"docshelf://corpus/{name}")
            assert record is not None, name
            assert record.size == (shelf / name).stat().st_size
            if record.error_reason is None:
                assert record.page_count == expected[name], name
        assert {e.path for e in report.errors} == {"libreoffice-writer-password.pdf"}
    finally:
        rt.close()


def test_migrations_downgrade_and_upgrade_again(tmp_path: Path) -> None:
    from alembic import command

    from docshelf.storage.database import Database, alembic_config

    database = Database(f"sqlite:///{tmp_path / 'm.db'}")
    database.upgrade()
    command.downgrade(alembic_config(database.engine), "base")
    with database.engine.connect() as connection:
        names = {
            r[0]
            for r in connection.exec_driver_sql("select name from sqlite_master where type='table'")
        }
    assert "documents" not in names
    database.upgrade()
    database.dispose()


def test_a_path_too_long_for_a_uri_is_reported_and_the_rest_indexed(
    tmp_path: Path, database_url: str
) -> None:
    """A URI over MAX_URI_LENGTH (PostgreSQL's btree entry cap is 2704 bytes) is refused with
    a clear error instead of failing the whole pass."""
    import random

    shelf = tmp_path / "shelf"
    # ~2.9 KB of path that does not compress (PostgreSQL compresses index entries)
    deep = shelf.joinpath(*(random.Random(n).randbytes(115).hex() for n in range(12)))
    deep.mkdir(parents=True)
    (deep / "deep.txt").write_text("deep\n")
    (shelf / "short.txt").write_text("short\n")
    runtime = open_runtime(shelf, tmp_path / "data", database_url=database_url)
    try:
        report = runtime.index()
        assert runtime.catalog.count() == 1
        assert [(e.reason, e.path.endswith("deep.txt")) for e in report.errors] == [
            ("path_too_long", True)
        ]
        assert "over 2048" in report.errors[0].message
    finally:
        runtime.close()


def test_files_detected_under_an_older_rule_are_detected_again(
    runtime: Runtime, sample_shelf: Path
) -> None:
    """A new detection rule re-types unchanged files (issue 16.7: Markdown listed as JS)."""
    from sqlalchemy import update

    from docshelf.storage.models import Document

    runtime.index()
    with runtime.database.session() as session:
        session.execute(
            update(Document)
            .where(Document.path == "guides/field-guide.md")
            .values(mime_type="application/javascript", detection=1)
        )
        session.execute(update(Document).where(Document.path == "notes.txt").values(detection=1))
    report = runtime.index()
    assert report.changes.changed == {"docshelf://shelf/guides/field-guide.md"}
    assert report.unchanged == 8  # notes.txt: the new rule agrees, nothing to rebuild
    guide = runtime.catalog.get("docshelf://shelf/guides/field-guide.md")
    assert guide is not None and guide.mime_type == "text/markdown" and guide.state == "ready"


def test_files_another_process_catalogued_meanwhile_are_one_warning_line_not_a_traceback(
    sample_shelf: Path, tmp_path: Path, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 24 item 8: two processes catalogue the same new files — here ``docshelf index``
    runs to its end while this process is between reading what the index knows and
    committing its batch. The insert of rows the other process wrote first is a race the
    pass handles: it reads those rows again and commits what is still to do, saying so in
    one WARNING line (no ERROR, no traceback), and each file is in the index once."""
    runtime = open_runtime(sample_shelf, tmp_path / "data", database_url=database_url)
    other: list[subprocess.CompletedProcess[str]] = []

    def meanwhile(done: int, total: int) -> None:
        if not other:  # the first file of the first batch: known rows read, none written
            other.append(
                run_docshelf(
                    "index",
                    "--root",
                    str(sample_shelf),
                    "--data-dir",
                    str(tmp_path / "data"),
                    env=child_env(DOCSHELF_DATABASE_URL=database_url),
                )
            )

    try:
        with caplog.at_level(logging.INFO, logger="docshelf"):
            report = runtime.indexer.reconcile(progress=meanwhile)
        assert other[0].returncode == 0, other[0].stderr
        said = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert [(r.levelname, r.exc_info) for r in said] == [("WARNING", None)], caplog.text
        line = said[0].getMessage()
        assert "\n" not in line and "another process" in line
        # The other process's rows stand; this pass found them current.
        assert report.seen == 9 and report.added == 0 and report.unchanged == 9
        records = runtime.catalog.page(None, 100)[0]
        assert sorted(r.path for r in records) == sorted(SAMPLE_FILES)
    finally:
        runtime.close()


def test_an_unsupported_file_is_converted_once_a_converter_reads_its_type(
    runtime: Runtime, sample_shelf: Path
) -> None:
    """Issue 25: a file catalogued when nothing read its type (state ``unsupported``, as
    every .pptx was before) is queued on the next pass of a docshelf that reads it."""
    from sqlalchemy import update

    from docshelf.storage.models import Document

    runtime.index()
    with runtime.database.session() as session:  # as an older docshelf left it
        session.execute(
            update(Document)
            .where(Document.path == "notes.txt")
            .values(
                state=DocumentState.UNSUPPORTED,
                converter=None,
                error_reason="unsupported",
                error_message="no converter for text/plain",
            )
        )
    report = runtime.index()
    assert report.changes.changed == {"docshelf://shelf/notes.txt"}
    assert report.unsupported == 0
    notes = runtime.catalog.get("docshelf://shelf/notes.txt")
    assert notes is not None and notes.state == DocumentState.READY
    assert notes.error_reason is None and notes.derived


def test_a_file_its_converter_finds_unreadable_is_unsupported_once(
    runtime: Runtime, sample_shelf: Path
) -> None:
    """Binary bytes under a text name: its converter says ``unsupported``; the pass counts
    it apart from failures, and the next pass leaves it alone (no conversion every pass)."""
    (sample_shelf / "blob.txt").write_bytes(b"\x00\x01\x02binary\x00" * 64)
    first = runtime.index()
    assert first.unsupported == 1 and "blob.txt" not in {e.path for e in first.errors}
    blob = runtime.catalog.get("docshelf://shelf/blob.txt")
    assert blob is not None and blob.state == DocumentState.UNSUPPORTED
    assert (blob.error_reason, blob.error_message) == (
        "unsupported",
        "binary data (NUL bytes) where text was expected",
    )
    again = runtime.index()
    assert not again.changes and again.unsupported == 1
