"""The SQL ledger: append-only events per case with optimistic concurrency, idempotency keys, a
transactional outbox and a hash-chained audit log, on SQLite or PostgreSQL.

This module holds what both databases share; what each does its own way (how an append is written,
how writers are serialised, which failures are retried) is its side, `SqliteSide` (sqlite.py) or
`PostgresSide` (postgres.py), chosen once when the ledger is made. The events, jobs and the hash
chain are those of every ledger (events.py)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol, TypeVar

from sqlalchemy import Connection, Engine, RootTransaction, bindparam, func, insert, select, update

from signoff.kernel.canonical import canonical_text
from signoff.kernel.clock import Clock, SystemClock
from signoff.kernel.settings import Settings
from signoff.ledger.contract import Decide, decide_and_append
from signoff.ledger.engine import WRITE, is_postgres, make_engine, migrate, single_statement
from signoff.ledger.events import (
    GENESIS,
    AppendResult,
    Batch,
    Event,
    NewEvent,
    NewJob,
    event_hash,
    hash_parts,
    stamp_part,
    stored_event,
)
from signoff.ledger.postgres import PostgresSide
from signoff.ledger.schema import cases, chain_head, counters, events, outbox, starts_with
from signoff.ledger.sqlite import SqliteSide

# the names code has always imported from here
__all__ = ["GENESIS", "AppendResult", "Event", "NewEvent", "NewJob", "SqlLedger", "UnitOfWork", "event_hash",
           "hash_parts", "stamp_part"]

T = TypeVar("T")

# Statements built once: constructing them per call costs more than executing them on SQLite.
_SEL_CASE_VERSION = select(cases.c.version).where(cases.c.case_id == bindparam("cid"))
_SEL_HEAD = select(chain_head.c.seq, chain_head.c.hash).where(chain_head.c.id == 1)


class Side(Protocol):
    """What one database does its own way (sqlite.py, postgres.py)."""

    case_events: str  # a case's events after a version, as driver SQL in the driver's parameter style

    def queue_for_write(self) -> AbstractContextManager[None]: ...

    def lock_chain(self, conn: Connection) -> None: ...

    def transient(self, exc: Exception, unique_is_transient: bool) -> bool: ...

    def append(self, ledger: SqlLedger, batch: Batch, expected_version: int | None,
               idempotency_key: str | None) -> AppendResult: ...


class UnitOfWork:
    """An open write transaction: statements go through `conn`; `commit` or `rollback` ends it
    early (the `with` block ends it otherwise)."""

    def __init__(self, conn: Connection, tx: RootTransaction) -> None:
        self.conn = conn
        self._tx = tx

    def commit(self) -> None:
        if self._tx.is_active:
            self._tx.commit()

    def rollback(self) -> None:
        if self._tx.is_active:
            self._tx.rollback()

    def add_jobs(self, jobs: Sequence[NewJob], payloads: Sequence[str], case_id: str | None, now: float) -> None:
        """Write jobs (their canonical payloads given) in this transaction; a key already written
        keeps its first job."""
        for job, text_ in zip(jobs, payloads, strict=True):
            _insert_job(self.conn, job, text_, case_id, now)


class SqlLedger:
    def __init__(self, engine: Engine, clock: Clock | None = None) -> None:
        self.engine = engine
        self.clock: Clock = clock or SystemClock()
        migrate(engine)
        self._side: Side = PostgresSide() if is_postgres(engine) else SqliteSide(engine)

    @classmethod
    def open(cls, settings: Settings | None = None, clock: Clock | None = None) -> SqlLedger:
        settings = settings or Settings.load()
        return cls(make_engine(settings.db_url), clock)

    @classmethod
    def from_url(cls, url: str, clock: Clock | None = None) -> SqlLedger:
        return cls(make_engine(url), clock)

    def close(self) -> None:
        self.engine.dispose()

    # -- transactions -------------------------------------------------------------------------

    @contextlib.contextmanager
    def transaction(self, lock_chain: bool = True) -> Iterator[UnitOfWork]:
        """One write transaction (SQLite: BEGIN IMMEDIATE), committed when the block ends and
        rolled back when it raises. With `lock_chain` (PostgreSQL) the chain head is locked first,
        which serialises the transaction with every append.

        A `with` block cannot run itself again, so this form does not retry: use `transact` for
        work that should be retried when the database reports a transient failure. Write through
        `uow.conn` only: another ledger write inside the block would wait for this one (on SQLite
        writers queue on a file lock) and never start.
        """
        # the connection is taken from the pool before queueing, so the writer lock covers only the
        # transaction itself
        with self.engine.connect() as raw, self._side.queue_for_write():
            conn = raw.execution_options(**WRITE)
            uow = UnitOfWork(conn, conn.begin())
            try:
                if lock_chain:
                    self._side.lock_chain(conn)
                yield uow
            except BaseException:
                uow.rollback()
                raise
            uow.commit()

    def transact(self, work: Callable[[Connection], T], lock_chain: bool = True) -> T:
        """Run `work` in a `transaction()` and return its result, running it again (in a fresh
        transaction) after a transient failure. `work` must therefore have no effect outside the
        database.

        Without `lock_chain` the chain head is not locked up front, and the unique-key races that
        allows (two writers creating the same row) are retried too.
        """
        def once() -> T:
            with self.transaction(lock_chain) as uow:
                return work(uow.conn)

        # two appends racing to create the same case or idempotency key: the loser retries and then
        # sees the winner's row (a conflict or a replay)
        return self._retry(once, integrity_is_transient=not lock_chain)

    def _retry(self, once: Callable[[], T], integrity_is_transient: bool) -> T:
        """`once()`, run again after a failure that rolled its transaction back whole (which ones
        those are is the database's side to say, by the driver's code: SQLite SQLITE_BUSY or SQLITE_LOCKED, PostgreSQL a
        serialization failure or a deadlock)."""
        delay = 0.01
        for attempt in range(50):
            try:
                return once()
            except Exception as exc:
                if attempt == 49 or not self._side.transient(exc, integrity_is_transient):
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
        raise AssertionError("unreachable")

    # -- events -------------------------------------------------------------------------------

    def append(
        self,
        case_id: str,
        expected_version: int | None,
        new_events: Sequence[NewEvent],
        jobs: Sequence[NewJob] = (),
        idempotency_key: str | None = None,
    ) -> AppendResult:
        """Append events to a case if it is still at `expected_version` (None: wherever it is).

        Raises ConflictError when another writer got there first; the caller re-reads and
        re-applies. With an idempotency key, a repeat returns the first append's result and
        changes nothing.
        """
        batch = Batch.of(case_id, new_events, jobs)
        # two appends racing to create the same case or idempotency key: the loser retries and then
        # sees the winner's row (a conflict or a replay)
        return self._retry(lambda: self._side.append(self, batch, expected_version, idempotency_key),
                           integrity_is_transient=True)

    def update(
        self,
        case_id: str,
        decide: Decide,
        idempotency_key: str | None = None,
        attempts: int = 20,
    ) -> AppendResult:
        """Read the case, let `decide` choose events and jobs from its history, append them at the
        version read; on a conflict read again and decide again. A decision to append nothing
        writes nothing and returns the version read."""
        return decide_and_append(self, case_id, decide, idempotency_key, attempts)

    def read(self, case_id: str, after_version: int = 0) -> list[Event]:
        with single_statement(self.engine) as conn:
            rows = conn.exec_driver_sql(self._side.case_events, (case_id, after_version)).all()
        return [stored_event(r) for r in rows]

    def version(self, case_id: str) -> int:
        with single_statement(self.engine) as conn:
            value = conn.execute(_SEL_CASE_VERSION, {"cid": case_id}).scalar()
        return int(value or 0)

    def stream(self, after_seq: int = 0, batch: int = 1000, prefix: str | None = None) -> Iterator[Event]:
        """Every event after `after_seq` in chain order, in batches (the whole history never sits in
        memory). With `prefix`, only cases whose id starts with it."""
        last = after_seq
        while True:
            query = select(events).where(events.c.seq > last).order_by(events.c.seq).limit(batch)
            if prefix is not None:
                query = query.where(starts_with(events.c.case_id, prefix))
            with single_statement(self.engine) as conn:
                rows = conn.execute(query).all()
            if not rows:
                return
            for r in rows:
                yield stored_event(r)
            last = int(rows[-1].seq)

    def case_ids(self, prefix: str = "") -> list[str]:
        with self.engine.connect() as conn:
            query = select(cases.c.case_id).order_by(cases.c.case_id)
            if prefix:
                query = query.where(starts_with(cases.c.case_id, prefix))
            return [r.case_id for r in conn.execute(query)]

    def head(self) -> tuple[int, str]:
        with single_statement(self.engine) as conn:
            row = conn.execute(_SEL_HEAD).one()
        return int(row.seq), str(row.hash)

    def count_events(self) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(events)).scalar() or 0)

    # -- counters -----------------------------------------------------------------------------

    def next_number(self, name: str) -> int:
        """The next value of a named counter, starting at 1 (for ids such as BUG-0001)."""

        def run(conn: Connection) -> int:
            current = conn.execute(select(counters.c.value).where(counters.c.name == name)).scalar()
            value = int(current or 0) + 1
            if current is None:
                conn.execute(insert(counters).values(name=name, value=value))
            else:
                conn.execute(update(counters).where(counters.c.name == name).values(value=value))
            return value

        return self.transact(run)

    # -- outbox (see outbox.py for the worker side) -------------------------------------------

    def enqueue(self, jobs: Iterable[NewJob], case_id: str | None = None) -> None:
        """Write jobs on their own (no events). Same key twice keeps the first."""
        items = [(j, canonical_text(j.payload)) for j in jobs]

        def run(conn: Connection) -> None:
            now = self.clock.now()
            for job, text_ in items:
                _insert_job(conn, job, text_, case_id, now)

        self.transact(run)


def _insert_job(conn: Connection, job: NewJob, text_: str, case_id: str | None, now: float) -> None:
    exists = conn.execute(select(outbox.c.job_id).where(outbox.c.job_id == job.key)).first()
    if exists is not None:
        return
    conn.execute(
        insert(outbox).values(
            job_id=job.key,
            topic=job.topic,
            case_id=case_id,
            payload=text_,
            status="pending",
            attempts=0,
            max_attempts=job.max_attempts,
            available_at=now + job.delay,
            created_at=now,
        )
    )


if TYPE_CHECKING:  # mypy holds SqlLedger to the protocol here
    from signoff.ledger.contract import Ledger

    _IS_A_LEDGER: type[Ledger] = SqlLedger
