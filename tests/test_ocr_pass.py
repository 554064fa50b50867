"""OCR as a second pass (issue 26, items 1-3; DESIGN D34), on real processes and SQLite.

The defect: a scanned PDF was served ``ready`` with empty pages and a text/plain of one
byte, and a picture was only its bytes. Now the first pass makes the document ready at
once and marks it ``ocr: pending``; the OCR pass runs after every cheaper conversion,
or at once for a read that asks, and replaces the formats, facts and search rows. A pass
that fails leaves the first pass's formats standing; OCR turned off or missing says so.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from docshelf.app.runtime import Runtime
from docshelf.storage.models import Document, DocumentState, OcrState
from tests.support.runtimes import open_runtime
from tests.support.scans import NEEDS_TESSERACT, image_pdf, png, text_picture
from tests.support.schema import validate
from tests.support.servers import MODERN, RawClient, child_env, run_docshelf, serve

pytestmark = NEEDS_TESSERACT
DOCUMENT = "dev.docshelf/document"
SCAN_URI = "docshelf://shelf/scan.pdf"
LINES = [
    "The zanzibarine ledger of the harbour",
    "lists every crate that came ashore",
    "between March and November last year.",
]


def _shelf(tmp_path: Path, notes: int = 0) -> tuple[Path, Path]:
    """A shelf with a two-page scan (pictures of :data:`LINES`, no text layer), and
    ``notes`` Markdown files larger than it."""
    shelf, data = tmp_path / "shelf", tmp_path / "data"
    shelf.mkdir()
    (shelf / "scan.pdf").write_bytes(image_pdf([text_picture([LINES])] * 2))
    filler = "Plain words of a note, typed and searchable. " * 2000
    for number in range(notes):
        (shelf / f"note-{number}.md").write_text(f"# Note {number}\n\n{filler}\n")
    return shelf, data


def _text(runtime: Runtime, uri: str, mime_type: str) -> str:
    record = runtime.catalog.get(uri)
    assert record is not None
    [variant] = [v for v in record.derived if v.mime_type == mime_type and v.built]
    assert variant.store_key is not None
    return runtime.store.get(variant.store_key).decode()


def _read(client: RawClient, uri: str) -> dict[str, Any]:
    answer = client.modern("resources/read", {"uri": uri}).json()
    assert "result" in answer, answer
    validate(MODERN, "ReadResourceResult", answer["result"])
    return answer["result"]


def _content(result: dict[str, Any], mime_type: str) -> dict[str, Any]:
    return next(c for c in result["contents"] if c["mimeType"] == mime_type)


def test_a_scan_is_ready_at_once_and_its_ocr_pass_runs_after_every_cheaper_conversion(
    tmp_path: Path,
) -> None:
    """The scan is the smallest file, so the queue takes it first; its text comes only
    from the OCR pass, which waits until every note is converted."""
    shelf, data = _shelf(tmp_path, notes=4)
    indexed = run_docshelf("index", "--root", str(shelf), "--data-dir", str(data))
    assert indexed.returncode == 0, indexed.stderr
    runtime = open_runtime(shelf, data)
    try:
        scan = runtime.catalog.get(SCAN_URI)
        assert scan is not None and scan.state == DocumentState.READY
        assert scan.ocr == OcrState.DONE
        assert scan.ocr_facts["pages"] == [1, 2]
        assert 0.5 < scan.ocr_facts["meanConfidence"] <= 1
        markdown = _text(runtime, SCAN_URI, "text/markdown")
        assert "zanzibarine ledger" in markdown and markdown.count("zanzibarine") == 2
        assert "lists every crate" in _text(runtime, SCAN_URI, "text/plain")
        notes = [runtime.catalog.get(f"docshelf://shelf/note-{n}.md") for n in range(4)]
        with runtime.database.session() as session:
            when = {d.path: d.indexed_at for d in session.query(Document)}
        assert all(n is not None for n in notes)
        assert when["scan.pdf"] > max(when[f"note-{n}.md"] for n in range(4)), when
        assert runtime.builder.ocr_backlog() == 0
    finally:
        runtime.close()


def test_a_read_of_a_scan_waiting_for_ocr_runs_its_pass_now_and_meta_says_so(
    tmp_path: Path,
) -> None:
    """A ``--no-index`` replica has no background queue: the read asks for the OCR pass,
    waits for it, and answers with its text; search then finds the scan's words and
    ``_meta`` names the state, the pages and the mean confidence."""
    shelf, data = _shelf(tmp_path)
    first_pass = run_docshelf(
        "index", "--root", str(shelf), "--data-dir", str(data), env=child_env(DOCSHELF_OCR="0")
    )
    assert first_pass.returncode == 0, first_pass.stderr
    runtime = open_runtime(shelf, data)
    runtime.builder.apply_ocr_settings()  # OCR is on here: the scan waits for its pass
    runtime.close()
    with serve(shelf, data, "--no-index", env=child_env(DOCSHELF_READ_WAIT="120")) as server:
        client = RawClient(server.url)
        listed = client.modern("resources/list", {}).json()["result"]
        validate(MODERN, "ListResourcesResult", listed)
        [entry] = [r for r in listed["resources"] if r["uri"] == SCAN_URI]
        assert entry["_meta"][DOCUMENT]["ocr"] == {"state": "pending"}
        result = _read(client, SCAN_URI)
        markdown = _content(result, "text/markdown")
        assert "zanzibarine ledger" in markdown["text"]
        meta = markdown["_meta"][DOCUMENT]["ocr"]
        assert meta["state"] == "done" and meta["pages"] == [1, 2], meta
        assert 0.5 < meta["meanConfidence"] <= 1
        page = _content(_read(client, f"{SCAN_URI}?pages=2"), "text/markdown")["text"]
        assert "lists every crate" in page and "<!-- page 1 -->" not in page
        hits = client.modern(
            "tools/call",
            {"name": "search_documents", "arguments": {"query": "zanzibarine"}},
            headers={"Mcp-Name": "search_documents"},
        ).json()["result"]["structuredContent"]["hits"]
        assert SCAN_URI in {hit["documentUri"] for hit in hits}
        client.close()
        assert "Traceback" not in server.log()


def test_ocr_turned_off_says_so_and_turning_it_on_reads_the_pages(tmp_path: Path) -> None:
    """``DOCSHELF_OCR=0``: the scan is ready with what its text layer gives (nothing) and
    ``_meta.ocr`` says OCR is off; the next pass with OCR on reads it."""
    shelf, data = _shelf(tmp_path)
    off = run_docshelf(
        "index", "--root", str(shelf), "--data-dir", str(data), env=child_env(DOCSHELF_OCR="0")
    )
    assert off.returncode == 0, off.stderr
    with serve(shelf, data, "--no-index", env=child_env(DOCSHELF_OCR="0")) as server:
        client = RawClient(server.url)
        result = client.modern("resources/metadata", {"uri": SCAN_URI}).json()["result"]
        meta = result["metadata"][0]["_meta"][DOCUMENT]
        assert meta["state"] == "ready"
        assert meta["ocr"] == {
            "state": "off",
            "pages": [1, 2],
            "note": "OCR is turned off (DOCSHELF_OCR=0)",
        }
        assert "zanzibarine" not in _content(_read(client, SCAN_URI), "text/markdown")["text"]
        client.close()
    on = run_docshelf("index", "--root", str(shelf), "--data-dir", str(data))
    assert on.returncode == 0, on.stderr
    runtime = open_runtime(shelf, data)
    try:
        scan = runtime.catalog.get(SCAN_URI)
        assert scan is not None and scan.ocr == OcrState.DONE
        assert "zanzibarine" in _text(runtime, SCAN_URI, "text/markdown")
    finally:
        runtime.close()


def test_a_picture_nothing_can_ocr_here_is_listed_with_the_reason(tmp_path: Path) -> None:
    """Languages the engine has no model for: OCR is unavailable, and says why."""
    shelf, data = tmp_path / "shelf", tmp_path / "data"
    shelf.mkdir()
    (shelf / "sign.png").write_bytes(png(text_picture([["Harbour master office"]])))
    env = child_env(DOCSHELF_OCR_LANGUAGES="tlh")
    indexed = run_docshelf("index", "--root", str(shelf), "--data-dir", str(data), env=env)
    assert indexed.returncode == 0, indexed.stderr
    with serve(shelf, data, "--no-index", env=env) as server:
        client = RawClient(server.url)
        result = client.modern("resources/metadata", {"uri": "docshelf://shelf/sign.png"}).json()[
            "result"
        ]
        meta = result["metadata"][0]["_meta"][DOCUMENT]["ocr"]
        assert meta["state"] == "unavailable" and "tlh" in meta["note"], meta
        client.close()


def test_an_ocr_pass_that_fails_leaves_the_first_pass_standing(tmp_path: Path) -> None:
    """A worker that dies in the middle of the OCR pass (killed, as the memory cap or the
    OOM killer would): the document keeps its first-pass formats and search rows, stays
    ``ready``, and ``ocr`` is ``failed`` with the reason."""
    shelf, data = _shelf(tmp_path)
    first_pass = run_docshelf(
        "index", "--root", str(shelf), "--data-dir", str(data), env=child_env(DOCSHELF_OCR="0")
    )
    assert first_pass.returncode == 0, first_pass.stderr
    runtime = open_runtime(shelf, data)
    try:
        scan = runtime.catalog.get(SCAN_URI)
        assert scan is not None and scan.ocr == OcrState.OFF
        before = sorted(v.store_key or "" for v in scan.derived if v.built)
        runtime.builder.start()  # OCR is on here: the queue takes the scan's pass
        deadline = time.monotonic() + 60
        while "scan.pdf" not in runtime.builder.working_on():
            assert time.monotonic() < deadline, "the OCR pass never started"
            time.sleep(0.01)
        for worker in list(runtime.builder.pool._live):
            os.kill(worker.process.pid, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while (record := runtime.catalog.get(SCAN_URI)) and record.ocr == OcrState.PENDING:
            assert time.monotonic() < deadline, "the failed pass was never recorded"
            time.sleep(0.05)
        assert record is not None and record.state == DocumentState.READY
        assert record.ocr == OcrState.FAILED
        assert record.ocr_facts["note"].startswith("error: the conversion worker died")
        assert sorted(v.store_key or "" for v in record.derived if v.built) == before
        assert all(runtime.store.get(key) for key in before)  # still stored
    finally:
        runtime.close()


@pytest.fixture(autouse=True)
def _ocr_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The in-process runtimes here read the OCR settings from this process's environment."""
    for name in ("DOCSHELF_OCR", "DOCSHELF_OCR_LANGUAGES", "DOCSHELF_OCR_PAGE_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
