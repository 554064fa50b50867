"""PostgreSQL's ranking without reading every match (issue 28, item 7).

Before: ``ts_rank`` ran on every part matching a query, so a common word read tens of
thousands of rows from the heap (p95 204 ms at 100,000 documents, ``python -m bench
search``). Now the parts whose rank keys (migration 0017) say they rank high are ranked
first, and the answer comes from them when no other part could rank among the hits
(``storage/search_postgres.py``). What these tests hold:

- the bounds are ``ts_rank``'s own numbers: the formula against PostgreSQL for every
  count of title and body positions, the keys function against the levels;
- the answer is the one ranking every match gives, on a shelf built to sit on the
  bounds (words repeated in the body, titles, a part whose many lexemes share a prefix),
  for generated queries with and without filters;
- a common word reads its keyed parts, not its matches (the defect, reproduced);
- the parser of PostgreSQL's tsquery text, by property.

The PostgreSQL tests skip without ``DOCSHELF_TEST_DATABASE_URL``; the rest run anyway.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from alembic import command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Connection, event, insert, inspect, text

from docshelf.converters.base import Segment
from docshelf.storage.database import Database, alembic_config
from docshelf.storage.models import Document
from docshelf.storage.search import (
    PER_DOCUMENT,
    Filters,
    SearchIndex,
    Term,
    add_name_rows,
    parse_query,
    replace_content,
    tsquery,
)
from docshelf.storage.search_postgres import (
    FLAG_RUN,
    LEVELS,
    MANY_DOCUMENTS,
    MARGIN,
    MAX_POSITIONS,
    PREFIX_BELOW,
    Shape,
    item_rank,
    probes,
    ranked,
)
from tests.support.databases import PostgresServer

COLUMNS = "d.uri, p.part, d.shelf, d.path, d.title, d.mime_type, p.kind, p.title AS heading"
HEADLINE = "MaxWords=8, MinWords=3, MaxFragments=1"


# -- the bounds: ts_rank's numbers ---------------------------------------------------------


def key_level(title: int, body: int) -> str | None:
    """The level docshelf_rank_keys gives a lexeme with ``title`` positions of weight A and
    ``body`` of weight D (migration 0017), or None for no key."""
    if title >= 1:
        return "3" if title + body >= 2 else "2"
    return "1" if body >= 2 else None


def every_count() -> Iterator[tuple[int, int]]:
    for title in range(MAX_POSITIONS + 1):
        for body in range(MAX_POSITIONS + 1 - title):
            if title + body:
                yield title, body


def test_every_levels_floor_is_its_least_rank_and_below_the_most_of_the_levels_under_it() -> None:
    ranks = {(title, body): item_rank(title, body) for title, body in every_count()}
    for level in LEVELS:
        at_or_above = [r for tb, r in ranks.items() if (key_level(*tb) or "0") >= level.digit]
        under = [r for tb, r in ranks.items() if (key_level(*tb) or "0") < level.digit]
        assert min(at_or_above) == level.floor
        assert max(under) == level.below
        assert level.floor > level.below
    # any title occurrence outranks any amount of body text: the gap the probes live on
    assert LEVELS[1].floor > PREFIX_BELOW == (FLAG_RUN - 1) * LEVELS[1].below
    # the margin for ts_rank's single precision leaves every gap open
    assert LEVELS[1].floor > PREFIX_BELOW * (1 + MARGIN)
    assert all(level.floor > level.below * (1 + MARGIN) for level in LEVELS)


def test_a_query_ranked_as_a_sum_gets_probes_whose_keyed_parts_outrank_the_rest() -> None:
    one_word = probes(Shape({"backup": False}))
    assert [probe.level for probe in one_word] == ["3", "2", "1"]
    assert one_word[0].keys == "'3backup'" and one_word[1].keys == "'3backup' | '2backup'"
    # any of up to six words: only the title level separates a keyed part from the rest
    six = probes(Shape({f"w{n}": False for n in range(6)}))
    assert [probe.level for probe in six] == ["2"]
    assert LEVELS[1].floor / 6 > six[0].bound
    assert probes(Shape({f"w{n}": False for n in range(7)})) == []
    # a prefix: its title keys and the flag of its first three characters
    (prefix,) = probes(Shape({"config": True}))
    assert prefix.keys == "'3config':* | '2config':* | '+con'" and prefix.bound == PREFIX_BELOW
    assert probes(Shape({"co": True})) == []  # too short for a flag
    assert probes(Shape({"config": True, "server": False})) == []


def test_keys_quote_what_postgresql_would_read_as_syntax() -> None:
    (probe, *_) = probes(Shape({"it's\\": False}))
    assert probe.keys == "'3it''s\\\\'"


# -- PostgreSQL's text of a tsquery, read back ----------------------------------------------


@dataclass(frozen=True)
class Node:
    op: str  # "item", "!", "|", "&", "<->", "<3>"
    lexeme: str = ""
    flags: str = ""
    children: tuple[Node, ...] = ()

    def kind(self) -> str:
        return {"item": "item", "!": "not", "|": "or", "&": "and"}.get(self.op, "phrase")

    def items(self) -> list[tuple[str, str]]:
        if self.op == "item":
            return [(self.lexeme, self.flags)]
        return [item for child in self.children for item in child.items()]


PRIORITY = {"|": 1, "&": 2, "!": 4}


def priority(node: Node) -> int:
    return 5 if node.op == "item" else PRIORITY.get(node.op, 3)


def render(node: Node, parent: int = 0, right_of_phrase: bool = False) -> str:
    """As tsquery.c's ``infix`` writes it: operands quoted, a child in parentheses when it
    binds less tightly than its parent (or is a phrase right of a phrase)."""
    if node.op == "item":
        quoted = node.lexeme.replace("'", "''").replace("\\", "\\\\")
        return f"'{quoted}'" + (f":{node.flags}" if node.flags else "")
    mine = priority(node)
    if node.op == "!":
        inner = "!" + render(node.children[0], mine)
        return f"( {inner} )" if mine < parent else inner
    left, right = node.children
    phrase = node.op not in ("|", "&")
    inner = f"{render(left, mine)} {node.op} {render(right, mine, phrase)}"
    return f"( {inner} )" if mine < parent or (phrase and right_of_phrase) else inner


lexemes = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=6)
flags = st.tuples(st.booleans(), st.sets(st.sampled_from("ABCD"))).map(
    lambda f: ("*" if f[0] else "") + "".join(sorted(f[1]))
)
leaves = st.builds(lambda lexeme, flag: Node("item", lexeme, flag), lexemes, flags)
operators = st.sampled_from(["|", "&", "<->", "<2>", "<13>"])
trees = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.builds(lambda child: Node("!", children=(child,)), inner),
        st.builds(lambda op, a, b: Node(op, children=(a, b)), operators, inner, inner),
    ),
    max_leaves=8,
)


def shape_of(node: Node) -> Shape | None:
    """What Shape.of must say for a tree: a sum over its distinct items unless it holds a
    NOT or weights, or its root is an AND or a phrase of two items or more."""
    items = node.items()
    if any(set(flag) - {"*"} for _, flag in items) or has_not(node):
        return None
    distinct: dict[str, bool] = {}
    for lexeme, flag in items:
        distinct[lexeme] = distinct.get(lexeme, False) or flag == "*"
    if node.kind() in ("and", "phrase") and len(distinct) > 1:
        return None
    return Shape(distinct)


def has_not(node: Node) -> bool:
    return node.op == "!" or any(has_not(child) for child in node.children)


@given(trees)
@settings(max_examples=300)
def test_the_shape_of_a_tsquery_is_read_from_its_text(tree: Node) -> None:
    assert Shape.of(render(tree)) == shape_of(tree)


def test_text_that_is_no_tsquery_is_refused() -> None:
    for broken in ("'a", "'a' &", "( 'a'", "'a' )", "& 'a'", "'a' 'b'", "a"):
        with pytest.raises(ValueError):
            Shape.of(broken)


# -- on PostgreSQL ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def module_database(postgres_server: PostgresServer) -> Iterator[Database]:
    url = postgres_server.create()
    database = Database(url.render_as_string(hide_password=False))
    try:
        database.upgrade()
        yield database
    finally:
        database.dispose()
        postgres_server.drop(url)


def test_ts_rank_is_item_rank_and_the_keys_are_the_levels(module_database: Database) -> None:
    counts = [(t, b) for t in range(4) for b in range(12) if t + b] + [(0, 256), (1, 255)]
    with module_database.engine.connect() as connection:
        for title, body in counts:
            vector = (
                "setweight(to_tsvector('docshelf', :title), 'A')"
                " || setweight(to_tsvector('docshelf', :body), 'D')"
            )
            rank, keys = connection.execute(
                text(f"SELECT ts_rank({vector}, 'word'), docshelf_rank_keys({vector})"),
                {"title": "word " * title + "heading", "body": "word " * body + "text"},
            ).one()
            # single precision, summed over up to 256 positions
            assert rank == pytest.approx(item_rank(title, body), rel=MARGIN / 10), (title, body)
            level = key_level(title, body)
            levels = {key[0] for key in keys.split("'")[1::2] if key[1:] == "word"}
            assert levels == ({level} if level else set()), (title, body, keys)


def test_seven_lexemes_that_share_three_characters_set_a_flag(module_database: Database) -> None:
    words = ["conference", "configure", "confirm", "conflict", "conform", "connect", "consist"]
    with module_database.engine.connect() as connection:

        def keys(body: str) -> set[str]:
            value = connection.execute(
                text("SELECT docshelf_rank_keys(to_tsvector('docshelf', :body))"), {"body": body}
            ).scalar_one()
            return set(value.split("'")[1::2])

        assert "+con" in keys(" ".join(words[:FLAG_RUN]))
        assert "+con" not in keys(" ".join(words[: FLAG_RUN - 1]))
        assert keys("") == set()


def test_the_shape_is_read_from_postgresqls_own_text(module_database: Database) -> None:
    """PostgreSQL writes the text that Shape.of reads: the same trees, through the server."""
    with module_database.engine.connect() as connection:

        @given(trees)
        @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        def run(tree: Node) -> None:
            written = connection.execute(
                text("SELECT CAST(CAST(:query AS tsquery) AS text)"), {"query": render(tree)}
            ).scalar_one()
            assert Shape.of(written) == shape_of(tree)

        run()


# -- a shelf that sits on the bounds ----------------------------------------------------------

SYLLABLES = [c + v for c in "bdgklmnprstvz" for v in "aeiou"]
COMMON = "quillet"  # in the body of 2,000 parts, the title of 40
FAMILY = "xyl"  # twelve lexemes begin with it in one part's body (no made-up word does)
SHELF_SIZE = 2_400  # more than MANY_DOCUMENTS: a shelf filter still leaves probes open


def shelf_documents(seed: int = 28) -> Iterator[tuple[dict[str, Any], list[Segment]]]:
    """Made-up words with a Zipf distribution, folders of 100, and the parts on the bounds."""
    rng = random.Random(seed)
    words = sorted({"".join(rng.choices(SYLLABLES, k=rng.randint(2, 3))) for _ in range(200)})
    weights = [1 / rank for rank in range(1, len(words) + 1)]
    now = datetime.now(UTC)
    for number in range(SHELF_SIZE):
        pdf = number % 4 == 0
        path = f"folder-{number // 100:02d}/{'-'.join(rng.choices(words, k=2))}-{number}"
        path += ".pdf" if pdf else ".md"
        title = " ".join(rng.choices(words, weights, k=3))
        bodies = [rng.choices(words, weights, k=30) for _ in range(2)]
        headings = [" ".join(rng.choices(words, weights, k=2)) for _ in range(2)]
        if number < 2_000:
            bodies[0].append(COMMON)
        if number % 60 == 0:
            headings[1] = f"{COMMON} {headings[1]}"
        if number % 97 == 0:  # the same word twice in a heading, or a word many times
            headings[0] = f"{words[5]} {words[5]}"
            bodies[1] += [words[7]] * 50
        if number == 1_234:
            bodies[1] += [
                f"{FAMILY}{s}{t}" for s, t in zip(SYLLABLES[:12], SYLLABLES[20:32], strict=True)
            ]
        if number % 50 == 7:
            title = f"{FAMILY}vax {title}"
        mime_type = "application/pdf" if pdf else "text/markdown"
        row = dict(id=number + 1, shelf="bench", path=path, uri=f"docshelf://bench/{path}")
        row.update(name=path, mime_type=mime_type, size=1, mtime_ns=0, title=title)
        row.update(modified_at=now, indexed_at=now)  # state ready, no facts: the defaults
        segments = [
            Segment(f"section=s{n}", heading, " ".join(body))
            for n, (heading, body) in enumerate(zip(headings, bodies, strict=True))
        ]
        yield row, segments


@pytest.fixture(scope="module")
def shelf(module_database: Database) -> Database:
    made = list(shelf_documents())
    with module_database.session() as session:
        session.execute(insert(Document.__table__), [row for row, _ in made])
        add_name_rows(session, [int(str(row["id"])) for row, _ in made])
        for row, segments in made:
            replace_content(session, int(str(row["id"])), segments)
    with module_database.engine.connect() as connection:
        connection.execution_options(isolation_level="AUTOCOMMIT").execute(text("ANALYZE"))
    return module_database


def vocabulary(database: Database) -> list[str]:
    """The shelf's lexemes of letters (not the paths' numbers)."""
    with database.engine.connect() as connection:
        return [
            row[0]
            for row in connection.execute(
                text(
                    "SELECT word FROM ts_stat('SELECT tsv FROM search_parts')"
                    " WHERE word ~ '^[a-z]+$' ORDER BY word"
                )
            )
        ]


def exhaustive(
    connection: Connection, terms: list[Term], every: bool, filters: Filters, count: int
) -> list[tuple[str, str, float]]:
    """The answer as before migration 0017: every match ranked, equal ranks by path and part."""
    pieces, params = tsquery(terms)
    where, filter_params = filters.where()
    query = "(" + (" && " if every else " || ").join(pieces) + ")"
    rows = connection.execute(
        text(
            f"SELECT d.uri, p.part, ts_rank(p.tsv, {query}) AS score"
            " FROM search_parts p JOIN documents d ON d.id = p.document_id"
            f" WHERE p.tsv @@ {query}{where} ORDER BY score DESC, d.path, p.part LIMIT :count"
        ),
        {**params, **filter_params, "count": count},
    ).all()
    return [(row.uri, row.part, row.score) for row in rows]


def fast(
    connection: Connection, terms: list[Term], every: bool, filters: Filters, count: int
) -> tuple[list[tuple[str, str, float]], set[str | None]]:
    """The product's ranking of the same pass, and which level answered (None: every match)."""
    pieces, params = tsquery(terms)
    where, filter_params = filters.where("postgresql")
    query = "(" + (" && " if every else " || ").join(pieces) + ")"
    rows = ranked(
        connection, query, {**params, **filter_params, "headline": HEADLINE}, where, COLUMNS, count
    )
    return [(row.uri, row.part, row.score) for row in rows], {row.level for row in rows}


