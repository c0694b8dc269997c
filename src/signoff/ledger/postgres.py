"""The PostgreSQL half of `SqlLedger`: an append is one call of the function migration 0003 creates,
and write transactions serialise with appends by locking the chain head."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from sqlalchemy import Connection, select
from sqlalchemy.exc import IntegrityError as SAIntegrityError
from sqlalchemy.exc import OperationalError

from signoff.kernel.canonical import canonical_text
from signoff.kernel.clock import utc_iso
from signoff.ledger.engine import single_statement
from signoff.ledger.events import AppendResult, Batch, conflict, replayed, stamp_part
from signoff.ledger.schema import chain_head

if TYPE_CHECKING:
    from signoff.ledger.store import SqlLedger

_LOCK_HEAD = select(chain_head.c.id).where(chain_head.c.id == 1).with_for_update()
# The append, made in autocommit so that the chain-head lock it takes is held for that one statement
# only. Sent as driver SQL with positional parameters: SQLAlchemy's binding of sixteen named
# parameters cost more client CPU than the call's own round trip (see docs/ledger.md, Benchmark).
# The arrays go in psycopg's binary format (`%b`): its text format escapes every element with a
# regular expression in Python, which for JSON payloads (full of quotes) cost about 1.5 ms per 30
# events against 20 us in binary, and was a tenth of a room server's CPU under load.
_APPEND = (
    "SELECT outcome, version, first_seq, result FROM signoff_append(%s::text, %s::text, %s::integer, %s::text,"
    " %b::text[], %b::text[], %b::text[], %s::text, %b::text[], %b::text[], %b::text[], %b::text[],"
    " %b::integer[], %b::double precision[], %s::double precision, %s::text)"
)
# A case's events: the read every update() makes, as driver SQL (cheaper than the Core statement).
_CASE_EVENTS = ("SELECT seq, case_id, version, type, payload, recorded_at, prev_hash, hash FROM events"
                " WHERE case_id = %s AND version > %s ORDER BY version")


class PostgresSide:
    """What PostgreSQL does its own way: how an append is written, how a write transaction
    serialises with appends, which failures are worth another try."""

    case_events = _CASE_EVENTS

    @contextlib.contextmanager
    def queue_for_write(self) -> Iterator[None]:
        yield  # the server orders writers by its row locks

    def lock_chain(self, conn: Connection) -> None:
        conn.execute(_LOCK_HEAD)

    def transient(self, exc: Exception, unique_is_transient: bool) -> bool:
        """A serialization failure or a deadlock rolled the statement back whole; a unique-key race
        (two writers creating the same row) is retried where the caller says so."""
        if not isinstance(exc, (OperationalError, SAIntegrityError)):
            return False
        # The SQLSTATE, not the message: serialization_failure or deadlock_detected.
        if getattr(exc.orig, "sqlstate", None) in ("40001", "40P01"):
            return True
        return unique_is_transient and isinstance(exc, SAIntegrityError)

    def append(self, ledger: SqlLedger, batch: Batch, expected_version: int | None,
               idempotency_key: str | None) -> AppendResult:
        """One try as one statement in autocommit (one round trip): the function checks the version,
        hashes, and writes events, case row, chain head, jobs and idempotency record."""
        now = ledger.clock.now()
        stamp = utc_iso(now)
        jobs = batch.jobs
        params = (
            batch.case_id,
            canonical_text(batch.case_id),
            expected_version,
            stamp,
            [ev.type for ev in batch.events],
            batch.payloads,
            [a for a, _ in batch.parts],
            stamp_part(stamp),
            [c for _, c in batch.parts],
            [j.key for j in jobs],
            [j.topic for j in jobs],
            batch.job_payloads,
            [j.max_attempts for j in jobs],
            [now + j.delay for j in jobs],
            now,
            idempotency_key,
        )
        with single_statement(ledger.engine) as conn:
            row = conn.exec_driver_sql(_APPEND, params).one()
        if row.outcome == "replayed":
            return replayed(row.result)
        if row.outcome == "conflict":
            assert expected_version is not None
            raise conflict(batch.case_id, int(row.version), expected_version)
        first = int(row.first_seq or 0)
        return AppendResult(batch.case_id, int(row.version), tuple(range(first, first + len(batch.events))))
