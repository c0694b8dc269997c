"""The ledger: append-only events per case with optimistic concurrency, idempotency keys, a
transactional outbox and a hash-chained audit log, on SQLite or PostgreSQL."""

from __future__ import annotations

import contextlib
import fcntl
import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, RootTransaction, bindparam, func, insert, select, update
from sqlalchemy.exc import IntegrityError as SAIntegrityError
from sqlalchemy.exc import OperationalError

from signoff.kernel.canonical import canonical_text
from signoff.kernel.clock import Clock, SystemClock, utc_iso
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import ConflictError, UsageError
from signoff.kernel.settings import Settings
from signoff.ledger.engine import WRITE, is_postgres, make_engine, migrate, single_statement
from signoff.ledger.schema import cases, chain_head, counters, events, idempotency, outbox

GENESIS = "0" * 64
T = TypeVar("T")

# Statements built once: constructing them per call costs more than executing them on SQLite.
_SEL_IDEMPOTENT = select(idempotency.c.result).where(idempotency.c.key == bindparam("k"))
_SEL_CASE_VERSION = select(cases.c.version).where(cases.c.case_id == bindparam("cid"))
_SEL_HEAD = select(chain_head.c.seq, chain_head.c.hash).where(chain_head.c.id == 1)
_LOCK_HEAD = select(chain_head.c.id).where(chain_head.c.id == 1).with_for_update()
# An append on SQLite, in the sqlite3 module's own parameter style (see SqlLedger.append).
_SQLITE_CASE_VERSION = "SELECT version FROM cases WHERE case_id = ?"
_SQLITE_HEAD = "SELECT seq, hash FROM chain_head WHERE id = 1"
_SQLITE_INSERT_EVENT = ("INSERT INTO events (seq, case_id, version, type, payload, recorded_at, prev_hash, hash)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
_SQLITE_UPDATE_CASE = "UPDATE cases SET version = ?, updated_at = ? WHERE case_id = ?"
_SQLITE_INSERT_CASE = "INSERT INTO cases (version, updated_at, case_id) VALUES (?, ?, ?)"
_SQLITE_UPDATE_HEAD = "UPDATE chain_head SET seq = ?, hash = ? WHERE id = 1"
# A case's events: the read every update() makes, in the driver's parameter style ("?" for sqlite3,
# "%s" for psycopg). Sent as driver SQL it costs about 60% of the CPU time of the Core statement
# (measured on SQLite: 190 against 300 us for a case of 28 events), and update() runs it on every try.
_CASE_EVENTS = ("SELECT seq, case_id, version, type, payload, recorded_at, prev_hash, hash FROM events"
                " WHERE case_id = {p} AND version > {p} ORDER BY version")


# On PostgreSQL an append is one call of the function migration 0003 creates, made in autocommit so
# that the chain-head lock it takes is held for that one statement only. Sent as driver SQL with
# positional parameters: SQLAlchemy's binding of sixteen named parameters cost more client CPU than
# the call's own round trip (see docs/ledger.md, Benchmark).
# The arrays go in psycopg's binary format (`%b`): its text format escapes every element with a
# regular expression in Python, which for JSON payloads (full of quotes) cost about 1.5 ms per 30
# events against 20 us in binary, and was a tenth of a room server's CPU under load.
_PG_APPEND = (
    "SELECT outcome, version, first_seq, result FROM signoff_append(%s::text, %s::text, %s::integer, %s::text,"
    " %b::text[], %b::text[], %b::text[], %s::text, %b::text[], %b::text[], %b::text[], %b::text[],"
    " %b::integer[], %b::double precision[], %s::double precision, %s::text)"
)


@dataclass(frozen=True)
class NewEvent:
    type: str
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NewJob:
    """A job written in the same transaction as the events that cause it.

    `key` is the job's idempotency key: writing the same key twice keeps the first job.
    """

    key: str
    topic: str
    payload: dict[str, Any] = field(default_factory=dict)
    max_attempts: int = 8
    delay: float = 0.0


@dataclass(frozen=True)
class Event:
    seq: int
    case_id: str
    version: int
    type: str
    payload: dict[str, Any]
    recorded_at: str
    prev_hash: str
    hash: str


@dataclass(frozen=True)
class AppendResult:
    case_id: str
    version: int
    seqs: tuple[int, ...]
    replayed: bool = False  # True when an idempotency key matched an earlier append


def event_hash(
    seq: int, case_id: str, version: int, type_: str, payload_text: str, recorded_at: str, prev: str
) -> str:
    body = {
        "seq": seq,
        "case_id": case_id,
        "version": version,
        "type": type_,
        "payload": payload_text,
        "recorded_at": recorded_at,
        "prev": prev,
    }
    return sha256_bytes(canonical_text(body).encode())


def hash_parts(case_id: str, type_: str, payload_text: str) -> tuple[str, str]:
    """The canonical text `event_hash` digests is `a + prev + stamp_part(recorded_at) + str(seq) + c +
    str(version) + "}"` (RFC 8785 orders the keys: case_id, payload, prev, recorded_at, seq, type,
    version). Cut this way, an append canonicalises the payload before it takes the chain head, and
    the PostgreSQL function fills in the values only the server knows."""
    a = f'{{"case_id":{canonical_text(case_id)},"payload":{canonical_text(payload_text)},"prev":"'
    return a, f',"type":{canonical_text(type_)},"version":'


def stamp_part(recorded_at: str) -> str:
    return f'","recorded_at":{canonical_text(recorded_at)},"seq":'


def _replayed(stored_text: str) -> AppendResult:
    stored = json.loads(stored_text)
    return AppendResult(stored["case_id"], stored["version"], tuple(stored["seqs"]), True)


def _conflict(case_id: str, current: int, expected: int) -> ConflictError:
    return ConflictError(
        f"case {case_id} is at version {current}, not {expected}",
        "re-read the case and apply the change again",
    )


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


class SqlLedger:
    def __init__(self, engine: Engine, clock: Clock | None = None) -> None:
        self.engine = engine
        self.clock: Clock = clock or SystemClock()
        migrate(engine)
        database = engine.url.database if engine.dialect.name == "sqlite" else None
        # SQLite writers queue on a file lock before BEGIN IMMEDIATE: a blocked flock wakes the
        # moment the holder lets go, where SQLite's own busy handler sleeps in growing steps (up to
        # 100 ms), which starves throughput once several processes write at once.
        self._writer_lock = Path(database + ".writer") if database and database != ":memory:" else None
        self._case_events = _CASE_EVENTS.format(p="%s" if is_postgres(engine) else "?")

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
        with self.engine.connect() as raw, self._queue_for_write():
            conn = raw.execution_options(**WRITE)
            uow = UnitOfWork(conn, conn.begin())
            try:
                if lock_chain and is_postgres(self.engine):
                    conn.execute(_LOCK_HEAD)
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
        """`once()`, run again after a failure that rolled its transaction back whole: SQLite can
        still answer "database is locked" under heavy multi-process load past busy_timeout, and
        PostgreSQL can report a serialization failure or a deadlock."""
        delay = 0.01
        for attempt in range(50):
            try:
                return once()
            except (OperationalError, SAIntegrityError, sqlite3.OperationalError, sqlite3.IntegrityError) as exc:
                # the sqlite3 errors come from the statements an append sends to the driver directly
                message = str(getattr(exc, "orig", exc)).lower()
                transient = "locked" in message or "deadlock" in message or "serializ" in message
                unique = isinstance(exc, (SAIntegrityError, sqlite3.IntegrityError))
                transient = transient or (integrity_is_transient and unique)
                if not transient or attempt == 49:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
        raise AssertionError("unreachable")

    @contextlib.contextmanager
    def _queue_for_write(self) -> Iterator[None]:
        if self._writer_lock is None:
            yield
            return
        with self._writer_lock.open("a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

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
        if not case_id or len(case_id) > 200:
            raise UsageError("case id must be 1 to 200 characters", "pass a short case id")
        if not new_events and not jobs:
            raise UsageError("nothing to append", "pass at least one event or job")
        payloads = [canonical_text(e.payload) for e in new_events]
        parts = [hash_parts(case_id, e.type, text_) for e, text_ in zip(new_events, payloads, strict=True)]
        job_payloads = [canonical_text(j.payload) for j in jobs]

        if is_postgres(self.engine):
            return self._retry(
                lambda: self._append_pg(case_id, expected_version, new_events, payloads, parts, jobs,
                                        job_payloads, idempotency_key),
                integrity_is_transient=True,
            )

        def run(conn: Connection) -> AppendResult:
            if idempotency_key is not None:
                row = conn.execute(_SEL_IDEMPOTENT, {"k": idempotency_key}).first()
                if row is not None:
                    return _replayed(row.result)
            # The statements that run under the writer lock go to the sqlite3 connection directly:
            # SQLAlchemy's per-statement machinery cost more than SQLite's work here, and every
            # writer waits while the lock is held.
            db = conn.connection.driver_connection
            assert db is not None
            found = db.execute(_SQLITE_CASE_VERSION, (case_id,)).fetchone()
            current_version = int(found[0]) if found else 0
            if expected_version is not None and current_version != expected_version:
                raise _conflict(case_id, current_version, expected_version)
            seq, prev = db.execute(_SQLITE_HEAD).fetchone()
            now = self.clock.now()
            stamp = utc_iso(now)
            between = stamp_part(stamp)
            version = current_version
            seqs: list[int] = []
            rows = []
            for ev, text_, (before_prev, before_version) in zip(new_events, payloads, parts, strict=True):
                seq += 1
                version += 1
                digest = sha256_bytes(f"{before_prev}{prev}{between}{seq}{before_version}{version}}}".encode())
                rows.append((seq, case_id, version, ev.type, text_, stamp, prev, digest))
                seqs.append(seq)
                prev = digest
            if rows:
                db.executemany(_SQLITE_INSERT_EVENT, rows)
                db.execute(_SQLITE_UPDATE_CASE if found else _SQLITE_INSERT_CASE, (version, stamp, case_id))
                db.execute(_SQLITE_UPDATE_HEAD, (seq, prev))
            for job, text_ in zip(jobs, job_payloads, strict=True):
                _insert_job(conn, job, text_, case_id, now)
            if idempotency_key is not None:
                conn.execute(
                    insert(idempotency).values(
                        key=idempotency_key,
                        case_id=case_id,
                        result=canonical_text({"case_id": case_id, "version": version, "seqs": seqs}),
                        recorded_at=stamp,
                    )
                )
            return AppendResult(case_id, version, tuple(seqs))

        return self.transact(run, lock_chain=False)

    def _append_pg(
        self,
        case_id: str,
        expected_version: int | None,
        new_events: Sequence[NewEvent],
        payloads: list[str],
        parts: list[tuple[str, str]],
        jobs: Sequence[NewJob],
        job_payloads: list[str],
        idempotency_key: str | None,
    ) -> AppendResult:
        """The append as one statement in autocommit (one round trip): the function checks the
        version, hashes, and writes events, case row, chain head, jobs and idempotency record."""
        now = self.clock.now()
        stamp = utc_iso(now)
        params = (
            case_id,
            canonical_text(case_id),
            expected_version,
            stamp,
            [ev.type for ev in new_events],
            payloads,
            [a for a, _ in parts],
            stamp_part(stamp),
            [c for _, c in parts],
            [j.key for j in jobs],
            [j.topic for j in jobs],
            job_payloads,
            [j.max_attempts for j in jobs],
            [now + j.delay for j in jobs],
            now,
            idempotency_key,
        )
        with single_statement(self.engine) as conn:
            row = conn.exec_driver_sql(_PG_APPEND, params).one()
        if row.outcome == "replayed":
            return _replayed(row.result)
        if row.outcome == "conflict":
            assert expected_version is not None
            raise _conflict(case_id, int(row.version), expected_version)
        first = int(row.first_seq or 0)
        return AppendResult(case_id, int(row.version), tuple(range(first, first + len(new_events))))

    def update(
        self,
        case_id: str,
        decide: Callable[[list[Event]], tuple[Sequence[NewEvent], Sequence[NewJob]]],
        idempotency_key: str | None = None,
        attempts: int = 20,
    ) -> AppendResult:
        """Read the case, let `decide` choose events and jobs from its history, append them at the
        version read; on a conflict read again and decide again. A decision to append nothing
        writes nothing and returns the version read."""
        for _ in range(attempts):
            history = self.read(case_id)
            new_events, jobs = decide(history)
            if not new_events and not jobs:
                return AppendResult(case_id, len(history), ())
            try:
                return self.append(case_id, len(history), new_events, jobs, idempotency_key)
            except ConflictError:
                continue
        raise ConflictError(
            f"case {case_id} kept changing under {attempts} attempts",
            "retry later; another writer is very busy on this case",
        )

    def read(self, case_id: str, after_version: int = 0) -> list[Event]:
        with single_statement(self.engine) as conn:
            rows = conn.exec_driver_sql(self._case_events, (case_id, after_version)).all()
        return [Event(int(seq), cid, int(version), type_, json.loads(payload), at, prev, digest)
                for seq, cid, version, type_, payload, at, prev, digest in rows]

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
                query = query.where(events.c.case_id.startswith(prefix, autoescape=True))
            with single_statement(self.engine) as conn:
                rows = conn.execute(query).all()
            if not rows:
                return
            for r in rows:
                yield _event(r)
            last = int(rows[-1].seq)

    def case_ids(self, prefix: str = "") -> list[str]:
        with self.engine.connect() as conn:
            query = select(cases.c.case_id).order_by(cases.c.case_id)
            if prefix:
                query = query.where(cases.c.case_id.startswith(prefix, autoescape=True))
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


def _event(r: Any) -> Event:
    return Event(
        seq=int(r.seq),
        case_id=r.case_id,
        version=int(r.version),
        type=r.type,
        payload=json.loads(r.payload),
        recorded_at=r.recorded_at,
        prev_hash=r.prev_hash,
        hash=r.hash,
    )
