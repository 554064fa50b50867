"""A format fails alone; the change log tells caches apart from subscribers.

``documents.format_errors`` records, per MIME type, a format of a ready document
that could not be made from its current content (a rendered PDF that timed out,
say); the document keeps its other formats, its search rows and its ``ready`` state
(issue "Nothing lost on a first read"). Versions before this one recorded such a
failure as the document's own ``error_reason`` on a ``ready`` row, which hid its
formats from reads; those rows lose the error here, so the format is tried again the
next time someone asks for it.

``change_log.refreshed`` carries documents whose rows changed without a change of
content (a format built): other processes drop their cached rows, subscribers hear
nothing.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (SQLite takes it with a constant default), not a batch copy of the
    # table: the copy would lose change_log's AUTOINCREMENT, and ids must never be reused.
    op.add_column(
        "documents",
        sa.Column("format_errors", sa.JSON(), nullable=False, server_default=sa.text("'{}'")),
    )
    op.add_column(
        "change_log",
        sa.Column("refreshed", sa.JSON(), nullable=False, server_default=sa.text("'[]'")),
    )
    op.execute(
        "UPDATE documents SET error_reason = NULL, error_message = NULL "
        "WHERE state = 'ready' AND error_reason IS NOT NULL"
    )


def downgrade() -> None:
    op.drop_column("change_log", "refreshed")
    op.drop_column("documents", "format_errors")
