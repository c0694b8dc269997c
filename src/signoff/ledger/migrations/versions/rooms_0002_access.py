"""rooms: token issue times, room group ownership, role definers, invitations

The query tables are a cache of the `rooms.*` events: this migration empties them (and the
cursor), so the projector replays every event into the new columns on its next start.

Revision ID: rooms_0002
"""

import sqlalchemy as sa
from alembic import op

revision = "rooms_0002"
down_revision = "rooms_0001"
branch_labels = None
depends_on = None

CACHE = ("rooms_users", "rooms_tokens", "rooms_agents", "rooms_rooms", "rooms_members", "rooms_messages",
         "rooms_deliveries", "rooms_documents", "rooms_roles", "rooms_references", "rooms_room_references",
         "rooms_approvals", "rooms_cursor")


def upgrade() -> None:
    op.add_column("rooms_tokens", sa.Column("issued_at", sa.Float, nullable=True))
    op.add_column("rooms_rooms", sa.Column("group_id", sa.String(64), nullable=True))
    op.add_column("rooms_roles", sa.Column("defined_by", sa.String(100), nullable=True))
    op.create_table(
        "rooms_groups",
        sa.Column("group_id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("owner_user_id", sa.String(64), nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("allowed", sa.Text, nullable=False),
    )
    op.create_table(
        "rooms_invitations",
        sa.Column("invitation_id", sa.String(64), primary_key=True),
        sa.Column("room_id", sa.String(64), nullable=False),
        sa.Column("agent_id", sa.String(64), nullable=False),
        sa.Column("invited_by", sa.String(100), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
    )
    op.create_index("ix_rooms_invitations_agent_id", "rooms_invitations", ["agent_id"])
    for table in CACHE:
        op.execute(sa.table(table).delete())


def downgrade() -> None:
    op.drop_index("ix_rooms_invitations_agent_id", "rooms_invitations")
    op.drop_table("rooms_invitations")
    op.drop_table("rooms_groups")
    for table, column in (("rooms_roles", "defined_by"), ("rooms_rooms", "group_id"), ("rooms_tokens", "issued_at")):
        with op.batch_alter_table(table) as batch:  # SQLite rebuilds the table
            batch.drop_column(column)
