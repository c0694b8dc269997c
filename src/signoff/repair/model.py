"""The repair case on the aggregate contract: its case types, its typed events and its fold.

A repair case is the ledger case `repair.case.<id>` (the prefix every ledger already holds: case
ids and stored type strings never change). Its events are the classes below, one per event type the
workflow has ever written, each reading every payload the old code wrote (fields added later have
defaults); `fold` turns them into a `CaseState` by dispatch on the class, without I/O.

Beside the cases live three small logs with their own prefixes: the contract a room is watched
with (`repair.room.<room>`), what the verifier refused or noted outside any case
(`repair.desk.<agent>`) and the hand-offs the fixer refused (`repair.fixer.<agent>`).
`repair.command_refused` belongs to the case, and the verifier's log holds it too for a command
naming no case.
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field

from signoff.kernel.errors import NotFoundError, UsageError
from signoff.ledger.aggregate import EventBody, Fold, Stamp, case_type
from signoff.ledger.approval import Approval
from signoff.repair import run_env

REPAIR_CASE = case_type("repair.case", "repair.case.")
REPAIR_ROOM = case_type("repair.room", "repair.room.")
VERIFIER_LOG = case_type("repair.desk", "repair.desk.")
FIXER_LOG = case_type("repair.fixer", "repair.fixer.")

FINAL = ("ACCEPTED", "DECLINED", "BLOCKED", "ABANDONED")


def case_key(case_id: str) -> str:
    """The ledger case id of repair case `case_id` (`repair.case.<id>`)."""
    return REPAIR_CASE.case_id(case_id)


@dataclass(frozen=True)
class Contract:
    """What "fixed" means for cases reported in one room: authored in advance, presented, approved."""

    name: str
    behaviour: str
    repo: str
    base: str
    harness: str
    expect: str
    regression: list[str] = field(default_factory=list)
    allow: list[str] = field(default_factory=list)
    pythonpath: list[str] = field(default_factory=list)
    runner: str = "pytest"
    timeout: float = 60.0
    fixer_script: str = "default"
    # The test environment, as `signoff repair verify` takes it (read at the base revision).
    requirements: list[str] = field(default_factory=list)
    project_deps: bool = False
    extras: list[str] = field(default_factory=list)
    pytest: str | None = None
    python: str | None = None
    allow_source_builds: bool = False
    lock: str | None = None
    workdir: str = "auto"
    # Variables every test run gets (`--env`; repair/run_env.py refuses those that change what is loaded).
    # They change what the tests do, so they are part of the contract a person approves (presented_contract).
    env: dict[str, str] = field(default_factory=dict)
    # Build each revision's extension modules in the sandbox (repair/extensions.py): the candidate's native
    # code then runs in the tests, so it is shown with the contract too.
    build_extensions: bool = False
    # What people know the repository by, shown with the base revision in the case room's contract
    # (default, when a case opens: its `origin` remote's URL without credentials, else its folder's name).
    repository: str = ""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Contract:
        return cls(**d)

    @classmethod
    def load(cls, path: Path) -> Contract:
        """A contract file (TOML): name, behaviour, repo, base, harness, expect, regression, allow, ...
        Relative paths are taken from the file's folder."""
        if not path.is_file():
            raise NotFoundError(f"contract file not found: {path}", "pass a TOML file describing the contract")
        try:
            data = tomllib.loads(path.read_text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise UsageError(f"{path} is not valid TOML: {exc}", "fix the contract file") from exc
        for key in ("repo", "harness"):
            if isinstance(data.get(key), str) and not Path(data[key]).is_absolute():
                data[key] = str((path.parent / data[key]).resolve())
        try:
            contract = cls.from_json(data)
        except TypeError as exc:
            raise UsageError(f"{path}: {exc}", "use the keys name, behaviour, repo, base, harness, expect, "
                                               "regression, allow, pythonpath, runner, timeout, fixer_script, "
                                               "requirements, project_deps, extras, pytest, python, "
                                               "allow_source_builds, lock, workdir, env, build_extensions, "
                                               "repository"
                             ) from exc
        if not isinstance(contract.env, dict):
            raise UsageError(f"{path}: env must be a table of NAME = \"VALUE\"", 'write env = { SQLITE = "1" }')
        try:
            run_env.check(contract.env)
        except UsageError as exc:
            raise UsageError(f"{path}: env: {exc.message}", exc.fix or "") from None
        if not contract.name or not contract.expect:
            raise UsageError(f"{path}: the contract needs a name and an expected test", "set name and expect")
        try:
            case_key(f"{contract.name}-01")  # its cases are named <name>-NN
        except UsageError:
            raise UsageError(f"{path}: the contract name {contract.name!r} cannot name a case",
                             "use letters, digits and . _ - (starting with a letter or digit)") from None
        return contract


_NO_CONTRACT = Contract(name="", behaviour="", repo="", base="", harness="", expect="")


@dataclass
class CaseState:
    case_id: str
    state: str  # "" until the case's report is read (a case that does not exist)
    room_id: str
    operator: str  # the linked operator's sender id, opaque (as the server writes it)
    contract: Contract
    base: str
    harness_digest: str
    operator_name: str = ""  # whom replies @-mention (display only: commands are checked by `operator`)
    verifier_name: str = ""  # the verifier agent commands address (empty for cases opened before it was kept)
    attempt: int = 0
    handoffs: dict[int, dict[str, Any]] = field(default_factory=dict)  # attempt -> {command_id, receipt}
    proposals: dict[int, dict[str, Any]] = field(default_factory=dict)
    failures: dict[int, str] = field(default_factory=dict)
    candidates: dict[int, str] = field(default_factory=dict)
    verdicts: dict[int, dict[str, Any]] = field(default_factory=dict)
    reproduction: dict[str, Any] | None = None
    approval: dict[str, Any] | None = None  # the approval event: who approved, from which message
    cards: dict[str, dict[str, Any]] = field(default_factory=dict)  # request id -> {stage, verbs, candidate}
    history: list[str] = field(default_factory=list)
    resumed: int = 0  # times the operator resumed the case (`repair.resumed`)
    retries: dict[int, dict[str, Any]] = field(default_factory=dict)  # attempt -> the operator's request for it
    # Verifications a person started of one of the case's candidates (the case page), by run number:
    # {run, candidate, attempt, by, by_name, via, state: queued|running|done, step, and once done the
    # verdict, reasons, fingerprint, evidence}. They never change the case's state or its review.
    checks: dict[int, dict[str, Any]] = field(default_factory=dict)
    presented: bool = False  # the contract document was put in the room

    @property
    def exists(self) -> bool:
        return bool(self.state)

    @property
    def last_verdict(self) -> dict[str, Any] | None:
        return self.verdicts[max(self.verdicts)] if self.verdicts else None

    def card(self, stage: str) -> str | None:
        """The request id of the approval card asked for `stage` (contract, review), if any."""
        return next((rid for rid, c in self.cards.items() if c["stage"] == stage), None)

    def open_attempt(self, attempt: int) -> bool:
        """The fixer has not acted on this attempt yet."""
        return attempt not in self.proposals and attempt not in self.failures


def initial(case_id: str) -> CaseState:
    """A case before its report: `exists` is false until `repair.reported` is folded."""
    return CaseState(case_id, "", "", "", _NO_CONTRACT, "", "")


# -- the case's events --------------------------------------------------------------------------


class Reported(EventBody, type="repair.reported", case=REPAIR_CASE):
    """A report in a watched room opened the case with the room's contract."""

    case_id: str
    room_id: str
    message_id: str
    reporter: str
    report: str
    operator: str
    contract: dict[str, Any]
    base: str
    harness_digest: str
    operator_name: str = ""  # cases opened before names were kept lack it
    verifier_name: str = ""


class ContractProposed(EventBody, type="repair.contract_proposed", case=REPAIR_CASE):
    harness_digest: str
    base: str


class ContractPresented(EventBody, type="repair.contract_presented", case=REPAIR_CASE):
    document_id: str


class CardRequested(EventBody, type="repair.card_requested", case=REPAIR_CASE):
    request_id: str
    stage: str  # contract | review
    verbs: dict[str, str]  # option id -> verb
    candidate: str = ""


class Approved(EventBody, type="repair.approved", case=REPAIR_CASE):
    message_id: str
    by: str
    harness_digest: str
    approval: Approval | None = None  # what was shown and its digest (None: recorded before approvals were)


class CommandRefused(EventBody, type="repair.command_refused", case=REPAIR_CASE):
    """A command that did not count, and why (also in the verifier's log for a case that does not exist)."""

    message_id: str
    reason: str
    verb: str | None = None
    room_id: str | None = None
    sender: str | None = None
    via: str | None = None


class Reproduced(EventBody, type="repair.reproduced", case=REPAIR_CASE):
    message: str
    fingerprint: str
    evidence: str


class Blocked(EventBody, type="repair.blocked", case=REPAIR_CASE):
    reason: str
    evidence: str


class FixRequested(EventBody, type="repair.fix_requested", case=REPAIR_CASE):
    attempt: int
    command_id: str
    receipt: dict[str, Any]  # the server's receipt of the hand-off message
    asked_by: str | None = None
    from_message: str | None = None
    reason: str = ""


class Resumed(EventBody, type="repair.resumed", case=REPAIR_CASE):
    by: str
    by_name: str
    reason: str
    via: str
    key: str
    attempt: int


class RetryRequested(EventBody, type="repair.retry_requested", case=REPAIR_CASE):
    """The operator asked for another attempt once the attempts had ended (from the room or the
    command line): who, why, and from which message (a room message id; `cli:<id>` on the command line)."""

    by: str
    by_name: str
    reason: str
    via: str
    key: str
    from_message: str
    attempt: int  # the attempt asked for


class Abandoned(EventBody, type="repair.abandoned", case=REPAIR_CASE):
    by: str
    by_name: str
    reason: str
    via: str
    key: str


class Proposal(EventBody, type="repair.proposal", case=REPAIR_CASE):
    attempt: int
    summary: str
    files: list[dict[str, Any]]  # {path, content}: full-file replacements
    kind: str
    provider: str
    model: str
    record: dict[str, Any]


class AttemptFailed(EventBody, type="repair.attempt_failed", case=REPAIR_CASE):
    attempt: int
    reason: str


class Candidate(EventBody, type="repair.candidate", case=REPAIR_CASE):
    attempt: int
    commit: str


class Verdict(EventBody, type="repair.verdict", case=REPAIR_CASE):
    """A verification's measured outcome for one attempt."""

    attempt: int
    candidate: str
    verdict: str
    reasons: list[dict[str, str]]
    fingerprint: str
    evidence: str
    diff: str
    tamper: list[str]
    signals: list[dict[str, Any]] = Field(default_factory=list)  # kept since the static signal was added


class VerificationRequested(EventBody, type="repair.verification_requested", case=REPAIR_CASE):
    """A person started a verification of one of the case's candidates (from the case page)."""

    run: int
    candidate: str
    attempt: int  # the attempt that produced the candidate
    by: str
    by_name: str
    via: str
    key: str


class VerificationProgress(EventBody, type="repair.verification_progress", case=REPAIR_CASE):
    """The verifier's step in a run a person started (what the page shows while it runs)."""

    run: int
    step: str


class VerificationMeasured(EventBody, type="repair.verification_measured", case=REPAIR_CASE):
    """What a run a person started measured: its verdict and signed evidence."""

    run: int
    candidate: str
    verdict: str
    reasons: list[dict[str, str]]
    fingerprint: str
    evidence: str


class ReviewRequested(EventBody, type="repair.review_requested", case=REPAIR_CASE):
    pass


class Accepted(EventBody, type="repair.accepted", case=REPAIR_CASE):
    message_id: str
    by: str
    candidate: str
    approval: Approval | None = None


class Declined(EventBody, type="repair.declined", case=REPAIR_CASE):
    message_id: str
    by: str
    approval: Approval | None = None


# -- the logs beside the cases ------------------------------------------------------------------


class Watch(EventBody, type="repair.watch", case=REPAIR_ROOM):
    """Cases reported in `room_id` use `contract`; `operator` is the sender id whose commands count."""

    room_id: str
    contract: dict[str, Any]
    operator: str
    operator_name: str
    verifier_name: str = ""


class Noted(EventBody, type="repair.noted", case=VERIFIER_LOG):
    """A report in a room whose case is still open: it opened nothing."""

    message_id: str


class HandoffRefused(EventBody, type="repair.handoff_refused", case=FIXER_LOG):
    """A message to the fixer that is not the verifier's recorded hand-off."""

    message_id: str
    room_id: str | None = None
    sender: str | None = None


# -- the fold -----------------------------------------------------------------------------------

fold = Fold[CaseState](REPAIR_CASE)

# The state each event moves the case to (a verdict moves it to the verdict itself).
_MOVES: dict[type[EventBody], str] = {
    Reported: "REPORTED", ContractProposed: "CONTRACT_PROPOSED", Approved: "APPROVED", Reproduced: "REPRODUCED",
    Blocked: "BLOCKED", FixRequested: "FIX_REQUESTED", Candidate: "CANDIDATE", ReviewRequested: "AWAITING_REVIEW",
    Accepted: "ACCEPTED", Declined: "DECLINED", Abandoned: "ABANDONED", RetryRequested: "RETRY_REQUESTED",
}


@fold.every
def _move(st: CaseState, ev: EventBody, at: Stamp) -> None:
    if isinstance(ev, Reported) or not st.exists:
        return  # nothing moves before the report (its handler opens the case)
    moved = ev.verdict if isinstance(ev, Verdict) else _MOVES.get(type(ev))
    if moved is not None:
        st.state = moved
        st.history.append(moved)


@fold.on(Reported)
def _reported(st: CaseState, ev: Reported, at: Stamp) -> None:
    st.case_id, st.state, st.room_id, st.operator = ev.case_id, "REPORTED", ev.room_id, ev.operator
    # A case opened before `workdir` existed ran its tests from an empty folder: it keeps that meaning
    # (the default for new contracts became "auto" later).
    contract = Contract.from_json({"workdir": "empty", **ev.contract})
    st.contract, st.base, st.harness_digest = contract, ev.base, ev.harness_digest
    st.operator_name, st.verifier_name = ev.operator_name, ev.verifier_name
    st.history.append("REPORTED")


@fold.on(ContractPresented)
def _presented(st: CaseState, ev: ContractPresented, at: Stamp) -> None:
    st.presented = True


@fold.on(Reproduced)
def _reproduced(st: CaseState, ev: Reproduced, at: Stamp) -> None:
    st.reproduction = ev.payload()


@fold.on(Approved)
def _approved(st: CaseState, ev: Approved, at: Stamp) -> None:
    st.approval = ev.payload()


@fold.on(CardRequested)
def _card(st: CaseState, ev: CardRequested, at: Stamp) -> None:
    st.cards[ev.request_id] = {"stage": ev.stage, "verbs": dict(ev.verbs), "candidate": ev.candidate}


@fold.on(FixRequested)
def _fix_requested(st: CaseState, ev: FixRequested, at: Stamp) -> None:
    st.attempt = ev.attempt
    st.handoffs[ev.attempt] = ev.payload()


@fold.on(Resumed)
def _resumed(st: CaseState, ev: Resumed, at: Stamp) -> None:
    # The operator resumed a stuck hand-off: the attempt is handed over again, with a new receipt.
    st.handoffs.pop(ev.attempt, None)
    st.resumed += 1


@fold.on(RetryRequested)
def _retry(st: CaseState, ev: RetryRequested, at: Stamp) -> None:
    # Another attempt follows: the review card asked for the last one no longer decides anything.
    st.retries[ev.attempt] = ev.payload()
    st.cards = {rid: c for rid, c in st.cards.items() if c["stage"] != "review"}


@fold.on(VerificationRequested)
def _check_requested(st: CaseState, ev: VerificationRequested, at: Stamp) -> None:
    st.checks[ev.run] = {**ev.payload(), "state": "queued", "step": ""}


@fold.on(VerificationProgress)
def _check_progress(st: CaseState, ev: VerificationProgress, at: Stamp) -> None:
    st.checks[ev.run].update(state="running", step=ev.step)


@fold.on(VerificationMeasured)
def _check_measured(st: CaseState, ev: VerificationMeasured, at: Stamp) -> None:
    st.checks[ev.run].update(ev.payload(), state="done", step="")


@fold.on(Proposal)
def _proposal(st: CaseState, ev: Proposal, at: Stamp) -> None:
    st.proposals[ev.attempt] = ev.payload()


@fold.on(AttemptFailed)
def _failed(st: CaseState, ev: AttemptFailed, at: Stamp) -> None:
    st.failures[ev.attempt] = ev.reason


@fold.on(Candidate)
def _candidate(st: CaseState, ev: Candidate, at: Stamp) -> None:
    st.candidates[ev.attempt] = ev.commit


@fold.on(Verdict)
def _verdict(st: CaseState, ev: Verdict, at: Stamp) -> None:
    st.verdicts[ev.attempt] = ev.payload()


# Events that only move the state (above) or are kept for the record (a refusal, said in the room).
fold.ignores(ContractProposed, CommandRefused, Blocked, ReviewRequested, Accepted, Declined, Abandoned)
