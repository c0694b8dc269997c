"""The SQLite half of `SqlLedger`: writers queue on a file lock, and an append runs from Python in one
write transaction, its statements sent to the sqlite3 driver directly."""

from __future__ import annotations

import contextlib
import fcntl
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, bindparam, insert, select
from sqlalchemy.exc import IntegrityError as SAIntegrityError
from sqlalchemy.exc import OperationalError

from signoff.kernel.clock import utc_iso
from signoff.ledger.events import AppendResult, Batch, conflict, replayed, result_text
from signoff.ledger.schema import idempotency

if TYPE_CHECKING:
    from signoff.ledger.store import SqlLedger

_SEL_IDEMPOTENT = select(idempotency.c.result).where(idempotency.c.key == bindparam("k"))
# An append, in the sqlite3 module's own parameter style (see SqliteSide.append).
_CASE_VERSION = "SELECT version FROM cases WHERE case_id = ?"
_HEAD = "SELECT seq, hash FROM chain_head WHERE id = 1"
_INSERT_EVENT = ("INSERT INTO events (seq, case_id, version, type, payload, recorded_at, prev_hash, hash)"
                 " VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
_UPDATE_CASE = "UPDATE cases SET version = ?, updated_at = ? WHERE case_id = ?"
_INSERT_CASE = "INSERT INTO cases (version, updated_at, case_id) VALUES (?, ?, ?)"
_UPDATE_HEAD = "UPDATE chain_head SET seq = ?, hash = ? WHERE id = 1"
# A case's events: the read every update() makes. Sent as driver SQL it costs about 60% of the CPU
# time of the Core statement (measured: 190 against 300 us for a case of 28 events), and update()
# runs it on every try.
_CASE_EVENTS = ("SELECT seq, case_id, version, type, payload, recorded_at, prev_hash, hash FROM events"
                " WHERE case_id = ? AND version > ? ORDER BY version")


class SqliteSide:
    """What SQLite does its own way: how writers queue, how an append is written, which failures
    are worth another try."""

    case_events = _CASE_EVENTS

    def __init__(self, engine: Engine) -> None:
        database = engine.url.database
        # Writers queue on a file lock before BEGIN IMMEDIATE: a blocked flock wakes the moment the
        # holder lets go, where SQLite's own busy handler sleeps in growing steps (up to 100 ms),
        # which starves throughput once several processes write at once.
        self._writer_lock = Path(database + ".writer") if database and database != ":memory:" else None

    @contextlib.contextmanager
    def queue_for_write(self) -> Iterator[None]:
        if self._writer_lock is None:
            yield
            return
        with self._writer_lock.open("a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def lock_chain(self, conn: Connection) -> None:
        """Nothing to do: every SQLite write transaction holds the writer lock and BEGIN IMMEDIATE."""

    def transient(self, exc: Exception, unique_is_transient: bool) -> bool:
        """SQLite can still answer "database is locked" under heavy multi-process load past
        busy_timeout; the sqlite3 errors come from the statements an append sends to the driver."""
        if not isinstance(exc, (OperationalError, SAIntegrityError, sqlite3.OperationalError, sqlite3.IntegrityError)):
            return False
        driver = getattr(exc, "orig", exc)
        # The driver's result code, not its message: SQLITE_BUSY or SQLITE_LOCKED (extended codes
        # keep the primary code in their low byte).
        if getattr(driver, "sqlite_errorcode", -1) & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            return True
        return unique_is_transient and isinstance(exc, (SAIntegrityError, sqlite3.IntegrityError))

    def append(self, ledger: SqlLedger, batch: Batch, expected_version: int | None,
               idempotency_key: str | None) -> AppendResult:
        """One try, in one write transaction (the ledger retries a transient failure)."""
        with ledger.transaction(lock_chain=False) as uow:
            conn = uow.conn
            if idempotency_key is not None:
                row = conn.execute(_SEL_IDEMPOTENT, {"k": idempotency_key}).first()
                if row is not None:
                    return replayed(row.result)
            # The statements that run under the writer lock go to the sqlite3 connection directly:
            # SQLAlchemy's per-statement machinery cost more than SQLite's work here, and every
            # writer waits while the lock is held.
            db = conn.connection.driver_connection
            assert db is not None
            case_id = batch.case_id
            found = db.execute(_CASE_VERSION, (case_id,)).fetchone()
            current_version = int(found[0]) if found else 0
            if expected_version is not None and current_version != expected_version:
                raise conflict(case_id, current_version, expected_version)
            seq, prev = db.execute(_HEAD).fetchone()
            now = ledger.clock.now()
            stamp = utc_iso(now)
            rows = batch.rows(seq, current_version, prev, stamp)
            version = rows[-1][2] if rows else current_version
            if rows:
                db.executemany(_INSERT_EVENT, rows)
                db.execute(_UPDATE_CASE if found else _INSERT_CASE, (version, stamp, case_id))
                db.execute(_UPDATE_HEAD, (rows[-1][0], rows[-1][7]))
            uow.add_jobs(batch.jobs, batch.job_payloads, case_id, now)
            result = AppendResult(case_id, version, tuple(r[0] for r in rows))
            if idempotency_key is not None:
                conn.execute(insert(idempotency).values(key=idempotency_key, case_id=case_id,
                                                        result=result_text(result), recorded_at=stamp))
            return result
