"""Query tables of the rooms projection (SQLAlchemy Core on the ledger's metadata).

The ledger events under case ids `rooms.*` are the source of truth; these tables are rebuilt from
them by `projection.Projector` and must agree with migrations `rooms_0001` to `rooms_0006`. One table is
not a projection: `rooms_connections`, the live connections every replica shares.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Column, Float, Index, Integer, String, Table, Text

from signoff.ledger.schema import metadata

# How far the projection has applied the event stream (one row, name="rooms").
rooms_cursor = Table(
    "rooms_cursor",
    metadata,
    Column("name", String(50), primary_key=True),
    Column("seq", BigInteger, nullable=False),
)

rooms_users = Table(
    "rooms_users",
    metadata,
    Column("user_id", String(64), primary_key=True),
    Column("name", String(100), nullable=False, unique=True),
    Column("display_name", String(200), nullable=False),
    Column("is_admin", Boolean, nullable=False),
    Column("external", Boolean, nullable=False),
    Column("created_at", String(40), nullable=False),
)

# Only SHA-256 digests of tokens are stored; kind is user | agent | registration.
rooms_tokens = Table(
    "rooms_tokens",
    metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("kind", String(20), nullable=False),
    Column("principal_id", String(64), nullable=False, index=True),
    Column("issued_at", Float, nullable=True),  # epoch seconds; expiry is issued_at + the configured lifetime
)

rooms_agents = Table(
    "rooms_agents",
    metadata,
    Column("agent_id", String(64), primary_key=True),
    Column("name", String(100), nullable=False, unique=True),
    Column("owner_user_id", String(64), nullable=False, index=True),
    Column("description", Text, nullable=False),
    Column("profile", Text, nullable=False),  # JSON
    Column("policy", Text, nullable=True),  # JSON; NULL = open
    Column("created_at", String(40), nullable=False),
)

rooms_rooms = Table(
    "rooms_rooms",
    metadata,
    Column("room_id", String(64), primary_key=True),
    Column("name", String(200), nullable=False),
    Column("description", Text, nullable=False),
    Column("instructions", Text, nullable=False),
    Column("channel_type", String(40), nullable=False),
    Column("internal_only", Boolean, nullable=False),
    Column("owner_user_id", String(64), nullable=False),
    Column("group_name", String(200), nullable=True),
    Column("created_at", String(40), nullable=False),
    Column("group_id", String(64), nullable=True),  # what policies match (a group's name is only shown)
)

rooms_members = Table(
    "rooms_members",
    metadata,
    Column("room_id", String(64), primary_key=True),
    Column("member_kind", String(10), primary_key=True),  # user | agent
    Column("member_id", String(64), primary_key=True),
    Column("joined_seq", BigInteger, nullable=False),
)

rooms_messages = Table(
    "rooms_messages",
    metadata,
    Column("seq", BigInteger, primary_key=True),
    Column("message_id", String(80), nullable=False, unique=True),
    Column("room_id", String(64), nullable=False, index=True),
    Column("sender_kind", String(10), nullable=False),
    Column("sender_id", String(64), nullable=False),
    Column("sender", String(100), nullable=False),
    Column("sender_name", String(200), nullable=False),
    Column("body", Text, nullable=False),
    Column("thread_id", String(80), nullable=True),
    Column("timestamp", BigInteger, nullable=False),  # epoch ms
    Column("auto_reply", Boolean, nullable=False),
    Column("attachments", Text, nullable=False),  # JSON list
    Index("ix_rooms_messages_room_seq", "room_id", "seq"),  # a room's latest page without sorting the room
)

# One row per (agent, event) the agent may see: its durable stream, with the server's per-target
# addressing decision frozen at send time.
rooms_deliveries = Table(
    "rooms_deliveries",
    metadata,
    Column("agent_id", String(64), primary_key=True),
    Column("seq", BigInteger, primary_key=True),
    Column("room_id", String(64), nullable=False),
    Column("type", String(40), nullable=False),
    Column("addressed", Boolean, nullable=False),
    Column("envelope", Text, nullable=False),  # JSON, without "sequence"
    Index("ix_rooms_deliveries_seq", "seq"),  # a replica reads the range another one applied
)

rooms_documents = Table(
    "rooms_documents",
    metadata,
    Column("document_id", String(64), primary_key=True),
    Column("room_id", String(64), nullable=False, index=True),
    Column("name", String(200), nullable=False),
    Column("description", Text, nullable=False),
    Column("instructions", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("created_by_kind", String(10), nullable=False),
    Column("created_by_id", String(64), nullable=False),
    Column("version", Integer, nullable=False),
    Column("updated_at", String(40), nullable=False),
)

rooms_roles = Table(
    "rooms_roles",
    metadata,
    Column("room_id", String(64), primary_key=True),
    Column("name", String(100), primary_key=True),
    Column("instructions", Text, nullable=False),
    Column("exclusive", Boolean, nullable=False),
    Column("defined_by", String(100), nullable=True),  # sender that defined it; NULL: the room's owner only
)

rooms_references = Table(
    "rooms_references",
    metadata,
    Column("reference_id", String(64), primary_key=True),
    Column("type", String(40), nullable=False),
    Column("name", String(200), nullable=False),
    Column("description", Text, nullable=False),
    Column("instructions", Text, nullable=False),
    Column("value", Text, nullable=False),  # JSON
    Column("owner_user_id", String(64), nullable=False),
)

rooms_room_references = Table(
    "rooms_room_references",
    metadata,
    Column("room_id", String(64), primary_key=True),
    Column("reference_id", String(64), primary_key=True),
)

# Directed links from one room to another (`link_rooms`), each with its label, as Switch has them.
rooms_room_links = Table(
    "rooms_room_links",
    metadata,
    Column("source_room_id", String(64), primary_key=True),
    Column("target_room_id", String(64), primary_key=True),
    Column("label", String(200), nullable=False),
    Column("linked_by", String(100), nullable=False),
)

rooms_approvals = Table(
    "rooms_approvals",
    metadata,
    Column("request_id", String(200), primary_key=True),
    Column("room_id", String(64), nullable=False, index=True),
    Column("requester_agent_id", String(64), nullable=False),
    Column("card", Text, nullable=False),  # JSON: title, options, responders, responder_roles, expires_at
    Column("expires_at", Float, nullable=False),
    Column("state", String(20), nullable=False),  # pending | accepted | declined | expired
    Column("outcome", Text, nullable=True),  # JSON of the outcome event payload
    Column("requested_seq", BigInteger, nullable=False),
)

# A room group belongs to its owner; only rooms of the owner (or of users it allowed) join it.
rooms_groups = Table(
    "rooms_groups",
    metadata,
    Column("group_id", String(64), primary_key=True),
    Column("name", String(100), nullable=False, unique=True),
    Column("owner_user_id", String(64), nullable=False),
    Column("description", Text, nullable=False),
    Column("allowed", Text, nullable=False),  # JSON list of user ids whose rooms may join
)

# An agent joins a room only with its owner's consent: a pending invitation until accepted.
rooms_invitations = Table(
    "rooms_invitations",
    metadata,
    Column("invitation_id", String(64), primary_key=True),
    Column("room_id", String(64), nullable=False),
    Column("agent_id", String(64), nullable=False, index=True),
    Column("invited_by", String(100), nullable=False),
    Column("state", String(20), nullable=False),  # pending | accepted | declined
)

# Live agent connections, shared by every server process (replica) on the database: not a projection
# of events (a rebuild leaves it alone), but state that must outlive the process a stream is on.
rooms_connections = Table(
    "rooms_connections",
    metadata,
    Column("connection_id", String(200), primary_key=True),
    Column("agent_id", String(64), nullable=False, index=True),
    Column("incarnation", Integer, nullable=False),  # bumped when a dead id is opened again
    Column("scope", String(10), nullable=False),
    Column("filter", String(10), nullable=False),
    Column("spawn_capable", Boolean, nullable=False),
    Column("client", Text, nullable=False),  # JSON object
    Column("rooms", Text, nullable=False),  # JSON list of room ids, in claim order
    Column("rooms_version", Integer, nullable=False),
    Column("rooms_reason", Text, nullable=False),
    Column("role_room", String(64), nullable=True),
    Column("role_name", String(100), nullable=True),
    Column("cursor", BigInteger, nullable=False),
    Column("last_beat", Float, nullable=False),  # epoch seconds, by the clock of the replica that took it
    Column("stream_token", Integer, nullable=False),  # a stream with an older token is evicted
    Column("attached", Boolean, nullable=False),
    Column("evicted_token", Integer, nullable=True),  # the stream evicted by a room takeover ...
    Column("evicted_reason", Text, nullable=True),  # ... and why
    Column("dead_reason", Text, nullable=True),  # set when the connection died; the row is purged later
)
