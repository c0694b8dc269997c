"""Alembic environment: always run with a connection handed in by signoff.ledger.migrate."""

from __future__ import annotations

from alembic import context

from signoff.ledger.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata)
with context.begin_transaction():
    context.run_migrations()
