"""Honest search (issue 28, item 4): an answer says what it could not read.

The defect: "a search right after start on a 2,500-note shelf returns "hits": [] for
words that are in every note, because content rows are built after the catalog — with
nothing in the answer saying so." Now every ``search_documents`` answer carries, within
its own filters, how many documents are still waiting for conversion (``pending``),
how many no conversion made searchable (``unsearchable``: failed or unsupported) and
how many wait for OCR (``ocrPending``), with a sentence saying so in both the Markdown
and the JSON shapes (content negotiation SEP, "Tool Results"); pending documents are
still found by their titles and paths.

Real servers on 127.0.0.1 in both eras, every answer validated against its era's
schema, and the storage count on both engines.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docshelf.app.mcp.context import MODERN as MODERN_ERA
from docshelf.app.mcp.context import RequestContext
from docshelf.app.mcp.params import CallToolParams
from docshelf.app.mcp.tools import ToolService
from docshelf.app.runtime import Runtime
from docshelf.app.settings import Settings
from docshelf.storage.completeness import Completeness, completeness
from docshelf.storage.search import Filters, SearchIndex
from tests.support.paths import FIXTURE_PDF
from tests.support.scans import NEEDS_TESSERACT, image_pdf, text_picture
from tests.support.schema import validate
from tests.support.servers import LEGACY, MODERN, RawClient, child_env, run_docshelf, serve
from tests.support.shelves import make_notes
from tests.support.tools import call_tool, features

SEARCH = "search_documents"
WORD = "lighthouse"  # in the body of every note, in no title or path


def text_of(result: dict[str, Any]) -> str:
    block = result["content"][0]
    assert block["type"] == "text"
    text: str = block["text"]
    return text


def pending_sentence(count: int) -> str:
    return (
        f"{count:,} documents are still waiting for conversion: until then a search finds "
        "them by title and path only; search again shortly."
    )


# --------------------------------------------------------------------------- #
# The defect, as reported
# --------------------------------------------------------------------------- #


def test_a_search_at_once_on_a_fresh_2500_note_shelf_says_how_many_notes_are_pending(
    tmp_path: Path,
) -> None:
    """Started as a user starts it, searched the moment the catalog is current: the
    answer may have no hits yet, but it says how many notes it could not read."""
    shelf = make_notes(tmp_path / "shelf", 2_500, word=WORD)
    with serve(shelf, tmp_path / "data", formats_built=False) as server:
        raw = RawClient(server.url)
        human = call_tool(raw, MODERN, SEARCH, {"query": WORD, "limit": 50})
        agent = call_tool(raw, LEGACY, SEARCH, {"query": WORD}, capabilities=features("agent"))
        raw.close()
    for result in (human, agent):
        structured = result["structuredContent"]
        pending = structured["pending"]
        # Right after start, conversion of 2,500 notes has barely begun.
        assert 0 < pending <= 2_500, structured
        assert structured["unsearchable"] == 0 and structured["ocrPending"] == 0
        assert structured["catalogComplete"] is True
        assert structured["notice"] == pending_sentence(pending)
        # Every note has the word: each hit is a converted note, each other note is pending.
        assert len({hit["documentUri"] for hit in structured["hits"]}) <= 2_500 - pending
    assert text_of(human).endswith("\n\n" + pending_sentence(human["structuredContent"]["pending"]))
    assert json.loads(text_of(agent)) == agent["structuredContent"]


# --------------------------------------------------------------------------- #
# Pending documents, counted within the filters and found by name
# --------------------------------------------------------------------------- #


@pytest.fixture(scope="module")
def unconverted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawClient]:
    """Two shelves of notes nobody converts (``--no-convert``: a search builds nothing), so
    every note stays pending: alpha has 20 (folder-0/ and folder-1/), beta 10."""
    base = tmp_path_factory.mktemp("unconverted")
    alpha = make_notes(base / "alpha", 20, word=WORD, folders=2)
    beta = make_notes(base / "beta", 10, word=WORD, folders=2)
    roots = [str(alpha), str(beta)]
    with serve(alpha, base / "data", "--no-convert", roots=roots, formats_built=False) as server:
        client = RawClient(server.url)
        yield client
        client.close()


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_no_hits_while_every_note_waits_says_so_in_markdown(
    unconverted: RawClient, era: str
) -> None:
    result = call_tool(unconverted, era, SEARCH, {"query": WORD})
    structured = result["structuredContent"]
    assert structured["hits"] == []
    assert structured["pending"] == 30
    assert text_of(result) == (
        f"No documents match '{WORD}'. Try fewer or other words, or a prefix*.\n\n"
        + pending_sentence(30)
    )


def test_the_json_shape_carries_the_same_sentence(unconverted: RawClient) -> None:
    result = call_tool(unconverted, MODERN, SEARCH, {"query": WORD}, features("format=json"))
    assert json.loads(text_of(result)) == result["structuredContent"]
    assert result["structuredContent"]["notice"] == pending_sentence(30)


@pytest.mark.parametrize(
    ("filters", "pending"),
    [
        ({"shelf": "beta"}, 10),
        ({"path_prefix": "folder-1/"}, 15),
        ({"shelf": "alpha", "path_prefix": "folder-1/"}, 10),
        ({"mime_type": "text/markdown"}, 30),
    ],
)
def test_pending_is_counted_within_the_search_filters(
    unconverted: RawClient, filters: dict[str, str], pending: int
) -> None:
    result = call_tool(unconverted, MODERN, SEARCH, {"query": WORD, **filters})
    assert result["structuredContent"]["pending"] == pending
    assert result["structuredContent"]["notice"] == pending_sentence(pending)


def test_a_filter_nothing_waits_in_says_nothing(unconverted: RawClient) -> None:
    result = call_tool(unconverted, MODERN, SEARCH, {"query": WORD, "mime_type": "application/pdf"})
    structured = result["structuredContent"]
    assert structured["pending"] == structured["unsearchable"] == structured["ocrPending"] == 0
    assert "notice" not in structured
    assert (
        text_of(result) == f"No documents match '{WORD}'. Try fewer or other words, or a prefix*."
    )


@pytest.mark.parametrize(
    ("query", "uri"),
    [
        ('"note 13"', "docshelf://alpha/folder-1/note-00013.md"),  # its title, "Note 13"
        ("00013", "docshelf://alpha/folder-1/note-00013.md"),  # a word of its path
    ],
    ids=["title", "path"],
)
def test_a_pending_document_is_found_by_its_title_and_path(
    unconverted: RawClient, query: str, uri: str
) -> None:
    result = call_tool(unconverted, MODERN, SEARCH, {"query": query, "shelf": "alpha"})
    [hit] = result["structuredContent"]["hits"]
    assert hit["uri"] == hit["documentUri"] == uri
    assert hit["heading"] is None  # the name row, not a page or section
    assert result["structuredContent"]["pending"] == 20


# --------------------------------------------------------------------------- #
# Documents no conversion made searchable
# --------------------------------------------------------------------------- #


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawClient]:
    """Five notes, a PDF that fails to convert and bytes no converter reads, all built."""
    base = tmp_path_factory.mktemp("converted")
    shelf = make_notes(base / "shelf", 5, word=WORD, folders=1)
    (shelf / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\ngarbage")
    (shelf / "blob.bin").write_bytes(bytes(range(256)) * 8)
    with serve(shelf, base / "data") as server:
        client = RawClient(server.url)
        yield client
        client.close()


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_failed_and_unsupported_documents_are_counted_as_unsearchable(
    converted: RawClient, era: str
) -> None:
    result = call_tool(converted, era, SEARCH, {"query": WORD})
    structured = result["structuredContent"]
    assert len(structured["hits"]) == 5
    assert structured["pending"] == 0 and structured["unsearchable"] == 2
    sentence = (
        "2 documents are not searched by content (conversion failed or no converter reads "
        "the type): a search finds them by title and path only."
    )
    assert structured["notice"] == sentence
    assert text_of(result).startswith(f"5 results for '{WORD}':\n\n")
    assert text_of(result).endswith(f"\n\n{sentence}")


def test_unsearchable_is_counted_within_the_filters(converted: RawClient) -> None:
    pdfs = call_tool(converted, MODERN, SEARCH, {"query": WORD, "mime_type": "application/pdf"})
    assert pdfs["structuredContent"]["unsearchable"] == 1
    assert pdfs["structuredContent"]["notice"] == (
        "1 document is not searched by content (conversion failed or no converter reads the "
        "type): a search finds it by title and path only."
    )
    notes = call_tool(converted, MODERN, SEARCH, {"query": WORD, "mime_type": "text/markdown"})
    assert notes["structuredContent"]["unsearchable"] == 0
    assert "notice" not in notes["structuredContent"]


# --------------------------------------------------------------------------- #
# Scanned pages waiting for OCR
# --------------------------------------------------------------------------- #


# Slow: three processes (docshelf index, a runtime, a replica) and an OCR engine.
@pytest.mark.slow
@NEEDS_TESSERACT
def test_a_scan_waiting_for_its_ocr_pass_is_counted(tmp_path: Path) -> None:
    """The first pass made the scan ready without the text of its pages; until the OCR
    pass runs (a ``--no-index`` replica on SQLite runs none in the background), a search
    says so."""
    shelf, data = tmp_path / "shelf", tmp_path / "data"
    shelf.mkdir()
    (shelf / "scan.pdf").write_bytes(image_pdf([text_picture([["A ledger of the harbour"]])]))
    first_pass = run_docshelf(
        "index", "--root", str(shelf), "--data-dir", str(data), env=child_env(DOCSHELF_OCR="0")
    )
    assert first_pass.returncode == 0, first_pass.stderr
    runtime = Runtime(Settings(shelves=[str(shelf)], data_dir=data, workers=1))
    runtime.open()
    runtime.builder.apply_ocr_settings()  # OCR is on here: the scan waits for its pass
    runtime.close()
    with serve(shelf, data, "--no-index") as server:
        raw = RawClient(server.url)
        result = call_tool(raw, MODERN, SEARCH, {"query": "ledger"})
        raw.close()
    structured = result["structuredContent"]
    assert structured["ocrPending"] == 1 and structured["pending"] == 0
    assert structured["notice"] == (
        "1 document has scanned pages waiting for OCR: the text on those pages is not searched yet."
    )


# --------------------------------------------------------------------------- #
# A catalog still being made
# --------------------------------------------------------------------------- #


def test_before_the_first_catalog_pass_ends_the_answer_says_the_catalog_is_incomplete(
    tmp_path: Path,
) -> None:
    """A fresh index whose first pass has not run: no file is catalogued, so no count of
    pending documents can say what is missing; the search's answer, and list_documents',
    say the catalog is not done."""
    shelf = make_notes(tmp_path / "shelf", 3, word=WORD)
    runtime = Runtime(Settings(shelves=[str(shelf)], data_dir=tmp_path / "data", workers=1))
    runtime.open()  # an empty index: nothing is catalogued until the pass runs
    try:
        tools = ToolService(runtime.resources, SearchIndex(runtime.database))
        context = RequestContext(MODERN_ERA, MODERN)
        params = CallToolParams(name=SEARCH, arguments={"query": WORD})
        result = tools.call(context, params)
        validate(LEGACY, "CallToolResult", result)  # as sent in 2025-11-25 (no resultType)
        structured = result["structuredContent"]
        assert structured["catalogComplete"] is False and structured["pending"] == 0
        assert structured["notice"] == (
            "The shelf is still being catalogued: files not catalogued yet are not searched at all."
        )
        # list_documents says the same of its listing.
        listed = tools.call(context, CallToolParams(name="list_documents", arguments={}))
        validate(LEGACY, "CallToolResult", listed)
        assert listed["structuredContent"] == {
            "documents": [],
            "catalogComplete": False,
            "total": 0,
        }
        assert listed["content"][0]["text"] == (
            "The shelf is still being catalogued: documents not catalogued yet are missing "
            "from this list; list again shortly.\n\n"
            "No documents match these arguments (sorted by path)."
        )
        runtime.indexer.reconcile()
        runtime.readiness.finish()
        after = tools.call(context, params)["structuredContent"]
        assert after["catalogComplete"] is True and after["pending"] == 3
        listed = tools.call(context, CallToolParams(name="list_documents", arguments={}))
        assert listed["structuredContent"]["catalogComplete"] is True
        assert listed["structuredContent"]["total"] == 3
    finally:
        runtime.close()


# --------------------------------------------------------------------------- #
# The count itself, on both engines
# --------------------------------------------------------------------------- #


def test_completeness_counts_within_filters_on_both_engines(
    tmp_path: Path, database_url: str
) -> None:
    shelf = make_notes(tmp_path / "shelf", 6, word=WORD, folders=2)
    shutil.copy(FIXTURE_PDF / "pdflatex-4-pages.pdf", shelf / "paper.pdf")
    (shelf / "broken.pdf").write_bytes(b"%PDF-1.7\ngarbage")
    settings = Settings(
        shelves=[str(shelf)], data_dir=tmp_path / "data", database_url=database_url, workers=1
    )
    runtime = Runtime(settings)
    runtime.open()
    try:
        runtime.indexer.reconcile()  # the catalog alone: every document pending
        database = runtime.database
        assert completeness(database) == Completeness(pending=8, unsearchable=0, ocr_pending=0)
        assert completeness(database, Filters(path_prefix="folder-1/")).pending == 3
        assert completeness(database, Filters(mime_type="application/pdf")).pending == 2
        assert completeness(database, Filters(shelf="elsewhere")).pending == 0
        # Found by the name rows the catalog wrote, before any conversion.
        [hit] = SearchIndex(database).search("00004")
        assert hit.document_uri == "docshelf://shelf/folder-0/note-00004.md"
        runtime.index()  # every format built: the broken PDF failed
        assert completeness(database) == Completeness(pending=0, unsearchable=1, ocr_pending=0)
        assert completeness(database, Filters(mime_type="text/markdown")).complete
        assert {h.document_uri for h in SearchIndex(database).search(WORD)} == {
            f"docshelf://shelf/folder-{n % 2}/note-{n:05}.md" for n in range(6)
        }
    finally:
        runtime.close()
