"""The desk's rules as pure decisions: `decide(bug, command, config) -> Decision` (typed events, jobs).

Each command is what a caller asked for plus the facts the desk measured for it (changed paths,
code owners, a sandbox measurement, the deployment that contains a merge, the time). A decision
reads only the `Bug` fold, the command and the `DeskConfig`, and returns the events (the classes of
`signoff.desk.model`) to append and the jobs they cause; it does no I/O and reads no clock, so every
rule here is tested without a ledger, a forge or a sandbox. The desk service gathers the facts and
appends the decision at the version it was made on (`Ledger.update`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from signoff.desk import model as ev
from signoff.desk.approvals import dispute_approval, review_approval
from signoff.desk.config import DeskConfig
from signoff.desk.model import Bug
from signoff.kernel import pathglob
from signoff.kernel.errors import ConflictError, NotFoundError, RefusedError
from signoff.ledger import NewJob
from signoff.ledger.aggregate import NOTHING, Decision

ENGINEERING = "desk.engineering"
NOTIFY = "desk.notify"
RESUMABLE = ("reproducing", "fixing", "in_review")



def _job(bug_id: str, step: str, round_: int, key: str) -> NewJob:
    return NewJob(key, ENGINEERING, {"bug_id": bug_id, "step": step, "round": round_})


def reproduce_job(bug_id: str, round_: int, key: str | None = None) -> NewJob:
    return _job(bug_id, "reproduce", round_, key or f"{bug_id}:reproduce:{round_}")


# -- reporters' answers ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Confirm:
    """A reporter's answer to "is this the bug you saw?" (the reproduction question)."""

    report_id: str
    answer: str  # yes | no
    reason: dict[str, Any] | None = None  # a "no"'s reason, already through the airlock
    round: int | None = None  # the round the reporter was shown, if they said


@dataclass(frozen=True)
class VerifyRelease:
    """A reporter's answer to "does the live fix work for you?" (the release question)."""

    report_id: str
    answer: str
    reason: dict[str, Any] | None = None


def counts(bug: Bug, report_id: str, question: str, config: DeskConfig) -> bool:
    """Whether this report's answer decides `question`; refuses once the report has answered too often.

    Anyone who files a similar report joins the bug and gets a capability, so a capability alone
    must not let a stranger steer someone else's bug. Only reports filed before the question was
    posed decide it; a later one is recorded for the owner (see `accept_dispute`)."""
    if bug.answers.get(report_id, 0) >= config.answers_per_report:
        raise RefusedError(f"report {report_id} has answered {bug.answers[report_id]} times on {bug.bug_id}: "
                           "no more answers",
                           "the owner has your earlier answers; add detail to a new report if it still fails")
    if bug.entitled(report_id, question):
        return True
    if len(bug.disputes) >= config.disputes_per_bug:
        raise RefusedError(f"{bug.bug_id} has {len(bug.disputes)} answers waiting for the owner: no more are taken",
                           "the owner will review the answers already given")
    return False


def _unentitled(bug: Bug, report_id: str, question: str, answer: str, reason: dict[str, Any] | None) -> Decision:
    # Recorded and shown to the owner; it changes no state, asks no agent and never grows the
    # rejected-test list. A "no" reopens the bug only when a person agrees (`accept_dispute`).
    return Decision.of(ev.AnswerUnentitled(report_id=report_id, question=question, answer=answer, round=bug.round,
                                           **(reason or {})))


def _answer(bug: Bug, question: str, cmd: Confirm | VerifyRelease, config: DeskConfig,
            yes: Callable[[], Decision]) -> Decision:
    """An answer to `question`: kept for the owner when the report is not entitled to it; else `yes()`,
    or a "no" that reopens the bug for a new reproduction."""
    rid = cmd.report_id
    if not counts(bug, rid, question, config):
        return _unentitled(bug, rid, question, cmd.answer, cmd.reason)
    if cmd.answer == "yes":
        return yes()
    no = {"reproduction": ev.ConfirmationNo, "release": ev.VerificationNo}[question]
    return Decision.of(no(report_id=rid, round=bug.round, **(cmd.reason or {})),
                       jobs=[reproduce_job(bug.bug_id, bug.round + 1)])


