"""Folders, read from the index: a folder is the common prefix of the paths below it.

Nothing stores folders. A folder exists while at least one indexed document lies
below it, and its direct children — files, and the sub-folders its paths pass
through — are found on the ``(shelf, path)`` index in path order, one index seek per
child, however many documents lie below it (a *skip-scan*):

- a seek finds the first path at or after a bound;
- a path with no further ``/`` is a file child, and the next seek starts just after it;
- a path in a sub-folder makes the sub-folder a child, and the next seek starts past
  every path below it: at ``prefix + name + "0"`` (``"0"`` is the character after
  ``"/"``), so the paths inside are never read.

The seeks of a page run in the database, as one recursive query (a loose index scan),
not as a query per child from Python: 100 sub-folders cost one statement.

Paths compare byte by byte (code point by code point), on both engines: SQLite's
default collation does, and PostgreSQL compares ``path COLLATE "C"`` on an index made
for it (migration 0014), whatever the database's own collation. Under a language's
collation ``"a/b"`` and ``"ab"`` interleave, and a folder would not be a range.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import (
    ColumnElement,
    Integer,
    Select,
    String,
    bindparam,
    case,
    func,
    literal,
    select,
)

from docshelf.storage.database import Database
from docshelf.storage.events import ChangeSet
from docshelf.storage.models import Document
from docshelf.storage.uris import folders_above

# The character after "/": a folder's paths, all of them "name/...", lie before "name0".
_AFTER_SLASH = chr(ord("/") + 1)
# Appended to a path, the smallest string after it that a path can be: no path holds a
# NUL (storage.uris refuses it, PostgreSQL cannot store it), so none lies in between.
_JUST_AFTER = "\x01"
_COUNTS_PER_STATEMENT = 100


@dataclass(frozen=True, slots=True)
class Child:
    """A direct child of a folder: a document (``key`` is its path) or a sub-folder
    (``key`` is its path with a trailing slash, the prefix of the paths below it).
    Children come in ``key`` order: by name, a folder's name followed by ``/``."""

    name: str
    key: str

    @property
    def folder(self) -> bool:
        return self.key.endswith("/")


def past(key: str) -> str:
    """The first path a listing resumes at after the child ``key``: just after a
    document's path; after a folder, beyond every path in it."""
    return key[:-1] + _AFTER_SLASH if key.endswith("/") else key + _JUST_AFTER


class FolderIndex:
    """The folder queries, built once per engine (keyed by whether the folder has an
    upper bound: the root has none)."""

    def __init__(self, database: Database) -> None:
        self.database = database
        postgres = database.engine.dialect.name == "postgresql"
        path = cast(ColumnElement[str], Document.path.collate("C") if postgres else Document.path)
        self._path = path
        # Count statements by how many folders they count, built when first needed (two
        # threads building the same one at once is harmless: either is kept).
        self._counts: dict[int, Select[Any]] = {}
        position = func.strpos if postgres else func.instr  # 1-based, 0 when absent
        self._count = {
            bounded: _capped_count(_range(path, bindparam("start"), bounded))
            for bounded in (False, True)
        }
        self._steps = {bounded: _skip_scan(path, position, bounded) for bounded in (False, True)}

    def children(
        self, shelf: str, prefix: str, after: str | None, limit: int
    ) -> tuple[list[Child], bool]:
        """Up to ``limit`` children of the folder ``prefix`` (``""``: the shelf's root,
        else a path ending in ``/``) after the child ``after`` (a :attr:`Child.key`), and
        whether more follow."""
        high = _end_of(prefix)
        params: dict[str, Any] = {
            "shelf": shelf,
            "start": prefix if after is None else past(after),
            "high": high,
            "skip": len(prefix) + 1,  # substr() is 1-based, in characters on both engines
            "length": len(prefix),
            "after_slash": _AFTER_SLASH,
            "just_after": _JUST_AFTER,
            "limit": limit + 1,
        }
        with self.database.engine.connect() as connection:
            paths = list(connection.scalars(self._steps[high is not None], params))
        children = []
        for path in paths:
            name, slash, _ = path[len(prefix) :].partition("/")
            children.append(Child(name, prefix + name + slash))
        return children[:limit], len(children) > limit

    def count(self, shelf: str, prefix: str, up_to: int) -> int:
        """How many documents lie below the folder ``prefix`` (at any depth), counting no
        further than ``up_to``: a folder with more counts as ``up_to``. A count reads an
        index entry per document, so it is bounded like everything a request does."""
        high = _end_of(prefix)
        params = {"shelf": shelf, "start": prefix, "high": high, "up_to": up_to}
        with self.database.engine.connect() as connection:
            return int(connection.scalar(self._count[high is not None], params) or 0)

    def counts(self, shelf: str, prefixes: Sequence[str], up_to: int) -> dict[str, int]:
        """:meth:`count` of each of the sub-folders ``prefixes`` (not the root), up to a
        hundred to a statement: a page of folders is one round trip, not one per folder."""
        found: dict[str, int] = {}
        with self.database.engine.connect() as connection:
            for first in range(0, len(prefixes), _COUNTS_PER_STATEMENT):
                chunk = prefixes[first : first + _COUNTS_PER_STATEMENT]
                params: dict[str, Any] = {"shelf": shelf, "up_to": up_to}
                for i, prefix in enumerate(chunk):
                    params[f"low{i}"], params[f"high{i}"] = prefix, _end_of(prefix)
                row = connection.execute(self._counts_of(len(chunk)), params).one()
                found.update(zip(chunk, map(int, row), strict=True))
        return found

    def _counts_of(self, n: int) -> Select[Any]:
        """One row of ``n`` counts (bounds ``low0``, ``high0``, …), built once per n."""
        statement = self._counts.get(n)
        if statement is None:
            statement = select(
                *(
                    _capped_count(
                        [
                            Document.shelf == bindparam("shelf"),
                            self._path >= bindparam(f"low{i}"),
                            self._path < bindparam(f"high{i}"),
                        ]
                    ).scalar_subquery()
                    for i in range(n)
                )
            )
            self._counts[n] = statement
        return statement

    def exists(self, shelf: str, prefix: str) -> bool:
        """Whether at least one document lies below the folder ``prefix``."""
        return bool(self.children(shelf, prefix, None, 1)[0])


