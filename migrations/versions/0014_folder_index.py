"""Folders as resources (SEP-2093): a byte-order index of paths on PostgreSQL.

A folder's documents are the paths starting with its prefix, found as one range of
the ``(shelf, path)`` index (storage.folders). That holds when paths compare byte by
byte: SQLite's default collation does, PostgreSQL's default is the database's
(``en_US.utf8`` in the official image), under which ``"a/b"`` sorts between ``"a-c"``
and ``"ab"``. So on PostgreSQL the folder queries compare ``path COLLATE "C"``, on an
index made for them. SQLite needs nothing.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28
"""

from __future__ import annotations

from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

INDEX = "ix_documents_shelf_path_bytes"


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f'CREATE INDEX {INDEX} ON documents (shelf, path COLLATE "C")')


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP INDEX {INDEX}")