def confirm(bug: Bug, cmd: Confirm, config: DeskConfig) -> Decision:
    if bug.state != "awaiting_reporter" or bug.reproduction is None or (cmd.round is not None
                                                                        and cmd.round != bug.round):
        raise ConflictError(f"{bug.bug_id} is not waiting for a confirmation (state {bug.state}, round {bug.round})",
                            "reload the tracking page: the bug has moved on")

    def yes() -> Decision:
        return Decision.of(ev.ConfirmationYes(report_id=cmd.report_id, round=bug.round),
                           jobs=[_job(bug.bug_id, "fix", bug.round, f"{bug.bug_id}:fix:{bug.round}")])
    return _answer(bug, "reproduction", cmd, config, yes)


def verify_release(bug: Bug, cmd: VerifyRelease, config: DeskConfig) -> Decision:
    if bug.state not in ("released", "verified") or bug.release is None:
        raise ConflictError(f"{bug.bug_id} has no release to check (state {bug.state})",
                            "you will be asked once the fix is live")
    release = bug.release

    def yes() -> Decision:
        if cmd.report_id in bug.verified_by:
            return NOTHING
        return Decision.of(ev.VerificationYes(report_id=cmd.report_id, round=bug.round, commit=release["commit"]))
    return _answer(bug, "release", cmd, config, yes)


# -- people deciding what the rules left open ---------------------------------------------------------

@dataclass(frozen=True)
class AcceptDispute:
    """A person agrees with a "no" from a reporter who was not entitled to the question: the one they
    were shown (`shown`, the digest of `approvals.dispute_shown`)."""

    index: int
    by: str
    shown: str | None = None
    at: str = ""  # when, from the desk's clock (a decision reads none)
    via: str = "desk"


@dataclass(frozen=True)
class HumanResume:
    """A person takes a bug out of needs_human."""

    state: str  # one of RESUMABLE
    by: str


def accept_dispute(bug: Bug, cmd: AcceptDispute, config: DeskConfig) -> Decision:
    """The bug reopens for a new reproduction; the test is not added to the rejected list."""
    if not 0 <= cmd.index < len(bug.disputes):
        raise NotFoundError(f"{bug.bug_id} has no dispute {cmd.index}", "list them in the bug's disputes")
    if cmd.index not in {d["index"] for d in bug.open_disputes()}:
        raise ConflictError(f"dispute {cmd.index} of {bug.bug_id} is not an open \"no\" of this round",
                            "reload the bug: it has moved on")
    made = dispute_approval(bug, cmd.index, cmd.shown, cmd.by, cmd.at, cmd.via)
    return Decision.of(ev.DisputeAccepted(index=cmd.index, by=cmd.by, approval=made),
                       jobs=[reproduce_job(bug.bug_id, bug.round + 1)])


def human_resume(bug: Bug, cmd: HumanResume, config: DeskConfig) -> Decision:
    if bug.state != "needs_human":
        raise ConflictError(f"{bug.bug_id} does not need a human (state {bug.state})", "nothing to resume")
    jobs = []
    if cmd.state == "reproducing":
        jobs = [reproduce_job(bug.bug_id, bug.round, f"{bug.bug_id}:reproduce:{bug.round}:resumed{bug.version}")]
    return Decision.of(ev.HumanResumed(state=cmd.state, by=cmd.by), jobs=jobs)


# -- engineering's submissions, as measured ------------------------------------------------------------

def _agent(agent: dict[str, Any] | None) -> dict[str, Any]:
    return {k: (agent or {}).get(k) for k in ("provider", "model", "kind", "call_id")}


