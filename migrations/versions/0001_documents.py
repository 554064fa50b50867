"""Documents and their representations.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "documents",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("shelf", sa.String(64), nullable=False),
        sa.Column("path", sa.String(4096), nullable=False),
        sa.Column("uri", sa.String(8192), nullable=False, unique=True),
        sa.Column("name", sa.String(1024), nullable=False),
        sa.Column("mime_type", sa.String(255), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("mtime_ns", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("page_count", sa.Integer(), nullable=True),
        sa.Column("language", sa.String(35), nullable=True),
        sa.Column("facts", sa.JSON(), nullable=False),
        sa.Column("converter", sa.String(64), nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("error_reason", sa.String(32), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("modified_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("indexed_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("shelf", "path", name="uq_documents_shelf_path"),
    )
    op.create_index("ix_documents_shelf_mime", "documents", ["shelf", "mime_type"])
    op.create_table(
        "representations",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "document_id",
            sa.Integer(),
            sa.ForeignKey("documents.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("mime_type", sa.String(255), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("store_key", sa.String(512), nullable=False),
        sa.Column("converter", sa.String(64), nullable=False),
        sa.Column("converter_version", sa.String(32), nullable=False),
        sa.UniqueConstraint("document_id", "mime_type", name="uq_representations_doc_mime"),
    )
    op.create_index("ix_representations_document_id", "representations", ["document_id"])


def downgrade() -> None:
    op.drop_index("ix_representations_document_id", table_name="representations")
    op.drop_table("representations")
    op.drop_index("ix_documents_shelf_mime", table_name="documents")
    op.drop_table("documents")
