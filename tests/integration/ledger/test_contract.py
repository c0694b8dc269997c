"""The ledger contract: what every `Ledger` does, held to MemoryLedger and to SqlLedger on SQLite and on
PostgreSQL alike. A workflow tested against MemoryLedger behaves the same on a database."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from sqlalchemy import select

from signoff.kernel import ConflictError, FixedClock, UsageError
from signoff.kernel.canonical import canonical_text
from signoff.kernel.clock import utc_iso
from signoff.ledger import Event, Ledger, MemoryLedger, NewEvent, NewJob, SqlLedger
from signoff.ledger.events import GENESIS, event_hash
from signoff.ledger.memory import EnqueuedJob
from signoff.ledger.schema import outbox
from tests.conftest import _fresh_pg_database
from tests.integration.ledger.test_ledger import AWKWARD

START = 1_700_000_000.0
Decided = tuple[Sequence[NewEvent], Sequence[NewJob]]


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def ledger(request: pytest.FixtureRequest, tmp_path: Path, clock: FixedClock) -> Iterator[Ledger]:
    made: Ledger
    if request.param == "memory":
        made = MemoryLedger(clock)
    elif request.param == "sqlite":
        made = SqlLedger.from_url(f"sqlite:///{tmp_path / 'ledger.db'}", clock)
    else:
        made = SqlLedger.from_url(_fresh_pg_database(request, request.getfixturevalue("pg_server")), clock)
    yield made
    made.close()


def jobs(ledger: Ledger) -> list[EnqueuedJob]:
    """Every job the ledger holds, by key: the outbox rows of a SqlLedger, MemoryLedger's own list."""
    if isinstance(ledger, MemoryLedger):
        return sorted(ledger.jobs(), key=lambda j: j.job_id)
    assert isinstance(ledger, SqlLedger)
    with ledger.engine.connect() as conn:
        rows = conn.execute(select(outbox).order_by(outbox.c.job_id)).all()
    return [EnqueuedJob(r.job_id, r.topic, r.case_id, json.loads(r.payload), r.max_attempts, r.available_at,
                        r.created_at) for r in rows]


def chain(ledger: Ledger) -> list[Event]:
    """The whole chain, checked link by link against `event_hash` (the audit walk's hash)."""
    stored = list(ledger.stream())
    prev = GENESIS
    for n, e in enumerate(stored, start=1):
        assert e.seq == n and e.prev_hash == prev
        assert e.hash == event_hash(e.seq, e.case_id, e.version, e.type, canonical_text(e.payload), e.recorded_at, prev)
        prev = e.hash
    assert ledger.head() == (len(stored), prev)
    return stored


def state(ledger: Ledger) -> tuple[object, ...]:
    """Everything an append may change."""
    return ledger.head(), ledger.count_events(), ledger.case_ids(), jobs(ledger)


# -- append, versions, conflicts ------------------------------------------------------------------


def test_optimistic_concurrency_is_per_case(ledger: Ledger) -> None:
    first = ledger.append("a", 0, [NewEvent("x")])
    assert (first.case_id, first.version, first.seqs, first.replayed) == ("a", 1, (1,), False)
    ledger.append("b", 0, [NewEvent("x")])  # another case at its own version: no conflict
    before = state(ledger)
    with pytest.raises(ConflictError, match="case a is at version 1, not 0") as refused:
        ledger.append("a", 0, [NewEvent("y")], jobs=[NewJob("lost?", "t")], idempotency_key="k")
    assert refused.value.fix == "re-read the case and apply the change again"
    assert state(ledger) == before and jobs(ledger) == []
    assert [e.type for e in ledger.read("a")] == ["x"]
    later = ledger.append("a", 1, [NewEvent("y"), NewEvent("z")], idempotency_key="k")
    assert not later.replayed  # the refused append did not use up the key
    assert (later.version, later.seqs) == (3, (3, 4))
    assert ledger.version("a") == 3 and ledger.version("b") == 1 and ledger.version("nobody") == 0
    assert [(e.seq, e.version, e.type) for e in ledger.read("a")] == [(1, 1, "x"), (3, 2, "y"), (4, 3, "z")]


def test_none_appends_wherever_the_case_is(ledger: Ledger) -> None:
    assert ledger.append("log", None, [NewEvent("a")]).version == 1
    assert ledger.append("log", None, [NewEvent("b"), NewEvent("c")]).version == 3
    with pytest.raises(ConflictError, match="case log is at version 3, not 5"):
        ledger.append("log", 5, [NewEvent("d")])
    assert ledger.read("nobody") == [] and ledger.version("log") == 3


