"""The agents' query table in the ledger database (migration `agents_0001`).

One row per metered call: reserved at its worst case before it starts, settled when its outcome is
known. A row left `reserved` (the process died mid-call) keeps counting at its worst case, which is
what an unknown outcome should cost.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Float, String, Table

from signoff.ledger.schema import metadata

agent_calls = Table(
    "agent_calls",
    metadata,
    Column("call_id", String(64), primary_key=True),
    Column("client", String(200), nullable=False),
    Column("role", String(100), nullable=False),
    Column("provider", String(40), nullable=False),
    Column("model", String(200), nullable=False),
    Column("reserved_micros", BigInteger, nullable=False),
    Column("charged_micros", BigInteger, nullable=True),  # NULL while in flight
    Column("status", String(20), nullable=False),  # reserved | settled | unknown | released
    Column("started_at", Float, nullable=False, index=True),
    Column("finished_at", Float, nullable=True),
)
