"""ledger core: cases, events, chain head, idempotency, outbox, counters

Revision ID: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "cases",
        sa.Column("case_id", sa.String(200), primary_key=True),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("updated_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "events",
        sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("case_id", sa.String(200), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("type", sa.String(200), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("recorded_at", sa.String(40), nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.UniqueConstraint("case_id", "version", name="uq_events_case_version"),
    )
    op.create_index("ix_events_case_id", "events", ["case_id"])
    op.create_table(
        "chain_head",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
    )
    op.bulk_insert(
        sa.table("chain_head", sa.column("id", sa.Integer), sa.column("seq", sa.BigInteger),
                 sa.column("hash", sa.String)),
        [{"id": 1, "seq": 0, "hash": "0" * 64}],
    )
    op.create_table(
        "idempotency",
        sa.Column("key", sa.String(300), primary_key=True),
        sa.Column("case_id", sa.String(200), nullable=False),
        sa.Column("result", sa.Text, nullable=False),
        sa.Column("recorded_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "outbox",
        sa.Column("job_id", sa.String(300), primary_key=True),
        sa.Column("topic", sa.String(200), nullable=False),
        sa.Column("case_id", sa.String(200), nullable=True),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("max_attempts", sa.Integer, nullable=False),
        sa.Column("available_at", sa.Float, nullable=False),
        sa.Column("lease_id", sa.String(64), nullable=True),
        sa.Column("lease_expires_at", sa.Float, nullable=True),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("done_at", sa.Float, nullable=True),
    )
    op.create_index("ix_outbox_topic", "outbox", ["topic"])
    op.create_index("ix_outbox_status", "outbox", ["status"])
    op.create_table(
        "counters",
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("value", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    for name in ("counters", "outbox", "idempotency", "chain_head", "events", "cases"):
        op.drop_table(name)