FILTERS = [
    Filters(),
    Filters(shelf="bench"),
    Filters(mime_type="application/pdf"),
    Filters(path_prefix="folder-07/"),
]


def test_the_answer_is_the_one_ranking_every_match_gives(shelf: Database) -> None:
    """Each word of the shelf, a prefix of it, alone and with others, every filter: the
    same parts, scores and order as ranking every match, while the probes answer most."""
    words = vocabulary(shelf)
    rng = random.Random(7)
    answered: dict[str | None, int] = {}
    with shelf.engine.connect() as connection:
        for word in [*rng.sample(words, 15), COMMON, f"{FAMILY}*", COMMON[:4] + "*"]:
            for query in (word, word[:4] + "*", f"{word} {rng.choice(words)}"):
                terms = list(parse_query(query))
                for every in (True, False) if len(terms) > 1 else (True,):
                    for filters in FILTERS:
                        count = 10 * PER_DOCUMENT
                        expected = exhaustive(connection, terms, every, filters, count)
                        got, levels = fast(connection, terms, every, filters, count)
                        assert [(u, p) for u, p, _ in got] == [(u, p) for u, p, _ in expected], (
                            query,
                            every,
                            filters,
                        )
                        assert [s for *_, s in got] == pytest.approx([s for *_, s in expected])
                        for level in levels:
                            answered[level] = answered.get(level, 0) + 1
    assert answered.get("2", 0) + answered.get("3", 0) > 30, answered
    assert answered.get(None, 0) > 30, answered


