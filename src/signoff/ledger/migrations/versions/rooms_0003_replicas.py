"""rooms: deliveries by sequence (a replica reads the range another replica applied)

Revision ID: rooms_0003
"""

from alembic import op

revision = "rooms_0003"
down_revision = "rooms_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_rooms_deliveries_seq", "rooms_deliveries", ["seq"])


def downgrade() -> None:
    op.drop_index("ix_rooms_deliveries_seq", "rooms_deliveries")
