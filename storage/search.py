"""Full-text search over the shelf: one interface, SQLite FTS5 or PostgreSQL underneath.

What is searched lives in ``search_parts`` (migration 0007): a *name* row per
document (its title and path), written here by the indexer in the transaction
that catalogues the document and kept current by a database trigger, and
*content* rows, one per page or section, written here by the format builder once
the document's text exists. A hit names the part that matched (``pages=3``,
``section=setup``) so that a client can read just that part.

Queries are written for people and models, not in either engine's syntax:
words (all must match; stemmed), ``"quoted phrases"`` and ``prefix*`` words.
When every word together finds too little, the rest of the answer is made of
documents matching any of them, still ranked (BM25 on SQLite, ``ts_rank`` on
PostgreSQL; a title counts more than body text).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, bindparam, delete, insert, text
from sqlalchemy.orm import Session

from docshelf.converters.base import Segment
from docshelf.storage import search_postgres
from docshelf.storage.database import Database
from docshelf.storage.models import SearchPart
from docshelf.storage.search_postgres import TS_CONFIG

NAME_ROW, CONTENT_ROW = 0, 1
MAX_LIMIT = 50
MAX_QUERY_CHARS = 500
MAX_TERMS = 16
# Hits per document in one answer: ten sections of one manual crowd out the other documents.
PER_DOCUMENT = 3
HIGHLIGHT = ("**", "**")  # Markdown bold: readable for models and people alike
ELLIPSIS = "…"

# A term: a quoted phrase, or a run of characters up to a space or a quote.
_TERM = re.compile(r'"([^"]*)"?|([^\s"]+)')
_WORD = re.compile(r"\w+", re.UNICODE)


class InvalidQuery(ValueError):
    """The query cannot be searched for; the message says what to change."""


@dataclass(frozen=True, slots=True)
class Term:
    words: tuple[str, ...]
    prefix: bool = False  # the last word is a prefix ("conf*")

    @property
    def phrase(self) -> bool:
        return len(self.words) > 1


def parse_query(query: str) -> tuple[Term, ...]:
    """The terms of ``query``; :class:`InvalidQuery` if it has no word to search for.

    Punctuation inside a bare word splits it into a phrase ("http-header" is the
    phrase "http header", as both engines tokenize the text).
    """
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidQuery(f"the query is {len(query)} characters; at most {MAX_QUERY_CHARS}")
    terms: list[Term] = []
    for match in _TERM.finditer(query):
        quoted, bare = match.groups()
        raw = quoted if quoted is not None else bare
        words = tuple(word.lower() for word in _WORD.findall(raw))
        if not words:
            continue
        prefix = quoted is None and raw.endswith("*")
        terms.append(Term(words, prefix))
    if not terms:
        raise InvalidQuery(
            "the query has no words to search for; give one or more words, "
            '"a quoted phrase" or a prefix*'
        )
    if len(terms) > MAX_TERMS:
        raise InvalidQuery(f"the query has {len(terms)} terms; at most {MAX_TERMS}")
    return tuple(terms)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One matching page, section or document, best first."""

    document_uri: str
    part: str  # "" for the document as a whole
    shelf: str
    path: str
    title: str  # the document's
    mime_type: str
    heading: str | None  # the section's heading or "Page N"; None for the document
    snippet: str
    score: float  # higher is better; comparable within one answer only
    partial: bool = False  # matches some of the query's terms, not all

    @property
    def uri(self) -> str:
        """The URI of what matched: the part, or the document."""
        return f"{self.document_uri}?{self.part}" if self.part else self.document_uri


