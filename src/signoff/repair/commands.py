"""The repair rules as pure decisions: `decide(state, command) -> (events, jobs)`, with no I/O.

The workflow reads what a decision needs (the case, the harness digest as it is now, a new case
number) and writes what it returns; these functions only say what follows from it, so the rules
are tested without a database, a room or a sandbox.

Authority is judged from what the room server recorded, never from message text: approval,
acceptance and rejection count only as the exact command `@<verifier> <verb> <case>`, addressed,
in the case room, from the linked operator, and (for approval) only while the harness still
digests to what was presented. An acceptance names the candidate commit the person reviewed
(`@<verifier> accept <case> <commit>`, 12 or more hex digits; an approval card carries the candidate
it was asked for), and it is refused unless that is the candidate under review.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from signoff.kernel.shown import names
from signoff.ledger import NewEvent, NewJob
from signoff.repair.case import CaseState, Contract
from signoff.repair.verdict import VERIFIED
from signoff.repair.verifier import VerifyResult

_COMMAND = re.compile(r"\b(approve|accept|reject)\s+([A-Za-z0-9][\w.-]*)(?:[ \t]+([0-9a-f]{12,64})\b)?")

Decision = tuple[list[NewEvent], list[NewJob]]


@dataclass(frozen=True)
class OperatorCommand:
    """A verb addressed to the verifier, as the room server delivered it."""

    verb: str  # approve | accept | reject
    case_id: str
    exact: bool  # the body is exactly `@<verifier> <verb> <case>`
    message_id: str
    room_id: str
    sender: str  # the server-recorded sender id
    harness_digest: str = ""  # the harness as read when an exact approval arrived
    via: str = "message"  # "message" (an addressed command) or "card" (an approval card's answer)
    candidate: str = ""  # the candidate commit an acceptance names (as the person was shown it)

    @property
    def key(self) -> str:
        return message_key(self.message_id)


def message_key(message_id: str) -> str:
    """The idempotency key of everything a room message causes."""
    return f"repair:msg:{message_id}"


def parse_command(body: str, verifier_name: str) -> tuple[str, str, bool, str] | None:
    """(verb, case id, exact, named commit) when the body names a command, else None (it is a report).
    Exact: the body is the command alone, `@<verifier> <verb> <case>` (an acceptance followed by the
    candidate commit it accepts)."""
    m = _COMMAND.search(body)
    if m is None:
        return None
    verb, case_id, commit = m.group(1), m.group(2), m.group(3) or ""
    exact = body.strip() == " ".join(filter(None, (f"@{verifier_name}", verb, case_id, commit)))
    return verb, case_id, exact and (verb == "accept" or not commit), commit


def card_request_id(case_id: str, stage: str) -> str:
    """The approval card of one decision: `stage` is contract (approve) or review (accept/reject)."""
    return f"repair-card:{case_id}:{stage}"


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


def refuse_unknown(command: OperatorCommand) -> Decision:
    return ([NewEvent("repair.command_refused", {"message_id": command.message_id, "reason": "unknown"})],
            [say(command.room_id, f"{command.verb} refused: there is no case {command.case_id}.", command.key)])


def refusal(st: CaseState, command: OperatorCommand, verifier_name: str) -> str | None:
    """Why `command` does not count against the case as it is, or None when it does."""
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
        return (f"{verb} refused: only the exact command `@{verifier_name} {verb} {case_id}` counts; "
                "a quoted or embedded command does not.")
    if verb == "approve" and st.state != "CONTRACT_PROPOSED":
        return f"approve refused: {case_id} is {st.state}, not awaiting approval."
    if verb in ("accept", "reject") and st.state != "AWAITING_REVIEW":
        return f"{verb} refused: {case_id} is {st.state}, not awaiting review."
    if verb == "accept" and (st.last_verdict or {}).get("verdict") != VERIFIED:
        return f"accept refused: {case_id} has no VERIFIED candidate; it can only be rejected."
    if verb == "accept":
        reviewed = str((st.last_verdict or {}).get("candidate") or "")
        if not command.candidate:
            return (f"accept refused: an acceptance names the candidate it accepts. Read the review of "
                    f"{reviewed[:12]}, then send `@{verifier_name} accept {case_id} {reviewed[:12]}`.")
        if not names(command.candidate, reviewed):
            return (f"accept refused: the candidate accepted ({command.candidate[:12]}) is not the one under "
                    f"review ({reviewed[:12]}); nothing was accepted. Review {reviewed[:12]} and accept it by name.")
    if verb == "approve" and command.harness_digest != st.harness_digest:
        return (f"approve refused: the harness changed since it was presented "
                f"(presented {st.harness_digest[:12]}, now {command.harness_digest[:12]}); nothing was approved.")
    return None


def decide(st: CaseState, command: OperatorCommand, verifier_name: str) -> Decision:
    """What an operator's command does to the case: a refusal said in the room, or the transition."""
    case_id, room_id, key = st.case_id, command.room_id, command.key
    why = refusal(st, command, verifier_name)
    if why is not None:
        return ([NewEvent("repair.command_refused", {"message_id": command.message_id, "verb": command.verb,
                                                     "room_id": room_id, "sender": command.sender,
                                                     "reason": why})],
                [say(room_id, why, key)])
    if command.verb == "approve":
        return ([NewEvent("repair.approved", {"message_id": command.message_id, "by": command.sender,
                                              "harness_digest": st.harness_digest})],
                [NewJob(f"{case_id}:reproduce", "repair.reproduce", {"case_id": case_id}),
                 say(room_id, f"{case_id} approved (harness {st.harness_digest[:12]}); reproducing on "
                              f"base {st.base[:12]}.", key)])
    if command.verb == "accept":
        return ([NewEvent("repair.accepted", {"message_id": command.message_id, "by": command.sender,
                                              "candidate": st.candidates.get(max(st.verdicts), "")})],
                [say(room_id, f"{case_id} accepted.", key)])
    return ([NewEvent("repair.declined", {"message_id": command.message_id, "by": command.sender})],
            [say(room_id, f"{case_id} rejected by review; closed.", key)])


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
    return ([NewEvent("repair.noted", {"message_id": report.message_id})],
            [say(report.room_id, f"{open_case.case_id} is open ({open_case.state}).", report.key)])


