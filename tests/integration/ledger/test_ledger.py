"""What the SQL ledger does beyond the contract every ledger keeps (tests/integration/ledger/test_contract.py):
the outbox and its worker, and the hashes the PostgreSQL server computes."""

from __future__ import annotations

import pytest

from signoff.kernel import FixedClock
from signoff.kernel.canonical import canonical_text
from signoff.ledger import NewEvent, NewJob, Outbox, SqlLedger, backoff, verify_chain
from signoff.ledger.store import event_hash, hash_parts, stamp_part

# Strings JSON escapes in every way RFC 8785 knows: quotes, backslashes, control characters,
# non-ASCII (written as is) and a character beyond the Basic Multilingual Plane.
AWKWARD = ['plain', 'quote " and \\ backslash', 'tab\tnew\nline\x01\x1f\x7f', 'caf\u00e9 \u2028 \U0001f600', '']


def test_outbox_lease_backoff_and_dead(db_url: str) -> None:
    clock = FixedClock()
    ledger = SqlLedger.from_url(db_url, clock=clock)
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
    from signoff.ledger import SqlLedger, Worker

    ledger = SqlLedger.from_url(sqlite_url)
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


def test_outbox_payload_by_job_id(sqlite_url: str) -> None:
    ledger = SqlLedger.from_url(sqlite_url)
    ledger.enqueue([NewJob("j", "t", {"to": "alice"})])
    assert Outbox(ledger).payload("j") == {"to": "alice"}
    assert Outbox(ledger).payload("missing") is None


@pytest.mark.parametrize("text_", AWKWARD)
def test_hash_parts_cut_the_text_event_hash_digests(text_: str) -> None:
    case_id, type_, payload = f"case {text_}", f"type {text_}", canonical_text({"k": text_, text_: [1, None]})
    (a, c), b = hash_parts(case_id, type_, payload), stamp_part("2026-12-01T18:00:00.000001Z")
    body = {"seq": 12345678901, "case_id": case_id, "version": 42, "type": type_, "payload": payload,
            "recorded_at": "2026-12-01T18:00:00.000001Z", "prev": "ab" * 32}
    assert a + "ab" * 32 + b + "12345678901" + c + "42}" == canonical_text(body)


def test_stored_hashes_are_the_ones_the_chain_walk_recomputes(db_url: str) -> None:
    """On PostgreSQL the server hashes each event (migration 0003); the walk hashes in Python."""
    ledger = SqlLedger.from_url(db_url)
    results = []
    for i, text_ in enumerate(AWKWARD):
        case_id = f"case {text_}"
        events = [NewEvent(f"type {text_}", {"k": text_, "i": i}), NewEvent("second", {text_: [text_]})]
        results.append(ledger.append(case_id, 0, events, jobs=[NewJob(f"job {text_}", "t", {"v": text_})],
                                     idempotency_key=f"key {text_}"))
        results.append(ledger.append(case_id, None, [NewEvent("anywhere")]))
    stored = list(ledger.stream())
    assert [e.seq for e in stored] == [s for r in results for s in r.seqs] == list(range(1, 3 * len(AWKWARD) + 1))
    prev = "0" * 64
    for e in stored:
        assert e.prev_hash == prev
        assert e.hash == event_hash(e.seq, e.case_id, e.version, e.type, canonical_text(e.payload), e.recorded_at, prev)
        prev = e.hash
    assert ledger.head() == (len(stored), prev)
    assert [ledger.version(f"case {t}") for t in AWKWARD] == [3] * len(AWKWARD)
    report = verify_chain(ledger)
    assert report.ok and report.count == len(stored), report.problem
    replay = ledger.append("case plain", 0, [NewEvent("x")], idempotency_key="key plain")
    assert replay.replayed and (replay.case_id, replay.version, replay.seqs) == ("case plain", 2, (1, 2))
    assert sorted(j.job_id for j in Outbox(ledger).jobs()) == sorted(f"job {t}" for t in AWKWARD)


