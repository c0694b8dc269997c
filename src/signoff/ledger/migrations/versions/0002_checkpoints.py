"""ledger: signed checkpoints of the audit chain's head

Revision ID: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "checkpoints",
        sa.Column("seq", sa.BigInteger, primary_key=True),
        sa.Column("head_hash", sa.String(64), nullable=False),
        sa.Column("signed_at", sa.String(40), nullable=False),
        sa.Column("keyid", sa.String(64), nullable=False),
        sa.Column("signature", sa.String(128), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("checkpoints")
