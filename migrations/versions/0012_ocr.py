"""Documents say whether their image-only pages were read by OCR (issue 26).

``documents.ocr`` is NULL for a document no page of which needs OCR, else the state of its
second, OCR pass (``storage.models.OcrState``). Documents converted before this version have
not been looked at for pages without text; the next converter upgrade converts them again.
A representation's ``converter_version`` grows to 64 characters: an OCR pass's version names
the engine and its languages (``5+ocr-rapidocr-1.4-en``).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("documents", sa.Column("ocr", sa.String(16), nullable=True))
    op.create_index("ix_documents_ocr", "documents", ["ocr"])
    with op.batch_alter_table("representations") as batch:
        batch.alter_column(
            "converter_version",
            type_=sa.String(64),
            existing_type=sa.String(32),
            existing_nullable=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("representations") as batch:
        batch.alter_column(
            "converter_version",
            type_=sa.String(32),
            existing_type=sa.String(64),
            existing_nullable=False,
        )
    op.drop_index("ix_documents_ocr", "documents")
    op.drop_column("documents", "ocr")