def test_generated_queries_rank_as_every_match_does(shelf: Database) -> None:
    words = st.sampled_from([COMMON, f"{FAMILY}*", f"{FAMILY}vax", COMMON[:3] + "*", "ba*"])

    @given(st.lists(words, min_size=1, max_size=6), st.booleans(), st.sampled_from(FILTERS))
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    def run(chosen: list[str], every: bool, filters: Filters) -> None:
        terms = list(parse_query(" ".join(chosen)))
        with shelf.engine.connect() as connection:
            expected = exhaustive(connection, terms, every, filters, 30)
            got, _ = fast(connection, terms, every, filters, 30)
        assert [(u, p) for u, p, _ in got] == [(u, p) for u, p, _ in expected]

    run()


def test_a_part_whose_many_lexemes_share_a_prefix_outranks_the_titles(shelf: Database) -> None:
    """Twelve lexemes beginning with "xyl", once each, sum above one title occurrence:
    the flag puts that part among the candidates of a prefix query, and it comes first."""
    hits = SearchIndex(shelf).search(f"{FAMILY}*", limit=10)
    assert hits[0].document_uri.endswith("-1234.md") and hits[0].part == "section=s1"
    assert hits[0].score > LEVELS[1].floor and hits[0].score > hits[1].score


def test_a_common_word_reads_its_keyed_parts_not_its_matches(shelf: Database) -> None:
    """The defect: ranking read every match's row. 2,000 parts hold the word, 40 in a
    heading; ranking now reads the keyed ones and the hits."""
    statements: list[tuple[str, Any]] = []

    def capture(conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        statements.append((statement, parameters))

    event.listen(shelf.engine, "before_cursor_execute", capture)
    try:
        hits = SearchIndex(shelf).search(COMMON, limit=10)
    finally:
        event.remove(shelf.engine, "before_cursor_execute", capture)
    assert len(hits) == 10
    statement, parameters = statements[-1]
    with shelf.engine.connect() as connection:
        cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + statement, parameters)
        (plan,) = cursor.fetchone()
        matches = connection.execute(
            text("SELECT count(*) FROM search_parts WHERE tsv @@ plainto_tsquery('docshelf', :w)"),
            {"w": COMMON},
        ).scalar_one()
    assert matches > 2_000
    assert rows_read(plan[0]["Plan"], "search_parts") < 200


