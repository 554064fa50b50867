"""Documents that live in a bucket, and conversion shared by every host (issue 27).

``documents.change_key`` is the object's ETag for a shelf in an S3-compatible bucket (NULL for
a file in a folder, whose size and mtime say whether it changed): an object rewritten within
the same second with the same size has a new ETag and nothing else new.

``documents.lease_holder`` and ``documents.lease_expires`` say which process converts a pending
document and until when: every host takes pending documents under a lease
(``SELECT … FOR UPDATE SKIP LOCKED`` on PostgreSQL), renews it while it works, and a host that
dies leaves its documents to the others once the lease runs out.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("documents", sa.Column("change_key", sa.String(256), nullable=True))
    op.add_column("documents", sa.Column("lease_holder", sa.String(128), nullable=True))
    op.add_column(
        "documents", sa.Column("lease_expires", sa.DateTime(timezone=True), nullable=True)
    )


def downgrade() -> None:
    op.drop_column("documents", "lease_expires")
    op.drop_column("documents", "lease_holder")
    op.drop_column("documents", "change_key")
