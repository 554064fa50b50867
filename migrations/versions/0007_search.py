"""The full-text index (issue #10): SQLite FTS5, or PostgreSQL tsvector with GIN.

``search_parts`` holds what is searched: for every document one *name* row (its
title and path, written by the indexer in the transaction that catalogues the
document, so it is findable at once, and kept current by a trigger on
``documents``) and, once its text exists, one *content* row per page or section
(written by the format builder, ``storage.search``). Rows go with their document
(``ON DELETE CASCADE``).

SQLite searches an external-content FTS5 table over ``search_parts`` (kept in
step by triggers): the unicode61 tokenizer with diacritics folded, under the
Porter stemmer, ranked by BM25. PostgreSQL searches a generated ``tsvector``
column (English configuration: stemmed; the title weighs more) through a GIN
index.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

# kind: 0 = the document's name row, 1 = a content row (storage.search).
_SQLITE = [
    """CREATE VIRTUAL TABLE search_fts USING fts5(
        title, body, content='search_parts', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER search_parts_ai AFTER INSERT ON search_parts BEGIN
        INSERT INTO search_fts(rowid, title, body) VALUES (new.id, new.title, new.body);
    END""",
    """CREATE TRIGGER search_parts_ad AFTER DELETE ON search_parts BEGIN
        INSERT INTO search_fts(search_fts, rowid, title, body)
        VALUES ('delete', old.id, old.title, old.body);
    END""",
    """CREATE TRIGGER search_parts_au AFTER UPDATE ON search_parts BEGIN
        INSERT INTO search_fts(search_fts, rowid, title, body)
        VALUES ('delete', old.id, old.title, old.body);
        INSERT INTO search_fts(rowid, title, body) VALUES (new.id, new.title, new.body);
    END""",
    """CREATE TRIGGER documents_search_au AFTER UPDATE OF title, path ON documents
    WHEN old.title IS NOT new.title OR old.path IS NOT new.path
    BEGIN
        UPDATE search_parts
        SET title = new.title, body = new.path
        WHERE document_id = new.id AND kind = 0;
    END""",
    """INSERT INTO search_parts(document_id, kind, part, title, body)
        SELECT id, 0, '', title, path FROM documents""",
]

# PostgreSQL's parser reads "guides/report.pdf" as one file-path token: the name row
# spells the path's words out.
_PG_NAME_BODY = "regexp_replace(new.path, '[/._-]+', ' ', 'g')"
# The "docshelf" text search configuration is English with diacritics folded first
# (unaccent, a trusted contrib extension since PostgreSQL 13), as FTS5's unicode61
# remove_diacritics does on SQLite: "cafe" finds "Café" on both engines.
_POSTGRES = [
    "CREATE EXTENSION IF NOT EXISTS unaccent",
    "CREATE TEXT SEARCH CONFIGURATION docshelf (COPY = english)",
    """ALTER TEXT SEARCH CONFIGURATION docshelf
        ALTER MAPPING FOR hword, hword_part, word WITH unaccent, english_stem""",
    """ALTER TABLE search_parts ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('docshelf', coalesce(title, '')), 'A')
        || setweight(to_tsvector('docshelf', body), 'D')) STORED""",
    "CREATE INDEX ix_search_parts_tsv ON search_parts USING gin (tsv)",
    f"""CREATE FUNCTION documents_search_name() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE search_parts SET title = new.title, body = {_PG_NAME_BODY}
        WHERE document_id = new.id AND kind = 0;
        RETURN NULL;
    END $$""",
    """CREATE TRIGGER documents_search_au AFTER UPDATE OF title, path ON documents
        FOR EACH ROW
        WHEN (old.title IS DISTINCT FROM new.title OR old.path IS DISTINCT FROM new.path)
        EXECUTE FUNCTION documents_search_name()""",
    """INSERT INTO search_parts(document_id, kind, part, title, body)
        SELECT id, 0, '', title,
               regexp_replace(path, '[/._-]+', ' ', 'g')
        FROM documents""",
]


def upgrade() -> None:
    op.create_table(
        "search_parts",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "document_id",
            sa.Integer(),
            sa.ForeignKey("documents.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("kind", sa.SmallInteger(), nullable=False),
        sa.Column("part", sa.String(300), nullable=False),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("body", sa.Text(), nullable=False),
    )
    op.create_index("ix_search_parts_document_id", "search_parts", ["document_id"])
    dialect = op.get_bind().dialect.name
    for statement in _SQLITE if dialect == "sqlite" else _POSTGRES:
        op.execute(statement)
    # Every document is converted again by the new converter versions, which also
    # hand the builder its text for the content rows.


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS documents_search_au")
        op.execute("DROP TABLE IF EXISTS search_fts")
    else:
        op.execute("DROP TRIGGER IF EXISTS documents_search_au ON documents")
        op.execute("DROP FUNCTION IF EXISTS documents_search_name()")
    op.drop_index("ix_search_parts_document_id", table_name="search_parts")
    op.drop_table("search_parts")
    if op.get_bind().dialect.name == "postgresql":
        # The extension stays: other schemas in the database may use it.
        op.execute("DROP TEXT SEARCH CONFIGURATION IF EXISTS docshelf")
