"""agents: metered model calls (budget reservations and rate limits)

Revision ID: agents_0001
"""

import sqlalchemy as sa
from alembic import op

revision = "agents_0001"
down_revision = "0001"
branch_labels = ("agents",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_calls",
        sa.Column("call_id", sa.String(64), primary_key=True),
        sa.Column("client", sa.String(200), nullable=False),
        sa.Column("role", sa.String(100), nullable=False),
        sa.Column("provider", sa.String(40), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("reserved_micros", sa.BigInteger, nullable=False),
        sa.Column("charged_micros", sa.BigInteger, nullable=True),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("started_at", sa.Float, nullable=False),
        sa.Column("finished_at", sa.Float, nullable=True),
    )
    op.create_index("ix_agent_calls_started_at", "agent_calls", ["started_at"])


def downgrade() -> None:
    op.drop_table("agent_calls")
