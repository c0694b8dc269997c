"""Many writers, threads and processes, on overlapping cases: nothing lost, nothing doubled."""

from __future__ import annotations

import multiprocessing
import random
import signal
import time
from collections import Counter

import pytest

from signoff.ledger import NewJob, Outbox, SqlLedger, verify_chain
from tests.system.ledger.workers import append_many, deliver_forever

CASES = ["case-a", "case-b", "case-c", "case-d"]


def _check_dense(ledger: SqlLedger, expected_total: int) -> None:
    seen: Counter[tuple[str, int]] = Counter()
    total = 0
    for case in CASES:
        events = ledger.read(case)
        assert [e.version for e in events] == list(range(1, len(events) + 1))
        for e in events:
            seen[(e.payload["writer"], e.payload["n"])] += 1
            # each writer decided on the history it read: the version it landed at is right after it
            assert e.payload["after"] == e.version - 1
        total += len(events)
    assert total == expected_total
    assert all(v == 1 for v in seen.values()), "an event was applied twice"
    assert len(seen) == expected_total
    report = verify_chain(ledger)
    assert report.ok, report.problem
    assert report.count == expected_total


@pytest.mark.slow
def test_sixteen_writers_threads_and_processes(db_url: str) -> None:
    SqlLedger.from_url(db_url).close()  # migrate once up front
    ctx = multiprocessing.get_context("spawn")
    per_writer = 12
    procs = [ctx.Process(target=append_many, args=(db_url, f"p{i}", CASES, per_writer, i, 2)) for i in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=240)
        assert p.exitcode == 0
    ledger = SqlLedger.from_url(db_url)
    _check_dense(ledger, 16 * per_writer)
    ledger.close()


@pytest.mark.slow
def test_outbox_survives_workers_killed_at_random(db_url: str) -> None:
    ledger = SqlLedger.from_url(db_url)
    jobs = [NewJob(f"job-{i}", "effect", {"i": i}) for i in range(30)]
    ledger.enqueue(jobs)
    outbox = Outbox(ledger)
    ctx = multiprocessing.get_context("spawn")
    rnd = random.Random(7)
    kills = 0
    seed = 0
    deadline = time.monotonic() + 180
    live: list[multiprocessing.process.BaseProcess] = []
    while time.monotonic() < deadline:
        while len(live) < 2:
            seed += 1
            p = ctx.Process(target=deliver_forever, args=(db_url, 0.6, seed), daemon=True)
            p.start()
            live.append(p)
        time.sleep(rnd.uniform(0.3, 1.2))
        victim = live.pop(rnd.randrange(len(live)))
        if victim.pid is not None:
            victim.kill()  # SIGKILL: no cleanup, leases are simply abandoned
            kills += 1
        victim.join()
        assert victim.exitcode == -signal.SIGKILL
        if not outbox.jobs(status="pending"):
            break
    for p in live:
        p.kill()
        p.join()
    states = outbox.jobs()
    assert [s.status for s in states] == ["done"] * len(jobs), [s for s in states if s.status != "done"]
    effects = [e.payload["job"] for e in ledger.read("effects")]
    assert sorted(effects) == sorted(j.key for j in jobs), "an effect was lost or duplicated"
    assert kills >= 2
    assert verify_chain(ledger).ok
    ledger.close()