def open_case(case_id: str, report: DefectReport, watch: dict[str, Any], base: str, harness_digest: str) -> Decision:
    """A new case from a report: the watched contract on the resolved base, with the frozen harness's
    digest, proposed to the operator."""
    contract = Contract.from_json(watch["contract"])
    events = [
        NewEvent("repair.reported", {"case_id": case_id, "room_id": report.room_id, "message_id": report.message_id,
                                     "reporter": report.sender, "report": report.body[:4000],
                                     "operator": watch["operator"], "operator_name": watch["operator_name"],
                                     "verifier_name": watch.get("verifier_name", ""),
                                     "contract": contract.as_json(), "base": base,
                                     "harness_digest": harness_digest}),
        NewEvent("repair.contract_proposed", {"harness_digest": harness_digest, "base": base}),
    ]
    jobs = [NewJob(f"{case_id}:present", "repair.present", {"case_id": case_id,
                                                             "operator_name": watch["operator_name"]})]
    return events, jobs


def next_step(case_id: str, attempt: int, verdict: str | None, max_attempts: int) -> NewJob:
    """After an attempt: another hand-off while attempts are left and none is VERIFIED, else review."""
    if verdict != VERIFIED and attempt < max_attempts:
        return NewJob(f"{case_id}:handoff:{attempt + 1}", "repair.handoff",
                      {"case_id": case_id, "attempt": attempt + 1})
    return NewJob(f"{case_id}:review", "repair.review", {"case_id": case_id})


# Reasons that explain a base run that did not show the defect (or why nothing ran at all).
_BASE_REASON_CODES = ("harness_changed", "sandbox_unavailable", "environment_unprepared", "export_failed")


def reproduction(st: CaseState, result: VerifyResult, key: str) -> Decision:
    """What the base run shows: the defect (the expected assertion failed), so the first hand-off
    follows; or anything else, and the case is BLOCKED with the reason said in the room."""
    base = result.stages["base"].summary
    said = f"{key}:said"
    if base.assertion and base.outcome == "failed":
        return ([NewEvent("repair.reproduced", {"message": base.message, "fingerprint": result.fingerprint,
                                                "evidence": str(result.evidence)})],
                [NewJob(f"{st.case_id}:handoff:1", "repair.handoff", {"case_id": st.case_id, "attempt": 1}),
                 say(st.room_id, f"{st.case_id} reproduced on base: {base.message.splitlines()[0]}", said)])
    reasons = [r for r in result.reasons if r["detail"].startswith("base:") or r["code"] in _BASE_REASON_CODES]
    why = "; ".join(r["detail"] or r["text"] for r in reasons) or base.outcome
    return ([NewEvent("repair.blocked", {"reason": why, "evidence": str(result.evidence)})],
            [say(st.room_id, f"{st.case_id} blocked: the expected assertion did not fail on base ({why}). "
                             "No fix will be requested.", said)])
