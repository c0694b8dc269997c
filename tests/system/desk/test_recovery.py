"""Crash and restart between steps: jobs are redelivered (at-least-once) and every effect is keyed,
so nothing is lost or done twice; a new process continues where the old one stopped."""

from __future__ import annotations

from signoff.desk.engineering import EngineeringService
from signoff.desk.workflow import ENGINEERING, NOTIFY
from signoff.ledger import Job, Outbox
from tests.support.fixtures.desk import COUPON, World, open_world


def _job(w: World, job_id: str, topic: str) -> Job:
    return Job(job_id, topic, None, Outbox(w.ledger).payload(job_id) or {}, 1, "lease", 0.0)


def test_an_engineering_job_redelivered_after_its_effect_changes_nothing(reproduced: World) -> None:
    w = reproduced
    w.desk.confirm(w.reporter("first"), "yes", bug_id=w.bug_id)
    fix_job = _job(w, f"{w.bug_id}:fix:1", ENGINEERING)
    service = EngineeringService(w.desk, w.actor("engineering"))
    service.handle(fix_job)  # the effect happened; the process died before acknowledging
    after = w.bug()
    assert after.state == "in_review"
    service.handle(fix_job)  # the lease lapsed and the job came back
    again = w.bug()
    assert again.version == after.version
    assert len(w.desk.forge.changes(w.desk.config.repo)) == 1
    repro_job = _job(w, f"{w.bug_id}:reproduce:1", ENGINEERING)
    service.handle(repro_job)
    assert w.bug().version == after.version


def test_a_change_request_opened_before_a_crash_is_reused(reproduced: World) -> None:
    w = reproduced
    w.desk.confirm(w.reporter("first"), "yes", bug_id=w.bug_id)
    repro = w.bug().reproduction
    source = w.desk.forge.read(w.desk.config.repo, repro["base"], "shoplite/checkout.py") or ""
    files = {"shoplite/checkout.py": source.replace("return round(amount, 2)", "return round(max(amount, 0.0), 2)")}
    # the crash: the change request exists in the forge, the desk never recorded it
    branch = f"desk/{w.bug_id.lower()}-r1-a1"
    w.desk.forge.commit(w.desk.config.repo, repro["base"], {**files, repro["test_path"]: repro["test_source"]},
                        "fix", "signoff-engineering", branch)
    w.desk.forge.open_change(w.desk.config.repo, branch, repro["base"], "fix", "signoff-engineering", "alice")
    w.desk.submit_fix(w.actor("engineering"), w.bug_id, 1, 1, files)
    b = w.bug()
    assert b.state == "in_review" and b.change is not None and b.change["number"] == 1
    assert len(w.desk.forge.changes(w.desk.config.repo)) == 1


def test_notifications_are_delivered_once_per_job(reproduced: World) -> None:
    w = reproduced
    pending = [j for j in Outbox(w.ledger).jobs("pending", NOTIFY)]
    assert len(pending) == 2
    concierge = w.concierge
    job = _job(w, pending[0].job_id, NOTIFY)
    concierge.deliver(job)
    concierge.deliver(job)  # a retry after a crash before the acknowledgement
    assert concierge.drain() == 2  # both jobs are still due: neither was acknowledged
    rid = job.payload["report_id"]
    assert len(w.ledger.read(f"desk/inbox/{rid}")) == 1


def test_a_leased_job_of_a_dead_worker_comes_back(world: World, sandbox_ok: None) -> None:
    w = world
    w.intakes["first"] = w.desk.submit_report(COUPON, "198.51.100.7")
    dead = Outbox(w.ledger, lease_seconds=0.001).claim([ENGINEERING])
    assert dead is not None  # claimed by a worker that then died
    w.engineering.drain()
    assert w.bug().state == "awaiting_reporter"
    assert all(j.status == "done" for j in Outbox(w.ledger).jobs(topic=ENGINEERING))


def test_a_webhook_applied_before_a_crash_is_applied_once(review: World) -> None:
    w = review
    b = w.bug()
    payload = {"action": "submitted", "number": b.change["number"],
               "review": {"user": {"login": "alice", "type": "User"}, "state": "approved",
                          "commit_id": b.change["head"]},
               "pull_request": {"number": b.change["number"], "head": {"sha": b.change["head"]}},
               "repository": {"name": "shoplite", "full_name": "local/shoplite"}}
    # applied, then the process died before marking the delivery as seen; the sender redelivers
    w.desk.apply_hook("pull_request_review", "d-crash", "shoplite", payload)
    w.desk.apply_hook("pull_request_review", "d-crash", "shoplite", payload)
    assert len(w.bug().approvals) == 1


def test_a_restarted_process_continues_the_loop(review: World) -> None:
    w = review
    head = w.bug().change["head"]
    w.desk.approve(w.actor("alice"), w.bug_id, head)
    w.ledger.close()
    again = open_world(w.home, w.tokens, w.intakes)  # a new process on the same database and forge
    assert again.bug().approvals[0]["head"] == head
    again.desk.merge(again.actor("alice"), again.bug_id)
    again.deliver()
    assert again.bug().state == "merged"
    from signoff.ledger import verify_chain
    assert verify_chain(again.ledger).ok
