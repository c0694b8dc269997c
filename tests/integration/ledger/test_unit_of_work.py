"""The ledger's public unit of work, the worker's failure scope and the generic projector."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import Column, Connection, Integer, MetaData, String, Table, insert, select
from sqlalchemy.exc import OperationalError

from signoff.kernel import FixedClock
from signoff.ledger import Event, Job, NewEvent, NewJob, Outbox, SqlLedger, Worker
from signoff.ledger.projection import Projector
from signoff.ledger.schema import counters

_scratch = MetaData()
cursors = Table("t_cursors", _scratch, Column("name", String(50), primary_key=True), Column("seq", Integer))
titles = Table("t_titles", _scratch, Column("case_id", String(200), primary_key=True), Column("title", String(200)))


def _counter(ledger: SqlLedger, name: str) -> int | None:
    with ledger.engine.connect() as conn:
        value = conn.execute(select(counters.c.value).where(counters.c.name == name)).scalar()
    return None if value is None else int(value)


def test_transaction_commits_at_the_end_of_the_block(db_url: str) -> None:
    ledger = SqlLedger.from_url(db_url)
    with ledger.transaction() as tx:
        tx.conn.execute(insert(counters).values(name="kept", value=7))
    assert _counter(ledger, "kept") == 7


def test_transaction_rolls_back_when_the_block_raises(db_url: str) -> None:
    ledger = SqlLedger.from_url(db_url)
    with pytest.raises(RuntimeError, match="half way"), ledger.transaction() as tx:
        tx.conn.execute(insert(counters).values(name="lost", value=1))
        raise RuntimeError("half way")
    assert _counter(ledger, "lost") is None


def test_explicit_rollback_and_commit(db_url: str) -> None:
    ledger = SqlLedger.from_url(db_url)
    with ledger.transaction() as tx:
        tx.conn.execute(insert(counters).values(name="undone", value=1))
        tx.rollback()
    with ledger.transaction() as tx:
        tx.conn.execute(insert(counters).values(name="early", value=2))
        tx.commit()
    assert _counter(ledger, "undone") is None and _counter(ledger, "early") == 2


def _real_busy_error(path: Path) -> sqlite3.OperationalError:
    """SQLite's own "database is locked" (SQLITE_BUSY), from a write lock another connection holds."""
    holder, other = sqlite3.connect(path, isolation_level=None), sqlite3.connect(path, timeout=0, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        other.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        return exc
    finally:
        holder.close()
        other.close()
    raise AssertionError("the second writer was not refused")


def test_transact_runs_the_work_again_after_a_transient_failure(sqlite_url: str, tmp_path: Path) -> None:
    ledger = SqlLedger.from_url(sqlite_url)
    tries: list[int] = []
    busy = _real_busy_error(tmp_path / "elsewhere.db")

    def work(conn: Connection) -> str:
        conn.execute(insert(counters).values(name=f"try-{len(tries)}", value=1))
        tries.append(1)
        if len(tries) == 1:
            raise OperationalError("INSERT", {}, busy)
        return "done"

    assert ledger.transact(work) == "done"
    assert len(tries) == 2
    assert _counter(ledger, "try-0") is None  # the failed attempt rolled back whole
    assert _counter(ledger, "try-1") == 1


def test_transact_does_not_retry_a_lasting_failure(sqlite_url: str) -> None:
    ledger = SqlLedger.from_url(sqlite_url)
    tries: list[int] = []

    def work(conn: Connection) -> None:
        tries.append(1)
        raise OperationalError("INSERT", {}, Exception("no such table: nowhere"))

    with pytest.raises(OperationalError):
        ledger.transact(work)
    assert len(tries) == 1


class _Stop(Exception):
    """Outside the worker's failures: it must propagate and leave the lease held."""


def test_worker_with_narrow_failures_lets_other_exceptions_through(sqlite_url: str) -> None:
    clock = FixedClock()
    ledger = SqlLedger.from_url(sqlite_url, clock=clock)
    ledger.enqueue([NewJob("a", "t"), NewJob("b", "t")])

    def handler(job: Job) -> None:
        if job.job_id == "a":
            raise ValueError("bad input")
        raise _Stop()

    worker = Worker(Outbox(ledger, lease_seconds=30), {"t": handler}, failures=(ValueError,),
                    error_text=lambda exc: f"refused: {exc}")
    assert worker.run_once()
    with pytest.raises(_Stop):
        worker.run_once()
    states = {s.job_id: (s.status, s.attempts, s.last_error) for s in Outbox(ledger).jobs()}
    assert states == {"a": ("pending", 1, "refused: bad input"), "b": ("pending", 1, None)}
    assert Outbox(ledger).claim(["t"]) is None  # b's lease is still held, a is backing off
    clock.advance(31)
    again = Outbox(ledger).claim(["t"])
    assert again is not None and again.job_id == "b" and again.attempts == 2


def _project(ledger: SqlLedger, passes: list[tuple[list[str] | None, int]]) -> Projector[list[str]]:
    _scratch.create_all(ledger.engine)

    def apply(conn: Connection, event: Event, into: list[str]) -> None:
        conn.execute(insert(titles).values(case_id=event.case_id, title=event.payload["title"]))
        into.append(event.case_id)

    return Projector(ledger, name="t", prefix="t.", cursor_table=cursors, tables=[titles], start=list,
                     apply=apply, on_pass=lambda result, cursor: passes.append((result, cursor)), batch=2)


def _titles(ledger: SqlLedger) -> dict[str, str]:
    with ledger.engine.connect() as conn:
        return {r.case_id: r.title for r in conn.execute(select(titles))}


def test_projector_applies_its_prefix_once_across_processes_and_rebuilds(db_url: str) -> None:
    ledger = SqlLedger.from_url(db_url)
    for i in range(3):
        ledger.append(f"t.{i}", 0, [NewEvent("titled", {"title": f"title {i}"})])
        ledger.append(f"other.{i}", 0, [NewEvent("titled", {"title": "not ours"})])
    passes: list[tuple[list[str] | None, int]] = []
    first = _project(ledger, passes)
    assert first.catch_up() == 5  # the last t.* event's seq
    assert passes == [(["t.0", "t.1"], 3), (["t.2"], 5)]
    assert _titles(ledger) == {"t.0": "title 0", "t.1": "title 1", "t.2": "title 2"}

    # A second process with its own projector: its cursor starts where the stored one is.
    other_passes: list[tuple[list[str] | None, int]] = []
    second = _project(SqlLedger.from_url(db_url), other_passes)
    assert second.cursor() == 5
    ledger.append("t.3", 0, [NewEvent("titled", {"title": "title 3"})])
    assert second.catch_up() == 7 and other_passes == [(["t.3"], 7)]
    # The first process never saw t.3 applied: it is told so (None), takes the stored cursor and
    # does not apply the event again (which would break the primary key).
    assert first.stored_cursor() == 7 and first.cursor() == 5
    assert first.catch_up() == 7
    assert passes[-1] == (None, 7)

    passes.clear()
    assert first.rebuild() == 7
    assert passes == [(None, 0), (["t.0", "t.1"], 3), (["t.2", "t.3"], 7)]
    assert len(_titles(ledger)) == 4
