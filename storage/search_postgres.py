"""PostgreSQL's ranking: the best parts for a query, without ranking every match when a
smaller set provably holds them.

``ts_rank`` reads each matching row's ``tsvector`` from the heap: a word in a tenth of
400,000 parts costs 40,000 heap reads whatever the limit (``python -m bench search``).
Migration 0017 indexes *rank keys* (``docshelf_rank_keys``): for each part, the lexemes
that rank it high — in its title (``ts_rank``'s weight A, 1.0; body text is D, 0.1) or
repeated. For a query ranked as a sum over its words, this module first ranks only the
parts with such a key for one of the query's words, and answers from them when the last
of the ``candidates`` it needs ranks above the probe's ``bound``, the most that any part
without the key could reach. Then no part left out could have ranked among them, so the
answer is the one ranking every match gives, order of equal ranks included. When the
proof fails (too few keyed parts after the filters, or an ``AND`` or phrase query, whose
rank depends on how near the words stand), every match is ranked, as before.

The bounds come from ``ts_rank``'s formula (``calc_rank_or`` in PostgreSQL's
``tsrank.c``): for one query item, a lexeme with positions of weights ``w1..wn`` in
position order scores ``(wmax + Σ wi/i² - wmax/jm²) / ζ(2)``, ``jm`` the first position of
the highest weight; a query of several items (an ``OR``) scores the sum over its items,
each prefix item the sum over every lexeme it matches, divided by the number of distinct
items. A title's positions come before the body's (``tsv`` is the title's vector
concatenated with the body's), so the first position holds the highest weight and a
lexeme's score depends only on how often it occurs in each: :func:`item_rank`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Row, text

# The text search configuration (migration 0007): English, diacritics folded.
TS_CONFIG = "docshelf"

# ts_rank's default weights and constants (tsrank.c).
TITLE_WEIGHT, BODY_WEIGHT = 1.0, 0.1  # weights A and D: the title's and the body's (0007)
ZETA_2 = 1.64493406685  # Σ 1/i², by which each item's sum is divided
MAX_POSITIONS = 256  # positions kept per lexeme in a tsvector (MAXNUMPOS)
# Seven lexemes of a part beginning with the same three characters set a flag key; a part
# without it has at most six for any prefix of three characters or more.
FLAG_RUN, FLAG_STEM = 7, 3
# ts_rank sums in single precision (256 positions: 1e-5 off the exact sum): a bound must
# be beaten by more than that. The levels stand at least 1.5 % apart, so 0.1 % costs nothing.
MARGIN = 1e-3


def item_rank(title: int, body: int) -> float:
    """ts_rank of a one-item query for a lexeme with ``title`` positions of weight A
    followed by ``body`` positions of weight D."""
    weights = [TITLE_WEIGHT] * title + [BODY_WEIGHT] * body
    return sum(weight / (i * i) for i, weight in enumerate(weights, 1)) / ZETA_2


@dataclass(frozen=True, slots=True)
class Level:
    """Keys at this level and above: the parts whose lexeme ranks at least ``floor``;
    a lexeme below the level ranks at most ``below``."""

    digit: str
    floor: float
    below: float


# docshelf_rank_keys (migration 0017): 3 = in the title and again (title twice, or title
# and body), 2 = in the title once, 1 = in the body only, twice or more, none = once in the
# body. Highest first; each floor is the least a lexeme of that level ranks, each below the
# most a lexeme of a lower level does.
LEVELS = (
    Level("3", floor=item_rank(1, 1), below=item_rank(1, 0)),
    Level("2", floor=item_rank(1, 0), below=item_rank(0, MAX_POSITIONS)),
    Level("1", floor=item_rank(0, 2), below=item_rank(0, 1)),
)
# Below the title level a prefix's lexemes are all body-only, at most FLAG_RUN - 1 of them
# where the part has no flag for the prefix's first three characters.
PREFIX_LEVEL = "2"
PREFIX_BELOW = (FLAG_RUN - 1) * item_rank(0, MAX_POSITIONS)


# -- what ts_rank will do with a query: read from PostgreSQL's own text of it -------------

_TOKEN = re.compile(
    r"\s*(?:'(?P<lexeme>(?:''|\\.|[^'\\])*)'(?::(?P<flags>[*ABCD]+))?"
    r"|(?P<op>[!&|()]|<->|<\d+>))"
)
_UNESCAPE = re.compile(r"''|\\(.)")


class _Parser:
    """A tsquery's text as PostgreSQL writes it (``tsquery.c``'s ``infix``): operands
    quoted, ``!`` binding tightest, then ``<->``/``<N>``, then ``&``, then ``|``."""

    def __init__(self, query: str) -> None:
        self.tokens: list[tuple[str, str, str]] = []
        at = 0
        while at < len(query.rstrip()):
            match = _TOKEN.match(query, at)
            if match is None:
                raise ValueError(f"not a tsquery at {at}: {query!r}")
            lexeme, flags, op = match.group("lexeme", "flags", "op")
            if op is None:
                self.tokens.append(
                    ("item", _UNESCAPE.sub(lambda m: m.group(1) or "'", lexeme), flags or "")
                )
            else:
                self.tokens.append(("op", op, ""))
            at = match.end()
        self.at = 0
        self.items: list[tuple[str, str]] = []
        self.negated = False

    def peek(self) -> str | None:
        return (
            self.tokens[self.at][1]
            if self.at < len(self.tokens) and self.tokens[self.at][0] == "op"
            else None
        )

    def parse(self) -> str:
        """The root: "or", "and", "phrase", "not" or "item"; the operands in ``items``."""
        root = self.binary(0)
        if self.at != len(self.tokens):
            raise ValueError(f"unexpected {self.tokens[self.at][1]!r}")
        return root

    def binary(self, rank: int) -> str:
        if rank == 3:
            return self.unary()
        kind = self.binary(rank + 1)
        while (op := self.peek()) is not None and _RANK_OF.get(op[0]) == rank:
            self.at += 1
            self.binary(rank + 1)
            kind = _KIND[rank]
        return kind

    def unary(self) -> str:
        if self.at >= len(self.tokens):
            raise ValueError("missing operand")
        kind, value, flags = self.tokens[self.at]
        self.at += 1
        if kind == "item":
            self.items.append((value, flags))
            return "item"
        if value == "!":
            self.negated = True
            self.unary()
            return "not"
        if value == "(":
            inner = self.binary(0)
            if self.peek() != ")":
                raise ValueError("unclosed parenthesis")
            self.at += 1
            return inner
        raise ValueError(f"unexpected {value!r}")


_RANK_OF = {"|": 0, "&": 1, "<": 2}
_KIND = {0: "or", 1: "and", 2: "phrase"}


@dataclass(frozen=True, slots=True)
class Shape:
    """What ts_rank sums for a query: its distinct items (lexeme → is a prefix)."""

    items: dict[str, bool]

    @classmethod
    def of(cls, query: str) -> Shape | None:
        """The shape of a tsquery's text, or None when its rank is no sum over its items
        (an ``AND`` or phrase of two items or more: ``calc_rank_and`` weighs their
        distance), or has a ``NOT`` or weights (never written by docshelf)."""
        parser = _Parser(query)
        root = parser.parse()
        items: dict[str, bool] = {}
        for lexeme, flags in parser.items:
            if set(flags) - {"*"}:
                return None
            # ts_rank keeps one of two equal items, prefix or not: assume the prefix.
            items[lexeme] = items.get(lexeme, False) or "*" in flags
        if parser.negated or not items or (root in ("and", "phrase") and len(items) > 1):
            return None
        return cls(items)


# -- probes: the keyed parts of one level, and what the rest could reach at most ----------


@dataclass(frozen=True, slots=True)
class Probe:
    """The parts keyed at ``level`` or above for one of the query's items, and the most
    that a matching part without such a key can rank."""

    level: str  # the lowest level's digit
    keys: str  # a tsquery over docshelf_rank_keys(tsv)
    bound: float  # no part without one of those keys ranks higher


def probes(shape: Shape) -> list[Probe]:
    """The levels worth trying, highest first: those at which any keyed part outranks
    every part without a key (so enough keyed parts settle the answer)."""
    found = []
    size = len(shape.items)
    for index, level in enumerate(LEVELS):
        above = LEVELS[: index + 1]
        bound = 0.0
        keys = []
        for lexeme, prefix in shape.items.items():
            if not prefix:
                bound += level.below
                keys += [_literal(digit.digit + lexeme) for digit in above]
            elif level.digit == PREFIX_LEVEL and len(lexeme) >= FLAG_STEM:
                bound += PREFIX_BELOW
                keys += [_literal(digit.digit + lexeme) + ":*" for digit in above]
                keys.append(_literal("+" + lexeme[:FLAG_STEM]))
            else:
                bound = math.inf
                break
        bound /= size
        if level.floor / size > bound:
            found.append(Probe(level.digit, " | ".join(keys), bound))
    return found


def _literal(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


# -- the SQL ------------------------------------------------------------------------------

# A filter that leaves fewer documents than this (a folder of a few hundred) is answered
# by ranking the matching parts of those documents, read through them: less than the
# keyed parts of the whole shelf, and no plan can go wrong on an estimate. Above it the
# probes run, then the planner's own choice.
MANY_DOCUMENTS = 2_000
# For this transaction: no JIT (compiling a plan whose estimate includes ranking every
# match took 120 ms, for a query that then ran a 10 ms probe) and no parallel workers
# (starting one cost more than the probes it served; the work is bounded by design).
_SETTINGS = (
    "set_config('jit', 'off', true), set_config('max_parallel_workers_per_gather', '0', true)"
)


def ranked(
    connection: Connection,
    query_sql: str,
    params: dict[str, object],
    where: str,
    columns: str,
    candidates: int,
) -> Sequence[Row[Any]]:
    """The best ``candidates`` parts for ``query_sql`` (a tsquery expression over
    ``params``, which also hold the filters' and ``headline``), best first, equal ranks
    by path and part: ``columns``, a ``snippet``, the ``score`` and the ``level`` of the
    probe that answered (None: every match was ranked).

    PostgreSQL's text of the query says whether it is ranked as a sum over its items, and
    which items those are, for the probes. One statement then tries the probes in order
    and ranks every match only when none of them settles the answer: what it does not
    need, it never runs.
    """
    statement = text(f"SELECT CAST({query_sql} AS text), {_SETTINGS}")
    query = connection.execute(statement, params).scalar_one()
    if not query:  # only stop words
        return []
    params = {**params, "q": query, "candidates": candidates}
    shape = Shape.of(query)
    tried = probes(shape) if shape is not None else []
    for index, probe in enumerate(tried):
        params[f"keys{index}"] = probe.keys
        params[f"bound{index}"] = probe.bound * (1 + MARGIN)
    if where:
        params["many"] = MANY_DOCUMENTS
    sql = _sql(where, columns, [probe.level for probe in tried])
    return connection.execute(text(sql), params).all()


def _sql(where: str, columns: str, levels: Sequence[str]) -> str:
    """One statement: a CTE ranking the keyed parts of each level in ``levels``, one
    ranking every match, and a union that reads the first whose answer is proven (each
    branch's condition is a one-time filter, and PostgreSQL runs a CTE only when something
    reads it). With filters, a ``gate`` says whether they leave many documents; if not,
    the filtered documents' parts are ranked instead (``few``)."""
    query = "CAST(:q AS tsquery)"
    ctes = []
    if where:
        ctes.append(f"""gate AS MATERIALIZED (
            SELECT count(*) = :many AS many
            FROM (SELECT 1 FROM documents d WHERE true{where} LIMIT :many) filtered)""")
    for index, level in enumerate(levels):
        # OFFSET 0: the keys' index finds the candidates and the query is checked on them
        # alone, never through the tsv index (a common word's whole posting list).
        ctes.append(f"""probe{index} AS MATERIALIZED (
            SELECT p.id, d.path, p.part, ts_rank(p.tsv, {query}) AS score, '{level}' AS level
            FROM (SELECT id, document_id, part, tsv FROM search_parts
                  WHERE docshelf_rank_keys(tsv) @@ CAST(:keys{index} AS tsquery)
                  OFFSET 0) p
            JOIN documents d ON d.id = p.document_id
            WHERE p.tsv @@ {query}{where}
            ORDER BY score DESC, d.path, p.part
            LIMIT :candidates),
        proven{index} AS MATERIALIZED (
            SELECT count(*) = :candidates AND min(score) > :bound{index} AS yes
            FROM probe{index})""")
    join = " JOIN documents d ON d.id = p.document_id" if where else ""
    ctes.append(_every_match("everything", f"search_parts p{join}", where, query))
    if where:
        # OFFSET 0: the parts are read through their documents, never the tsv index.
        few = f"""(SELECT p.id, p.document_id, p.part, p.tsv
                  FROM documents d JOIN search_parts p ON p.document_id = d.id
                  WHERE true{where} OFFSET 0) p"""
        ctes.append(_every_match("few", few, "", query))
    many = ["(SELECT many FROM gate)"] if where else []
    proven = [f"(SELECT yes FROM proven{index})" for index in range(len(levels))]
    branches = [
        f"SELECT * FROM probe{index} WHERE "
        + " AND ".join([*many, *(f"NOT {earlier}" for earlier in proven[:index]), proven[index]])
        for index in range(len(levels))
    ]
    unproven = [*many, *(f"NOT {condition}" for condition in proven)]
    branches.append(
        "SELECT * FROM everything" + (" WHERE " + " AND ".join(unproven) if unproven else "")
    )
    if where:
        branches.append("SELECT * FROM few WHERE NOT (SELECT many FROM gate)")
    union = "\n            UNION ALL ".join(branches)
    definitions = ",\n        ".join(ctes)
    return f"""
        WITH {definitions},
        best AS (
            {union})
        -- ts_rank, not ts_rank_cd: on the relevance shelf it finds 25 of 28 concepts in the
        -- top 3 where ts_rank_cd found 20. Neither knows inverse document frequency, which
        -- BM25 does (SQLite finds all 28). ts_headline re-parses the text: only the hits
        -- get one.
        SELECT {columns},
               ts_headline('{TS_CONFIG}', p.body, {query}, :headline) AS snippet,
               best.score, best.level
        FROM best JOIN search_parts p ON p.id = best.id
        JOIN documents d ON d.id = p.document_id
        ORDER BY best.score DESC, best.path, best.part"""


def _every_match(name: str, source: str, where: str, query: str) -> str:
    """A CTE ranking every match in ``source`` (as ``p``) on score alone, keeping every
    part tied with the last, then ordering those by path and part: the documents are
    joined to those few, not to every match."""
    return f"""{name} AS MATERIALIZED (
            SELECT ranked.id, d.path, ranked.part, ranked.score, NULL AS level
            FROM (SELECT p.id, p.document_id, p.part, ts_rank(p.tsv, {query}) AS score
                  FROM {source}
                  WHERE p.tsv @@ {query}{where}
                  ORDER BY score DESC
                  FETCH FIRST :candidates ROWS WITH TIES) ranked
            JOIN documents d ON d.id = ranked.document_id
            ORDER BY ranked.score DESC, d.path, ranked.part
            LIMIT :candidates)"""