def rows_read(node: dict[str, Any], table: str) -> int:
    """Rows a plan read from ``table``'s heap, kept or not, in every node below ``node``."""
    read = 0
    if node.get("Relation Name") == table and "Index Only" not in node["Node Type"]:
        loops = node.get("Actual Loops", 0)
        read += (node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)) * loops
        read += node.get("Rows Removed by Index Recheck", 0)
    return read + sum(rows_read(child, table) for child in node.get("Plans", []))


def test_a_small_folder_is_ranked_whole_and_a_big_filter_still_probes(shelf: Database) -> None:
    with shelf.engine.connect() as connection:
        terms = list(parse_query(COMMON))
        _, levels = fast(connection, terms, True, Filters(path_prefix="folder-07/"), 30)
        assert levels == {None}  # a hundred documents: fewer than MANY_DOCUMENTS
        _, levels = fast(connection, terms, True, Filters(shelf="bench"), 30)
        assert levels <= {"2", "3"} and SHELF_SIZE > MANY_DOCUMENTS


def test_a_path_prefix_is_literal_and_case_sensitive(shelf: Database) -> None:
    """On PostgreSQL the prefix is a LIKE pattern (for the path index): its ``_``, ``%``
    and ``\\`` stand for themselves, as in the exhaustive ranking's substr() test."""
    terms = list(parse_query(COMMON))
    with shelf.engine.connect() as connection:
        for prefix in ("folder_07/", "folder-07%", "folder-0\\", "FOLDER-07/", "folder-07/"):
            filters = Filters(path_prefix=prefix)
            got, _ = fast(connection, terms, True, filters, 30)
            assert got == exhaustive(connection, terms, True, filters, 30)
            assert bool(got) == (prefix == "folder-07/")