def _range(
    path: ColumnElement[str], start: ColumnElement[str], bounded: bool
) -> list[ColumnElement[bool]]:
    """The paths of the shelf from ``start`` on, up to the folder's end if ``bounded``."""
    conditions = [Document.shelf == bindparam("shelf"), path >= start]
    if bounded:
        conditions.append(path < bindparam("high"))
    return conditions


def _capped_count(conditions: list[ColumnElement[bool]]) -> Select[Any]:
    """``count(*)`` of the rows meeting ``conditions``, reading at most ``up_to`` of them
    (``count(*)``, not of a column: PostgreSQL then counts on the index alone)."""
    rows = select(literal(1)).where(*conditions).limit(bindparam("up_to")).subquery()
    return select(func.count()).select_from(rows)


def _skip_scan(path: ColumnElement[str], position: Any, bounded: bool) -> Select[str]:
    """The paths of a folder's children, in order, each found by one seek from where the
    one before ends (module docstring); at most ``limit`` of them."""

    def first_from(start: ColumnElement[str]) -> Any:
        seek = select(Document.path).where(*_range(path, start, bounded))
        return seek.order_by(path).limit(1).scalar_subquery()

    anchor = select(first_from(bindparam("start")).label("path"), literal(1).label("n"))
    steps = anchor.cte("steps", recursive=True)
    rest = func.substr(steps.c.path, bindparam("skip", type_=Integer), type_=String)
    slash = position(rest, "/", type_=Integer)
    # A sub-folder: "prefix" + "name" + "0"; a document: its path and a \x01.
    resume = case(
        (
            slash > 0,
            func.substr(
                steps.c.path, 1, bindparam("length", type_=Integer) + slash - 1, type_=String
            )
            + bindparam("after_slash", type_=String),
        ),
        else_=steps.c.path + bindparam("just_after", type_=String),
    )
    following = select(first_from(resume), steps.c.n + 1).where(
        steps.c.path.is_not(None), steps.c.n < bindparam("limit")
    )
    steps = steps.union_all(following)
    return select(steps.c.path).where(steps.c.path.is_not(None)).order_by(steps.c.n)


def _end_of(prefix: str) -> str | None:
    """The first path past the folder ``prefix`` (None for the root: every path is in it)."""
    return prefix[:-1] + _AFTER_SLASH if prefix else None


@functools.lru_cache(maxsize=8)
def folders_touched(changes: ChangeSet) -> frozenset[str]:
    """The URIs of the folders above a document ``changes`` added, changed or removed: a
    folder's subscriber hears of every change below it. Worked out once per set, however
    many streams ask (the set's frozensets keep their hashes, so the cache costs little)."""
    return frozenset(
        folder
        for uri in changes.added | changes.changed | changes.removed
        for folder in folders_above(uri)
    )
