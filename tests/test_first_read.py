"""Nothing lost on a first read (issue "Nothing lost on a first read", items 1-3, 7, 8).

A format built on demand fails alone: a rendered PDF that times out or fails
leaves every other format, the search rows and the document's ``ready`` state as
they were, and the read says which format is missing and why. A read waits for a
format only up to ``DOCSHELF_READ_WAIT`` seconds, then answers with what exists;
the format goes on building and its subscribers hear when it lands. Parts of a
document still waiting for conversion are converted on demand like the whole
document. Every test reproduced its defect before the fix, on real processes,
real SQLite and the official SDK client.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import MCPDeprecationWarning
from mcp.client.subscriptions import ResourceUpdated
from sqlalchemy import event

from docshelf.app.runtime import Runtime
from docshelf.app.settings import Settings
from docshelf.storage.events import ChangeSet
from docshelf.storage.models import DocumentState
from tests.support.schema import validate
from tests.support.sdk import http_client, raw_metadata, raw_read
from tests.support.servers import (
    LEGACY,
    MODERN,
    NOT_FOUND,
    RawClient,
    child_env,
    run_docshelf,
    serve,
)
from tests.support.shelves import catalogued_only

DOCUMENT = "dev.docshelf/document"
OMITTED = "dev.docshelf/omitted"
DATA = Path(__file__).parent / "data"
HTML_TEXT = ["text/html", "text/markdown", "text/plain", "application/json"]


def _big_html(path: Path, rows: int = 6000) -> Path:
    """An HTML page whose text formats take a fraction of a second and whose rendered PDF
    takes many seconds (a long table: the renderer lays out every cell)."""
    body = "".join(
        f"<tr><td>row {i}</td><td>{'cell words ' * 6}</td><td>{i * 3}</td></tr>"
        for i in range(rows)
    )
    path.write_text(
        "<html><head><title>Quarterly ledger</title></head><body><h1>Ledger</h1>"
        f"<p>The zanzibarine ledger of every row.</p><table>{body}</table></body></html>"
    )
    return path


def _mime_types(result: dict[str, Any]) -> list[str]:
    return [c["mimeType"] for c in result["contents"]]


def _omitted(result: dict[str, Any]) -> dict[str, str]:
    return {o["mimeType"]: o["reason"] for o in result.get("_meta", {}).get(OMITTED, [])}


def _search(client: RawClient, query: str) -> list[str]:
    answer = client.modern(
        "tools/call",
        {"name": "search_documents", "arguments": {"query": query}},
        headers={"Mcp-Name": "search_documents"},
    )
    result = answer.json()["result"]
    validate(MODERN, "CallToolResult", result)
    return sorted({hit["documentUri"] for hit in result["structuredContent"]["hits"]})


# -- 1. a format that times out fails alone ------------------------------------------------------


def test_an_on_demand_pdf_that_times_out_fails_alone_and_the_document_stays_ready(
    tmp_path: Path,
) -> None:
    """The defect: index a large HTML page, serve it with DOCSHELF_CONVERT_TIMEOUT=1, read
    it once: the document turned ``failed/timeout`` and lost its text, Markdown and JSON
    rows and its search rows; the second read returned only the original."""
    shelf, data = tmp_path / "shelf", tmp_path / "data"
    shelf.mkdir()
    _big_html(shelf / "ledger.html")
    indexed = run_docshelf("index", "--root", str(shelf), "--data-dir", str(data))
    assert indexed.returncode == 0, indexed.stderr
    uri = "docshelf://shelf/ledger.html"
    env = child_env(DOCSHELF_CONVERT_TIMEOUT="1")
    with serve(shelf, data, env=env) as server:
        client = RawClient(server.url)
        for attempt in (1, 2):
            answer = client.modern("resources/read", {"uri": uri}).json()
            assert "result" in answer, answer
            validate(MODERN, "ReadResourceResult", answer["result"])
            assert _mime_types(answer["result"]) == HTML_TEXT, attempt
            reason = _omitted(answer["result"])["application/pdf"]
            assert reason.startswith("timeout: conversion took longer than 1 s"), reason
            assert answer["result"]["contents"][0]["_meta"][DOCUMENT]["state"] == "ready"
            assert "error" not in answer["result"]["contents"][0]["_meta"][DOCUMENT]
        metadata = client.modern("resources/metadata", {"uri": uri}).json()["result"]
        assert [m["mimeType"] for m in metadata["metadata"]] == HTML_TEXT
        assert _omitted(metadata)["application/pdf"].startswith("timeout:")
        assert _search(client, "zanzibarine") == [uri], "the search rows were kept"
        client.close()
        assert "Traceback" not in server.log()


def test_a_format_that_fails_is_recorded_alone_and_not_retried_on_every_read(
    tmp_path: Path,
) -> None:
    """The per-format outcome is in the index: a restart still knows the PDF timed out and
    serves every other format without trying again."""
    shelf, data = tmp_path / "shelf", tmp_path / "data"
    shelf.mkdir()
    _big_html(shelf / "ledger.html")
    indexed = run_docshelf("index", "--root", str(shelf), "--data-dir", str(data))
    assert indexed.returncode == 0, indexed.stderr
    runtime = Runtime(Settings(shelves=[str(shelf)], data_dir=data, workers=1, convert_timeout=1))
    runtime.open()
    try:
        record = runtime.catalog.get("docshelf://shelf/ledger.html")
        assert record is not None and record.state == DocumentState.READY
        assert runtime.builder.ensure(record.id, ["application/pdf"], timeout=60)
        record = runtime.catalog.get(record.uri)
        assert record is not None
        assert record.state == DocumentState.READY and record.error_reason is None
        assert sorted(v.mime_type for v in record.derived if v.built) == sorted(HTML_TEXT[1:])
        [failure] = record.format_errors
        assert (failure.mime_type, failure.reason) == ("application/pdf", "timeout")
        started = time.monotonic()
        assert runtime.builder.ensure(record.id, ["application/pdf"], timeout=60)
        assert time.monotonic() - started < 1, "a failed format is not retried on every read"
    finally:
        runtime.close()


@pytest.mark.anyio
@pytest.mark.parametrize("replica", [False, True], ids=["indexer", "replica"])
async def test_a_read_waits_only_until_the_read_deadline_and_subscribers_hear_when_the_format_lands(
    tmp_path: Path, replica: bool
) -> None:
    """DOCSHELF_READ_WAIT: the read answers with what exists and says the PDF is still being
    built; the build goes on (also in a ``--no-index`` replica, which has no background
    queue) and ``resources/updated`` announces it; the next read has it."""
    shelf, data = tmp_path / "shelf", tmp_path / "data"
    shelf.mkdir()
    _big_html(shelf / "ledger.html", rows=3000)
    indexed = run_docshelf("index", "--root", str(shelf), "--data-dir", str(data))
    assert indexed.returncode == 0, indexed.stderr
    uri = "docshelf://shelf/ledger.html"
    env = child_env(DOCSHELF_READ_WAIT="0.2")
    extra = ("--no-index",) if replica else ()
    with serve(shelf, data, *extra, env=env) as server:
        async with (
            http_client(server.url, MODERN) as client,
            client.listen(resource_subscriptions=[uri]) as subscription,
        ):
            first = await raw_read(client, uri)
            validate(MODERN, "ReadResourceResult", first)
            assert _mime_types(first) == HTML_TEXT
            assert _omitted(first)["application/pdf"].startswith("being built"), first["_meta"]
            with anyio.fail_after(120):
                async for event in subscription:
                    if isinstance(event, ResourceUpdated) and event.uri == uri:
                        break
            second = await raw_read(client, uri)
    validate(MODERN, "ReadResourceResult", second)
    assert _mime_types(second) == [*HTML_TEXT, "application/pdf"]
    assert OMITTED not in second.get("_meta", {})


# -- 2. parts of a pending document -------------------------------------------------------------


@pytest.fixture
def pending_shelf(tmp_path: Path) -> tuple[Path, Path]:
    shelf, data = tmp_path / "shelf", tmp_path / "data"
    shelf.mkdir()
    (shelf / "report.pdf").write_bytes((DATA / "pdf" / "pdflatex-4-pages.pdf").read_bytes())
    (shelf / "guide.md").write_text(
        "# Guide\n\nIntro.\n\n## Getting started\n\nInstall it first.\n\n## Later\n\nMore.\n"
    )
    catalogued_only(shelf, data)
    return shelf, data


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_a_part_of_a_pending_document_is_converted_on_demand(
    pending_shelf: tuple[Path, Path], era: str
) -> None:
    """The defect: ``?pages=2`` of a pending PDF answered "has no pages" and ``?section=`` of a
    pending Markdown file "it has no headings" (-32602 / -32002)."""
    shelf, data = pending_shelf
    with serve(shelf, data, "--no-index", formats_built=False) as server:
        client = RawClient(server.url)
        session = client.initialize() if era == LEGACY else ""

        def call(method: str, params: dict[str, Any]) -> dict[str, Any]:
            if era == LEGACY:
                return client.legacy(session, method, params).json()
            return client.modern(method, params).json()

        pages = call("resources/read", {"uri": "docshelf://shelf/report.pdf?pages=2"})
        assert "result" in pages, pages
        validate(era, "ReadResourceResult", pages["result"])
        assert pages["result"]["contents"][0]["_meta"][DOCUMENT]["part"]["pages"] == [2, 2]
        section = call(
            "resources/read", {"uri": "docshelf://shelf/guide.md?section=getting-started"}
        )
        assert "result" in section, section
        validate(era, "ReadResourceResult", section["result"])
        markdown = next(
            c for c in section["result"]["contents"] if c["mimeType"] == "text/markdown"
        )
        assert (
            markdown["text"].startswith("## Getting started") and "Install it" in markdown["text"]
        )
        # A part that does not exist is still not found, once the document is converted.
        missing = call("resources/read", {"uri": "docshelf://shelf/guide.md?section=nowhere"})
        assert missing["error"]["code"] == NOT_FOUND[era]
        assert (
            "its sections are: guide, getting-started, later" in missing["error"]["data"]["reason"]
        )
        client.close()


@pytest.mark.anyio
async def test_subscribing_to_a_part_of_a_pending_document_converts_it_and_hears_its_changes(
    pending_shelf: tuple[Path, Path],
) -> None:
    """The defect: subscribing to ``?section=`` of a pending document was -32002, so a soak's
    section subscriber heard 0 of 9 updates. Here the subscriber is on a replica and the
    edit is indexed by another process sharing the database."""
    shelf, data = pending_shelf
    part = "docshelf://shelf/guide.md?section=getting-started"
    updated = anyio.Event()
    heard: list[str] = []

    async def on_message(message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            heard.append(str(message.params.uri))
            updated.set()

    with serve(shelf, data, "--no-index", formats_built=False) as server:
        async with http_client(server.url, LEGACY, message_handler=on_message) as client:
            with pytest.warns(MCPDeprecationWarning):
                await client.subscribe_resource(part)  # no error: the document was converted
            await anyio.sleep(0.5)  # the SDK opens its GET stream in the background
            # (Converting it for the subscription was a change too: its stream may have
            # told it, if open in time. Only the edit's notification is counted.)
            heard.clear()
            updated = anyio.Event()
            guide = shelf / "guide.md"
            guide.write_text(guide.read_text().replace("Install it first.", "Install it now."))
            indexed = run_docshelf("index", "--root", str(shelf), "--data-dir", str(data))
            assert indexed.returncode == 0, indexed.stderr
            with anyio.fail_after(30):
                await updated.wait()
            again = await raw_read(client, part)
    assert heard == [part]
    validate(LEGACY, "ReadResourceResult", again)
    markdown = next(c for c in again["contents"] if c["mimeType"] == "text/markdown")
    assert "Install it now." in markdown["text"]


def test_a_read_that_needs_only_the_original_of_a_pending_document_converts_nothing(
    pending_shelf: tuple[Path, Path],
) -> None:
    """A desktop client's text-first default asks a Markdown note for its original alone:
    it is there, so the read answers at once and converts nothing."""
    shelf, data = pending_shelf
    env = child_env(DOCSHELF_DEFAULT_FEATURES="format=markdown,verbosity=compact")
    with serve(shelf, data, "--no-index", env=env, formats_built=False) as server:
        client = RawClient(server.url)
        uri = "docshelf://shelf/guide.md"
        read = client.modern("resources/read", {"uri": uri}).json()["result"]
        validate(MODERN, "ReadResourceResult", read)
        assert _mime_types(read) == ["text/markdown"]
        assert read["contents"][0]["text"].startswith("# Guide")
        metadata = client.modern("resources/metadata", {"uri": uri}).json()["result"]
        assert metadata["metadata"][0]["_meta"][DOCUMENT]["state"] == "pending"
        client.close()


# -- 3. an on-demand read is recorded when its worker finishes -----------------------------------


def test_an_on_demand_build_is_recorded_when_its_worker_finishes_not_at_the_next_poll(
    tmp_path: Path,
) -> None:
    """The builder's ``_wait`` cleared the wake event it shares with the background thread:
    when the thread was busy as the worker finished, it then slept its whole 5 s poll
    before recording, and the read waited with it. Many on-demand builds while the
    background queue is busy: none may wait for a poll."""
    shelf, data = tmp_path / "shelf", tmp_path / "data"
    shelf.mkdir()
    for number in range(400):
        (shelf / f"note-{number:03}.md").write_text(f"# Note {number}\n\n" + "Words. " * 40)
    runtime = Runtime(Settings(shelves=[str(shelf)], data_dir=data, workers=2))
    runtime.open()
    try:
        runtime.indexer.reconcile(wait=False)
        runtime.pool.start()
        runtime.builder.start()
        waits = []
        # The largest names are queued last: still pending when asked for.
        for number in range(399, 339, -1):
            record = runtime.catalog.get(f"docshelf://shelf/note-{number:03}.md")
            assert record is not None
            started = time.monotonic()
            runtime.builder.ensure(record.id, ["text/plain"], timeout=60)
            waits.append(time.monotonic() - started)
        slow = [round(w, 2) for w in waits if w > 4]
        assert not slow, f"{len(slow)} on-demand builds waited for the background poll: {slow}"
    finally:
        runtime.close()


# -- 8. a handled race is one warning line -------------------------------------------------------


def test_a_format_two_processes_record_at_once_is_one_warning_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two processes sharing the database build the same lazy PDF (one's read, the
    other's): the second to commit met the first's row (a duplicate key) and logged it at
    ERROR with a traceback, twice. It is one WARNING line, and the format is recorded."""
    shelf, data = tmp_path / "shelf", tmp_path / "data"
    shelf.mkdir()
    (shelf / "note.md").write_text("# Note\n\nWords to render.\n")
    indexed = run_docshelf("index", "--root", str(shelf), "--data-dir", str(data))
    assert indexed.returncode == 0, indexed.stderr
    one, other = (
        Runtime(Settings(shelves=[str(shelf)], data_dir=data, workers=1)) for _ in range(2)
    )
    one.open()
    other.open()
    try:
        record = one.catalog.get("docshelf://shelf/note.md")
        assert record is not None
        raced = threading.Event()

        def the_other_records_first(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
            # Between this process's read of the document and its write: the other one
            # records the same format and commits.
            if statement.lstrip().upper().startswith("UPDATE DOCUMENTS") and not raced.is_set():
                raced.set()
                other.builder.ensure(record.id, ["application/pdf"], timeout=120)

        event.listen(one.database.engine, "before_cursor_execute", the_other_records_first)
        with caplog.at_level(logging.WARNING):
            assert one.builder.ensure(record.id, ["application/pdf"], timeout=120)
        assert raced.is_set()
        assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
        [warning] = [r for r in caplog.records if "at the same time" in r.getMessage()]
        assert warning.levelno == logging.WARNING and warning.exc_info is None
        recorded = one.catalog.get(record.uri, fresh=True)
        assert recorded is not None
        assert [v.mime_type for v in recorded.derived if v.built][-1] == "application/pdf"
    finally:
        one.close()
        other.close()


# -- 7. one notification per change --------------------------------------------------------------


@pytest.mark.anyio
async def test_an_edit_sends_one_resources_updated_per_subscriber(tmp_path: Path) -> None:
    """The defect: every edit sent ``resources/updated`` twice, once when the catalog saw
    the change and again when its formats were built."""
    shelf, data = tmp_path / "shelf", tmp_path / "data"
    shelf.mkdir()
    note = shelf / "note.md"
    note.write_text("# Before\n\nOld words.\n")
    uri = "docshelf://shelf/note.md"
    with serve(shelf, data) as server:
        async with (
            http_client(server.url, MODERN) as client,
            client.listen(resource_subscriptions=[uri]) as subscription,
        ):
            heard: list[float] = []

            async def count() -> None:
                async for event in subscription:
                    if isinstance(event, ResourceUpdated) and event.uri == uri:
                        heard.append(time.monotonic())

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(count)
                note.write_text("# After\n\nNew words.\n")
                with anyio.fail_after(60):
                    while not heard:
                        await anyio.sleep(0.05)
                read = await raw_read(client, uri)
                metadata = await raw_metadata(client, uri)
                await anyio.sleep(3)  # long enough for any second notification to arrive
                tasks.cancel_scope.cancel()
    assert len(heard) == 1, f"{len(heard)} notifications for one edit"
    assert read["contents"][0]["text"] == "# After\n\nNew words.\n"
    assert metadata["metadata"][0]["_meta"][DOCUMENT]["state"] == "ready"


def test_touching_a_file_without_changing_it_sends_no_update(tmp_path: Path) -> None:
    """A new mtime with the same bytes is no change to the resource (DESIGN D7: unchanged
    hash → touch only): its subscribers are not told to read it again."""
    shelf, data = tmp_path / "shelf", tmp_path / "data"
    shelf.mkdir()
    note = shelf / "note.md"
    note.write_text("# Same\n\nSame words.\n")
    uri = "docshelf://shelf/note.md"
    runtime = Runtime(Settings(shelves=[str(shelf)], data_dir=data, workers=1))
    runtime.open()
    try:
        runtime.index()
        heard: list[ChangeSet] = []
        runtime.bus.relay_to(heard.append)
        stat = note.stat()
        os.utime(note, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
        runtime.index()
        touched = [c for c in heard if uri in c.changed]
        assert not touched, "a touch announced the document as changed"
        record = runtime.catalog.get(uri)
        assert record is not None and record.state == DocumentState.READY
    finally:
        runtime.close()


def test_a_format_failure_an_older_version_stored_on_the_document_is_tried_again(
    tmp_path: Path,
) -> None:
    """Before migration 0010 a failed lazy format was the ready document's own error, which
    hid every format it lacked; the upgrade drops such errors, so the format is tried again."""
    from alembic import command

    from docshelf.storage.database import Database, alembic_config

    shelf, data = tmp_path / "shelf", tmp_path / "data"
    shelf.mkdir()
    (shelf / "note.md").write_text("# Note\n\nWords.\n")
    indexed = run_docshelf("index", "--root", str(shelf), "--data-dir", str(data))
    assert indexed.returncode == 0, indexed.stderr
    database = Database(f"sqlite:///{data / 'docshelf.db'}")
    command.downgrade(alembic_config(database.engine), "0009")
    with database.engine.begin() as connection:
        connection.exec_driver_sql(
            "UPDATE documents SET error_reason = 'timeout', "
            "error_message = 'conversion took longer than 120 s'"
        )
    database.dispose()
    runtime = Runtime(Settings(shelves=[str(shelf)], data_dir=data, workers=1))
    runtime.open()
    try:
        record = runtime.catalog.get("docshelf://shelf/note.md")
        assert record is not None and record.state == DocumentState.READY
        assert record.error_reason is None and record.format_errors == ()
        assert "application/pdf" in [v.mime_type for v in record.derived]
    finally:
        runtime.close()
