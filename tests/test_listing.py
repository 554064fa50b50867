"""Documents listed by filter and order, a keyset page at a time (issue 28, ``storage.listing``),
on both engines (the ``database_url`` fixture: SQLite, then PostgreSQL when configured).

The catalog rows are written the way the indexer writes them (Core inserts into
``documents``, migrations applied); their types, sizes and mtimes are chosen so that
ties — files copied together share an mtime, small notes a size — cross page
boundaries, which is where a keyset page is easiest to get wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import delete, insert

from docshelf.converters.families import FAMILIES, NAMED_TYPES, in_family
from docshelf.storage.database import Database
from docshelf.storage.listing import (
    DocumentListing,
    ListedDocument,
    ListingFilter,
    Position,
    Sort,
    TypeFilter,
)
from docshelf.storage.models import Document, DocumentState

_DOCUMENTS = Document.metadata.tables["documents"]
BASE_NS = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z
TYPES = [
    "application/pdf",
    "text/markdown",
    "text/plain",
    "text/csv",
    "text/html",
    "text/x-python",
    "image/png",
    "image/svg+xml",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "application/vnd.ms-powerpoint",
    "application/octet-stream",
    "audio/mpeg",
]


def row(number: int, shelf: str = "main", **fields: object) -> dict[str, object]:
    """Document ``number``: three mtimes and four sizes among all, so ties are the rule."""
    path = f"{'ab'[number % 2]}/doc-{number:03}.txt"
    mtime_ns = BASE_NS + (number % 3) * 1_000_000_000
    values: dict[str, object] = {
        "shelf": shelf,
        "path": path,
        "uri": f"docshelf://{shelf}/{path}",
        "name": path.rpartition("/")[2],
        "mime_type": TYPES[number % len(TYPES)],
        "size": 100 * (number % 4),
        "mtime_ns": mtime_ns,
        "title": f"Document {number}",
        "facts": {},
        "state": DocumentState.READY,
        "modified_at": datetime.fromtimestamp(mtime_ns / 1e9, UTC),
        "indexed_at": datetime.now(UTC),
    }
    values.update(fields)
    return values


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    database = Database(database_url)
    database.upgrade()
    with database.session() as session:
        rows = [row(n) for n in range(40)] + [row(n, shelf="other") for n in range(40, 50)]
        session.execute(insert(_DOCUMENTS), rows)
    yield database
    database.dispose()


def expected_order(documents: list[ListedDocument], sort: Sort) -> list[str]:
    if sort is Sort.PATH:
        ordered = sorted(documents, key=lambda d: (d.shelf, d.path))
    elif sort is Sort.MODIFIED:
        ordered = sorted(documents, key=lambda d: (d.mtime_ns, d.id), reverse=True)
    else:
        ordered = sorted(documents, key=lambda d: (d.size, d.id), reverse=True)
    return [d.uri for d in ordered]


def walk(
    listing: DocumentListing, where: ListingFilter, sort: Sort, limit: int
) -> Iterator[list[ListedDocument]]:
    after: Position | None = None
    while True:
        page = listing.page(where, sort, limit, after)
        yield page.documents
        if not page.more:
            return
        after = page.documents[-1].position(sort)


@pytest.mark.parametrize("sort", list(Sort))
@pytest.mark.parametrize("limit", [1, 3, 7, 50])
def test_pages_in_every_order_hold_every_document_once_in_order(
    database: Database, sort: Sort, limit: int
) -> None:
    listing = DocumentListing(database)
    pages = list(walk(listing, ListingFilter(), sort, limit))
    documents = [d for page in pages for d in page]
    assert all(len(page) == limit for page in pages[:-1])
    assert len(documents) == 50 == len({d.uri for d in documents})
    assert [d.uri for d in documents] == expected_order(documents, sort)


@pytest.mark.parametrize("sort", list(Sort))
def test_a_cursor_stays_valid_while_documents_come_and_go(database: Database, sort: Sort) -> None:
    """Keyset, not OFFSET: after a page, documents removed before or after its end and
    documents added anywhere neither repeat a row the client has nor skip one that stayed;
    a new document shows on the later pages exactly when it sorts after the cursor."""
    listing = DocumentListing(database)
    first = listing.page(ListingFilter(), sort, 10)
    cursor = first.documents[-1].position(sort)
    listed = [d.uri for d in first.documents]
    unlisted = [d.uri for d in listing.page(ListingFilter(), sort, 100, cursor).documents]
    gone = [listed[0], listed[5], unlisted[0], unlisted[-1]]
    with database.session() as session:
        session.execute(delete(Document).where(Document.uri.in_(gone)))
        session.execute(insert(_DOCUMENTS), [row(n) for n in range(100, 106)])
    everything = [d for page in walk(listing, ListingFilter(), sort, 100) for d in page]
    resumed = [d.uri for page in walk_from(listing, sort, cursor) for d in page]
    assert not set(resumed) & set(listed), "a row listed before is listed again"
    assert set(unlisted) - set(gone) <= set(resumed), "a document that stayed was skipped"
    order = [d.uri for d in everything]
    assert resumed == order[len(order) - len(resumed) :], "the rest, in order"
    new = {d.uri: d for d in everything if d.title in {f"Document {n}" for n in range(100, 106)}}
    assert new, "the new documents are listed"
    for uri, document in new.items():
        after_cursor = _sorts_after(document.position(sort), cursor, sort)
        assert (uri in resumed) == after_cursor, uri


def walk_from(
    listing: DocumentListing, sort: Sort, after: Position, limit: int = 3
) -> Iterator[list[ListedDocument]]:
    while True:
        page = listing.page(ListingFilter(), sort, limit, after)
        yield page.documents
        if not page.more:
            return
        after = page.documents[-1].position(sort)


def _sorts_after(position: Position, cursor: Position, sort: Sort) -> bool:
    return position > cursor if sort is Sort.PATH else position < cursor  # type: ignore[operator]


@pytest.mark.parametrize(
    ("where", "matches"),
    [
        (ListingFilter(shelf="other"), lambda r: r["shelf"] == "other"),
        (ListingFilter(path_prefix="a/"), lambda r: str(r["path"]).startswith("a/")),
        (ListingFilter(path_prefix="A/"), lambda r: False),  # paths are case-sensitive
        (ListingFilter(path_prefix="_/"), lambda r: False),  # and no LIKE wildcard
        (
            ListingFilter(modified_after_ns=BASE_NS),
            lambda r: int(str(r["mtime_ns"])) > BASE_NS,
        ),
        (
            ListingFilter(types=TypeFilter(frozenset({"text/csv", "image/png"}))),
            lambda r: r["mime_type"] in ("text/csv", "image/png"),
        ),
        (
            ListingFilter(types=TypeFilter(prefix="image/")),
            lambda r: str(r["mime_type"]).startswith("image/"),
        ),
        (
            ListingFilter(shelf="main", path_prefix="b/", modified_after_ns=BASE_NS),
            lambda r: (
                r["shelf"] == "main"
                and str(r["path"]).startswith("b/")
                and int(str(r["mtime_ns"])) > BASE_NS
            ),
        ),
    ],
    ids=[
        "shelf",
        "prefix",
        "prefix-case",
        "prefix-wildcard",
        "after",
        "types",
        "mime-prefix",
        "all",
    ],
)
def test_filters_select_exactly_their_documents_in_every_order(
    database: Database, where: ListingFilter, matches: Callable[[dict[str, object]], bool]
) -> None:
    rows = [row(n) for n in range(40)] + [row(n, shelf="other") for n in range(40, 50)]
    expected = {str(r["uri"]) for r in rows if matches(r)}
    listing = DocumentListing(database)
    for sort in Sort:
        documents = [d for page in walk(listing, where, sort, 4) for d in page]
        assert {d.uri for d in documents} == expected, sort
        assert [d.uri for d in documents] == expected_order(documents, sort), sort
        assert listing.page(where, sort, 4, count=True).total == len(expected)


def test_each_family_lists_the_documents_of_its_types(database: Database) -> None:
    """The SQL of a family's filter and :func:`converters.families.in_family` agree."""
    listing = DocumentListing(database)
    for family in FAMILIES:
        excluded = NAMED_TYPES if family.prefix else frozenset()
        types = TypeFilter(family.mime_types, family.prefix, excluded)
        listed = listing.page(ListingFilter(types=types), Sort.PATH, 200)
        expected = {n for n in range(50) if in_family(family, TYPES[n % len(TYPES)])}
        titles = {d.title for d in listed.documents}
        assert titles == {f"Document {n}" for n in expected}, family.name


def test_the_total_is_counted_only_when_asked(database: Database) -> None:
    listing = DocumentListing(database)
    assert listing.page(ListingFilter(), Sort.SIZE, 5).total is None
    assert listing.page(ListingFilter(), Sort.SIZE, 5, count=True).total == 50
    empty = listing.page(ListingFilter(shelf="nowhere"), Sort.MODIFIED, 5, count=True)
    assert (empty.documents, empty.more, empty.total) == ([], False, 0)


def test_a_listed_document_carries_what_the_tool_shows(database: Database) -> None:
    [document] = (
        DocumentListing(database)
        .page(ListingFilter(shelf="other", path_prefix="b/doc-041"), Sort.PATH, 5)
        .documents
    )
    assert (document.uri, document.title) == ("docshelf://other/b/doc-041.txt", "Document 41")
    assert document.modified_at == datetime(2026, 1, 1, 0, 0, 2, tzinfo=UTC)
    assert (document.size, document.state, document.page_count) == (100, DocumentState.READY, None)
    assert document.position(Sort.PATH) == ("other", "b/doc-041.txt")
    assert document.position(Sort.SIZE) == (100, document.id)
