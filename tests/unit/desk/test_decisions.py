"""The desk's rules as pure decisions (signoff.desk.decisions): no ledger, no forge, no sandbox.

A bug is built by folding events, a decision is taken on it, and the events it returns are folded
in again, so each test reads the rule and the state it leads to."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from signoff.desk import decisions as d
from signoff.desk.approvals import dispute_digest, dispute_shown
from signoff.desk.config import DeskConfig
from signoff.desk.model import Bug, fold
from signoff.kernel.errors import ConflictError, NotFoundError, RefusedError, UsageError
from signoff.ledger import Event, NewJob
from signoff.ledger.aggregate import Decision

CONFIG = DeskConfig()
HEAD = "a" * 40
MERGE = "m" * 40
REASON = {"reason": "the total is still negative", "raw_sha256": "r" * 64}
AT = "2026-12-06T07:00:00Z"
AGENT = {"provider": None, "model": None, "kind": None, "call_id": None}


class History:
    """A bug's events in memory, appended as the ledger would (versions in order)."""

    def __init__(self, bug_id: str = "BUG-0001") -> None:
        self.bug_id = bug_id
        self.events: list[Event] = []

    def add(self, type_: str, **payload: Any) -> History:
        v = len(self.events) + 1
        self.events.append(Event(v, "desk/bug/" + self.bug_id, v, type_, payload, f"t{v}", "", ""))
        return self

    @property
    def bug(self) -> Bug:
        return fold(self.bug_id, self.events)

    def attach(self, report_id: str, title: str = "negative total") -> History:
        """A report joins the bug (its dossier as the airlock made it)."""
        return self.add("report.attached", report_id=report_id, token_sha256="k" * 64, dossier={"title": title},
                        rendered=f"title: {title}", redactions={}, raw_sha256="r" * 64, component="checkout",
                        title=title)

    def apply(self, decision: Decision) -> list[NewJob]:
        for ev in decision.events:
            self.add(ev.TYPE, **ev.payload())
        return list(decision.jobs)


def reproduced(*reports: str) -> History:
    """A bug reproduced in round 1 for `reports` (filed before the question was asked)."""
    h = History().add("bug.opened", bug_id="BUG-0001", component="checkout", title="negative total")
    for rid in reports or ("RPT-0001",):
        h.attach(rid)
    return h.add("reproduction.recorded", round=1, test_path="tests/test_bug_0001.py", test_source="...",
                 test_sha256="t1", base="b" * 40, message="fails by assertion", evidence=None, fingerprint=None,
                 evidence_kind="measured", agent=AGENT)


def in_review(*reports: str) -> History:
    h = reproduced(*reports)
    h.apply(d.decide(h.bug, d.Confirm(reports[0] if reports else "RPT-0001", "yes"), CONFIG))
    return h.add("change.opened", round=1, repo="shoplite", number=1, head=HEAD, base="b" * 40,
                 branch="desk/bug-0001-r1-a1", assignee="alice", draft=True)


def approve(h: History, login: str, *, shared: bool = False, owners: frozenset[str] = frozenset(),
            person: str | None = "", via: str = "desk") -> None:
    """`login` approves as `person` (default: a person of that name; None: bound to nobody), whose
    forge login is `login` (CODEOWNERS names forge logins)."""
    who = login if person == "" else person
    h.apply(d.decide(h.bug, d.RecordApproval(HEAD, login, who, shared, via, owners, frozenset({login}),
                                                       at=AT), CONFIG))


def released(*reports: str) -> History:
    h = in_review(*reports)
    approve(h, "alice")
    h.apply(d.decide(h.bug, d.RecordMerge(HEAD, "alice", "User", MERGE, ("shoplite/cart.py",)), CONFIG))
    h.apply(d.decide(h.bug, d.Release(MERGE, {"deployment_id": 1, "commit": MERGE}), CONFIG))
    assert h.bug.state == "released"
    return h


# -- the reproduction question --------------------------------------------------------------------------

def test_a_yes_to_the_reproduction_starts_the_fix() -> None:
    h = reproduced()
    jobs = h.apply(d.decide(h.bug, d.Confirm("RPT-0001", "yes"), CONFIG))
    assert [j.key for j in jobs] == ["BUG-0001:fix:1"]
    assert jobs[0].payload == {"bug_id": "BUG-0001", "step": "fix", "round": 1}
    assert h.bug.state == "fixing" and h.bug.confirmations == {"RPT-0001"}


