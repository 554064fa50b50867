"""Rank keys: PostgreSQL finds the best parts without ranking every match (issue 28).

``ts_rank`` needs each matching row's ``tsvector`` from the heap, so a word in a tenth of
400,000 parts cost 40,000 heap reads. ``docshelf_rank_keys(tsv)`` names, for one part, the
lexemes that rank it high for a query of that word, and a GIN index over it finds those
parts alone; ``storage.search_postgres`` ranks them and proves that no other part could
rank higher before it answers (otherwise it ranks every match, as before).

A key is a level digit and the lexeme: ``3`` the lexeme is in the title (weight A) and
occurs again, ``2`` it is in the title once, ``1`` it occurs twice or more in the body
only; once in the body gives no key (most lexemes). ``+`` and three characters: seven or
more of the part's lexemes begin with them, which bounds what a prefix query can add up.
The levels follow from ``ts_rank``'s sum over a lexeme's positions (the title's come
first) with its default weights, spelled out in ``storage.search_postgres``; the two must
change together. SQLite is untouched (FTS5 ranks inside its own index).

An expression index, not a column: nothing is stored in the rows, and existing databases
need no rewrite (building the index computes the keys once per row). ``COST`` tells the
planner that calling the function per row is dear, so it reads the index instead. A
search reads the index up to four times (``storage.search_postgres``), and every read
scans GIN's list of entries not yet merged into the index: after a bulk load the default
4 MB list cost 4.6 ms a read (513 pages for no match), so this index merges at 64 kB.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-28
"""

from __future__ import annotations

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

# tsvector lexemes are sorted (bytewise), so lexemes that share their first three
# characters are neighbours: a run of seven gives the flag once.
_RANK_KEYS = """
CREATE FUNCTION docshelf_rank_keys(tsv tsvector) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE COST 1000 AS $$
DECLARE
    entry record;
    keys text[] := '{}';
    title integer;
    stem text := '';
    run integer := 0;
BEGIN
    FOR entry IN SELECT lexeme, weights FROM unnest(tsv) LOOP
        title := cardinality(array_positions(entry.weights, 'A'));
        IF title >= 1 AND cardinality(entry.weights) >= 2 THEN
            keys := keys || ('3' || entry.lexeme);
        ELSIF title >= 1 THEN
            keys := keys || ('2' || entry.lexeme);
        ELSIF cardinality(entry.weights) >= 2 THEN
            keys := keys || ('1' || entry.lexeme);
        END IF;
        IF left(entry.lexeme, 3) = stem THEN
            run := run + 1;
        ELSE
            stem := left(entry.lexeme, 3);
            run := 1;
        END IF;
        IF run = 7 THEN
            keys := keys || ('+' || stem);
        END IF;
    END LOOP;
    RETURN array_to_tsvector(keys);
END $$"""

# A search within a folder (``path_prefix``) finds the folder's documents through this
# index (``path LIKE 'folder/%'``, whatever the database's collation) instead of reading
# every document's path.
_PATH_PREFIX = "CREATE INDEX ix_documents_path_prefix ON documents (path text_pattern_ops)"


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(_RANK_KEYS)
    op.execute(
        "CREATE INDEX ix_search_parts_rank_keys ON search_parts"
        " USING gin (docshelf_rank_keys(tsv)) WITH (gin_pending_list_limit = 64)"
    )
    op.execute(_PATH_PREFIX)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP INDEX IF EXISTS ix_documents_path_prefix")
    op.execute("DROP INDEX IF EXISTS ix_search_parts_rank_keys")
    op.execute("DROP FUNCTION IF EXISTS docshelf_rank_keys(tsvector)")
