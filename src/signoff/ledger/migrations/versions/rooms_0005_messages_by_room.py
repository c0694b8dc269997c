"""rooms: messages by room and sequence (a room's latest page reads the index backwards, not a sort)

Revision ID: rooms_0005
"""

from alembic import op

revision = "rooms_0005"
down_revision = "rooms_0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_rooms_messages_room_seq", "rooms_messages", ["room_id", "seq"])


def downgrade() -> None:
    op.drop_index("ix_rooms_messages_room_seq", "rooms_messages")