def test_a_no_to_the_reproduction_reopens_and_rejects_the_test() -> None:
    h = reproduced()
    jobs = h.apply(d.decide(h.bug, d.Confirm("RPT-0001", "no", REASON), CONFIG))
    assert [j.key for j in jobs] == ["BUG-0001:reproduce:2"]
    bug = h.bug
    assert (bug.state, bug.round, bug.rejected_tests, bug.reproduction) == ("reopened", 2, {"t1"}, None)
    assert h.events[-1].payload["reason"] == REASON["reason"]


def test_an_answer_from_a_report_filed_after_the_question_decides_nothing() -> None:
    h = reproduced()
    h.attach("RPT-0009", "negative total")  # joined after the question
    for answer, reason in (("no", REASON), ("yes", None)):
        before = h.bug
        decided = d.decide(before, d.Confirm("RPT-0009", answer, reason), CONFIG)
        events, jobs = decided.events, decided.jobs
        assert [e.TYPE for e in events] == ["answer.unentitled"] and jobs == ()
        assert events[0].payload()["question"] == "reproduction" and events[0].payload()["answer"] == answer
        h.apply(decided)
        after = h.bug
        assert (after.state, after.round, after.rejected_tests, after.confirmations) == (
            "awaiting_reporter", 1, set(), set())
    assert [(x["answer"], x["accepted"]) for x in h.bug.disputes] == [("no", False), ("yes", False)]


def test_answers_are_limited_per_report_and_disputes_per_bug() -> None:
    h = reproduced()
    h.attach("RPT-0009", "late")
    strict = replace(CONFIG, answers_per_report=2, disputes_per_bug=10)
    for _ in range(2):
        h.apply(d.decide(h.bug, d.Confirm("RPT-0009", "no", REASON), strict))
    with pytest.raises(RefusedError, match="answered 2 times"):
        d.decide(h.bug, d.Confirm("RPT-0009", "no", REASON), strict)
    h.attach("RPT-0010", "later")
    with pytest.raises(RefusedError, match="2 answers waiting for the owner"):
        d.decide(h.bug, d.Confirm("RPT-0010", "no", REASON), replace(CONFIG, disputes_per_bug=2))
    # the entitled reporter is not stopped by the disputes of others
    assert d.decide(h.bug, d.Confirm("RPT-0001", "yes"), replace(CONFIG, disputes_per_bug=2)).events[0].TYPE == \
        "confirmation.yes"


def test_a_confirmation_of_another_round_or_state_conflicts() -> None:
    h = reproduced()
    with pytest.raises(ConflictError, match="round 1"):
        d.decide(h.bug, d.Confirm("RPT-0001", "yes", round=2), CONFIG)
    h.apply(d.decide(h.bug, d.Confirm("RPT-0001", "yes"), CONFIG))
    with pytest.raises(ConflictError, match="not waiting for a confirmation"):
        d.decide(h.bug, d.Confirm("RPT-0001", "yes"), CONFIG)


# -- the release question -------------------------------------------------------------------------------

def test_verify_release_yes_counts_once_per_report() -> None:
    h = released("RPT-0001", "RPT-0002")
    h.apply(d.decide(h.bug, d.VerifyRelease("RPT-0001", "yes"), CONFIG))
    assert h.bug.state == "verified" and h.bug.verified_by == {"RPT-0001"}
    assert h.events[-1].payload["commit"] == MERGE
    assert d.decide(h.bug, d.VerifyRelease("RPT-0001", "yes"), CONFIG) == d.NOTHING
    jobs = h.apply(d.decide(h.bug, d.VerifyRelease("RPT-0002", "no", REASON), CONFIG))
    assert [j.key for j in jobs] == ["BUG-0001:reproduce:2"]
    assert (h.bug.state, h.bug.round, h.bug.release) == ("reopened", 2, None)


def test_a_release_answer_from_a_report_filed_after_the_release_is_unentitled() -> None:
    h = released()
    h.attach("RPT-0009", "late")
    decided = d.decide(h.bug, d.VerifyRelease("RPT-0009", "no", REASON), CONFIG)
    events, jobs = decided.events, decided.jobs
    assert [e.TYPE for e in events] == ["answer.unentitled"] and jobs == ()
    assert events[0].payload() == {"report_id": "RPT-0009", "question": "release", "answer": "no",
                                   "round": 1, **REASON}
    h.apply(decided)
    assert h.bug.state == "released"


