"""2025-era HTTP sessions in the database, so every serving process knows them.

With ``serve --processes N`` (and replicas behind a load balancer) any process may
receive any request of a session: the one that answered ``initialize``, the one
holding its GET stream, the one a ``resources/subscribe`` reaches. Sessions are keyed
by the SHA-256 of their id; ``session_subscriptions`` go with their session.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("protocol_version", sa.String(32), nullable=False),
        sa.Column("capabilities", sa.LargeBinary(), nullable=False),
        sa.Column("client_info", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("stream_owner", sa.String(300), nullable=True),
        sa.Column("stream_beat", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_sessions_last_used_at", "sessions", ["last_used_at"])
    op.create_table(
        "session_subscriptions",
        sa.Column(
            "session_key",
            sa.String(64),
            sa.ForeignKey("sessions.key", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("uri", sa.String(8192), primary_key=True),
    )


def downgrade() -> None:
    op.drop_table("session_subscriptions")
    op.drop_index("ix_sessions_last_used_at", table_name="sessions")
    op.drop_table("sessions")
