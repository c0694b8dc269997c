"""Which database failures the ledger retries is decided by the driver's code, never by its message
text: a real lock (SQLite's SQLITE_BUSY) or a real serialization failure or deadlock (PostgreSQL's
SQLSTATE 40001, 40P01) is retried; an error whose message merely says "locked" or "deadlock" is not,
so a permanent failure is not retried fifty times and then reported late."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from signoff.ledger import SqlLedger


def _raised(conn: sqlite3.Connection, sql: str) -> sqlite3.Error:
    with pytest.raises(sqlite3.Error) as caught:
        conn.execute(sql)
    return caught.value


def test_sqlite_retries_a_real_lock_and_not_a_message_that_says_locked(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    ledger = SqlLedger.from_url(f"sqlite:///{path}")
    try:
        holder, other = sqlite3.connect(path, isolation_level=None), sqlite3.connect(path, timeout=0,
                                                                                     isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        busy = _raised(other, "BEGIN IMMEDIATE")
        holder.execute("ROLLBACK")
        named = _raised(other, "SELECT * FROM locked")  # "no such table: locked"
        holder.close()
        other.close()
        assert "locked" in str(busy) and "locked" in str(named)
        assert isinstance(busy, Exception) and isinstance(named, Exception)
        assert ledger._side.transient(busy, False) is True
        assert ledger._side.transient(named, False) is False
    finally:
        ledger.close()


def _pg_error(url: str, code: str, message: str) -> DBAPIError:
    ledger = SqlLedger.from_url(url)
    try:
        with pytest.raises(DBAPIError) as caught, ledger.engine.connect() as conn:
            conn.execute(text(f"DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '{code}', MESSAGE = '{message}'; END $$"))
        return caught.value
    finally:
        ledger.close()


def test_postgres_retries_by_sqlstate_not_by_message(pg_server: str, request: pytest.FixtureRequest) -> None:
    from tests.conftest import _fresh_pg_database

    url = _fresh_pg_database(request, pg_server)
    ledger = SqlLedger.from_url(url)
    try:
        serialization = _pg_error(url, "40001", "could not serialize access")
        deadlock = _pg_error(url, "40P01", "found a cycle")
        worded = _pg_error(url, "57014", "deadlock detected while serializing")  # query_canceled
        assert ledger._side.transient(serialization, False) is True
        assert ledger._side.transient(deadlock, False) is True
        assert ledger._side.transient(worded, False) is False
    finally:
        ledger.close()