def test_there_is_no_release_to_verify_before_one_is_recorded() -> None:
    with pytest.raises(ConflictError, match="no release to check"):
        d.decide(in_review().bug, d.VerifyRelease("RPT-0001", "yes"), CONFIG)


# -- a person deciding -------------------------------------------------------------------------------------

def _agree(bug: Any, index: int, shown_of: int | None = None) -> d.AcceptDispute:
    """Alice agrees with dispute `index`, having been shown dispute `shown_of` (the same, by default)."""
    seen = bug.disputes[index if shown_of is None else shown_of]
    return d.AcceptDispute(index, "alice", dispute_digest(bug.bug_id, seen), "2026-12-06T13:00:00+00:00", "web")


def test_accepting_a_late_no_reopens_without_rejecting_the_test() -> None:
    h = reproduced()
    h.attach("RPT-0009", "late")
    h.apply(d.decide(h.bug, d.Confirm("RPT-0009", "yes"), CONFIG))  # dispute 0: a yes
    h.apply(d.decide(h.bug, d.Confirm("RPT-0009", "no", REASON), CONFIG))  # dispute 1: a no
    with pytest.raises(ConflictError, match="not an open"):
        d.decide(h.bug, _agree(h.bug, 0), CONFIG)
    with pytest.raises(NotFoundError):
        d.decide(h.bug, d.AcceptDispute(2, "alice", "0" * 64, "2026-12-06T13:00:00+00:00"), CONFIG)
    decided = d.decide(h.bug, _agree(h.bug, 1), CONFIG)
    [event] = decided.events
    assert event.approval is not None and event.approval.by == "alice" and event.approval.via == "web"
    assert event.approval.binds(dispute_shown(h.bug.bug_id, h.bug.disputes[1]))
    jobs = h.apply(decided)
    assert [j.key for j in jobs] == ["BUG-0001:reproduce:2"]
    bug = h.bug
    assert (bug.state, bug.round, bug.rejected_tests) == ("reopened", 2, set())
    assert bug.disputes[1]["accepted"] is True
    with pytest.raises(ConflictError, match="not an open"):  # accepted already, and of an earlier round
        d.decide(bug, _agree(bug, 1), CONFIG)


def test_an_agreement_binds_the_dispute_text_shown_and_nothing_else() -> None:
    # The attacker's side: a form that names the dispute by its index but carries no digest, the digest
    # of another dispute, of this dispute's text altered, or a malformed one is refused, recording nothing.
    h = reproduced()
    h.attach("RPT-0009", "late")
    h.attach("RPT-0010", "later")
    h.apply(d.decide(h.bug, d.Confirm("RPT-0009", "no", REASON), CONFIG))  # dispute 0
    other = {"reason": "Another text", "raw_sha256": "s" * 64}
    h.apply(d.decide(h.bug, d.Confirm("RPT-0010", "no", other), CONFIG))  # dispute 1
    at = "2026-12-06T13:00:00+00:00"
    altered = {**h.bug.disputes[0], "reason": "I agree it is fixed"}
    with pytest.raises(UsageError, match="does not say which dispute"):
        d.decide(h.bug, d.AcceptDispute(0, "alice", None, at), CONFIG)
    with pytest.raises(UsageError, match="is not the digest"):
        d.decide(h.bug, d.AcceptDispute(0, "alice", "<script>", at), CONFIG)
    for given in (dispute_digest(h.bug.bug_id, h.bug.disputes[1]), dispute_digest(h.bug.bug_id, altered)):
        with pytest.raises(ConflictError, match="changed since it was shown"):
            d.decide(h.bug, d.AcceptDispute(0, "alice", given, at), CONFIG)
    assert h.bug.state == "awaiting_reporter" and not any(x["accepted"] for x in h.bug.disputes)


def test_a_dispute_of_a_question_no_longer_open_conflicts() -> None:
    h = reproduced()
    h.attach("RPT-0009", "late")
    h.apply(d.decide(h.bug, d.Confirm("RPT-0009", "no", REASON), CONFIG))
    h.apply(d.decide(h.bug, d.Confirm("RPT-0001", "yes"), CONFIG))  # the question is answered: fixing
    with pytest.raises(ConflictError, match="moved on"):
        d.decide(h.bug, _agree(h.bug, 0), CONFIG)


