"""Spend and rate limits in the ledger database: atomic reservations, resets, unknown outcomes."""

from __future__ import annotations

import json
import multiprocessing
import threading
from datetime import UTC, datetime

import pytest

from signoff.agents import Budget, BudgetExceeded, SpendLimits, agent_for
from signoff.agents.budget import period_bounds
from signoff.kernel.clock import FixedClock
from signoff.ledger import SqlLedger
from tests.support.fixtures.agents import role_toml
from tests.support.model_wire import Canned, WireServer, openai_completion

W = 30_000  # $0.03 worst case per call, the figure the desk seed reserved


def _reserve_in_child(url: str, barrier, results, index: int) -> None:  # type: ignore[no-untyped-def]
    ledger = SqlLedger.from_url(url)
    budget = Budget(ledger, SpendLimits(budget_micros=5 * W + W // 2, calls_per_hour=1000,
                                   calls_per_client_per_hour=1000))
    barrier.wait()
    try:
        budget.reserve(f"call-{index}", f"client-{index}", "fixer", "openai", "m", W)
        results.put("ok")
    except BudgetExceeded as exc:
        results.put(exc.limit)
    finally:
        ledger.close()


def test_sixteen_concurrent_processes_never_overshoot(db_url: str) -> None:
    SqlLedger.from_url(db_url).close()  # migrate once up front
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(16), ctx.Queue()
    procs = [ctx.Process(target=_reserve_in_child, args=(db_url, barrier, results, i)) for i in range(16)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    outcomes = sorted(results.get(timeout=10) for _ in procs)
    assert outcomes.count("ok") == 5 and outcomes.count("budget") == 11
    ledger = SqlLedger.from_url(db_url)
    usage = Budget(ledger, SpendLimits(budget_micros=5 * W + W // 2)).usage()
    assert usage.spent_micros == 5 * W <= usage.budget_micros
    ledger.close()


def test_sixteen_concurrent_agents_through_the_wire(configure, wire: WireServer, monkeypatch) -> None:
    monkeypatch.setenv("TEST_KEY", "k")
    settings = configure("[agents]\nbudget_usd = 0.2\ncalls_per_client_per_hour = 100\n"
                         + role_toml("writer", "openai", wire.url, max_output_tokens=4000))
    out = {"sentences": [{"text": "A fact.", "cites": ["F1"]}]}
    wire.answer(*[Canned(body=openai_completion(json.dumps(out), usage=False)) for _ in range(16)])  # type: ignore[arg-type]
    agent = agent_for("writer", settings)
    worst = agent.provider.worst_case_micros(agent.spec, agent.prompt_for({"facts": []}))
    barrier = threading.Barrier(16)
    outcomes: list[str] = []
    lock = threading.Lock()

    def one() -> None:
        mine = agent_for("writer", settings)
        barrier.wait()
        try:
            mine.propose({"facts": []}, client="c")
            result = "ok"
        except BudgetExceeded as exc:
            result = exc.limit
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=one) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    allowed = 200_000 // worst
    assert 0 < allowed < 16
    assert outcomes.count("ok") == allowed and outcomes.count("budget") == 16 - allowed
    usage = agent.budget.usage()
    # No usage in the answers: every call stays booked at its worst case, still within the cap.
    assert usage.spent_micros == allowed * worst <= 200_000
    assert len(wire.seen) == allowed


def test_rate_limits_overall_and_per_client_with_reset(db_url: str) -> None:
    clock = FixedClock(datetime(2026, 3, 10, 12, 0, tzinfo=UTC).timestamp())
    ledger = SqlLedger.from_url(db_url, clock=clock)
    budget = Budget(ledger, SpendLimits(budget_micros=10**9, calls_per_hour=3, calls_per_client_per_hour=2))
    budget.reserve("a1", "alice", "triage", "openai", "m", 1)
    clock.advance(60)
    budget.reserve("a2", "alice", "triage", "openai", "m", 1)
    with pytest.raises(BudgetExceeded) as per_client:
        budget.reserve("a3", "alice", "triage", "openai", "m", 1)
    assert per_client.value.limit == "calls_per_client_per_hour"
    assert "client 'alice'" in per_client.value.message
    assert "resets at 2026-03-10T13:00:00" in per_client.value.message  # when a1 leaves the hour
    budget.reserve("b1", "bob", "triage", "openai", "m", 1)
    with pytest.raises(BudgetExceeded) as overall:
        budget.reserve("c1", "carol", "triage", "openai", "m", 1)
    assert overall.value.limit == "calls_per_hour" and overall.value.resets_at == clock.now() - 60 + 3600
    clock.advance(3600 - 60 + 1)  # a1 has left the window
    budget.reserve("c2", "carol", "triage", "openai", "m", 1)
    assert budget.usage().calls_last_hour == 3
    ledger.close()


def test_budget_message_and_monthly_reset(sqlite_url: str) -> None:
    clock = FixedClock(datetime(2026, 12, 31, 23, 0, tzinfo=UTC).timestamp())
    ledger = SqlLedger.from_url(sqlite_url, clock=clock)
    budget = Budget(ledger, SpendLimits(budget_micros=100_000, calls_per_hour=100, calls_per_client_per_hour=100))
    budget.reserve("x", "c", "fixer", "openai", "m", 60_000)
    with pytest.raises(BudgetExceeded) as caught:
        budget.reserve("y", "c", "fixer", "openai", "m", 60_000)
    msg = caught.value.message
    assert caught.value.limit == "budget"
    assert "$0.0600 of $0.1000 this month is spent or reserved" in msg
    assert "resets at 2027-01-01T00:00:00" in msg and "budget_usd" in (caught.value.fix or "")
    clock.advance(3600)  # new month
    budget.reserve("y", "c", "fixer", "openai", "m", 60_000)
    ledger.close()


def test_unknown_outcomes_and_crashed_calls_stay_booked(sqlite_url: str) -> None:
    ledger = SqlLedger.from_url(sqlite_url)
    budget = Budget(ledger, SpendLimits(budget_micros=100_000))
    budget.reserve("crashed", "c", "fixer", "openai", "m", 40_000)  # the process died: never settled
    budget.reserve("timeout", "c", "fixer", "openai", "m", 40_000)
    budget.settle("timeout", 40_000, "unknown")
    budget.reserve("done", "c", "fixer", "openai", "m", 20_000)
    budget.settle("done", 1_500, "settled")
    usage = budget.usage()
    assert usage.in_flight_micros == 40_000 and usage.charged_micros == 41_500
    assert usage.remaining_micros == 100_000 - 81_500
    with pytest.raises(BudgetExceeded):
        budget.reserve("next", "c", "fixer", "openai", "m", 20_000)
    ledger.close()


def test_period_bounds() -> None:
    t = datetime(2026, 2, 14, 15, 30, tzinfo=UTC).timestamp()
    assert period_bounds("day", t) == (datetime(2026, 2, 14, tzinfo=UTC).timestamp(),
                                       datetime(2026, 2, 15, tzinfo=UTC).timestamp())
    assert period_bounds("month", t)[1] == datetime(2026, 3, 1, tzinfo=UTC).timestamp()
    assert period_bounds("total", t) == (0.0, None)


def test_scripted_calls_are_not_metered(configure) -> None:
    settings = configure("[agents]\ncalls_per_hour = 0\nbudget_usd = 0\n")
    agent = agent_for("writer", settings)
    for _ in range(3):
        agent.propose({"facts": [{"id": "F1", "text": "a fact"}]})
    assert agent.budget.calls() == []


def _propose_in_child(settings, task) -> None:  # type: ignore[no-untyped-def]
    agent_for("writer", settings).propose(task)


def test_a_killed_caller_stays_booked_at_worst_case(configure, wire: WireServer, monkeypatch) -> None:
    import os
    import signal

    monkeypatch.setenv("TEST_KEY", "k")
    settings = configure(role_toml("writer", "openai", wire.url))
    wire.answer(Canned(body=openai_completion("{}"), hold=wire.release))
    ctx = multiprocessing.get_context("fork")
    child = ctx.Process(target=_propose_in_child, args=(settings, {"facts": []}))
    child.start()
    assert wire.received.wait(60)  # the request is in flight at the "model"
    os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
    child.join(30)
    agent = agent_for("writer", settings)
    worst = agent.provider.worst_case_micros(agent.spec, agent.prompt_for({"facts": []}))
    usage = agent.budget.usage()
    assert usage.in_flight_micros == worst and usage.spent_micros == worst
    assert agent.budget.calls()[0]["status"] == "reserved"


def test_agent_calls_on_each_database(db_url: str, configure, wire: WireServer, monkeypatch) -> None:
    monkeypatch.setenv("TEST_KEY", "k")
    settings = configure(role_toml("writer", "openai", wire.url), db_url=db_url)
    out = {"sentences": [{"text": "A fact.", "cites": ["F1"]}]}
    wire.answer(Canned(body=openai_completion(json.dumps(out))))
    proposal = agent_for("writer", settings).propose({"facts": []})
    scripted = agent_for("reviewer", settings).propose({"files": []})
    ledger = SqlLedger.open(settings)
    assert [e.payload["record"]["call_id"] for e in ledger.read("agents/writer")] == [proposal.record["call_id"]]
    assert ledger.read("agents/reviewer")[0].payload["record"]["kind"] == scripted.kind == "simulated"
    assert Budget(ledger, SpendLimits()).calls()[0]["status"] == "settled"
    ledger.close()