def test_read_after_a_version(ledger: Ledger) -> None:
    ledger.append("a", 0, [NewEvent("e", {"n": n}) for n in range(1, 6)])
    assert [e.payload["n"] for e in ledger.read("a", after_version=3)] == [4, 5]
    assert [e.version for e in ledger.read("a", after_version=0)] == [1, 2, 3, 4, 5]
    assert ledger.read("a", after_version=5) == [] and ledger.read("a", after_version=-1) == ledger.read("a")


def test_payloads_read_back_as_their_canonical_json(ledger: Ledger) -> None:
    payload = {"z": 1.0, "a": [1, {"y": None, "b": True}], "text": AWKWARD[1:4]}
    ledger.append("a", 0, [NewEvent("e", payload)])
    payload["z"] = 99  # the caller's dict is not the stored one
    [stored] = ledger.read("a")
    assert stored.payload == {"z": 1, "a": [1, {"y": None, "b": True}], "text": AWKWARD[1:4]}
    assert canonical_text(stored.payload) == canonical_text({**payload, "z": 1.0})
    stored.payload["z"] = 2  # nor is what one reader got what the next reads
    assert ledger.read("a")[0].payload["z"] == 1 and next(ledger.stream()).payload["z"] == 1


def test_events_carry_the_clocks_time(ledger: Ledger, clock: FixedClock) -> None:
    ledger.append("a", 0, [NewEvent("x"), NewEvent("y")], jobs=[NewJob("j", "t", delay=30)])
    clock.advance(1.5)
    ledger.append("a", 2, [NewEvent("z")])
    clock.advance(1)
    ledger.enqueue([NewJob("k", "t")])
    assert [e.recorded_at for e in ledger.read("a")] == [utc_iso(START)] * 2 + [utc_iso(START + 1.5)]
    assert [(j.job_id, j.case_id, j.created_at, j.available_at) for j in jobs(ledger)] == [
        ("j", "a", START, START + 30), ("k", None, START + 2.5, START + 2.5)]


# -- update ---------------------------------------------------------------------------------------


def test_update_decides_again_on_what_another_writer_appended(ledger: Ledger) -> None:
    ledger.append("a", 0, [NewEvent("opened")])
    seen: list[list[str]] = []

    def decide(history: list[Event]) -> Decided:
        seen.append([e.type for e in history])
        if len(seen) == 1:  # another writer gets there between our read and our append
            ledger.append("a", None, [NewEvent("other")], jobs=[NewJob("theirs", "t")])
        return [NewEvent("ours", {"after": len(history)})], [NewJob(f"mine-{len(history)}", "t")]

    result = ledger.update("a", decide, idempotency_key="cmd")
    assert seen == [["opened"], ["opened", "other"]]
    assert (result.version, result.seqs, result.replayed) == (3, (3,), False)
    assert [(e.type, e.payload) for e in ledger.read("a")] == [("opened", {}), ("other", {}), ("ours", {"after": 2})]
    assert [j.job_id for j in jobs(ledger)] == ["mine-2", "theirs"]  # the refused try's job was not written
    again = ledger.update("a", decide, idempotency_key="cmd")
    assert again.replayed and (again.version, again.seqs) == (3, (3,)) and ledger.version("a") == 3


def test_update_gives_up_on_a_case_that_keeps_changing(ledger: Ledger) -> None:
    ledger.append("a", 0, [NewEvent("opened")])

    def decide(history: list[Event]) -> Decided:
        ledger.append("a", None, [NewEvent("other")])
        return [NewEvent("ours")], [NewJob("never", "t")]

    with pytest.raises(ConflictError, match="case a kept changing under 3 attempts") as refused:
        ledger.update("a", decide, attempts=3)
    assert refused.value.fix == "retry later; another writer is very busy on this case"
    assert [e.type for e in ledger.read("a")] == ["opened", "other", "other", "other"] and jobs(ledger) == []


def test_update_that_decides_nothing_writes_nothing(ledger: Ledger) -> None:
    ledger.append("a", 0, [NewEvent("x")])
    result = ledger.update("a", lambda history: ([], []), idempotency_key="nothing")
    assert (result.case_id, result.version, result.seqs, result.replayed) == ("a", 1, (), False)
    assert ledger.count_events() == 1
    assert ledger.update("new", lambda history: ([], [])).version == 0 and ledger.case_ids() == ["a"]
    # deciding nothing did not use up the key
    assert not ledger.append("a", 1, [NewEvent("y")], idempotency_key="nothing").replayed


def test_an_update_whose_decision_raises_writes_nothing(ledger: Ledger) -> None:
    ledger.append("a", 0, [NewEvent("x")])
    before = state(ledger)

    def refuse(history: list[Event]) -> Decided:
        raise UsageError("not now", "later")

    with pytest.raises(UsageError, match="not now"):
        ledger.update("a", refuse)
    assert state(ledger) == before