def test_human_resume_only_from_needs_human() -> None:
    h = reproduced()
    with pytest.raises(ConflictError, match="does not need a human"):
        d.decide(h.bug, d.HumanResume("reproducing", "alice"), CONFIG)
    h.add("reproduction.failed", round=1, reason="needs a human: baseline red", measured="baseline red",
          needs_human=True, baseline_red=True, test_sha256="t2", evidence=None, agent=AGENT)
    bug = h.bug
    decided = d.decide(bug, d.HumanResume("reproducing", "alice"), CONFIG)
    assert [j.key for j in decided.jobs] == [f"BUG-0001:reproduce:1:resumed{bug.version}"]
    assert decided.events[0].payload() == {"state": "reproducing", "by": "alice"}
    assert d.decide(bug, d.HumanResume("fixing", "alice"), CONFIG).jobs == ()
    h.apply(decided)
    assert (h.bug.state, h.bug.needs_human) == ("reproducing", None)


# -- review and merge --------------------------------------------------------------------------------------

def test_tiers_come_from_the_changed_paths() -> None:
    assert d.tier(["docs/a.md", "README.md"], CONFIG) == 0
    assert d.tier(["shoplite/cart.py"], CONFIG) == 1
    assert d.tier(["docs/a.md", "payments/pay.py"], CONFIG) == 2
    assert d.tier([], CONFIG) == 1  # nothing to show it is documentation


def test_an_approval_names_the_current_head_and_the_shared_key_is_never_a_code_owner() -> None:
    h = in_review()
    with pytest.raises(ConflictError, match="review the current head"):
        d.decide(h.bug, d.RecordApproval("b" * 40, "alice", "alice", False, "desk", frozenset(), at=AT), CONFIG)
    approve(h, "alice", owners=frozenset({"alice"}))
    approve(h, "alice", shared=True, owners=frozenset({"alice"}))
    assert [(a["person"], a["codeowner"]) for a in h.bug.approvals] == [("alice", True), (None, False)]
    with pytest.raises(ConflictError, match="no change under review"):
        d.decide(reproduced().bug, d.RecordApproval(HEAD, "a", "a", False, "desk", frozenset(), at=AT), CONFIG)


def test_the_merge_check() -> None:
    h = in_review()
    code, sensitive = ["shoplite/cart.py"], ["payments/pay.py"]
    assert d.merge_check(h.bug, HEAD, "alice", "User", code, CONFIG) == "no human approval of this exact head"
    approve(h, "alice")
    assert d.merge_check(h.bug, HEAD, "alice", "User", code, CONFIG) is None
    assert "a human user must merge" in str(d.merge_check(h.bug, HEAD, "ci[bot]", "User", code, CONFIG))
    assert "a human user must merge" in str(d.merge_check(h.bug, HEAD, "alice", "Bot", code, CONFIG))
    assert "not the reviewed head" in str(d.merge_check(h.bug, "c" * 40, "alice", "User", code, CONFIG))
    approve(h, "alice", shared=True)
    why = d.merge_check(h.bug, HEAD, "alice", "User", sensitive, CONFIG)
    assert why is not None and "two distinct humans; has 1" in why and "shared owner key never counts" in why
    approve(h, "bob")
    assert d.merge_check(h.bug, HEAD, "alice", "User", sensitive, CONFIG) == \
        "tier 2 change needs a code owner's approval"
    approve(h, "carol", owners=frozenset({"carol"}))
    assert d.merge_check(h.bug, HEAD, "alice", "User", sensitive, CONFIG) is None


def test_tier_2_counts_people_not_logins() -> None:
    """An attacker with two logins (desk owner `alice`, forge login `Alice-Work`) is one person; a
    login no person record binds is nobody, even when CODEOWNERS names it."""
    sensitive = ["payments/pay.py"]
    h = in_review()
    approve(h, "alice", owners=frozenset({"alice"}))
    approve(h, "alice-work", person="alice", via="forge", owners=frozenset({"alice"}))
    why = d.merge_check(h.bug, HEAD, "alice", "User", sensitive, CONFIG)
    assert why is not None and "two distinct humans; has 1" in why
    approve(h, "mallory-gh", person=None, via="forge", owners=frozenset({"mallory-gh"}))
    why = d.merge_check(h.bug, HEAD, "alice", "User", sensitive, CONFIG)
    assert why is not None and "has 1" in why and "not bound to a person in [desk.people]: mallory-gh" in why
    assert h.bug.approvals[-1]["codeowner"] is False  # nobody cannot be the code owner either
    h = in_review()
    approve(h, "bob")
    approve(h, "carol")
    approve(h, "mallory-gh", person=None, via="forge", owners=frozenset({"mallory-gh"}))
    assert d.merge_check(h.bug, HEAD, "alice", "User", sensitive, CONFIG) == \
        "tier 2 change needs a code owner's approval"


