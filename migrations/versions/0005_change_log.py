"""The change log: every change set any process publishes, for the others to follow.

Serving processes sharing one database (``serve --processes N``, ``serve --no-index``
replicas) read the rows other processes appended since their last look and hand
them to their own listeners (``storage.changefeed``). Rows are kept for minutes,
not as history. SQLite gets ``AUTOINCREMENT`` so an id is never reused after old
rows are pruned: followers remember the last id they read.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "change_log",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("origin", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("added", sa.JSON(), nullable=False),
        sa.Column("removed", sa.JSON(), nullable=False),
        sa.Column("changed", sa.JSON(), nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_change_log_created_at", "change_log", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_change_log_created_at", table_name="change_log")
    op.drop_table("change_log")
