"""A file nothing reads is ``unsupported``, with the reason, and jobs count such files.

Versions before this one listed such a file as ``original`` and said nothing about why
(issue 25, "Unsupported is a state, not silence"). Its reason is ``unsupported`` and its
message names its type; the next index pass (a new detection rule) looks at each again,
and queues those a converter now reads.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "jobs", sa.Column("unsupported", sa.Integer(), nullable=False, server_default="0")
    )
    op.execute(
        "UPDATE documents SET state = 'unsupported', error_reason = 'unsupported', "
        "error_message = 'no converter for ' || mime_type WHERE state = 'original'"
    )


def downgrade() -> None:
    op.execute(
        "UPDATE documents SET state = 'original', error_reason = NULL, error_message = NULL "
        "WHERE state = 'unsupported'"
    )
    op.drop_column("jobs", "unsupported")