@dataclass(frozen=True, slots=True)
class Filters:
    shelf: str | None = None
    mime_type: str | None = None
    path_prefix: str | None = None
    # The shelves a server keeps to (ShelfSet.bound: a stdio server's roots), None: all.
    served: tuple[str, ...] | None = None

    def where(self, dialect: str = "sqlite") -> tuple[str, dict[str, Any]]:
        clauses: list[str] = []
        params: dict[str, Any] = {}
        if self.shelf is not None:
            clauses.append("d.shelf = :shelf")
            params["shelf"] = self.shelf
        if self.served is not None:
            served = {f"served_{i}": name for i, name in enumerate(self.served)}
            clauses.append(
                f"d.shelf IN ({', '.join(':' + k for k in served)})" if served else "0 = 1"
            )
            params.update(served)
        if self.mime_type is not None:
            clauses.append("d.mime_type = :mime_type")
            params["mime_type"] = self.mime_type
        if self.path_prefix and dialect == "postgresql":
            # Case-sensitive there, and the path index (migration 0017) serves it: the
            # planner reads the folder's documents, and knows about how many there are.
            clauses.append("d.path LIKE :path_pattern")
            params["path_pattern"] = _LIKE_SPECIAL.sub(r"\\\1", self.path_prefix) + "%"
        elif self.path_prefix:
            # The path's own first characters, not LIKE: SQLite's LIKE ignores ASCII case
            # (PostgreSQL's does not), and a path is case-sensitive, as in the URIs.
            clauses.append("substr(d.path, 1, :path_prefix_length) = :path_prefix")
            params["path_prefix"] = self.path_prefix
            params["path_prefix_length"] = len(self.path_prefix)
        return "".join(f" AND {clause}" for clause in clauses), params


_LIKE_SPECIAL = re.compile(r"([\\%_])")  # escaped with a backslash, LIKE's default escape


_HIT_COLUMNS = "d.uri, p.part, d.shelf, d.path, d.title, d.mime_type, p.kind, p.title AS heading"


