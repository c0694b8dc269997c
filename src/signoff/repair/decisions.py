"""The repair rules as pure decisions: `decide(state, command) -> Decision`, with no I/O.

A command is typed: a person's (`OperatorCommand`: approve, accept, reject; `Move`: resume,
abandon, retry) or what a job measured (`Reproduce`, `HandOff`, `Propose`, `FailAttempt`, `Commit`,
`Measure`, ...). The service and the workflow read what a decision needs (the case, the harness
digest as it is now, a verification's measurements, the clock) and pass it in the command; these
functions only say what follows, so the rules are tested without a database, a room or a sandbox.

Authority is judged from what the room server recorded, never from message text: approval,
acceptance and rejection count only as the exact command `@<verifier> <verb> <case>`, addressed,
in the case room, from the linked operator (or the operator's answer on the case's approval card).
Each is recorded as an `Approval` made by `signoff.ledger.approval.approve` on exactly the content
that was shown: the contract as presented (its harness digest included) for an approval, the review
of the last verdict (candidate, verdict, reasons, evidence, diff) for an acceptance or a rejection.
Every typed decision names the digest of what its person was shown, as the verifier printed it
(`@<verifier> approve <case> #<digest>`, `reject <case> #<digest>`, `accept <case> <commit>
#<digest>`: 12 or more hex digits each; an acceptance also names the candidate commit reviewed).
The verifier may present twice (a review, then another after a change): a command that names no
digest is not recorded (the verifier answers with what it would decide on and the exact command),
and one naming other content is refused, nothing recorded. A page sends the digest it showed; an
approval card is bound to the content it was asked for (the server binds the card's own digest).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NamedTuple

from signoff.kernel.errors import SignoffError
from signoff.kernel.shown import names, short, shown_digest
from signoff.ledger import NewJob
from signoff.ledger.aggregate import NOTHING, Decision
from signoff.ledger.approval import APPROVE, Approval, Option, approve
from signoff.repair.model import (
    FINAL,
    Abandoned,
    Accepted,
    Approved,
    AttemptFailed,
    Blocked,
    Candidate,
    CardRequested,
    CaseState,
    CommandRefused,
    Contract,
    ContractPresented,
    ContractProposed,
    Declined,
    FixRequested,
    Noted,
    Proposal,
    Reported,
    Reproduced,
    Resumed,
    RetryRequested,
    ReviewRequested,
    Verdict,
    VerificationMeasured,
    VerificationProgress,
    VerificationRequested,
)
from signoff.repair.verdict import VERIFIED

_COMMAND = re.compile(r"\b(approve|accept|reject)\s+([A-Za-z0-9][\w.-]*)(?:[ \t]+([0-9a-f]{12,64})\b)?"
                      r"(?:[ \t]+#(\S*))?")
_STUCK = re.compile(r"^(resume|abandon|retry)\s+([A-Za-z0-9][\w.-]*)(?:\s+(.+))?$", re.DOTALL)

STUCK_VERBS = ("resume", "abandon", "retry")
RESUMABLE = "FIX_REQUESTED"  # waiting on the fixer, which may never have seen its hand-off
RETRYABLE = "AWAITING_REVIEW"  # the attempts have ended: the operator may ask for one more
ACCEPT = Option(id="accept", label="Accept", meaning="approve")
REJECT = Option(id="reject", label="Reject", meaning="refuse")
_OPTIONS = {"approve": APPROVE, "accept": ACCEPT, "reject": REJECT}


# -- what a person is shown, and approves ---------------------------------------------------------


def presented_contract(st: CaseState, harness_digest: str) -> dict[str, Any]:
    """The contract of a case as it is presented for approval (the room document, the case page, the
    card), with the harness digest given: what an approval binds. The harness files are bound by
    the digest, which covers their paths, modes and bytes."""
    c = st.contract
    shown: dict[str, Any] = {"case": st.case_id, "behaviour": c.behaviour, "base": st.base,
                             "harness_digest": harness_digest, "expect": c.expect, "regression": list(c.regression),
                             "allow": list(c.allow), "runner": c.runner}
    if c.repository:  # cases opened before the repository was named have none
        shown["repository"] = c.repository
    if c.env:  # the variables every run gets change what the tests do: approved with the rest
        shown["env"] = dict(sorted(c.env.items()))
    if c.build_extensions:
        shown["build_extensions"] = True
    return shown


def review(verdict: dict[str, Any] | None) -> dict[str, Any]:
    """The review of a candidate as it is shown (what "accept" accepts and "reject" rejects)."""
    v = verdict or {}
    return {k: v.get(k) for k in ("candidate", "verdict", "reasons", "fingerprint", "evidence", "diff", "tamper",
                                  "signals")}


def shown_for(st: CaseState, verb: str) -> dict[str, Any]:
    """What the verifier showed in the room for `verb`: the contract it presented, or the review."""
    return presented_contract(st, st.harness_digest) if verb == "approve" else review(st.last_verdict)


def shown_short(st: CaseState, verb: str) -> str:
    """The short digest of what the verifier shows for `verb`, as it prints it (`#` and 12 hex digits)."""
    return f"#{short(shown_digest(shown_for(st, verb)))}"


def command_for(st: CaseState, verb: str, verifier_name: str) -> str:
    """The exact command that decides `verb` on what the verifier shows now, as it prints it: the
    case, the candidate an acceptance names, and the short digest of the content shown."""
    candidate = str((st.last_verdict or {}).get("candidate") or "")[:12] if verb == "accept" else ""
    return " ".join(filter(None, (f"@{verifier_name}", verb, st.case_id, candidate, shown_short(st, verb))))


def what_is_decided(st: CaseState, verb: str) -> str:
    """What a decision `verb` would decide on, said in the room to a command that names no digest."""
    if verb == "approve":
        return (f"the contract in document 'contract {st.case_id}' (harness {st.harness_digest[:12]}, "
                f"base {st.base[:12]})")
    v = st.last_verdict
    if v is None:
        return f"{st.case_id} with no candidate"
    return (f"the review of candidate {str(v.get('candidate'))[:12]} ({v.get('verdict')}, fingerprint "
            f"{str(v.get('fingerprint'))[:12]}; diff and evidence in document 'review {st.case_id} attempt "
            f"{v.get('attempt')}')")


# -- operator commands ---------------------------------------------------------------------------


@dataclass(frozen=True)
class OperatorCommand:
    """approve | accept | reject, addressed to the verifier (a message, a card's answer, a page)."""

    verb: str  # approve | accept | reject
    case_id: str
    exact: bool  # the body is exactly `@<verifier> <verb> <case>`
    message_id: str
    room_id: str
    sender: str  # the server-recorded sender id
    harness_digest: str = ""  # the harness as read when an exact approval arrived
    via: str = "message"  # "message" (an addressed command) or "card" (an approval card's answer)
    candidate: str = ""  # the candidate commit an acceptance names (as the person was shown it)
    shown: str | None = None  # the digest of what the person was shown, as the command or page names it
    # (None: it names none, and is not recorded); a card's answer is bound to what the card was asked for
    at: str = ""  # when, from the service's clock (UTC ISO 8601)

    @property
    def key(self) -> str:
        return message_key(self.message_id)


@dataclass(frozen=True)
class Move:
    """The operator resumes or abandons a stuck case, or asks for another attempt once the attempts
    have ended (from the room, or `signoff repair resume|abandon|retry`)."""

    verb: str  # resume | abandon | retry
    sender: str
    by_name: str
    reason: str
    via: str  # cli | room
    key: str
    room_id: str | None = None  # where it was asked (None: on the command line)


def message_key(message_id: str) -> str:
    """The idempotency key of everything a room message causes."""
    return f"repair:msg:{message_id}"


class Parsed(NamedTuple):
    """A typed command as the room carried it."""

    verb: str
    case_id: str
    exact: bool
    commit: str  # the candidate an acceptance names ("" when none)
    shown: str | None  # what follows `#`: the digest of what was shown (None when it names none)


def parse_command(body: str, verifier_name: str) -> Parsed | None:
    """The command the body names, else None (it is a report). Exact: the body is the command
    alone, `@<verifier> <verb> <case> #<digest>` (an acceptance names its candidate before the digest)."""
    m = _COMMAND.search(body)
    if m is None:
        return None
    verb, case_id, commit, shown = m.group(1), m.group(2), m.group(3) or "", m.group(4)
    said = (f"@{verifier_name}", verb, case_id, commit, None if shown is None else f"#{shown}")
    exact = body.strip() == " ".join(filter(None, said))
    return Parsed(verb, case_id, exact and (verb == "accept" or not commit), commit, shown)


def parse_stuck(body: str, verifier_name: str) -> tuple[str, str, str] | None:
    """(verb, case id, reason) for `@<verifier> resume|abandon|retry <case> [reason]`, else None."""
    prefix = f"@{verifier_name} "
    if not body.startswith(prefix):
        return None
    m = _STUCK.match(body[len(prefix):].strip())
    if m is None:
        return None
    return m.group(1), m.group(2), (m.group(3) or "").strip()


def card_request_id(case_id: str, stage: str, round_: int = 0) -> str:
    """The approval card of one decision: `stage` is contract (approve) or review (accept/reject);
    a review after the operator's `round_`-th retry gets a card of its own."""
    return f"repair-card:{case_id}:{stage}" + (f":{round_}" if round_ else "")


def card_case(request_id: str) -> str:
    """The case a card's request id names (case ids hold no colon)."""
    return request_id.removeprefix("repair-card:").split(":", 1)[0]


def card_command(st: CaseState, outcome: dict[str, Any]) -> OperatorCommand | None:
    """The operator's answer on one of the case's cards, as a command; None when it is not one (an
    unknown card or option, a discarded or expired answer). Who answered is the responder the
    server authenticated; the rules then apply exactly as to a typed command."""
    request_id = str(outcome.get("request_id") or "")
    card = st.cards.get(request_id)
    if card is None or outcome.get("allowed") is not True or outcome.get("outcome") not in ("accepted", "declined"):
        return None
    verb = card["verbs"].get(str(outcome.get("option_id")))
    responder = outcome.get("responder")
    if verb is None or not isinstance(responder, str):
        return None
    return OperatorCommand(verb, st.case_id, True, f"card:{request_id}", str(outcome.get("room_id")), responder,
                           via="card", candidate=str(card.get("candidate") or ""))


def say(room_id: str, text: str, key: str) -> NewJob:
    """The job that posts `text` in the room once (the marker makes a redelivery find the first post)."""
    return NewJob(f"say:{key}", "repair.say", {"room_id": room_id, "text": text, "marker": key})


def refuse_unknown(verb: str, case_id: str, message_id: str, room_id: str) -> Decision:
    """A command naming a case that does not exist (recorded in the verifier's log)."""
    return Decision.of(CommandRefused(message_id=message_id, reason="unknown"),
                       jobs=[say(room_id, f"{verb} refused: there is no case {case_id}.", message_key(message_id))])


def refusal(st: CaseState, command: OperatorCommand, verifier_name: str) -> str | None:
    """Why `command` does not count against the case as it is, or None when it does (the content
    binding is checked by `approval_of`)."""
    verb, case_id = command.verb, st.case_id
    if command.room_id != st.room_id:
        return f"{verb} refused: commands for {case_id} count only in its case room."
    if command.sender != st.operator:
        return f"{verb} refused: only the linked operator can {verb} {case_id}."
    stage = "contract" if verb == "approve" else "review"
    card = st.card(stage)
    if command.via == "message" and card is not None:
        return f"{verb} refused: {case_id} is decided on its approval card ({card}), not by a message."
    if not command.exact:
        return (f"{verb} refused: only the exact command `{command_for(st, verb, verifier_name)}` counts; "
                "a quoted or embedded command does not.")
    if verb == "approve" and st.state != "CONTRACT_PROPOSED":
        return f"approve refused: {case_id} is {st.state}, not awaiting approval."
    if verb in ("accept", "reject") and st.state != "AWAITING_REVIEW":
        return f"{verb} refused: {case_id} is {st.state}, not awaiting review."
    if verb == "accept" and (st.last_verdict or {}).get("verdict") != VERIFIED:
        return f"accept refused: {case_id} has no VERIFIED candidate; it can only be rejected."
    if command.via != "card" and not command.shown:
        # Typed where the content is not beside it: the person is told what it would decide on, and
        # the command that decides on exactly that, which they send once they have read it.
        return (f"{verb} not recorded: it names no digest of what you were shown. It would {verb} "
                f"{what_is_decided(st, verb)}. To {verb} exactly this, send `{command_for(st, verb, verifier_name)}`.")
    if verb == "accept":
        reviewed = str((st.last_verdict or {}).get("candidate") or "")
        if not command.candidate:
            return (f"accept refused: an acceptance names the candidate it accepts. Read the review of "
                    f"{reviewed[:12]}, then send `{command_for(st, verb, verifier_name)}`.")
        if not names(command.candidate, reviewed):
            return (f"accept refused: the candidate accepted ({command.candidate[:12]}) is not the one under "
                    f"review ({reviewed[:12]}); nothing was accepted. Review {reviewed[:12]} and accept it by name.")
    if verb == "approve" and command.harness_digest != st.harness_digest:
        return (f"approve refused: the harness changed since it was presented "
                f"(presented {st.harness_digest[:12]}, now {command.harness_digest[:12]}); nothing was approved.")
    return None


def approval_of(st: CaseState, command: OperatorCommand) -> Approval:
    """The person's decision on exactly the content shown, by `signoff.ledger.approval.approve`:
    refused (ConflictError, UsageError) when the digest names other content than the case holds now."""
    now = presented_contract(st, command.harness_digest) if command.verb == "approve" else review(st.last_verdict)
    given = shown_digest(shown_for(st, command.verb)) if command.via == "card" else command.shown
    what = f"contract of {st.case_id}" if command.verb == "approve" else f"review of {st.case_id}"
    return approve(now, given, what=what, by=command.sender, at=command.at,
                   via="card" if command.via == "card" else "room" if command.via == "message" else command.via,
                   option=command.verb, options=[_OPTIONS[command.verb]],
                   fix="read what the verifier shows now (or reload the case page) and decide on that")


def judge(st: CaseState, command: OperatorCommand, verifier_name: str) -> tuple[Approval | None, str | None]:
    """The approval a command records, or why it is refused (the rules, then the content binding)."""
    why = refusal(st, command, verifier_name)
    if why is not None:
        return None, why
    try:
        return approval_of(st, command), None
    except SignoffError as exc:
        why = f"{command.verb} refused: {exc.message}."
        if command.via == "message":  # said in the room: what it is now, and how to decide on that once read
            why += (f" It is now {what_is_decided(st, command.verb)}; read it, then send "
                    f"`{command_for(st, command.verb, verifier_name)}` to {command.verb} exactly that.")
        return None, why


def _operator(st: CaseState, command: OperatorCommand, verifier_name: str) -> Decision:
    """What an operator's command does to the case: a refusal said in the room, or the transition."""
    case_id, room_id, key = st.case_id, command.room_id, command.key
    approval, why = judge(st, command, verifier_name)
    if approval is None:
        return Decision.of(CommandRefused(message_id=command.message_id, verb=command.verb, room_id=room_id,
                                          sender=command.sender, reason=str(why)),
                           jobs=[say(room_id, str(why), key)])
    if command.verb == "approve":
        return Decision.of(
            Approved(message_id=command.message_id, by=command.sender, harness_digest=st.harness_digest,
                     approval=approval),
            jobs=[NewJob(f"{case_id}:reproduce", "repair.reproduce", {"case_id": case_id}),
                  NewJob(f"{case_id}:contract-approved", "repair.contract_approved", {"case_id": case_id}),
                  say(room_id, f"{case_id} approved (harness {st.harness_digest[:12]}); reproducing on "
                               f"base {st.base[:12]}.", key)])
    if command.verb == "accept":
        return Decision.of(Accepted(message_id=command.message_id, by=command.sender,
                                    candidate=st.candidates.get(max(st.verdicts), ""), approval=approval),
                           jobs=[say(room_id, f"{case_id} accepted.", key)])
    return Decision.of(Declined(message_id=command.message_id, by=command.sender, approval=approval),
                       jobs=[say(room_id, f"{case_id} rejected by review; closed.", key)])


# -- resume, abandon and retry (the operator moves a case) -----------------------------------------


def move_refusal(st: CaseState, move: Move) -> str | None:
    """Why the operator may not resume, abandon or retry the case as it is, or None."""
    verb, case_id = move.verb, st.case_id
    if verb not in STUCK_VERBS:
        return f"{verb} refused: the operator can resume, abandon or retry a case."
    if move.room_id is not None and move.room_id != st.room_id:
        return f"{verb} refused: commands for {case_id} count only in its case room."
    if move.sender != st.operator:
        return f"{verb} refused: only the linked operator can {verb} {case_id}."
    if st.state in FINAL:
        return f"{verb} refused: {case_id} is {st.state}, already closed."
    if verb == "abandon" and not move.reason:
        return f"abandon refused: say why {case_id} is abandoned (the reason is recorded)."
    if verb == "retry" and not move.reason:
        return f"retry refused: say why {case_id} needs another attempt (the reason is recorded)."
    if verb == "retry" and st.state != RETRYABLE:
        return (f"retry refused: {case_id} is {st.state}; another attempt is asked for once its attempts have "
                f"ended and it awaits review ({RETRYABLE}).")
    if verb == "resume" and (st.state != RESUMABLE or not st.open_attempt(st.attempt)):
        return (f"resume refused: {case_id} is {st.state}; only a case waiting on the fixer's hand-off "
                f"({RESUMABLE}, the fixer not having acted) is resumed. Abandon it instead if it is stuck.")
    return None


def _move(st: CaseState, move: Move) -> Decision:
    """What the operator's resume or abandon does to the case: a refusal, or the move."""
    why = move_refusal(st, move)
    by_name = move.by_name if move.sender == st.operator else ""  # a name only for the operator it names
    who = by_name or move.sender
    if why is not None:
        return Decision.of(CommandRefused(verb=move.verb, sender=move.sender, via=move.via, reason=why,
                                          message_id=move.key),
                           jobs=[say(move.room_id or st.room_id, why, move.key)] if move.via == "room" else [])
    if move.verb == "retry":
        attempt = st.attempt + 1
        from_message = move.key.removeprefix("repair:msg:")  # the room message, or the command line's key
        return Decision.of(
            RetryRequested(by=move.sender, by_name=by_name, reason=move.reason, via=move.via, key=move.key,
                           from_message=from_message, attempt=attempt),
            jobs=[NewJob(f"{st.case_id}:handoff:{attempt}:retry", "repair.handoff",
                         {"case_id": st.case_id, "attempt": attempt}),
                  say(st.room_id, f"{st.case_id}: {who} asked for attempt {attempt} ({move.reason}); it is handed "
                                  "to the fixer.", move.key)])
    if move.verb == "abandon":
        return Decision.of(Abandoned(by=move.sender, by_name=by_name, reason=move.reason, via=move.via,
                                     key=move.key),
                           jobs=[say(st.room_id, f"{st.case_id} abandoned by {who}: {move.reason}", move.key)])
    attempt = st.attempt
    return Decision.of(
        Resumed(by=move.sender, by_name=by_name, reason=move.reason, via=move.via, key=move.key, attempt=attempt),
        jobs=[NewJob(f"{st.case_id}:handoff:{attempt}:resume:{st.resumed + 1}", "repair.handoff",
                     {"case_id": st.case_id, "attempt": attempt}),
              say(st.room_id, f"{st.case_id} resumed by {who}: attempt {attempt} is handed to the fixer again.",
                  move.key)])


# -- a verification a person starts (the case page) ----------------------------------------------


@dataclass(frozen=True)
class StartVerification:
    """A person asks the verifier to verify one of the case's candidates again, with the case's
    approved contract (from the case page). It measures; it decides nothing about the case."""

    candidate: str  # the full commit id, one of the case's candidates
    sender: str
    by_name: str
    via: str  # web
    key: str


class Refusal(NamedTuple):
    """Why a request does not count: `kind` is who may fix it (refused: another person; usage: the
    request itself; conflict: the case as it is now)."""

    kind: str  # refused | usage | conflict
    text: str


def verification_refusal(st: CaseState, start: StartVerification) -> Refusal | None:
    """Why `start` may not run against the case as it is, or None."""
    case_id = st.case_id
    if start.sender != st.operator:
        return Refusal("refused", f"verify refused: only the linked operator can start a verification of {case_id}.")
    if not any(start.candidate == c for c in st.candidates.values()):
        known = ", ".join(c[:12] for c in st.candidates.values()) or "none yet"
        return Refusal("usage", f"verify refused: {start.candidate[:40]!r} is not a candidate of {case_id} "
                                f"(its candidates: {known}).")
    if st.state == "ABANDONED":
        return Refusal("conflict", f"verify refused: {case_id} is ABANDONED; nothing more runs on it.")
    pending = next((c for c in st.checks.values() if c["candidate"] == start.candidate and c["state"] != "done"),
                   None)
    if pending is not None:
        return Refusal("conflict", f"verify refused: run {pending['run']} of candidate {start.candidate[:12]} is "
                                   f"still {pending['state']}; wait for its verdict.")
    return None


def _start_verification(st: CaseState, start: StartVerification) -> Decision:
    if verification_refusal(st, start) is not None:
        return NOTHING  # the service said why before anything was written
    run = len(st.checks) + 1
    attempt = next(n for n, c in sorted(st.candidates.items()) if c == start.candidate)
    who = start.by_name or start.sender
    return Decision.of(
        VerificationRequested(run=run, candidate=start.candidate, attempt=attempt, by=start.sender,
                              by_name=start.by_name, via=start.via, key=start.key),
        jobs=[NewJob(f"{st.case_id}:verify-again:{run}", "repair.verify_again", {"case_id": st.case_id, "run": run}),
              say(st.room_id, f"{st.case_id}: {who} started run {run}, a verification of candidate "
                              f"{start.candidate[:12]} (attempt {attempt}) with the approved harness.", start.key)])


@dataclass(frozen=True)
class VerificationStep:
    """The verifier's step in run `run` (while it runs)."""

    run: int
    step: str


@dataclass(frozen=True)
class VerificationDone:
    """What run `run` measured (`key`: the job's, marking what is said in the room)."""

    measured: VerificationMeasured
    key: str


def _verification_step(st: CaseState, step: VerificationStep) -> Decision:
    check = st.checks.get(step.run)
    if check is None or check["state"] == "done" or check["step"] == step.step:
        return NOTHING
    return Decision.of(VerificationProgress(run=step.run, step=step.step[:200]))


def _verification_done(st: CaseState, done: VerificationDone) -> Decision:
    m = done.measured
    check = st.checks.get(m.run)
    if check is None or check["state"] == "done":
        return NOTHING
    codes = ", ".join(r["code"] for r in m.reasons)
    what = f"fingerprint {m.fingerprint[:12]}, evidence {m.evidence}" if m.evidence else "; ".join(
        r.get("detail") or r["text"] for r in m.reasons)
    return Decision.of(m, jobs=[say(st.room_id, f"{st.case_id}: run {m.run} of candidate {m.candidate[:12]}: "
                                                f"{m.verdict}{f' ({codes})' if codes else ''}, {what}.",
                                    f"{done.key}:said")])


# -- reports -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DefectReport:
    """A message addressed to the verifier in a watched room that names no command."""

    message_id: str
    room_id: str
    sender: str
    body: str

    @property
    def key(self) -> str:
        return message_key(self.message_id)


def note_open(open_case: CaseState, report: DefectReport) -> Decision:
    """A report in a room whose case is still open opens nothing; the room is told which case is."""
    return Decision.of(Noted(message_id=report.message_id),
                       jobs=[say(report.room_id, f"{open_case.case_id} is open ({open_case.state}).", report.key)])


def open_case(case_id: str, report: DefectReport, watch: dict[str, Any], base: str, harness_digest: str) -> Decision:
    """A new case from a report: the watched contract on the resolved base, with the frozen harness's
    digest, proposed to the operator."""
    contract = Contract.from_json(watch["contract"])
    return Decision.of(
        Reported(case_id=case_id, room_id=report.room_id, message_id=report.message_id, reporter=report.sender,
                 report=report.body[:4000], operator=watch["operator"], operator_name=watch["operator_name"],
                 verifier_name=watch.get("verifier_name", ""), contract=contract.as_json(), base=base,
                 harness_digest=harness_digest),
        ContractProposed(harness_digest=harness_digest, base=base),
        jobs=[NewJob(f"{case_id}:present", "repair.present", {"case_id": case_id,
                                                              "operator_name": watch["operator_name"]})])


# -- what the verifier's and the fixer's work produced (each recorded once) -----------------------


def next_step(case_id: str, attempt: int, verdict: str | None, max_attempts: int, round_: int = 0) -> NewJob:
    """After an attempt: another hand-off while attempts are left and none is VERIFIED, else review
    (a review of its own after the operator's `round_`-th retry)."""
    if verdict != VERIFIED and attempt < max_attempts:
        return NewJob(f"{case_id}:handoff:{attempt + 1}", "repair.handoff",
                      {"case_id": case_id, "attempt": attempt + 1})
    return NewJob(f"{case_id}:review" + (f":{round_}" if round_ else ""), "repair.review", {"case_id": case_id})


def _presented(st: CaseState, document_id: str) -> Decision:
    return Decision.of(ContractPresented(document_id=document_id))


def _card_asked(st: CaseState, request_id: str, stage: str, verbs: dict[str, str], candidate: str) -> Decision:
    if st.card(stage) is not None:
        return NOTHING
    return Decision.of(CardRequested(request_id=request_id, stage=stage, verbs=verbs, candidate=candidate))


# Reasons that explain a base run that did not show the defect (or why nothing ran at all).
_BASE_REASON_CODES = ("harness_changed", "sandbox_unavailable", "environment_unprepared", "export_failed")


@dataclass(frozen=True)
class BaseRun:
    """What a reproduction measured on base (from the verifier's result)."""

    outcome: str
    assertion: bool
    message: str
    reasons: list[dict[str, str]]
    fingerprint: str
    evidence: str


def _reproduction(st: CaseState, run: BaseRun, key: str) -> Decision:
    """What the base run shows: the defect (the expected assertion failed), so the first hand-off
    follows; or anything else, and the case is BLOCKED with the reason said in the room."""
    if st.reproduction is not None or st.state == "BLOCKED":
        return NOTHING
    said = f"{key}:said"
    if run.assertion and run.outcome == "failed":
        return Decision.of(
            Reproduced(message=run.message, fingerprint=run.fingerprint, evidence=run.evidence),
            jobs=[NewJob(f"{st.case_id}:handoff:1", "repair.handoff", {"case_id": st.case_id, "attempt": 1}),
                  say(st.room_id, f"{st.case_id} reproduced on base: {run.message.splitlines()[0]}", said)])
    reasons = [r for r in run.reasons if r["detail"].startswith("base:") or r["code"] in _BASE_REASON_CODES]
    why = "; ".join(r["detail"] or r["text"] for r in reasons) or run.outcome
    return Decision.of(Blocked(reason=why, evidence=run.evidence),
                       jobs=[say(st.room_id, f"{st.case_id} blocked: the expected assertion did not fail on base "
                                             f"({why}). No fix will be requested.", said)])


def why_asked(st: CaseState, attempt: int) -> dict[str, Any]:
    """Who asked for this attempt and from which message: the first, the operator's approval; one
    the operator asked for once the attempts had ended, the operator, from that message, and why; a
    retry, the verifier itself, from its hand-off whose attempt failed, and why it failed."""
    asked = st.retries.get(attempt)
    if asked is not None:
        return {"asked_by": asked["by"], "from_message": asked["from_message"],
                "reason": f"asked by the operator: {asked['reason']}"}
    if attempt == 1 or attempt - 1 not in st.handoffs:
        approval = st.approval or {}
        return {"asked_by": approval.get("by"), "from_message": approval.get("message_id"), "reason": "approved"}
    previous = st.handoffs[attempt - 1]["receipt"]
    failed = st.failures.get(attempt - 1)
    verdict = (st.verdicts.get(attempt - 1) or {}).get("verdict")
    reason = f"attempt {attempt - 1} refused: {failed}" if failed else f"attempt {attempt - 1} {verdict}"
    return {"asked_by": previous["sender"], "from_message": previous["message_id"], "reason": reason}


def _handed_off(st: CaseState, attempt: int, command_id: str, receipt: dict[str, Any]) -> Decision:
    if attempt in st.handoffs:
        return NOTHING
    return Decision.of(FixRequested(attempt=attempt, command_id=command_id, receipt=receipt, **why_asked(st, attempt)))


def _proposed(st: CaseState, attempt: int, output: dict[str, Any], kind: str, provider: str, model: str,
             record: dict[str, Any]) -> Decision:
    if not st.open_attempt(attempt):
        return NOTHING
    return Decision.of(Proposal(attempt=attempt, summary=output["summary"], files=output["files"], kind=kind,
                                provider=provider, model=model, record=record),
                       jobs=[NewJob(f"{st.case_id}:commit:{attempt}", "repair.commit",
                                    {"case_id": st.case_id, "attempt": attempt})])


def _attempt_failed(st: CaseState, attempt: int, why: str, max_attempts: int, key: str) -> Decision:
    if not st.open_attempt(attempt):
        return NOTHING
    return Decision.of(AttemptFailed(attempt=attempt, reason=why),
                       jobs=[next_step(st.case_id, attempt, None, max_attempts, len(st.retries)),
                             say(st.room_id, f"{st.case_id} attempt {attempt}: the fixer's proposal was refused "
                                             f"({why}).", key)])


def _committed(st: CaseState, attempt: int, commit: str) -> Decision:
    if attempt in st.candidates:
        return NOTHING
    return Decision.of(Candidate(attempt=attempt, commit=commit),
                       jobs=[NewJob(f"{st.case_id}:verify:{attempt}", "repair.verify",
                                    {"case_id": st.case_id, "attempt": attempt})])


def _verified(st: CaseState, measured: Verdict, max_attempts: int) -> Decision:
    """A verification's measured outcome, recorded once per attempt, and what follows it."""
    if measured.attempt in st.verdicts:
        return NOTHING
    return Decision.of(measured, jobs=[next_step(st.case_id, measured.attempt, measured.verdict, max_attempts,
                                                 len(st.retries))])


def _review_asked(st: CaseState) -> Decision:
    if st.state in ("AWAITING_REVIEW", *FINAL):
        return NOTHING
    return Decision.of(ReviewRequested())


# -- one entry: decide(state, command) -------------------------------------------------------------


@dataclass(frozen=True)
class Present:
    """The contract document was put in the room."""

    document_id: str


@dataclass(frozen=True)
class AskCard:
    """An approval card was asked for `stage` (contract, review); a typed command no longer decides it."""

    request_id: str
    stage: str
    verbs: dict[str, str]
    candidate: str = ""


@dataclass(frozen=True)
class Reproduce:
    """What the base run measured (`key`: the job's, marking what is said in the room)."""

    run: BaseRun
    key: str


@dataclass(frozen=True)
class HandOff:
    """The verifier handed attempt `attempt` to the fixer; the server's receipt of that message."""

    attempt: int
    command_id: str
    receipt: dict[str, Any]


@dataclass(frozen=True)
class Propose:
    """The fixer's proposal for an attempt (full-file replacements), as the agents layer returned it."""

    attempt: int
    output: dict[str, Any]
    kind: str
    provider: str
    model: str
    record: dict[str, Any]


@dataclass(frozen=True)
class FailAttempt:
    """The fixer's attempt was refused (by the agents layer, a budget, a provider)."""

    attempt: int
    why: str
    max_attempts: int
    key: str


@dataclass(frozen=True)
class Commit:
    """The proposal was committed on top of the base."""

    attempt: int
    commit: str


@dataclass(frozen=True)
class Measure:
    """A verification's measured outcome for an attempt."""

    verdict: Verdict
    max_attempts: int


@dataclass(frozen=True)
class AskReview:
    """The review was put to the operator."""


Command = (OperatorCommand | Move | Present | AskCard | Reproduce | HandOff | Propose | FailAttempt | Commit
           | Measure | AskReview | StartVerification | VerificationStep | VerificationDone)


def decide(st: CaseState, command: Command, verifier_name: str = "") -> Decision:
    """What `command` does to the case as it is: pure, no I/O. A person's command may be refused
    (recorded and said); what a job measured is recorded once (NOTHING when it already was).
    `verifier_name` is the agent a person's command addresses."""
    match command:
        case OperatorCommand():
            return _operator(st, command, verifier_name)
        case Move():
            return _move(st, command)
        case Present():
            return _presented(st, command.document_id)
        case AskCard():
            return _card_asked(st, command.request_id, command.stage, command.verbs, command.candidate)
        case Reproduce():
            return _reproduction(st, command.run, command.key)
        case HandOff():
            return _handed_off(st, command.attempt, command.command_id, command.receipt)
        case Propose():
            return _proposed(st, command.attempt, command.output, command.kind, command.provider, command.model,
                             command.record)
        case FailAttempt():
            return _attempt_failed(st, command.attempt, command.why, command.max_attempts, command.key)
        case Commit():
            return _committed(st, command.attempt, command.commit)
        case Measure():
            return _verified(st, command.verdict, command.max_attempts)
        case AskReview():
            return _review_asked(st)
        case StartVerification():
            return _start_verification(st, command)
        case VerificationStep():
            return _verification_step(st, command)
        case VerificationDone():
            return _verification_done(st, command)
    raise TypeError(f"not a repair command: {command!r}")
