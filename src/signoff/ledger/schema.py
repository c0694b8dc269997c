"""The ledger's tables (SQLAlchemy Core). Migrations in `migrations/versions` create them; this module
is the query-side description. tests/integration/ledger/test_schema.py proves that the two agree (an empty
autogenerate diff on SQLite and PostgreSQL), for these tables and for the rooms and agents tables
that share this metadata."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    ColumnElement,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
)

metadata = MetaData()

cases = Table(
    "cases",
    metadata,
    Column("case_id", String(200), primary_key=True),
    Column("version", Integer, nullable=False),
    Column("updated_at", String(40), nullable=False),
)

events = Table(
    "events",
    metadata,
    Column("seq", BigInteger, primary_key=True),  # global position in the audit chain, dense from 1
    Column("case_id", String(200), nullable=False, index=True),
    Column("version", Integer, nullable=False),
    Column("type", String(200), nullable=False),
    Column("payload", Text, nullable=False),  # canonical JSON
    Column("recorded_at", String(40), nullable=False),
    Column("prev_hash", String(64), nullable=False),
    Column("hash", String(64), nullable=False),
    UniqueConstraint("case_id", "version", name="uq_events_case_version"),
)

# One row: the head of the audit chain. Appends lock it, so the chain stays linear and a deleted
# tail event is detectable (the head names the last seq and hash).
chain_head = Table(
    "chain_head",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("seq", BigInteger, nullable=False),
    Column("hash", String(64), nullable=False),
)

idempotency = Table(
    "idempotency",
    metadata,
    Column("key", String(300), primary_key=True),
    Column("case_id", String(200), nullable=False),
    Column("result", Text, nullable=False),  # canonical JSON of the AppendResult
    Column("recorded_at", String(40), nullable=False),
)

outbox = Table(
    "outbox",
    metadata,
    Column("job_id", String(300), primary_key=True),  # the job's idempotency key
    Column("topic", String(200), nullable=False, index=True),
    Column("case_id", String(200), nullable=True),
    Column("payload", Text, nullable=False),
    Column("status", String(20), nullable=False, index=True),  # pending | done | dead
    Column("attempts", Integer, nullable=False),
    Column("max_attempts", Integer, nullable=False),
    Column("available_at", Float, nullable=False),
    Column("lease_id", String(64), nullable=True),
    Column("lease_expires_at", Float, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("created_at", Float, nullable=False),
    Column("done_at", Float, nullable=True),
)

# Named monotonically increasing counters (readable ids such as BUG-0001).
counters = Table(
    "counters",
    metadata,
    Column("name", String(200), primary_key=True),
    Column("value", BigInteger, nullable=False),
)

# Signed statements "the chain held `seq` events ending in `head_hash`". The signature is made with a
# key kept outside the database, so a writer who can edit rows but lacks the key cannot rewrite the
# history a checkpoint covers without `ledger verify` noticing.
checkpoints = Table(
    "checkpoints",
    metadata,
    Column("seq", BigInteger, primary_key=True),
    Column("head_hash", String(64), nullable=False),
    Column("signed_at", String(40), nullable=False),
    Column("keyid", String(64), nullable=False),
    Column("signature", String(128), nullable=False),
)


def starts_with(column: Column[str], prefix: str) -> ColumnElement[bool]:
    """`column` starts with `prefix`, taken literally and case for case on both databases: SQLite's
    LIKE ignores the case of ASCII letters (so `desk/` would match `DESK/x`), and the comparison of
    the column's first characters makes the match exact; the LIKE stays for an index to narrow by."""
    return column.startswith(prefix, autoescape=True) & (func.substr(column, 1, len(prefix)) == prefix)

