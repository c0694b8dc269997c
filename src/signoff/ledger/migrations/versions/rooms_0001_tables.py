"""rooms: query tables for identities, rooms, messages, deliveries, documents, roles, approvals

Revision ID: rooms_0001
"""

import sqlalchemy as sa
from alembic import op

revision = "rooms_0001"
down_revision = "0001"
branch_labels = ("rooms",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rooms_cursor",
        sa.Column("name", sa.String(50), primary_key=True),
        sa.Column("seq", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "rooms_users",
        sa.Column("user_id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("display_name", sa.String(200), nullable=False),
        sa.Column("is_admin", sa.Boolean, nullable=False),
        sa.Column("external", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "rooms_tokens",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("principal_id", sa.String(64), nullable=False),
    )
    op.create_index("ix_rooms_tokens_principal_id", "rooms_tokens", ["principal_id"])
    op.create_table(
        "rooms_agents",
        sa.Column("agent_id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("owner_user_id", sa.String(64), nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("profile", sa.Text, nullable=False),
        sa.Column("policy", sa.Text, nullable=True),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_index("ix_rooms_agents_owner_user_id", "rooms_agents", ["owner_user_id"])
    op.create_table(
        "rooms_rooms",
        sa.Column("room_id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("instructions", sa.Text, nullable=False),
        sa.Column("channel_type", sa.String(40), nullable=False),
        sa.Column("internal_only", sa.Boolean, nullable=False),
        sa.Column("owner_user_id", sa.String(64), nullable=False),
        sa.Column("group_name", sa.String(200), nullable=True),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "rooms_members",
        sa.Column("room_id", sa.String(64), primary_key=True),
        sa.Column("member_kind", sa.String(10), primary_key=True),
        sa.Column("member_id", sa.String(64), primary_key=True),
        sa.Column("joined_seq", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "rooms_messages",
        sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("message_id", sa.String(80), nullable=False, unique=True),
        sa.Column("room_id", sa.String(64), nullable=False),
        sa.Column("sender_kind", sa.String(10), nullable=False),
        sa.Column("sender_id", sa.String(64), nullable=False),
        sa.Column("sender", sa.String(100), nullable=False),
        sa.Column("sender_name", sa.String(200), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("thread_id", sa.String(80), nullable=True),
        sa.Column("timestamp", sa.BigInteger, nullable=False),
        sa.Column("auto_reply", sa.Boolean, nullable=False),
        sa.Column("attachments", sa.Text, nullable=False),
    )
    op.create_index("ix_rooms_messages_room_id", "rooms_messages", ["room_id"])
    op.create_table(
        "rooms_deliveries",
        sa.Column("agent_id", sa.String(64), primary_key=True),
        sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("room_id", sa.String(64), nullable=False),
        sa.Column("type", sa.String(40), nullable=False),
        sa.Column("addressed", sa.Boolean, nullable=False),
        sa.Column("envelope", sa.Text, nullable=False),
    )
    op.create_table(
        "rooms_documents",
        sa.Column("document_id", sa.String(64), primary_key=True),
        sa.Column("room_id", sa.String(64), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("instructions", sa.Text, nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("created_by_kind", sa.String(10), nullable=False),
        sa.Column("created_by_id", sa.String(64), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("updated_at", sa.String(40), nullable=False),
    )
    op.create_index("ix_rooms_documents_room_id", "rooms_documents", ["room_id"])
    op.create_table(
        "rooms_roles",
        sa.Column("room_id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("instructions", sa.Text, nullable=False),
        sa.Column("exclusive", sa.Boolean, nullable=False),
    )
    op.create_table(
        "rooms_references",
        sa.Column("reference_id", sa.String(64), primary_key=True),
        sa.Column("type", sa.String(40), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("instructions", sa.Text, nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("owner_user_id", sa.String(64), nullable=False),
    )
    op.create_table(
        "rooms_room_references",
        sa.Column("room_id", sa.String(64), primary_key=True),
        sa.Column("reference_id", sa.String(64), primary_key=True),
    )
    op.create_table(
        "rooms_approvals",
        sa.Column("request_id", sa.String(200), primary_key=True),
        sa.Column("room_id", sa.String(64), nullable=False),
        sa.Column("requester_agent_id", sa.String(64), nullable=False),
        sa.Column("card", sa.Text, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("outcome", sa.Text, nullable=True),
        sa.Column("requested_seq", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_rooms_approvals_room_id", "rooms_approvals", ["room_id"])


def downgrade() -> None:
    for name in (
        "rooms_approvals", "rooms_room_references", "rooms_references", "rooms_roles", "rooms_documents",
        "rooms_deliveries", "rooms_messages", "rooms_members", "rooms_rooms", "rooms_agents", "rooms_tokens",
        "rooms_users", "rooms_cursor",
    ):
        op.drop_table(name)