def test_concurrent_updates_lose_nothing(ledger: Ledger) -> None:
    def writer(w: int) -> None:
        for i in range(8):
            ledger.update("c", lambda h, i=i: ([NewEvent("n", {"w": w, "i": i, "after": len(h)})], []),
                          attempts=1000)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    events = ledger.read("c")
    assert [e.version for e in events] == list(range(1, 33))
    assert all(e.payload["after"] == e.version - 1 for e in events)
    assert sorted((e.payload["w"], e.payload["i"]) for e in events) == [(w, i) for w in range(4) for i in range(8)]
    assert len(chain(ledger)) == 32


# -- idempotency and jobs -------------------------------------------------------------------------


def test_idempotency_key_applies_once(ledger: Ledger) -> None:
    first = ledger.append("a", 0, [NewEvent("x")], jobs=[NewJob("j", "t")], idempotency_key="cmd-1")
    before = state(ledger)
    again = ledger.append("a", 0, [NewEvent("x")], jobs=[NewJob("j", "t")], idempotency_key="cmd-1")
    assert again.replayed and (again.case_id, again.version, again.seqs) == (first.case_id, 1, first.seqs)
    # the key answers for what it did the first time, whatever the repeat asks for
    other = ledger.append("b", None, [NewEvent("y")], jobs=[NewJob("j2", "t")], idempotency_key="cmd-1")
    assert other.replayed and (other.case_id, other.version, other.seqs) == ("a", 1, (1,))
    assert state(ledger) == before
    assert len(ledger.read("a")) == 1 and [j.job_id for j in jobs(ledger)] == ["j"]


def test_jobs_are_written_with_their_events_or_not_at_all(ledger: Ledger) -> None:
    ledger.append("a", 0, [NewEvent("x")], jobs=[NewJob("j1", "mail", {"to": "ana"}, max_attempts=3)])
    with pytest.raises(ConflictError):
        ledger.append("a", 0, [NewEvent("y")], jobs=[NewJob("lost?", "t")])
    assert jobs(ledger) == [EnqueuedJob("j1", "mail", "a", {"to": "ana"}, 3, START, START)]


def test_the_first_job_of_a_key_wins(ledger: Ledger) -> None:
    ledger.enqueue([NewJob("j", "first", {"n": 1}), NewJob("j", "second", {"n": 2})], case_id="c")
    ledger.append("a", 0, [NewEvent("x")], jobs=[NewJob("j", "third", {"n": 3}), NewJob("k", "t", {"n": 4})])
    ledger.enqueue([])
    assert [(j.job_id, j.topic, j.case_id, j.payload) for j in jobs(ledger)] == [
        ("j", "first", "c", {"n": 1}), ("k", "t", "a", {"n": 4})]


def test_jobs_without_events_leave_the_case_where_it_is(ledger: Ledger) -> None:
    ledger.append("a", 0, [NewEvent("x")])
    result = ledger.append("a", 1, [], jobs=[NewJob("j1", "t"), NewJob("j1", "t", {"second": True})],
                           idempotency_key="only-jobs")
    assert (result.version, result.seqs, result.replayed) == (1, (), False)
    assert ledger.append("a", 1, [], jobs=[NewJob("j2", "t")], idempotency_key="only-jobs").replayed
    with pytest.raises(ConflictError, match="case a is at version 1, not 0"):
        ledger.append("a", 0, [], jobs=[NewJob("j4", "t")])
    assert ledger.append("new", None, [], jobs=[NewJob("j3", "t")]).version == 0
    assert [(j.job_id, j.payload) for j in jobs(ledger)] == [("j1", {}), ("j3", {})]
    assert ledger.version("a") == 1 and ledger.case_ids() == ["a"] and ledger.count_events() == 1


# -- the log as a whole ---------------------------------------------------------------------------


def test_stream_in_chain_order_in_batches(ledger: Ledger) -> None:
    assert list(ledger.stream()) == []
    for i in range(5):
        ledger.append(f"c{i % 2}", None, [NewEvent("e", {"i": i})])
    assert [e.payload["i"] for e in ledger.stream(batch=2)] == [0, 1, 2, 3, 4]
    assert [e.payload["i"] for e in ledger.stream(after_seq=3)] == [3, 4]
    assert [e.payload["i"] for e in ledger.stream(batch=1, prefix="c1")] == [1, 3]
    assert list(ledger.stream(after_seq=5)) == []


