"""The tables the code queries (ledger/schema.py, rooms/storage/tables.py, agents/tables.py) and the tables
the migrations create are written twice; this proves they agree: an empty Alembic autogenerate
diff, on SQLite and on PostgreSQL, with column types and server defaults compared too."""

from __future__ import annotations

from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from signoff.agents.tables import agent_calls
from signoff.ledger import SqlLedger
from signoff.ledger.schema import metadata
from signoff.rooms.storage import tables as rooms_tables

# These tests are about the migration path itself: fresh databases here are empty, not template copies.
pytestmark = pytest.mark.real_migrations

TABLE_SETS = {
    "ledger": {"cases", "events", "chain_head", "idempotency", "outbox", "counters", "checkpoints"},
    "rooms": {t.name for t in vars(rooms_tables).values() if getattr(t, "metadata", None) is metadata},
    "agents": {agent_calls.name},
}


def _diff(ledger: SqlLedger) -> list[Any]:
    with ledger.engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True, "compare_server_default": True})
        return list(compare_metadata(context, metadata))


@pytest.mark.parametrize("table_set", sorted(TABLE_SETS))
def test_migrations_create_exactly_the_tables_the_code_queries(db_url: str, table_set: str) -> None:
    ledger = SqlLedger.from_url(db_url)  # migrates a fresh database to the newest revisions
    names = TABLE_SETS[table_set]
    assert names and names <= set(metadata.tables)
    assert names <= set(inspect(ledger.engine).get_table_names())
    touching = [d for d in _diff(ledger) if names & _tables_named(d)]
    assert touching == []


def test_no_table_is_outside_the_sets(db_url: str) -> None:
    ledger = SqlLedger.from_url(db_url)
    assert set(metadata.tables) == set().union(*TABLE_SETS.values())
    assert _diff(ledger) == []


def _tables_named(diff: Any) -> set[str]:
    """Table names an autogenerate diff entry mentions (entries are tuples, or lists of tuples for
    column modifications)."""
    found: set[str] = set()
    items = diff if isinstance(diff, list) else [diff]
    for item in items:
        for part in item:
            name = getattr(part, "name", None) if not isinstance(part, str) else part
            table = getattr(part, "table", None)
            if isinstance(name, str):
                found.add(name)
            if table is not None and isinstance(getattr(table, "name", None), str):
                found.add(table.name)
    return found
