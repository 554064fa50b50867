"""Index representations.store_key.

Removing a document asks, for each stored variant, whether another row still uses
it; without this index that is a table scan per key, and deleting a folder of
5,000 files slowed to ~80 files/s (bench/bench_live.py).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_representations_store_key", "representations", ["store_key"])


def downgrade() -> None:
    op.drop_index("ix_representations_store_key", table_name="representations")