def test_prefixes_are_literal(ledger: Ledger) -> None:
    for case_id in ["a%b/1", "a%b/2", "axb/1", "a_b/1", "aXb/2", "a\\b/1", "a"]:
        ledger.append(case_id, 0, [NewEvent("e", {"case": case_id})])
    assert ledger.case_ids("a%b/") == ["a%b/1", "a%b/2"]
    assert ledger.case_ids("a_b/") == ["a_b/1"]
    assert ledger.case_ids("axb/") == ["axb/1"] and ledger.case_ids("aX") == ["aXb/2"]  # and case-sensitive
    assert ledger.case_ids("a\\b") == ["a\\b/1"]
    assert ledger.case_ids("zz") == [] and len(ledger.case_ids()) == len(ledger.case_ids("")) == 7
    assert [e.case_id for e in ledger.stream(prefix="a%")] == ["a%b/1", "a%b/2"]
    assert [e.case_id for e in ledger.stream(prefix="a_", batch=2)] == ["a_b/1"]


def test_case_ids_in_order(ledger: Ledger) -> None:
    for case_id in ["desk/bug/BUG-0002", "notes/run-1", "desk/bug/BUG-0001", "desk/card/1"]:
        ledger.append(case_id, 0, [NewEvent("e")])
    assert ledger.case_ids() == ["desk/bug/BUG-0001", "desk/bug/BUG-0002", "desk/card/1", "notes/run-1"]
    assert ledger.case_ids("desk/bug/") == ["desk/bug/BUG-0001", "desk/bug/BUG-0002"]


def test_counters_count_from_one_each(ledger: Ledger) -> None:
    assert [ledger.next_number("bug") for _ in range(3)] == [1, 2, 3]
    assert ledger.next_number("card") == 1 and ledger.next_number("bug") == 4
    assert ledger.count_events() == 0


# The head after SCRIPT under FixedClock(START): the same on every ledger, and the same as any ledger
# written by earlier code, since the audit chain (and every signed checkpoint) covers it.
HEAD = (10, "d4f547d9e56a2bcccf95f8f9dd4496e4a000eb68bbd4fcb5e0a3aa5ef3347c22")


def _script(ledger: Ledger, clock: FixedClock) -> None:
    ledger.append("desk/bug/BUG-0001", 0, [NewEvent("bug.opened", {"title": "caf\u00e9", "n": 1.0}),
                                           NewEvent("bug.noted", {"text": AWKWARD[2]})])
    clock.advance(0.000001)
    ledger.append("notes/r1", None, [NewEvent("run.started", {})], jobs=[NewJob("j", "t")], idempotency_key="k")
    clock.advance(2.5)
    ledger.update("desk/bug/BUG-0001", lambda h: ([NewEvent("bug.closed", {"after": len(h)})], []))
    ledger.append("notes/r1", None, [NewEvent("run.started", {})], idempotency_key="k")  # a replay
    for text_ in AWKWARD:
        ledger.append(f"case {text_}", None, [NewEvent(f"type {text_}", {text_: [text_, None]})])
    clock.advance(3600)
    ledger.append("desk/bug/BUG-0001", 3, [NewEvent("bug.reopened", {"by": "\U0001f600"})])


def test_the_same_appends_give_the_same_chain_head(ledger: Ledger, clock: FixedClock) -> None:
    assert ledger.head() == (0, GENESIS)
    _script(ledger, clock)
    assert len(chain(ledger)) == 10
    assert ledger.head() == HEAD


# -- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("case_id", "events", "job_list", "message"), [
    ("", [NewEvent("x")], [], "case id must be 1 to 200 characters"),
    ("c" * 201, [NewEvent("x")], [], "case id must be 1 to 200 characters"),
    ("a", [], [], "nothing to append"),
    ("a", [NewEvent("x", {"bad": float("nan")})], [], "cannot be written as canonical JSON"),
    ("a", [NewEvent("x", {"big": 2**53})], [], "cannot be written as canonical JSON"),
    ("a", [NewEvent("x")], [NewJob("j", "t", {"bad": float("inf")})], "cannot be written as canonical JSON"),
])
def test_bad_input_changes_nothing(ledger: Ledger, case_id: str, events: list[NewEvent], job_list: list[NewJob],
                                   message: str) -> None:
    with pytest.raises(UsageError, match=message):
        ledger.append(case_id, 0, events, jobs=job_list, idempotency_key="k")
    assert state(ledger) == ((0, GENESIS), 0, [], [])
    assert not ledger.append("a", 0, [NewEvent("x")], idempotency_key="k").replayed  # the key was not used up


def test_the_longest_case_id_is_kept_whole(ledger: Ledger) -> None:
    longest = "c" * 200
    ledger.append(longest, 0, [NewEvent("x")])
    assert ledger.case_ids() == [longest] and ledger.read(longest)[0].case_id == longest


def test_bad_job_payloads_to_enqueue_change_nothing(ledger: Ledger) -> None:
    with pytest.raises(UsageError, match="cannot be written as canonical JSON"):
        ledger.enqueue([NewJob("ok", "t"), NewJob("bad", "t", {"x": float("nan")})])
    assert jobs(ledger) == []