class SearchIndex:
    """Ranked search over ``search_parts``, and the writes that keep it current."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.dialect = database.engine.dialect.name

    def search(
        self,
        query: str,
        *,
        filters: Filters | None = None,
        limit: int = 10,
        snippet_words: int = 16,
    ) -> list[SearchHit]:
        """The best ``limit`` hits for ``query`` (at most :data:`PER_DOCUMENT` per document)."""
        terms = parse_query(query)
        filters = filters or Filters()
        limit = max(1, min(limit, MAX_LIMIT))
        hits: list[SearchHit] = []
        with self.database.engine.connect() as connection:
            for every in (True, False) if len(terms) > 1 else (True,):
                found = self._run(connection, terms, every, filters, limit, snippet_words)
                hits = _merge(hits, found, limit)
                if len(hits) >= limit:
                    break
        return hits

    def _run(
        self,
        connection: Connection,
        terms: Sequence[Term],
        every: bool,
        filters: Filters,
        limit: int,
        snippet_words: int,
    ) -> list[SearchHit]:
        where, params = filters.where(self.dialect)
        # Enough candidates that the per-document cap still leaves ``limit`` hits.
        params["candidates"] = limit * PER_DOCUMENT
        if self.dialect == "sqlite":
            params["match"] = fts5_query(terms, every)
            params["snippet_words"] = snippet_words
            # Rank first, on the FTS table alone (joined to the documents only to filter),
            # then fetch rows and snippets for the few ranked candidates: joining every
            # match before the sort cost 2.5x on a word in a third of 400,000 parts
            # (``python -m bench search``). The snippet is of the body: a heading that
            # matched is shown in the hit already.
            ranking_join = (
                " JOIN search_parts p ON p.id = search_fts.rowid"
                " JOIN documents d ON d.id = p.document_id"
                if where
                else ""
            )
            sql = f"""
                WITH ranked AS (
                    SELECT search_fts.rowid AS id, bm25(search_fts, 4.0, 1.0) AS rank
                    FROM search_fts{ranking_join}
                    WHERE search_fts MATCH :match{where}
                    ORDER BY rank
                    LIMIT :candidates)
                SELECT {_HIT_COLUMNS},
                       snippet(search_fts, 1, '{HIGHLIGHT[0]}', '{HIGHLIGHT[1]}', '{ELLIPSIS}',
                               :snippet_words) AS snippet,
                       -ranked.rank AS score
                FROM ranked
                CROSS JOIN search_fts ON search_fts.rowid = ranked.id AND search_fts MATCH :match
                JOIN search_parts p ON p.id = ranked.id
                JOIN documents d ON d.id = p.document_id
                ORDER BY ranked.rank, d.path, p.part"""
            rows = connection.execute(text(sql), params).all()
        else:
            pieces, query_params = tsquery(terms)
            params.update(query_params)
            params["headline"] = (
                f"StartSel={HIGHLIGHT[0]}, StopSel={HIGHLIGHT[1]}, FragmentDelimiter={ELLIPSIS}, "
                f"MaxWords={snippet_words}, MinWords={max(3, snippet_words // 2)}, MaxFragments=1"
            )
            query_sql = "(" + (" && " if every else " || ").join(pieces) + ")"
            candidates = params.pop("candidates")
            rows = search_postgres.ranked(
                connection, query_sql, params, where, _HIT_COLUMNS, candidates
            )
        return [
            SearchHit(
                document_uri=row.uri,
                part=row.part,
                shelf=row.shelf,
                path=row.path,
                title=row.title,
                mime_type=row.mime_type,
                heading=row.heading if row.kind == CONTENT_ROW else None,
                snippet=_tidy(row.snippet),
                score=float(row.score),
                partial=not every,
            )
            for row in rows
        ]


def _merge(hits: list[SearchHit], found: Iterable[SearchHit], limit: int) -> list[SearchHit]:
    """``hits`` then the new ones in order, each URI once and each document at most
    :data:`PER_DOCUMENT` times, up to ``limit``."""
    merged = list(hits)
    seen = {hit.uri for hit in merged}
    per_document: dict[str, int] = {}
    for hit in merged:
        per_document[hit.document_uri] = per_document.get(hit.document_uri, 0) + 1
    for hit in found:
        if len(merged) >= limit:
            break
        if hit.uri in seen or per_document.get(hit.document_uri, 0) >= PER_DOCUMENT:
            continue
        seen.add(hit.uri)
        per_document[hit.document_uri] = per_document.get(hit.document_uri, 0) + 1
        merged.append(hit)
    return merged


def _tidy(snippet: str | None) -> str:
    return " ".join((snippet or "").split())


def fts5_query(terms: Sequence[Term], every: bool) -> str:
    """An FTS5 MATCH expression: every term a quoted string (no syntax gets through)."""
    parts = []
    for term in terms:
        quoted = '"' + " ".join(term.words).replace('"', '""') + '"'
        parts.append(quoted + ("*" if term.prefix else ""))
    return (" AND " if every else " OR ").join(parts)


def tsquery(terms: Sequence[Term]) -> tuple[list[str], dict[str, str]]:
    """A PostgreSQL tsquery expression per term, over bound parameters (no syntax gets
    through)."""
    pieces, params = [], {}
    for index, term in enumerate(terms):
        name = f"term{index}"
        if term.prefix:
            # Prefix matching needs the lexeme syntax: the words are \\w+ only, so safe.
            lexemes = [*term.words[:-1], f"{term.words[-1]}:*"]
            params[name] = " <-> ".join(lexemes)
            pieces.append(f"to_tsquery('{TS_CONFIG}', :{name})")
        else:
            params[name] = " ".join(term.words)
            pieces.append(f"phraseto_tsquery('{TS_CONFIG}', :{name})")
    return pieces, params


_PG_PATH_WORDS = "regexp_replace(d.path, '[/._-]+', ' ', 'g')"  # as migration 0007's trigger


def add_name_rows(session: Session, document_ids: Sequence[int]) -> None:
    """Name rows for the documents just catalogued (``document_ids``, in this transaction).

    One statement for the whole batch: SQLite pays ~10 µs for every statement that
    writes FTS5 from a trigger, five times the row itself (a row trigger on
    ``documents`` made cataloguing 2.5x slower; ``python -m bench search``).
    PostgreSQL's parser reads "guides/report.pdf" as one file-path token, so there
    the name row spells the path's words out.
    """
    words_of_path = "d.path" if session.get_bind().dialect.name == "sqlite" else _PG_PATH_WORDS
    session.execute(
        text(
            "INSERT INTO search_parts(document_id, kind, part, title, body) "
            f"SELECT d.id, {NAME_ROW}, '', d.title, {words_of_path} "
            "FROM documents d WHERE d.id IN :ids"
        ).bindparams(bindparam("ids", expanding=True)),
        {"ids": list(document_ids)},
    )


def replace_content(session: Session, document_id: int, segments: Sequence[Segment]) -> None:
    """Make ``segments`` the document's searchable content (in the caller's transaction)."""
    clear_content(session, document_id)
    rows = [
        {
            "document_id": document_id,
            "kind": CONTENT_ROW,
            "part": segment.part,
            "title": segment.title,
            "body": segment.text,
        }
        for segment in segments
        if segment.text.strip() or segment.title
    ]
    if rows:
        session.execute(insert(SearchPart), rows)


def clear_content(session: Session, *document_ids: int) -> None:
    """Forget the documents' content rows (their name rows stay: they are still listed)."""
    session.execute(
        delete(SearchPart).where(
            SearchPart.document_id.in_(document_ids), SearchPart.kind == CONTENT_ROW
        )
    )
