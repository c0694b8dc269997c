"""rooms: live agent connections in the database, shared by every replica

Revision ID: rooms_0004
"""

import sqlalchemy as sa
from alembic import op

revision = "rooms_0004"
down_revision = "rooms_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rooms_connections",
        sa.Column("connection_id", sa.String(200), primary_key=True),
        sa.Column("agent_id", sa.String(64), nullable=False),
        sa.Column("incarnation", sa.Integer, nullable=False),
        sa.Column("scope", sa.String(10), nullable=False),
        sa.Column("filter", sa.String(10), nullable=False),
        sa.Column("spawn_capable", sa.Boolean, nullable=False),
        sa.Column("client", sa.Text, nullable=False),
        sa.Column("rooms", sa.Text, nullable=False),
        sa.Column("rooms_version", sa.Integer, nullable=False),
        sa.Column("rooms_reason", sa.Text, nullable=False),
        sa.Column("role_room", sa.String(64), nullable=True),
        sa.Column("role_name", sa.String(100), nullable=True),
        sa.Column("cursor", sa.BigInteger, nullable=False),
        sa.Column("last_beat", sa.Float, nullable=False),
        sa.Column("stream_token", sa.Integer, nullable=False),
        sa.Column("attached", sa.Boolean, nullable=False),
        sa.Column("evicted_token", sa.Integer, nullable=True),
        sa.Column("evicted_reason", sa.Text, nullable=True),
        sa.Column("dead_reason", sa.Text, nullable=True),
    )
    op.create_index("ix_rooms_connections_agent_id", "rooms_connections", ["agent_id"])


def downgrade() -> None:
    op.drop_index("ix_rooms_connections_agent_id", "rooms_connections")
    op.drop_table("rooms_connections")
