from __future__ import annotations

import pytest

from signoff.kernel import ConflictError, FixedClock, UsageError
from signoff.ledger import Ledger, NewEvent, NewJob, Outbox, backoff


def test_optimistic_concurrency_is_per_case(db_url: str) -> None:
    ledger = Ledger.from_url(db_url)
    ledger.append("a", 0, [NewEvent("x")])
    ledger.append("b", 0, [NewEvent("x")])  # another case at its own version: no conflict
    with pytest.raises(ConflictError, match="case a is at version 1, not 0"):
        ledger.append("a", 0, [NewEvent("y")])
    assert [e.type for e in ledger.read("a")] == ["x"]
    ledger.append("a", 1, [NewEvent("y"), NewEvent("z")])
    assert ledger.version("a") == 3


def test_idempotency_key_applies_once(db_url: str) -> None:
    ledger = Ledger.from_url(db_url)
    first = ledger.append("a", 0, [NewEvent("x")], jobs=[NewJob("j", "t")], idempotency_key="cmd-1")
    again = ledger.append("a", 0, [NewEvent("x")], jobs=[NewJob("j", "t")], idempotency_key="cmd-1")
    assert again.replayed and again.version == first.version == 1
    assert len(ledger.read("a")) == 1
    assert len(Outbox(ledger).jobs()) == 1


def test_jobs_are_written_with_their_events_or_not_at_all(sqlite_url: str) -> None:
    ledger = Ledger.from_url(sqlite_url)
    ledger.append("a", 0, [NewEvent("x")])
    with pytest.raises(ConflictError):
        ledger.append("a", 0, [NewEvent("y")], jobs=[NewJob("lost?", "t")])
    assert Outbox(ledger).jobs() == []


def test_bad_input_changes_nothing(sqlite_url: str) -> None:
    ledger = Ledger.from_url(sqlite_url)
    with pytest.raises(UsageError):
        ledger.append("", 0, [NewEvent("x")])
    with pytest.raises(UsageError):
        ledger.append("a", 0, [])
    with pytest.raises(UsageError):
        ledger.append("a", 0, [NewEvent("x", {"bad": float("nan")})])
    assert ledger.count_events() == 0 and ledger.case_ids() == []


def test_counters_and_stream(sqlite_url: str) -> None:
    ledger = Ledger.from_url(sqlite_url)
    assert [ledger.next_number("bug") for _ in range(3)] == [1, 2, 3]
    for i in range(5):
        ledger.append(f"c{i % 2}", None, [NewEvent("e", {"i": i})])
    assert [e.payload["i"] for e in ledger.stream(batch=2)] == [0, 1, 2, 3, 4]
    assert [e.payload["i"] for e in ledger.stream(after_seq=3)] == [3, 4]


def test_outbox_lease_backoff_and_dead(db_url: str) -> None:
    clock = FixedClock()
    ledger = Ledger.from_url(db_url, clock=clock)
    ledger.enqueue([NewJob("j1", "mail", {"to": "x"}, max_attempts=3)])
    outbox = Outbox(ledger, lease_seconds=60)
    job = outbox.claim()
    assert job is not None and job.attempts == 1
    assert outbox.claim() is None  # leased
    clock.advance(61)
    stolen = outbox.claim()  # lease lapsed: claimable again
    assert stolen is not None and stolen.lease_id != job.lease_id
    assert not outbox.ack(job)  # the old holder lost it
    assert outbox.fail(stolen, "smtp down") == "pending"
    assert outbox.claim() is None  # backing off
    clock.advance(backoff(2))
    third = outbox.claim()
    assert third is not None and third.attempts == 3
    assert outbox.fail(third, "smtp still down") == "dead"
    dead = outbox.jobs(status="dead")
    assert [(d.job_id, d.last_error) for d in dead] == [("j1", "smtp still down")]
    assert outbox.retry_dead("j1")
    again = outbox.claim()
    assert again is not None and outbox.ack(again)
    assert outbox.jobs(status="done")[0].job_id == "j1"


def test_backoff_doubles_and_caps_at_an_hour() -> None:
    assert [backoff(n) for n in (1, 2, 3, 4)] == [2.0, 4.0, 8.0, 16.0]
    assert backoff(40) == 3600.0


def test_worker_delivers_by_topic_and_records_failures(sqlite_url: str) -> None:
    from signoff.ledger import Worker

    ledger = Ledger.from_url(sqlite_url)
    ledger.enqueue([NewJob("ok-1", "mail", {"n": 1}), NewJob("boom-1", "sms", {"n": 2}, max_attempts=1),
                    NewJob("other", "unhandled")])
    delivered: list[str] = []

    def mail(job) -> None:  # type: ignore[no-untyped-def]
        delivered.append(job.job_id)

    def sms(job) -> None:  # type: ignore[no-untyped-def]
        raise RuntimeError("gateway down")

    worker = Worker(Outbox(ledger), {"mail": mail, "sms": sms})
    assert worker.drain() == 2
    assert delivered == ["ok-1"]
    states = {s.job_id: (s.status, s.last_error) for s in Outbox(ledger).jobs()}
    assert states == {"ok-1": ("done", None), "boom-1": ("dead", "RuntimeError: gateway down"),
                      "other": ("pending", None)}


def test_update_that_decides_nothing_writes_nothing(sqlite_url: str) -> None:
    ledger = Ledger.from_url(sqlite_url)
    ledger.append("a", 0, [NewEvent("x")])
    result = ledger.update("a", lambda history: ([], []))
    assert result.version == 1 and result.seqs == ()
    assert ledger.count_events() == 1


def test_outbox_payload_by_job_id(sqlite_url: str) -> None:
    ledger = Ledger.from_url(sqlite_url)
    ledger.enqueue([NewJob("j", "t", {"to": "alice"})])
    assert Outbox(ledger).payload("j") == {"to": "alice"}
    assert Outbox(ledger).payload("missing") is None