@dataclass(frozen=True)
class RecordReproduction:
    """The reproducer's test and what the sandbox measured of it on the repository's head."""

    round: int
    test_path: str
    test_source: str
    test_sha256: str
    base: str
    ok: bool  # the baseline suite is green and the test fails by an assertion
    reason: str
    detail: dict[str, Any] = field(default_factory=dict)
    evidence: str | None = None
    agent: dict[str, Any] | None = None


def record_reproduction(bug: Bug, cmd: RecordReproduction, config: DeskConfig) -> Decision:
    """A measured reproduction asks every reporter; a failed one is retried once, then needs a human
    (at once if the baseline suite itself is red)."""
    bug_id, round_ = bug.bug_id, cmd.round
    if bug.state not in ("reproducing", "reopened") or bug.round != round_:
        raise ConflictError(f"{bug_id} moved on while the test ran", "claim the current work item")
    agent = _agent(cmd.agent)
    if not cmd.ok:
        baseline_red = bool(cmd.detail.get("baseline_red"))
        attempts = bug.repro_attempts + 1
        give_up = baseline_red or attempts >= 2
        reason = (f"needs a human: {cmd.reason}" if baseline_red else
                  f"no reproduction after {attempts} attempts: {cmd.reason}") if give_up else cmd.reason
        jobs = [] if give_up else [reproduce_job(bug_id, round_, f"{bug_id}:reproduce:{round_}:retry{attempts}")]
        return Decision.of(ev.ReproductionFailed(round=round_, reason=reason, measured=cmd.reason,
                                                 needs_human=give_up, baseline_red=baseline_red,
                                                 test_sha256=cmd.test_sha256, evidence=cmd.evidence, agent=agent),
                           jobs=jobs)
    recorded = ev.ReproductionRecorded(round=round_, test_path=cmd.test_path, test_source=cmd.test_source,
                                       test_sha256=cmd.test_sha256, base=cmd.base, message=cmd.reason,
                                       evidence=cmd.evidence, fingerprint=cmd.detail.get("fingerprint"),
                                       evidence_kind="measured", agent=agent)
    jobs = [NewJob(f"{bug_id}:notify:reproduced:{round_}:{rid}", NOTIFY,
                   {"bug_id": bug_id, "report_id": rid, "kind": "reproduced", "round": round_})
            for rid in sorted(bug.reports)]
    jobs.append(_job(bug_id, "review_test", round_, f"{bug_id}:review-test:{round_}"))
    return Decision.of(recorded, jobs=jobs)


@dataclass(frozen=True)
class FixFailed:
    round: int
    attempt: int
    reason: str
    agent: dict[str, Any] = field(default_factory=dict)
    evidence: str | None = None


def fix_failed(bug: Bug, cmd: FixFailed, config: DeskConfig) -> Decision:
    """A failed attempt is retried until `fix_attempts`, then needs a human; a stale one is nothing."""
    bug_id, round_, attempt = bug.bug_id, cmd.round, cmd.attempt
    if bug.state != "fixing" or bug.round != round_ or bug.fix_attempts >= attempt:
        return NOTHING
    give_up = attempt >= config.fix_attempts
    jobs = [] if give_up else [_job(bug_id, "fix", round_, f"{bug_id}:fix:{round_}:retry{attempt}")]
    reason = f"needs a human: {attempt} fix attempts failed; last: {cmd.reason}" if give_up else cmd.reason
    return Decision.of(ev.FixFailed(round=round_, attempt=attempt, reason=reason, needs_human=give_up,
                                    evidence=cmd.evidence, agent=cmd.agent), jobs=jobs)


@dataclass(frozen=True)
class FixVerified:
    """A fix the sandbox verified, and the draft change request opened for it."""

    round: int
    attempt: int
    commit: str
    evidence: str | None
    detail: dict[str, Any]
    agent: dict[str, Any]
    change: dict[str, Any]  # repo, number, head, base, branch, assignee


