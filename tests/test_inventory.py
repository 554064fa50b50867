"""storage.inventory: the admin API's document listing, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from docshelf.storage.database import Database
from docshelf.storage.inventory import DocumentFilter, documents_after
from docshelf.storage.models import Document, DocumentState

PATHS = ["a_b.pdf", "axb.pdf", "50%/x.md", "500/x.md", "Guides/a.md", "guides/b.md", "b\\c.md"]


@pytest.fixture
def database(database_url: str) -> Database:
    database = Database(database_url)
    database.upgrade()
    now = datetime.now(UTC)
    with database.session() as session:
        for path in PATHS:
            session.add(
                Document(
                    shelf="shelf",
                    path=path,
                    uri=f"docshelf://shelf/{path}",
                    name=path.rpartition("/")[2],
                    mime_type="text/plain",
                    size=1,
                    mtime_ns=1,
                    title=path,
                    facts={},
                    state=DocumentState.READY,
                    modified_at=now,
                    indexed_at=now,
                )
            )
    return database


def listed(database: Database, prefix: str) -> list[str]:
    documents, _more = documents_after(database, DocumentFilter(path_prefix=prefix), 0, 100)
    return sorted(document.path for document in documents)


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ("a_", ["a_b.pdf"]),  # "_" is a character, not LIKE's any-one-character
        ("50%", ["50%/x.md"]),  # "%" likewise
        ("Guides/", ["Guides/a.md"]),  # paths are case-sensitive, as in the URIs
        ("guides/", ["guides/b.md"]),
        ("b\\", ["b\\c.md"]),
    ],
)
def test_path_prefix_matches_its_characters_literally(
    database: Database, prefix: str, expected: list[str]
) -> None:
    assert listed(database, prefix) == expected
