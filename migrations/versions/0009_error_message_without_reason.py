"""A failed document's message no longer repeats its reason.

Versions before the catalog-first queue (migration 0004) stored a conversion
error's ``str()``, which is ``"reason: message"``, as ``error_message``: shown as
``reason: message`` (``docshelf index``, the admin API, ``_meta``) the reason came
twice, ``corrupt: corrupt: not a readable PDF``. Such rows are kept until their file
changes, so the prefix is cut here; newer versions store the message alone.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # SUBSTR/LENGTH/|| mean the same on SQLite and PostgreSQL; no LIKE: "_" in
    # "too_large" would be a wildcard.
    op.execute(
        "UPDATE documents SET error_message = SUBSTR(error_message, LENGTH(error_reason) + 3) "
        "WHERE error_reason IS NOT NULL "
        "AND SUBSTR(error_message, 1, LENGTH(error_reason) + 2) = error_reason || ': '"
    )


def downgrade() -> None:
    pass  # older versions show a message without the prefix just as well