def fix_verified(bug: Bug, cmd: FixVerified, config: DeskConfig) -> Decision:
    if bug.state != "fixing" or bug.round != cmd.round:
        raise ConflictError(f"{bug.bug_id} moved on while the fix was measured", "reload the bug")
    return Decision.of(ev.FixVerified(round=cmd.round, attempt=cmd.attempt, commit=cmd.commit, evidence=cmd.evidence,
                                      checks=list(cmd.detail.get("checks", [])),
                                      fingerprint=cmd.detail.get("fingerprint"), agent=cmd.agent),
                       ev.ChangeOpened(round=cmd.round, **cmd.change, draft=True),
                       jobs=[_job(bug.bug_id, "review_change", cmd.round, f"{bug.bug_id}:review-change:{cmd.round}")])


# -- review and merge ---------------------------------------------------------------------------------

def tier(paths: Sequence[str], config: DeskConfig) -> int:
    """2 if any path is sensitive, 0 if every path is documentation, 1 otherwise."""
    if any(pathglob.matches(p, config.sensitive_paths) for p in paths):
        return 2
    if paths and all(pathglob.matches(p, config.docs_paths) for p in paths):
        return 0
    return 1


@dataclass(frozen=True)
class RecordApproval:
    head: str
    login: str  # as the face named it (desk credential name, forge login)
    person: str | None  # the person record behind the login; None: unbound, never counts for tier 2
    shared: bool  # the shared owner key: never a person
    via: str  # desk | forge
    codeowners: frozenset[str]  # the code owners of the change's paths, read at its base
    person_logins: frozenset[str] = frozenset()  # the person's forge logins (CODEOWNERS names those)
    note: str = ""
    review_id: str | None = None  # the forge review it came from (a dismissal withdraws it)
    at: str = ""  # when, from the desk's clock (a decision reads none)


def record_approval(bug: Bug, cmd: RecordApproval, config: DeskConfig) -> Decision:
    person = None if cmd.shared else cmd.person
    made = review_approval(bug, cmd.head, person or cmd.login, cmd.at, cmd.via)
    codeowner = person is not None and bool(cmd.person_logins & cmd.codeowners)
    return Decision.of(ev.ApprovalRecorded(login=cmd.login, person=person, shared=cmd.shared, head=cmd.head,
                                           codeowner=codeowner, via=cmd.via, note=cmd.note[:500],
                                           review_id=cmd.review_id, approval=made))


@dataclass(frozen=True)
class WithdrawApproval:
    """The forge dismissed a review: the approval it gave no longer counts."""

    review_id: str
    by: str | None


def withdraw_approval(bug: Bug, cmd: WithdrawApproval, config: DeskConfig) -> Decision:
    if not any(a.get("review_id") == cmd.review_id for a in bug.approvals):
        return NOTHING
    return Decision.of(ev.ApprovalWithdrawn(review_id=cmd.review_id, by=cmd.by))


def people_approving(approvals: Sequence[dict[str, Any]]) -> set[str]:
    """The distinct people behind `approvals`: logins bound to one person count once; the shared key
    and logins no person record binds count for nobody (an approval recorded before people were
    recorded has no `person` and counts for nobody either)."""
    return {a["person"] for a in approvals if a.get("person") and not a.get("shared")}


def merge_check(bug: Bug, head: str, merged_by: str, merged_by_type: str, paths: Sequence[str],
                config: DeskConfig) -> str | None:
    """Why this merge may not count (None: it may). `paths` are the change's changed paths."""
    if bug.state != "in_review" or bug.change is None:
        return f"{bug.bug_id} has no change under review (state {bug.state})"
    if merged_by_type != "User" or merged_by.endswith("[bot]") or merged_by.startswith("signoff-"):
        return f"merged by {merged_by} ({merged_by_type}): a human user must merge"
    if head != bug.change["head"]:
        return f"merged head {head[:12]} is not the reviewed head {bug.change['head'][:12]}"
    on_head = [a for a in bug.approvals if a["head"] == head]
    if not on_head:
        return "no human approval of this exact head"
    if tier(paths, config) == 2:
        people = people_approving(on_head)
        if len(people) < 2:
            unbound = sorted({a["login"] for a in on_head if not a.get("person") and not a["shared"]})
            return (f"tier 2 change ({', '.join(paths)}) needs two distinct humans; has {len(people)}"
                    + (" (the shared owner key never counts)" if any(a["shared"] for a in on_head) else "")
                    + (f" (not bound to a person in [desk.people]: {', '.join(unbound)})" if unbound else ""))
        if not any(a["codeowner"] and a.get("person") in people for a in on_head):
            return "tier 2 change needs a code owner's approval"
    return None


