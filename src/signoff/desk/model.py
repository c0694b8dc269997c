"""The bug as a fold over its typed events (ledger case `desk/bug/<BUG-0001>`).

States: reproducing -> awaiting_reporter -> fixing -> in_review -> merged -> released -> verified,
with reopened (after a reporter's "no": back to reproduction, confirmations cleared) and
needs_human (the agents gave up, or a rule was broken; a person decides).

Every event type a bug has ever held is a class here (`signoff.ledger.aggregate`): the type strings
and field names are the ones stored since the desk began (they are hashed into existing ledgers),
and fields that later code added are optional, so old events read as they were written. The state
keeps a few parts as the payloads they came from (a report, the change, the merge), which is what
pages and the API show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from signoff.ledger import Event
from signoff.ledger.aggregate import EventBody, Fold, Stamp, case_type
from signoff.ledger.approval import Approval

BUG = case_type("desk.bug", "desk/bug/")
Payload = dict[str, Any]


# -- events -------------------------------------------------------------------------------------------

class DeskEvent(EventBody):
    """A desk event is stored as its writer gave it: an optional field the writer left out stays out
    (as the desk wrote events before they were classes), so new and old events have one shape."""

    def payload(self) -> Payload:
        return self.model_dump(mode="json", exclude_unset=True)


class BugOpened(DeskEvent, type="bug.opened", case=BUG):
    bug_id: str
    component: str
    title: str


class ReportAttached(DeskEvent, type="report.attached", case=BUG):
    """A report joined the bug: its airlock dossier and the digest of its reporter's capability."""

    report_id: str
    token_sha256: str
    dossier: Payload
    rendered: str
    redactions: Payload
    raw_sha256: str
    component: str
    title: str


class ReproductionFailed(DeskEvent, type="reproduction.failed", case=BUG):
    round: int
    reason: str
    measured: str
    needs_human: bool
    baseline_red: bool
    test_sha256: str
    evidence: str | None
    agent: Payload


class ReproductionRecorded(DeskEvent, type="reproduction.recorded", case=BUG):
    round: int
    test_path: str
    test_source: str
    test_sha256: str
    base: str
    message: str
    evidence: str | None
    fingerprint: str | None
    evidence_kind: str
    agent: Payload


class Answer(DeskEvent):
    """A reporter's answer; a "no" carries its reason as the airlock rendered it."""

    report_id: str
    round: int


class ConfirmationYes(Answer, type="confirmation.yes", case=BUG):
    pass


class ConfirmationNo(Answer, type="confirmation.no", case=BUG):
    reason: str | None = None
    raw_sha256: str | None = None


class VerificationYes(Answer, type="verification.yes", case=BUG):
    commit: str


class VerificationNo(Answer, type="verification.no", case=BUG):
    reason: str | None = None
    raw_sha256: str | None = None


class AnswerUnentitled(Answer, type="answer.unentitled", case=BUG):
    """An answer from a report filed after the question was asked: kept for the owner."""

    question: str
    answer: str
    reason: str | None = None
    raw_sha256: str | None = None


class DisputeAccepted(DeskEvent, type="dispute.accepted", case=BUG):
    """`approval` binds the digest of the dispute as shown; events written before it was kept have none."""

    index: int
    by: str
    approval: Approval | None = None


class FixFailed(DeskEvent, type="fix.failed", case=BUG):
    round: int
    attempt: int
    reason: str
    needs_human: bool
    evidence: str | None
    agent: Payload


class FixVerified(DeskEvent, type="fix.verified", case=BUG):
    round: int
    attempt: int
    commit: str
    evidence: str | None
    checks: list[Any]
    fingerprint: str | None
    agent: Payload


class ChangeOpened(DeskEvent, type="change.opened", case=BUG):
    round: int
    repo: str
    number: int
    head: str
    base: str
    branch: str
    assignee: str
    draft: bool


class ChangePushed(DeskEvent, type="change.pushed", case=BUG):
    head: str
    by: str | None


class ApprovalRecorded(DeskEvent, type="approval.recorded", case=BUG):
    """A review approval of the exact head. `approval` is the content-bound record (what the review
    showed, its digest, who, when, through which face, what the option meant); events written before
    it was kept have none. `identity` was written before approvals named people (`person`)."""

    login: str
    shared: bool
    head: str
    codeowner: bool
    via: str
    note: str
    person: str | None = None
    review_id: str | None = None
    identity: str | None = None
    approval: Approval | None = None


class ApprovalWithdrawn(DeskEvent, type="approval.withdrawn", case=BUG):
    review_id: str
    by: str | None


class MergeRefused(DeskEvent, type="merge.refused", case=BUG):
    reason: str
    head: str
    merged_by: Payload
    merge_commit: str