def test_a_push_clears_the_approvals() -> None:
    h = in_review()
    approve(h, "alice")
    assert d.decide(h.bug, d.PushChange(HEAD, "bot"), CONFIG) == d.NOTHING
    h.apply(d.decide(h.bug, d.PushChange("c" * 40, "bot"), CONFIG))
    assert h.bug.approvals == [] and h.bug.change is not None and h.bug.change["head"] == "c" * 40
    assert d.merge_check(h.bug, "c" * 40, "alice", "User", ["shoplite/cart.py"], CONFIG) == \
        "no human approval of this exact head"


def test_a_merge_that_breaks_a_rule_needs_a_human_and_one_that_keeps_them_is_released_if_deployed() -> None:
    h = in_review("RPT-0001", "RPT-0002")
    h.apply(d.decide(h.bug, d.RecordMerge(HEAD, "alice", "User", MERGE, ("shoplite/cart.py",)), CONFIG))
    assert h.bug.state == "needs_human" and "no human approval" in str(h.bug.needs_human)

    h = in_review("RPT-0001", "RPT-0002")
    approve(h, "alice")
    deployed = {"deployment_id": 3, "commit": "d" * 40}
    decided = d.decide(h.bug, d.RecordMerge(HEAD, "alice", "User", MERGE, ("shoplite/cart.py",), deployed), CONFIG)
    events, jobs = decided.events, decided.jobs
    assert [e.TYPE for e in events] == ["merge.recorded", "release.recorded"]
    assert events[0].payload()["tier"] == 1 and [a["login"] for a in events[0].payload()["approvals"]] == ["alice"]
    # the reporters are asked, and the crew's smoke checks the live release (it decides nothing)
    assert [j.key for j in jobs] == ["BUG-0001:smoke:1:3"] + [
        f"BUG-0001:notify:released:1:{r}" for r in ("RPT-0001", "RPT-0002")]
    h.apply(decided)
    assert h.bug.state == "released" and h.bug.release is not None and h.bug.release["commit"] == "d" * 40


def test_a_release_applies_only_to_the_merge_it_contains() -> None:
    h = in_review()
    approve(h, "alice")
    h.apply(d.decide(h.bug, d.RecordMerge(HEAD, "alice", "User", MERGE, ("shoplite/cart.py",)), CONFIG))
    assert d.decide(h.bug, d.Release("e" * 40, {"commit": "f" * 40}), CONFIG) == d.NOTHING
    assert d.decide(in_review().bug, d.Release(MERGE, {"commit": "f" * 40}), CONFIG) == d.NOTHING
    assert d.decide(h.bug, d.Release(MERGE, {"commit": "f" * 40}), CONFIG).events[0].TYPE == "release.recorded"


# -- GitHub: required checks and rewritten history -----------------------------------------------------------

FULL = "octo-org/shoplite"


