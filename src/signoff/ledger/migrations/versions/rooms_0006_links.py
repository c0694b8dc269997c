"""rooms: room links (`link_rooms`: a directed link from one room to another, with a label)

A new table of a new event (`room.linked`, `room.unlinked`): no earlier event fills it, so nothing
is replayed.

Revision ID: rooms_0006
"""

import sqlalchemy as sa
from alembic import op

revision = "rooms_0006"
down_revision = "rooms_0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rooms_room_links",
        sa.Column("source_room_id", sa.String(64), primary_key=True),
        sa.Column("target_room_id", sa.String(64), primary_key=True),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("linked_by", sa.String(100), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("rooms_room_links")