class MergeRecorded(DeskEvent, type="merge.recorded", case=BUG):
    merge_commit: str
    head: str
    tier: int
    paths: list[str]
    merged_by: Payload
    approvals: list[Payload]


class ReleaseRecorded(DeskEvent, type="release.recorded", case=BUG):
    """A recorded deployment containing the merge (`signoff.desk.release`), as the recorder made it."""

    commit: str
    deployment_id: int | None = None
    environment: str | None = None
    url: str | None = None
    health: Payload | None = None
    recorded_by: str | None = None
    evidence_kind: str | None = None
    evidence: str | None = None
    reconciled: str | None = None  # the deployment was recorded before the merge it contains


class HistoryRewritten(DeskEvent, type="history.rewritten", case=BUG):
    what: str
    old: str
    new: str
    tree: str
    note: str


class HumanResumed(DeskEvent, type="human.resumed", case=BUG):
    state: str
    by: str


def raw(ev: EventBody) -> Payload:
    """An event's fields as they were written (fields an old event did not have are left out)."""
    return ev.model_dump(mode="json", exclude_unset=True)


# -- the state -----------------------------------------------------------------------------------------

@dataclass
class Bug:
    bug_id: str
    state: str = "reproducing"
    round: int = 1
    component: str = ""
    title: str = ""
    reports: dict[str, Payload] = field(default_factory=dict)
    attached_at: dict[str, int] = field(default_factory=dict)  # report id -> bug version it joined at
    asked_at: dict[str, int] = field(default_factory=dict)  # question -> bug version it was posed at
    answers: dict[str, int] = field(default_factory=dict)  # report id -> answers given
    disputes: list[Payload] = field(default_factory=list)  # answers by reporters not entitled
    confirmations: set[str] = field(default_factory=set)
    reproduction: Payload | None = None
    rejected_tests: set[str] = field(default_factory=set)
    failed_tests: list[Payload] = field(default_factory=list)  # this round's, as measured
    repro_attempts: int = 0
    fix_attempts: int = 0
    change: Payload | None = None
    approvals: list[Payload] = field(default_factory=list)
    merge: Payload | None = None
    release: Payload | None = None
    verified_by: set[str] = field(default_factory=set)
    needs_human: str | None = None
    times: dict[str, str] = field(default_factory=dict)
    log: list[Payload] = field(default_factory=list)
    rewrites: list[Payload] = field(default_factory=list)  # history.rewritten observations
    evidence: list[str] = field(default_factory=list)  # every evidence file its events name, in order
    version: int = 0

    def entitled(self, report_id: str, question: str) -> bool:
        """Whether a report's answer to `question` counts: it must have been filed before the
        question was posed (a reproduction is judged by the people whose bug it was measured for)."""
        joined, asked = self.attached_at.get(report_id), self.asked_at.get(question)
        return joined is not None and asked is not None and joined < asked

    def open_disputes(self) -> list[Payload]:
        """The disputes a person may still agree with: a "no" of this round, not yet accepted, to a
        question still open (the reproduction while awaiting the reporter, the release once released)."""
        still_open = {"reproduction": self.state == "awaiting_reporter",
                      "release": self.state in ("released", "verified")}
        return [d for d in self.disputes if d["answer"] == "no" and not d["accepted"] and d["round"] == self.round
                and still_open.get(d["question"], False)]

    def _answered(self, report_id: str) -> None:
        self.answers[report_id] = self.answers.get(report_id, 0) + 1

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


# -- the fold ------------------------------------------------------------------------------------------

bug_fold = Fold[Bug](BUG)


@bug_fold.every
def _logged(bug: Bug, ev: EventBody, at: Stamp) -> None:
    bug.version = at.version
    bug.log.append({"version": at.version, "type": ev.TYPE, "at": at.recorded_at})
    evidence = getattr(ev, "evidence", None)
    if evidence:
        bug.evidence.append(evidence)


@bug_fold.on(BugOpened)
def _opened(bug: Bug, ev: BugOpened, at: Stamp) -> None:
    bug.component, bug.title = ev.component, ev.title


@bug_fold.on(ReportAttached)
def _attached(bug: Bug, ev: ReportAttached, at: Stamp) -> None:
    bug.reports[ev.report_id] = raw(ev)
    bug.attached_at[ev.report_id] = at.version


@bug_fold.on(ReproductionFailed)
def _repro_failed(bug: Bug, ev: ReproductionFailed, at: Stamp) -> None:
    bug.repro_attempts += 1
    bug.failed_tests.append({"test_sha256": ev.test_sha256, "measured": ev.measured})
    if ev.needs_human:
        bug._human(ev.reason)