def _ci(run_id: int, name: str = "ci", conclusion: str | None = "success", status: str = "completed",
        **origin: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A workflow run of MERGE (push, main, this repository unless `origin` says otherwise) and its check run."""
    wf = {"id": run_id, "head_sha": MERGE, "check_suite_id": 100 + run_id, "event": "push", "head_branch": "main",
          "repository": {"full_name": FULL}, "head_repository": {"full_name": FULL}} | origin
    return wf, {"id": run_id, "name": name, "head_sha": MERGE, "status": status, "conclusion": conclusion,
                "check_suite": {"id": 100 + run_id}}


def _problem(*runs: tuple[dict[str, Any], dict[str, Any]], required: tuple[str, ...] = ("ci",)) -> str | None:
    return d.required_checks_problem(MERGE, required, [c for _, c in runs], [w for w, _ in runs], FULL, "main")


def test_required_checks_must_be_green_from_a_push_to_the_default_branch() -> None:
    assert _problem(_ci(1)) is None
    assert "requires no status checks" in str(_problem(_ci(1), required=()))
    assert "'lint' has no run" in str(_problem(_ci(1), required=("ci", "lint")))
    assert "'pull_request' run" in str(_problem(_ci(1, event="pull_request")))
    assert "'pull_request_target' run" in str(_problem(_ci(1, event="pull_request_target")))
    assert "mallory/shoplite" in str(_problem(_ci(1, head_repository={"full_name": "mallory/shoplite"})))
    assert "branch 'topic'" in str(_problem(_ci(1, head_branch="topic")))
    assert "completed/failure" in str(_problem(_ci(1, conclusion="failure")))
    assert "in_progress" in str(_problem(_ci(1, conclusion=None, status="in_progress")))
    # a check run outside every workflow run of the SHA cannot be attributed: fail closed
    orphan = ({"id": 9, "head_sha": "0" * 40, "check_suite_id": 109}, _ci(9)[1])
    assert "cannot be attributed" in str(_problem(orphan))
    # the latest trusted run decides; runs from pull requests and forks never outvote it
    assert "failure" in str(_problem(_ci(1), _ci(2, conclusion="failure"), _ci(3, event="pull_request"),
                                     _ci(4, head_repository={"full_name": "mallory/shoplite"})))
    assert _problem(_ci(1, conclusion="failure"), _ci(2)) is None  # a re-run that passed


def test_a_rewrite_is_observed_once_and_changes_nothing_else() -> None:
    h = released()
    before = h.bug
    cmd = d.ObserveRewrite("merge_commit", MERGE, "n" * 40, "t" * 40)
    decided = d.decide(h.bug, cmd, CONFIG)
    assert [e.TYPE for e in decided.events] == ["history.rewritten"] and decided.jobs == ()
    h.apply(decided)
    after = h.bug
    assert after.rewrites[0]["new"] == "n" * 40
    assert (after.state, after.merge, after.release, after.approvals) == (before.state, before.merge,
                                                                            before.release, before.approvals)
    assert d.decide(after, cmd, CONFIG) == d.NOTHING


# -- engineering's submissions -------------------------------------------------------------------------------

def test_a_failed_fix_is_retried_then_needs_a_human() -> None:
    h = reproduced()
    h.apply(d.decide(h.bug, d.Confirm("RPT-0001", "yes"), CONFIG))
    jobs = h.apply(d.decide(h.bug, d.FixFailed(1, 1, "tests fail"), CONFIG))
    assert [j.key for j in jobs] == ["BUG-0001:fix:1:retry1"] and h.bug.state == "fixing"
    assert d.decide(h.bug, d.FixFailed(1, 1, "again"), CONFIG) == d.NOTHING  # that attempt is recorded
    jobs = h.apply(d.decide(h.bug, d.FixFailed(1, 2, "still failing"), CONFIG))
    assert jobs == [] and h.bug.state == "needs_human"
    assert h.bug.needs_human == "needs a human: 2 fix attempts failed; last: still failing"


def test_a_measured_reproduction_asks_every_reporter_and_a_failed_one_is_retried_once() -> None:
    h = History().add("bug.opened", bug_id="BUG-0001", component="c", title="t")
    h.attach("RPT-0001").attach("RPT-0002")
    failed = d.RecordReproduction(1, "tests/test_bug_0001.py", "src", "t1", "b" * 40, False, "passes")
    jobs = h.apply(d.decide(h.bug, failed, CONFIG))
    assert [j.key for j in jobs] == ["BUG-0001:reproduce:1:retry1"] and h.bug.state == "reproducing"
    jobs = h.apply(d.decide(h.bug, failed, CONFIG))
    assert jobs == [] and h.bug.needs_human == "no reproduction after 2 attempts: passes"

    h = History().add("bug.opened", bug_id="BUG-0001", component="c", title="t")
    h.attach("RPT-0001").attach("RPT-0002")
    ok = replace(failed, ok=True, reason="fails by assertion", evidence="e.json")
    jobs = h.apply(d.decide(h.bug, ok, CONFIG))
    assert [j.key for j in jobs] == ["BUG-0001:notify:reproduced:1:RPT-0001", "BUG-0001:notify:reproduced:1:RPT-0002",
                                     "BUG-0001:review-test:1"]
    assert h.bug.state == "awaiting_reporter" and h.bug.evidence == ["e.json"]
    with pytest.raises(ConflictError, match="moved on"):
        d.decide(h.bug, ok, CONFIG)


def test_a_decision_is_pure() -> None:
    h = reproduced()
    bug = h.bug
    before = bug.summary()
    first = d.decide(bug, d.Confirm("RPT-0001", "no", REASON), CONFIG)
    assert d.decide(bug, d.Confirm("RPT-0001", "no", REASON), CONFIG) == first
    assert bug.summary() == before
