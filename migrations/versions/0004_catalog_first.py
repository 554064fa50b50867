"""Catalog first: a document is recorded before its content is hashed or converted.

``documents.sha256`` becomes nullable (a catalogued file has no hash until its
conversion reads it), and ``(state, size)`` is indexed: the conversion queue is
"pending documents, smallest first" (DESIGN D11). ``documents.detection`` records
the detection rule a file's type was decided by (``converters.detect.DETECTION_VERSION``),
so a new rule re-detects files that are otherwise unchanged; existing rows are NULL.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("documents") as batch:
        batch.alter_column("sha256", existing_type=sa.String(64), nullable=True)
        batch.add_column(sa.Column("detection", sa.Integer(), nullable=True))
    op.create_index("ix_documents_state_size", "documents", ["state", "size"])


def downgrade() -> None:
    op.drop_index("ix_documents_state_size", table_name="documents")
    op.execute("UPDATE documents SET sha256 = '' WHERE sha256 IS NULL")
    with op.batch_alter_table("documents") as batch:
        batch.drop_column("detection")
        batch.alter_column("sha256", existing_type=sa.String(64), nullable=False)
