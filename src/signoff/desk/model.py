"""The bug as a fold over its events (ledger case `desk/bug/<BUG-0001>`).

States: reproducing -> awaiting_reporter -> fixing -> in_review -> merged -> released -> verified,
with reopened (after a reporter's "no": back to reproduction, confirmations cleared) and
needs_human (the agents gave up, or a rule was broken; a person decides).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from signoff.ledger import Event


@dataclass
class Bug:
    bug_id: str
    state: str = "reproducing"
    round: int = 1
    component: str = ""
    title: str = ""
    reports: dict[str, dict[str, Any]] = field(default_factory=dict)
    attached_at: dict[str, int] = field(default_factory=dict)  # report id -> bug version it joined at
    asked_at: dict[str, int] = field(default_factory=dict)  # question -> bug version it was posed at
    answers: dict[str, int] = field(default_factory=dict)  # report id -> answers given
    disputes: list[dict[str, Any]] = field(default_factory=list)  # answers by reporters not entitled
    confirmations: set[str] = field(default_factory=set)
    reproduction: dict[str, Any] | None = None
    rejected_tests: set[str] = field(default_factory=set)
    failed_tests: list[dict[str, Any]] = field(default_factory=list)  # this round's, as measured
    repro_attempts: int = 0
    fix_attempts: int = 0
    change: dict[str, Any] | None = None
    approvals: list[dict[str, Any]] = field(default_factory=list)
    merge: dict[str, Any] | None = None
    release: dict[str, Any] | None = None
    verified_by: set[str] = field(default_factory=set)
    needs_human: str | None = None
    times: dict[str, str] = field(default_factory=dict)
    log: list[dict[str, Any]] = field(default_factory=list)
    rewrites: list[dict[str, Any]] = field(default_factory=list)  # history.rewritten observations
    evidence: list[str] = field(default_factory=list)  # every evidence file its events name, in order
    version: int = 0

    def apply(self, ev: Event) -> None:
        p = ev.payload
        t = ev.type
        self.version = ev.version
        self.log.append({"version": ev.version, "type": t, "at": ev.recorded_at})
        if p.get("evidence"):
            self.evidence.append(p["evidence"])
        if t == "bug.opened":
            self.component, self.title = p["component"], p["title"]
        elif t == "report.attached":
            self.reports[p["report_id"]] = dict(p)
            self.attached_at[p["report_id"]] = ev.version
        elif t == "reproduction.failed":
            self.repro_attempts += 1
            self.failed_tests.append({"test_sha256": p.get("test_sha256"), "measured": p.get("measured")})
            if p.get("needs_human"):
                self._human(p["reason"])
        elif t == "reproduction.recorded":
            self.reproduction = dict(p)
            self.asked_at["reproduction"] = ev.version
            self.state = "awaiting_reporter"
            self.times["reproduced"] = ev.recorded_at
        elif t == "confirmation.yes":
            self._answered(p)
            self.confirmations.add(p["report_id"])
            self.state = "fixing"
            self.times["confirmed"] = ev.recorded_at
        elif t in ("confirmation.no", "verification.no"):
            self._answered(p)
            if self.reproduction is not None:
                self.rejected_tests.add(self.reproduction["test_sha256"])
            self._reopen()
            self.times["reopened"] = ev.recorded_at
        elif t == "fix.failed":
            self.fix_attempts += 1
            if p.get("needs_human"):
                self._human(p["reason"])
        elif t == "change.opened":
            self.change = dict(p)
            self.approvals = []
            self.state = "in_review"
            self.times["draft"] = ev.recorded_at
        elif t == "change.pushed" and self.change is not None:
            self.change["head"] = p["head"]
            self.approvals = []  # a new push clears every approval
        elif t == "approval.recorded":
            self.approvals.append(dict(p))
        elif t == "approval.withdrawn":  # the forge dismissed the review it came from
            self.approvals = [a for a in self.approvals if a.get("review_id") != p["review_id"]]
        elif t == "merge.refused":
            self._human(p["reason"])
        elif t == "merge.recorded":
            self.merge = dict(p)
            self.state = "merged"
            self.needs_human = None
            self.times["merged"] = ev.recorded_at
        elif t == "release.recorded":
            self.release = dict(p)
            self.asked_at["release"] = ev.version
            self.state = "released"
            self.verified_by = set()
            self.times["released"] = ev.recorded_at
        elif t == "verification.yes":
            self._answered(p)
            self.verified_by.add(p["report_id"])
            self.state = "verified"
            self.times["verified"] = ev.recorded_at
        elif t == "answer.unentitled":
            self._answered(p)
            self.disputes.append({**p, "index": len(self.disputes), "at": ev.recorded_at, "accepted": False})
        elif t == "dispute.accepted":
            # A person agreed with a late reporter's "no": reopen, but the test is not put on the
            # rejected list on that reporter's word.
            self.disputes[p["index"]]["accepted"] = True
            self._reopen()
            self.times["reopened"] = ev.recorded_at
        elif t == "history.rewritten":
            self.rewrites.append(dict(p))  # an observation: no state changes
        elif t == "human.resumed":
            self.needs_human = None
            self.state = p["state"]

    def _answered(self, p: dict[str, Any]) -> None:
        self.answers[p["report_id"]] = self.answers.get(p["report_id"], 0) + 1

    def entitled(self, report_id: str, question: str) -> bool:
        """Whether a report's answer to `question` counts: it must have been filed before the
        question was posed (a reproduction is judged by the people whose bug it was measured for)."""
        joined, asked = self.attached_at.get(report_id), self.asked_at.get(question)
        return joined is not None and asked is not None and joined < asked

    def _human(self, reason: str) -> None:
        self.needs_human = reason
        self.state = "needs_human"

    def _reopen(self) -> None:
        self.confirmations = set()
        self.reproduction = None
        self.round += 1
        self.repro_attempts = 0
        self.failed_tests = []
        self.fix_attempts = 0
        self.change = None
        self.approvals = []
        self.merge = None
        self.release = None
        self.verified_by = set()
        self.state = "reopened"

    def summary(self) -> dict[str, Any]:
        return {"bug_id": self.bug_id, "state": self.state, "round": self.round, "component": self.component,
                "title": self.title, "reports": sorted(self.reports), "confirmations": sorted(self.confirmations),
                "needs_human": self.needs_human, "change": self.change, "merge": self.merge,
                "release": self.release, "verified_by": sorted(self.verified_by), "times": self.times,
                "disputes": [{k: d[k] for k in ("index", "report_id", "question", "answer", "round", "reason",
                                                "accepted", "at") if k in d} for d in self.disputes]}


def fold(bug_id: str, events: list[Event]) -> Bug:
    bug = Bug(bug_id)
    for ev in events:
        bug.apply(ev)
    return bug