@dataclass(frozen=True)
class PushChange:
    head: str
    by: str | None


def push_change(bug: Bug, cmd: PushChange, config: DeskConfig) -> Decision:
    """A new head on the change request clears every approval (the fold does the clearing)."""
    if bug.change is None or bug.change["head"] == cmd.head:
        return NOTHING
    return Decision.of(ev.ChangePushed(head=cmd.head, by=cmd.by))


@dataclass(frozen=True)
class RecordMerge:
    """A merge the forge reported, with the changed paths and the recorded deployment (if any)
    that already contains the merge commit."""

    head: str
    login: str
    kind: str  # the merger's account type: User, Bot, ...
    merge_commit: str
    paths: tuple[str, ...]
    deployed: dict[str, Any] | None = None


def record_merge(bug: Bug, cmd: RecordMerge, config: DeskConfig) -> Decision:
    """A merge that breaks a rule needs a human; one that keeps them is recorded, and released at
    once when a deployment containing it arrived first."""
    merged_by = {"login": cmd.login, "type": cmd.kind}
    why = merge_check(bug, cmd.head, cmd.login, cmd.kind, cmd.paths, config)
    if why:
        return Decision.of(ev.MergeRefused(reason=f"merge not accepted: {why}", head=cmd.head, merged_by=merged_by,
                                           merge_commit=cmd.merge_commit))
    merged = ev.MergeRecorded(merge_commit=cmd.merge_commit, head=cmd.head, tier=tier(cmd.paths, config),
                              paths=list(cmd.paths), merged_by=merged_by,
                              approvals=[a for a in bug.approvals if a["head"] == cmd.head])
    if cmd.deployed is None:
        return Decision.of(merged)
    return Decision.of(merged, ev.ReleaseRecorded(**{**cmd.deployed, "reconciled": "deployment arrived first"}),
                       jobs=release_jobs(bug, cmd.deployed))


# -- release -------------------------------------------------------------------------------------------

def release_jobs(bug: Bug, deployment: dict[str, Any]) -> list[NewJob]:
    """One "does the live fix work for you?" notice per report of the bug, and the smoke check
    of the live release (deployment acceptance, measured; it changes no state)."""
    smoke = _job(bug.bug_id, "smoke", bug.round, f"{bug.bug_id}:smoke:{bug.round}:{deployment.get('deployment_id')}")
    return [smoke] + [NewJob(f"{bug.bug_id}:notify:released:{bug.round}:{rid}", NOTIFY,
                   {"bug_id": bug.bug_id, "report_id": rid, "kind": "released", "round": bug.round,
                    "commit": deployment["commit"]}) for rid in sorted(bug.reports)]


@dataclass(frozen=True)
class Release:
    """A recorded deployment that contains the bug's merge commit."""

    merge_commit: str
    deployment: dict[str, Any]


def release(bug: Bug, cmd: Release, config: DeskConfig) -> Decision:
    if bug.state != "merged" or bug.merge is None or bug.merge["merge_commit"] != cmd.merge_commit:
        return NOTHING
    return Decision.of(ev.ReleaseRecorded(**cmd.deployment), jobs=release_jobs(bug, cmd.deployment))


# -- GitHub: required checks of a deployed commit, and rewritten history ------------------------------

