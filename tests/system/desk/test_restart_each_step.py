"""Crash and restart between any two steps of the loop: after each step the process "dies" (the
ledger is closed; the jobs it finished are handed out again, as a lapsed lease would) and a new one
continues. No effect may be lost or repeated."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from signoff.demo.shoplite_deploy import serve_commit
from signoff.desk.engineering import EngineeringService
from signoff.desk.notify import Concierge
from signoff.desk.workflow import ENGINEERING, NOTIFY
from signoff.ledger import Job, Outbox, verify_chain
from tests.support.fixtures.desk import COUPON, COUPON_2, World, open_world


def _fingerprint(w: World) -> dict[str, Any]:
    bug_ids = w.desk.bug_ids()
    return {
        "bugs": {b: w.ledger.version(f"desk/bug/{b}") for b in bug_ids},
        "notes": {b: w.ledger.version(f"desk/notes/{b}") for b in bug_ids},
        "changes": len(w.desk.forge.changes(w.desk.config.repo)),
        "inbox": {c: w.ledger.version(c) for c in w.ledger.case_ids("desk/inbox/")},
        "deploys": w.ledger.version(f"desk/deploy/{w.desk.config.repo}"),
        "main": w.desk.forge.head(w.desk.config.repo),
    }


def _redeliver_everything_done(w: World) -> None:
    """Every job already done comes back once more, as if its worker died before acknowledging."""
    eng = EngineeringService(w.desk, w.actor("engineering"))
    concierge = Concierge(w.desk, w.actor("concierge"))
    for state in Outbox(w.ledger).jobs("done"):
        job = Job(state.job_id, state.topic, None, Outbox(w.ledger).payload(state.job_id) or {}, 2, "lease", 0.0)
        if state.topic == ENGINEERING:
            eng.handle(job)
        elif state.topic == NOTIFY:
            concierge.deliver(job)
    w.deliver()  # forge deliveries already sent are answered as duplicates


def test_restart_between_every_step(tmp_path: Path, sandbox_ok: None) -> None:
    home = tmp_path / ".signoff"
    w = open_world(home)
    tokens = w.tokens
    live: dict[str, Any] = {}

    def intake(w: World) -> None:
        w.intakes["first"] = w.desk.submit_report(COUPON, "198.51.100.7")
        w.intakes["second"] = w.desk.submit_report(COUPON_2, "198.51.100.8")

    def work(w: World) -> None:
        w.engineering.drain()
        w.concierge.drain()

    def confirm(w: World) -> None:
        w.desk.confirm(w.reporter("first"), "yes", bug_id=w.bug_id)

    def approve(w: World) -> None:
        b = w.bug()
        w.desk.forge.review(w.desk.config.repo, b.change["number"], "alice", "approved", commit_id=b.change["head"])
        w.deliver()

    def merge(w: World) -> None:
        live["merge"] = w.desk.merge(w.actor("alice"), w.bug_id)
        w.deliver()

    def release(w: World) -> None:
        with serve_commit(w.desk.forge.path(w.desk.config.repo), live["merge"]) as deployment:
            w.desk.record_deployment(w.actor("recorder"), w.desk.config.repo, live["merge"], "production",
                                     deployment.url)
        w.concierge.drain()

    def verify(w: World) -> None:
        w.desk.verify_release(w.reporter("first"), "yes", bug_id=w.bug_id)

    def reopen(w: World) -> None:
        w.desk.verify_release(w.reporter("second"), "no", "Still negative with two items.", bug_id=w.bug_id)

    steps: list[tuple[Callable[[World], None], str]] = [
        (intake, "reproducing"), (work, "awaiting_reporter"), (confirm, "fixing"), (work, "in_review"),
        (approve, "in_review"), (merge, "merged"), (release, "released"), (verify, "verified"),
        (reopen, "reopened"),
    ]
    for step, state in steps:
        step(w)
        assert w.bug().state == state, (step.__name__, w.bug().summary())
        before = _fingerprint(w)
        intakes = dict(w.intakes)
        w.ledger.close()
        w = open_world(home, tokens, intakes)  # the restarted process
        assert _fingerprint(w) == before, step.__name__
        _redeliver_everything_done(w)
        assert _fingerprint(w) == before, f"a redelivered job repeated an effect after {step.__name__}"
    assert verify_chain(w.ledger).ok
    inbox = {c: [e.payload["kind"] for e in w.ledger.read(c)] for c in w.ledger.case_ids("desk/inbox/")}
    assert sorted(inbox.values()) == [["reproduced", "released"], ["reproduced", "released"]]
