"""Indexes for listing documents newest or largest first (issue 28, ``list_documents``).

A listing pages by keyset on (sort value, id) (``storage.listing``): with an index in
that order, every page is a seek and a short scan, at 100,000 documents as at 100. The
path order has its index already (``uq_documents_shelf_path``). "Newest first" is the
index read backwards.

The tie-breaker is the id, not the URI: each index costs the catalog a write per new
document, and a 16-byte entry costs less than one holding the URI (bench/README.md,
"Listing benchmark").

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_documents_mtime", "documents", ["mtime_ns", "id"])
    op.create_index("ix_documents_size", "documents", ["size", "id"])


def downgrade() -> None:
    op.drop_index("ix_documents_size", table_name="documents")
    op.drop_index("ix_documents_mtime", table_name="documents")
