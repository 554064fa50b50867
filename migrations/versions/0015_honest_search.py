"""An index for counting what a search could not read (issue 28, honest search).

Every ``search_documents`` answer says how many documents within its filters are pending,
failed or unsupported (``storage.completeness``). ``(state, shelf, path, mime_type)``
holds every column that count reads, so it never leaves the index: at 100,000 pending
documents the count within a folder read 100,000 rows of the table (~250 ms) without it.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_documents_state_shelf_path", "documents", ["state", "shelf", "path", "mime_type"]
    )


def downgrade() -> None:
    op.drop_index("ix_documents_state_shelf_path", table_name="documents")
