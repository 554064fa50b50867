"""Subscriptions to parts of documents (issue #10).

A session may subscribe to ``…/report.pdf?pages=3``; it hears about every change
to ``…/report.pdf``. Each subscription row now says which document it follows,
so the rows a change concerns are found by the document's URI.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("session_subscriptions") as batch:
        batch.add_column(sa.Column("document_uri", sa.String(8192), nullable=True))
    # Every subscription so far was to a whole document.
    op.execute("UPDATE session_subscriptions SET document_uri = uri")
    with op.batch_alter_table("session_subscriptions") as batch:
        batch.alter_column("document_uri", existing_type=sa.String(8192), nullable=False)
        batch.create_index("ix_session_subscriptions_document_uri", ["document_uri"])


def downgrade() -> None:
    with op.batch_alter_table("session_subscriptions") as batch:
        batch.drop_index("ix_session_subscriptions_document_uri")
        batch.drop_column("document_uri")