def test_an_and_or_a_phrase_ranks_every_match(shelf: Database) -> None:
    with shelf.engine.connect() as connection:
        for query in (f"{COMMON} zorvax", f'"{COMMON} zorvax"'):
            _, levels = fast(connection, list(parse_query(query)), True, Filters(), 30)
            assert levels <= {None}


def test_stop_words_alone_find_nothing(shelf: Database) -> None:
    assert SearchIndex(shelf).search("the and of") == []


# -- the migration ----------------------------------------------------------------------------


def test_the_migration_indexes_an_existing_database_and_goes_down_again(
    postgres_url: str,
) -> None:
    database = Database(postgres_url)
    try:
        config = alembic_config(database.engine)
        command.upgrade(config, "0016")
        made = list(shelf_documents())[:50]
        with database.session() as session:
            session.execute(insert(Document.__table__), [row for row, _ in made])
            add_name_rows(session, [int(str(row["id"])) for row, _ in made])
            for row, segments in made:
                replace_content(session, int(str(row["id"])), segments)
        database.upgrade()
        indexes = {index["name"] for index in inspect(database.engine).get_indexes("search_parts")}
        assert "ix_search_parts_rank_keys" in indexes
        indexes = {index["name"] for index in inspect(database.engine).get_indexes("documents")}
        assert "ix_documents_path_prefix" in indexes
        with database.engine.connect() as connection:
            keyed = connection.execute(
                text(
                    "SELECT count(*) FROM search_parts"
                    " WHERE docshelf_rank_keys(tsv) @@ CAST(:keys AS tsquery)"
                ),
                {"keys": f"'3{COMMON}' | '2{COMMON}'"},
            ).scalar_one()
        assert keyed == 1  # document 0 has the word in a heading
        assert SearchIndex(database).search(COMMON, limit=50)
        command.downgrade(config, "0016")
        indexes = {index["name"] for index in inspect(database.engine).get_indexes("search_parts")}
        assert "ix_search_parts_rank_keys" not in indexes
        indexes = {index["name"] for index in inspect(database.engine).get_indexes("documents")}
        assert "ix_documents_path_prefix" not in indexes
        with database.engine.connect() as connection:
            assert not connection.execute(
                text("SELECT 1 FROM pg_proc WHERE proname = 'docshelf_rank_keys'")
            ).all()
    finally:
        database.dispose()


@pytest.mark.sqlite_only
def test_sqlite_gets_none_of_it(database_url: str) -> None:
    database = Database(database_url)
    try:
        database.upgrade()
        with database.engine.connect() as connection:
            names = {row[0] for row in connection.execute(text("SELECT name FROM sqlite_master"))}
        assert not {"ix_documents_path_prefix", "ix_search_parts_rank_keys"} & names
    finally:
        database.dispose()