@bug_fold.on(ReproductionRecorded)
def _reproduced(bug: Bug, ev: ReproductionRecorded, at: Stamp) -> None:
    bug.reproduction = raw(ev)
    bug.asked_at["reproduction"] = at.version
    bug.state = "awaiting_reporter"
    bug.times["reproduced"] = at.recorded_at


@bug_fold.on(ConfirmationYes)
def _confirmed(bug: Bug, ev: ConfirmationYes, at: Stamp) -> None:
    bug._answered(ev.report_id)
    bug.confirmations.add(ev.report_id)
    bug.state = "fixing"
    bug.times["confirmed"] = at.recorded_at


@bug_fold.on(ConfirmationNo, VerificationNo)
def _said_no(bug: Bug, ev: Answer, at: Stamp) -> None:
    bug._answered(ev.report_id)
    if bug.reproduction is not None:
        bug.rejected_tests.add(bug.reproduction["test_sha256"])
    bug._reopen()
    bug.times["reopened"] = at.recorded_at


@bug_fold.on(FixFailed)
def _fix_failed(bug: Bug, ev: FixFailed, at: Stamp) -> None:
    bug.fix_attempts += 1
    if ev.needs_human:
        bug._human(ev.reason)


@bug_fold.on(ChangeOpened)
def _change_opened(bug: Bug, ev: ChangeOpened, at: Stamp) -> None:
    bug.change = raw(ev)
    bug.approvals = []
    bug.state = "in_review"
    bug.times["draft"] = at.recorded_at


@bug_fold.on(ChangePushed)
def _pushed(bug: Bug, ev: ChangePushed, at: Stamp) -> None:
    if bug.change is not None:
        bug.change["head"] = ev.head
        bug.approvals = []  # a new push clears every approval


@bug_fold.on(ApprovalRecorded)
def _approved(bug: Bug, ev: ApprovalRecorded, at: Stamp) -> None:
    bug.approvals.append(raw(ev))


@bug_fold.on(ApprovalWithdrawn)
def _withdrawn(bug: Bug, ev: ApprovalWithdrawn, at: Stamp) -> None:
    # the forge dismissed the review it came from
    bug.approvals = [a for a in bug.approvals if a.get("review_id") != ev.review_id]


@bug_fold.on(MergeRefused)
def _merge_refused(bug: Bug, ev: MergeRefused, at: Stamp) -> None:
    bug._human(ev.reason)


@bug_fold.on(MergeRecorded)
def _merged(bug: Bug, ev: MergeRecorded, at: Stamp) -> None:
    bug.merge = raw(ev)
    bug.state = "merged"
    bug.needs_human = None
    bug.times["merged"] = at.recorded_at


@bug_fold.on(ReleaseRecorded)
def _released(bug: Bug, ev: ReleaseRecorded, at: Stamp) -> None:
    bug.release = raw(ev)
    bug.asked_at["release"] = at.version
    bug.state = "released"
    bug.verified_by = set()
    bug.times["released"] = at.recorded_at


@bug_fold.on(VerificationYes)
def _verified(bug: Bug, ev: VerificationYes, at: Stamp) -> None:
    bug._answered(ev.report_id)
    bug.verified_by.add(ev.report_id)
    bug.state = "verified"
    bug.times["verified"] = at.recorded_at


@bug_fold.on(AnswerUnentitled)
def _unentitled(bug: Bug, ev: AnswerUnentitled, at: Stamp) -> None:
    bug._answered(ev.report_id)
    bug.disputes.append({**raw(ev), "index": len(bug.disputes), "at": at.recorded_at, "accepted": False})


@bug_fold.on(DisputeAccepted)
def _dispute_accepted(bug: Bug, ev: DisputeAccepted, at: Stamp) -> None:
    # A person agreed with a late reporter's "no": reopen, but the test is not put on the rejected
    # list on that reporter's word.
    bug.disputes[ev.index]["accepted"] = True
    bug._reopen()
    bug.times["reopened"] = at.recorded_at


@bug_fold.on(HistoryRewritten)
def _rewritten(bug: Bug, ev: HistoryRewritten, at: Stamp) -> None:
    bug.rewrites.append(raw(ev))  # an observation: no state changes


@bug_fold.on(HumanResumed)
def _resumed(bug: Bug, ev: HumanResumed, at: Stamp) -> None:
    bug.needs_human = None
    bug.state = ev.state


# Kept in the log and the evidence list only (the handler for every event): the change request the
# verified fix opened is its own event, change.opened, recorded with it.
bug_fold.ignores(FixVerified)


def fold(bug_id: str, events: list[Event]) -> Bug:
    """The bug its stored events make (each read through its class)."""
    return bug_fold.over(Bug(bug_id), events)
