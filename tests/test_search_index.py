"""The full-text index (issue #10, DESIGN D19) on both engines: SQLite FTS5 and PostgreSQL.

Every test runs twice through the ``database_url`` fixture; the PostgreSQL variant
skips with the reason when ``DOCSHELF_TEST_DATABASE_URL`` is unset (``.ci/run``
sets it). The index is filled the way the product fills it: a real shelf, the
indexer's catalog pass (name rows, by trigger) and the format builder (content
rows, one per page or section).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from docshelf.app.runtime import Runtime
from docshelf.storage.models import DocumentState, SearchPart
from docshelf.storage.search import CONTENT_ROW, Filters, InvalidQuery, SearchHit, SearchIndex
from tests.support.paths import FIXTURE_PDF
from tests.support.runtimes import open_runtime

MANUAL = """# Operations manual

## Backups

Copy the database file while the server runs; write-ahead logging keeps it consistent.

## Reverse proxies

Put the server behind nginx and turn response buffering off for event streams.

## Café opening hours

The café on the ground floor serves espresso until noon.
"""


@pytest.fixture
def shelf(tmp_path: Path) -> Path:
    root = tmp_path / "shelf"
    (root / "Guides").mkdir(parents=True)
    (root / "Guides" / "operations.md").write_text(MANUAL)
    (root / "guides-archive").write_text("Old notes about nginx buffering from 2019.\n")
    (root / "papers").mkdir()
    shutil.copy(FIXTURE_PDF / "pdflatex-4-pages.pdf", root / "papers" / "four-pages.pdf")
    return root


@pytest.fixture
def runtime(shelf: Path, tmp_path: Path, database_url: str) -> Iterator[Runtime]:
    rt = open_runtime(shelf, tmp_path / "data", database_url=database_url)
    rt.index()
    yield rt
    rt.close()


def search(runtime: Runtime, query: str, **options: object) -> list[SearchHit]:
    return SearchIndex(runtime.database).search(query, **options)  # type: ignore[arg-type]


def uris(hits: list[SearchHit]) -> list[str]:
    return [hit.uri for hit in hits]


def content_rows(runtime: Runtime) -> int:
    with runtime.database.session() as session:
        count = select(func.count()).select_from(SearchPart).where(SearchPart.kind == CONTENT_ROW)
        return int(session.scalar(count) or 0)


def test_a_section_is_found_by_its_words_and_named_as_a_part(runtime: Runtime) -> None:
    hits = search(runtime, "buffering event streams")
    best = hits[0]
    assert best.uri == "docshelf://shelf/Guides/operations.md?section=reverse-proxies"
    assert best.heading == "Reverse proxies" and best.title == "Operations manual"
    assert best.mime_type == "text/markdown" and not best.partial
    # the snippet highlights what matched, in Markdown bold
    assert "**" in best.snippet and "buffering" in best.snippet.lower()


def test_a_pdf_hit_names_its_page(runtime: Runtime) -> None:
    hits = search(runtime, '"huardest gefburn"', filters=Filters(mime_type="application/pdf"))
    assert "docshelf://shelf/papers/four-pages.pdf?pages=2" in uris(hits)
    hits = search(runtime, "information", filters=Filters(mime_type="application/pdf"))
    assert all(hit.uri.startswith("docshelf://shelf/papers/four-pages.pdf?pages=") for hit in hits)
    assert {hit.heading for hit in hits} <= {f"Page {n}" for n in range(1, 5)}


def test_a_document_is_found_by_its_name_and_title(runtime: Runtime) -> None:
    # The name row holds the title and the path's words: no content needed.
    by_path = search(runtime, "archive")
    assert by_path[0].uri == "docshelf://shelf/guides-archive" and by_path[0].part == ""
    by_title = search(runtime, "operations manual")
    assert by_title[0].document_uri == "docshelf://shelf/Guides/operations.md"


def test_a_catalogued_document_is_searchable_by_name_before_its_text_exists(
    runtime: Runtime, shelf: Path
) -> None:
    (shelf / "quarterly-budget.md").write_text("# Quarterly budget\n\nSpreadsheets galore.\n")
    runtime.indexer.reconcile(wait=False)  # the catalog pass only: conversion follows
    assert "docshelf://shelf/quarterly-budget.md" in uris(search(runtime, "quarterly budget"))


def test_phrases_prefixes_and_folded_diacritics(runtime: Runtime) -> None:
    assert uris(search(runtime, '"response buffering"'))[0].endswith("?section=reverse-proxies")
    # the words, but not next to each other: no phrase hit
    assert search(runtime, '"buffering response"') == []
    assert uris(search(runtime, "espress*"))[0].endswith("?section=caf%C3%A9-opening-hours")
    # diacritics are folded: "cafe" finds "Café" (the slug keeps the letter, as GitHub's does)
    assert uris(search(runtime, "cafe"))[0].endswith("?section=caf%C3%A9-opening-hours")
    # stemming: "backup" finds the "Backups" section
    assert uris(search(runtime, "backup"))[0].endswith("?section=backups")


def test_every_word_first_then_any_word_marked_partial(runtime: Runtime) -> None:
    hits = search(runtime, "nginx espresso", limit=10)
    assert hits and all(hit.partial for hit in hits), "no part holds both words"
    found = uris(hits)
    assert any(uri.endswith("?section=reverse-proxies") for uri in found)
    assert any(uri.endswith("?section=caf%C3%A9-opening-hours") for uri in found)
    # "nginx streams": the proxies section has both, the archive only "nginx"
    complete = search(runtime, "nginx streams", limit=10)
    assert not complete[0].partial and complete[-1].partial


def test_filters_by_shelf_type_and_case_sensitive_path_prefix(runtime: Runtime) -> None:
    assert uris(search(runtime, "nginx", filters=Filters(path_prefix="Guides/"))) == [
        "docshelf://shelf/Guides/operations.md?section=reverse-proxies"
    ]
    # a path is case-sensitive, as in the URIs: "guides" is the archive file's prefix
    assert uris(search(runtime, "nginx", filters=Filters(path_prefix="guides"))) == [
        "docshelf://shelf/guides-archive"
    ]
    assert search(runtime, "nginx", filters=Filters(mime_type="application/pdf")) == []
    assert search(runtime, "nginx", filters=Filters(shelf="elsewhere")) == []
    assert len(search(runtime, "nginx", filters=Filters(shelf="shelf"))) == 2


def test_at_most_three_hits_per_document(runtime: Runtime) -> None:
    hits = search(runtime, "text", limit=50)  # on every page of the fixture PDF
    per_document = [hit.document_uri for hit in hits]
    assert per_document.count("docshelf://shelf/papers/four-pages.pdf") == 3


def test_the_index_follows_edits_renames_and_deletions(runtime: Runtime, shelf: Path) -> None:
    manual = shelf / "Guides" / "operations.md"
    manual.write_text("# Operations manual\n\n## Monitoring\n\nScrape /metrics with Prometheus.\n")
    runtime.index()
    assert search(runtime, "nginx", filters=Filters(path_prefix="Guides/")) == []
    assert uris(search(runtime, "prometheus")) == [
        "docshelf://shelf/Guides/operations.md?section=monitoring"
    ]
    manual.rename(shelf / "Guides" / "runbook.md")
    runtime.index()
    assert uris(search(runtime, "prometheus")) == [
        "docshelf://shelf/Guides/runbook.md?section=monitoring"
    ]
    assert uris(search(runtime, "runbook")) == ["docshelf://shelf/Guides/runbook.md"]
    (shelf / "Guides" / "runbook.md").unlink()
    runtime.index()
    assert search(runtime, "prometheus") == [] and search(runtime, "runbook") == []


def test_a_file_no_converter_handles_keeps_its_name_and_loses_its_text(
    runtime: Runtime, shelf: Path
) -> None:
    before = content_rows(runtime)
    archive = shelf / "guides-archive"
    archive.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)  # a program
    runtime.index()
    record = runtime.catalog.get("docshelf://shelf/guides-archive")
    assert record is not None and record.state == DocumentState.UNSUPPORTED
    assert content_rows(runtime) == before - 1
    assert search(runtime, "2019") == []
    assert uris(search(runtime, "archive")) == ["docshelf://shelf/guides-archive"]


def test_a_query_without_words_is_refused_with_what_to_change(runtime: Runtime) -> None:
    for query in ("", "   ", '""', "*** ---"):
        with pytest.raises(InvalidQuery, match="no words to search for"):
            search(runtime, query)
    with pytest.raises(InvalidQuery, match="at most 500"):
        search(runtime, "word " * 101)


def test_no_query_text_reaches_either_engine_as_syntax(runtime: Runtime) -> None:
    """Whatever a client sends is words, phrases and prefixes: never an FTS5 or tsquery
    syntax error, never a server error (the fuzz tests cover the wire)."""
    syntax = st.sampled_from(['"', "*", "(", ")", ":", "&", "|", "!", "<->", "NEAR", "OR", "-"])
    pieces = st.lists(st.one_of(syntax, st.text(min_size=1, max_size=8)), max_size=12)

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(pieces.map(" ".join))
    def run(query: str) -> None:
        try:
            hits = search(runtime, query, limit=5)
        except InvalidQuery:
            return
        assert len(hits) <= 5

    run()


def test_a_file_renamed_from_the_newest_row_is_found_by_its_new_name(
    runtime: Runtime, shelf: Path
) -> None:
    # The newest document has the highest id; renamed, it is deleted and catalogued again
    # in one pass, where SQLite may hand the freed id to the new row.
    (shelf / "newest.md").write_text("# Newest\n\nFresh words.\n")
    runtime.index()
    (shelf / "newest.md").rename(shelf / "renamed-note.md")
    runtime.index()
    assert uris(search(runtime, "renamed")) == ["docshelf://shelf/renamed-note.md"]
    # its title still says "Newest": only the new URI answers for it
    assert {hit.document_uri for hit in search(runtime, "newest")} == {
        "docshelf://shelf/renamed-note.md"
    }
