"""Folders read from the index (storage.folders): a folder's direct children, paged, on
both engines, and on PostgreSQL whatever the database's collation.

The children are checked against the obvious definition — every path below the folder,
cut at the next slash — on random trees whose names are made of the characters that
sort around "/" ("-", ".", " ", "0", "\\x01"), where a wrong range or a wrong skip would show.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, text

from bench.bench_folders import add_documents
from docshelf.storage.catalog import Catalog
from docshelf.storage.database import Database
from docshelf.storage.events import ChangeSet
from docshelf.storage.folders import Child, FolderIndex, folders_touched
from docshelf.storage.models import Document
from tests.support.databases import PostgresServer

SHELF = "docs"
segment = st.text(alphabet="ab-. 0\x01é", min_size=1, max_size=3).filter(
    lambda s: s not in (".", "..")
)
trees = st.sets(st.lists(segment, min_size=1, max_size=4).map("/".join), min_size=1, max_size=25)


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    db = Database(database_url)
    db.upgrade()
    yield db
    db.dispose()


def expected_children(paths: set[str], prefix: str) -> list[Child]:
    """By definition: each path below ``prefix`` cut after its next segment, in key order."""
    keys = set()
    for path in paths:
        if path.startswith(prefix):
            name, slash, _ = path[len(prefix) :].partition("/")
            keys.add(prefix + name + slash)
    return [Child(key[len(prefix) :].rstrip("/"), key) for key in sorted(keys)]


def folders_of(paths: set[str]) -> set[str]:
    """Every folder the paths lie in, the root ("") included."""
    found = {""}
    for path in paths:
        segments = path.split("/")[:-1]
        found.update("/".join(segments[: i + 1]) + "/" for i in range(len(segments)))
    return found


def listed(index: FolderIndex, prefix: str, limit: int) -> list[Child]:
    """Every child of ``prefix``, page by page; each page but the last says more follow."""
    children: list[Child] = []
    after = None
    while True:
        page, more = index.children(SHELF, prefix, after, limit)
        assert len(page) == limit or not more
        children.extend(page)
        if not more:
            return children
        after = page[-1].key


def replace_tree(database: Database, paths: set[str]) -> None:
    with database.engine.begin() as connection:
        connection.execute(delete(Document))
    add_documents(database, SHELF, sorted(paths))
    add_documents(database, "other", ["a/elsewhere.md", "zz.md"])  # another shelf: never listed


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tree=trees, limit=st.integers(1, 4))
def test_every_folder_lists_its_direct_children_in_order_page_by_page(
    database: Database, tree: set[str], limit: int
) -> None:
    replace_tree(database, tree)
    index = FolderIndex(database)
    for prefix in folders_of(tree):
        assert listed(index, prefix, limit) == expected_children(tree, prefix), prefix
        assert index.exists(SHELF, prefix)
        below = sum(path.startswith(prefix) for path in tree)
        assert index.count(SHELF, prefix, 1_000) == below
        assert index.count(SHELF, prefix, 2) == min(below, 2)


def test_a_folder_with_no_document_below_does_not_exist(database: Database) -> None:
    replace_tree(database, {"a/b/c.md", "a-b/d.md", "ab.md"})
    index = FolderIndex(database)
    assert not index.exists(SHELF, "b/")
    assert not index.exists(SHELF, "a/c/")
    assert not index.exists(SHELF, "a/b/c.md/")
    assert index.children(SHELF, "a", None, 10) == ([], False)  # not a folder prefix


def test_counts_of_many_folders_come_capped_in_one_call(database: Database) -> None:
    replace_tree(database, {f"f{n:03d}/{i}.md" for n in range(150) for i in range(n % 4 + 1)})
    index = FolderIndex(database)
    folders = [f"f{n:03d}/" for n in range(150)]
    assert index.counts(SHELF, folders, 3) == {f"f{n:03d}/": min(n % 4 + 1, 3) for n in range(150)}
    assert index.counts(SHELF, [], 3) == {}


def test_a_skip_scan_reads_past_a_folder_without_its_paths(database: Database) -> None:
    """Thousands below one folder and files after it: the listing holds the folder once
    and every file, with one query, however many documents lie below."""
    tree = {f"big/{i:05d}.md" for i in range(3000)} | {"big.md", "big0.md", "bigger/x.md", "c.md"}
    replace_tree(database, tree)
    index = FolderIndex(database)
    assert [c.key for c in index.children(SHELF, "", None, 100)[0]] == [
        "big.md",
        "big/",
        "big0.md",
        "bigger/",
        "c.md",
    ]


@pytest.mark.sqlite_only
def test_a_page_is_one_statement(database: Database) -> None:
    from sqlalchemy import event

    replace_tree(database, {f"f{n:04d}/x.md" for n in range(500)})
    index = FolderIndex(database)
    statements: list[str] = []
    event.listen(database.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    children, more = index.children(SHELF, "", None, 100)
    assert len(children) == 100 and more
    assert len(statements) == 1


def test_a_language_collation_does_not_break_folders_on_postgresql(
    postgres_server: PostgresServer,
) -> None:
    """Under ICU's English with punctuation ignored (as glibc's en_US does it), "a/b" sorts
    between "a-c" and "ab": a range of the database's own collation misses a folder's
    documents. The folder queries compare bytes (COLLATE "C", migration 0014)."""
    url = postgres_server.create(
        LOCALE_PROVIDER="icu", ICU_LOCALE="en-US-u-ka-shifted", LOCALE="C.UTF-8"
    )
    database = Database(url.render_as_string(hide_password=False))
    try:
        database.upgrade()
        tree = {"a/b.md", "a/c/d.md", "a-c.md", "ab.md", "a.md", "a0.md", "aa/x.md"}
        replace_tree(database, tree)
        with database.engine.connect() as connection:
            in_range = connection.scalars(
                text("SELECT path FROM documents WHERE path >= 'a/' AND path < 'a0'")
            ).all()
        assert sorted(in_range) != ["a/b.md", "a/c/d.md"]  # the database's own order
        index = FolderIndex(database)
        for prefix in folders_of(tree):
            assert listed(index, prefix, 2) == expected_children(tree, prefix)
        assert index.count(SHELF, "a/", 100) == 2
        # Completion's path ranges (resource template paths, prompt URIs) compare bytes too.
        catalog = Catalog(database)
        assert catalog.paths(SHELF, "a/", 100) == (["a/b.md", "a/c/d.md"], 2)
        assert catalog.paths(SHELF, "a", 3) == (["a-c.md", "a.md", "a/b.md"], 7)
    finally:
        database.dispose()
        postgres_server.drop(url)


def test_the_folders_a_change_touches_are_every_folder_above_it() -> None:
    changes = ChangeSet(
        added=frozenset({"docshelf://s/a/b/new.md"}),
        removed=frozenset({"docshelf://s/c/gone.md"}),
        changed=frozenset({"docshelf://t/top.md"}),
    )
    assert folders_touched(changes) == {
        "docshelf://s/",
        "docshelf://s/a/",
        "docshelf://s/a/b/",
        "docshelf://s/c/",
        "docshelf://t/",
    }
    assert folders_touched(ChangeSet(refreshed=frozenset({"docshelf://s/a/x.md"}))) == set()