def _run_origin(run: dict[str, Any] | None, full_name: str, default_branch: str) -> str | None:
    """Why a workflow run may not vouch for a deployment (None: it may)."""
    if run is None:
        return "cannot be attributed to a workflow run"
    if run.get("event") != "push":
        return f"comes from a {run.get('event')!r} run, not a push"
    if ((run.get("head_repository") or {}).get("full_name") != full_name
            or (run.get("repository") or {}).get("full_name") != full_name):
        return f"comes from {(run.get('head_repository') or {}).get('full_name')!r}, not {full_name}"
    if run.get("head_branch") != default_branch:
        return f"ran on branch {run.get('head_branch')!r}, not {default_branch!r}"
    return None


def required_checks_problem(sha: str, required: Sequence[str], check_runs: Sequence[dict[str, Any]],
                            workflow_runs: Sequence[dict[str, Any]], full_name: str,
                            default_branch: str) -> str | None:
    """Why the required checks do not vouch for deploying `sha` (None: they do).

    Every check that branch protection requires must have a run on exactly `sha` belonging to a
    workflow run of a push to the default branch of this repository; pull-request runs, runs from
    forks and from other branches are not evidence. The latest such run must have succeeded. A
    required check that cannot be attributed to such a run fails closed, and so does a default
    branch that requires no checks at all."""
    if not required:
        return f"branch protection of {default_branch!r} requires no status checks: failing closed"
    suites = {w.get("check_suite_id"): w for w in workflow_runs if w.get("head_sha") == sha}
    for name in required:
        runs = [r for r in check_runs if r.get("name") == name and r.get("head_sha") == sha]
        if not runs:
            return f"required check {name!r} has no run on {sha[:12]}"
        trusted: list[dict[str, Any]] = []
        refused: list[str] = []
        for r in runs:
            why = _run_origin(suites.get((r.get("check_suite") or {}).get("id")), full_name, default_branch)
            if why:
                refused.append(why)
            else:
                trusted.append(r)
        if not trusted:
            return f"required check {name!r} on {sha[:12]} {refused[-1]}: failing closed"
        latest = max(trusted, key=lambda r: int(r.get("id") or 0))
        if latest.get("status") != "completed" or latest.get("conclusion") != "success":
            return (f"required check {name!r} on {sha[:12]} is {latest.get('status')}"
                    f"/{latest.get('conclusion')}, not completed/success")
    return None


@dataclass(frozen=True)
class ObserveRewrite:
    """A recorded commit GitHub no longer has, and the commit with the same tree that took its place."""

    what: str  # which recorded commit: merge_commit
    old: str
    new: str
    tree: str


def observe_rewrite(bug: Bug, cmd: ObserveRewrite, config: DeskConfig) -> Decision:
    """Only an observation for people: the new commit inherits no approval, merge or release."""
    if any(r["old"] == cmd.old and r["new"] == cmd.new for r in bug.rewrites):
        return NOTHING
    return Decision.of(ev.HistoryRewritten(what=cmd.what, old=cmd.old, new=cmd.new, tree=cmd.tree,
                                           note="observation only: approvals and the merge stay with the "
                                                "old commit; a person decides"))


# -- one entry point -------------------------------------------------------------------------------------

Command = (Confirm | VerifyRelease | AcceptDispute | HumanResume | RecordReproduction | FixFailed | FixVerified
           | RecordApproval | WithdrawApproval | PushChange | RecordMerge | Release | ObserveRewrite)
RULES: dict[type[Any], Callable[[Bug, Any, DeskConfig], Decision]] = {
    Confirm: confirm, VerifyRelease: verify_release, AcceptDispute: accept_dispute, HumanResume: human_resume,
    RecordReproduction: record_reproduction, FixFailed: fix_failed, FixVerified: fix_verified,
    RecordApproval: record_approval, WithdrawApproval: withdraw_approval, PushChange: push_change,
    RecordMerge: record_merge, Release: release, ObserveRewrite: observe_rewrite,
}


def decide(bug: Bug, command: Command, config: DeskConfig) -> Decision:
    """The events and jobs `command` leads to on `bug`; raises (Conflict/Refused/NotFound) when a rule
    forbids it. Pure: the same bug, command and config give the same decision."""
    return RULES[type(command)](bug, command, config)
