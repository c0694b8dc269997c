"""The repair rules as pure decisions: no database, no room, no sandbox."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from signoff.kernel.shown import shown_digest
from signoff.ledger import NewEvent, NewJob
from signoff.ledger.aggregate import Decision
from signoff.repair import decisions
from signoff.repair.decisions import (
    BaseRun,
    DefectReport,
    OperatorCommand,
    card_command,
    message_key,
    next_step,
    parse_command,
)
from signoff.repair.model import CaseState, Contract, VerificationMeasured
from signoff.repair.verdict import Summary

VERIFIER = "verifier"
OPERATOR = "user:alice"
DIGEST = "a" * 64
CONTRACT = Contract(name="coupon", behaviour="applied once", repo="/repo", base="main", harness="/harness",
                    expect="test_coupon.py::test_once")


def _stored(decision: Decision) -> tuple[list[NewEvent], list[NewJob]]:
    """A decision as it is stored: the events' type strings and payloads, and the jobs."""
    return [e.new_event() for e in decision.events], list(decision.jobs)


AS_SHOWN = "as shown"  # a command naming the digest of what the verifier shows for the case it is decided on


def decide(st: CaseState, command: OperatorCommand, verifier: str) -> tuple[list[NewEvent], list[NewJob]]:
    if command.shown == AS_SHOWN:
        command = replace(command, shown=shown_digest(decisions.shown_for(st, command.verb))[:12])
    return _stored(decisions.decide(st, command, verifier))


def refuse_unknown(command: OperatorCommand) -> tuple[list[NewEvent], list[NewJob]]:
    return _stored(decisions.refuse_unknown(command.verb, command.case_id, command.message_id, command.room_id))


def open_case(*args: object) -> tuple[list[NewEvent], list[NewJob]]:
    return _stored(decisions.open_case(*args))  # type: ignore[arg-type]


def note_open(*args: object) -> tuple[list[NewEvent], list[NewJob]]:
    return _stored(decisions.note_open(*args))  # type: ignore[arg-type]


def reproduction(st: CaseState, run: BaseRun, key: str) -> tuple[list[NewEvent], list[NewJob]]:
    return _stored(decisions.decide(st, decisions.Reproduce(run, key)))


def _case(state: str = "CONTRACT_PROPOSED", **changes: object) -> CaseState:
    st = CaseState("coupon-01", state, "room-1", OPERATOR, CONTRACT, "b" * 40, DIGEST)
    return replace(st, **changes)  # type: ignore[arg-type]


CANDIDATE = "c2" * 20  # the candidate under review in these cases


def _command(verb: str = "approve", *, room_id: str = "room-1", sender: str = OPERATOR, exact: bool = True,
             digest: str = DIGEST, candidate: str = CANDIDATE[:12], shown: str | None = AS_SHOWN) -> OperatorCommand:
    return OperatorCommand(verb, "coupon-01", exact, "$m1", room_id, sender, digest if verb == "approve" else "",
                           candidate=candidate if verb == "accept" else "", shown=shown)


def _refused(events: list, jobs: list) -> str:  # type: ignore[type-arg]
    (event,) = events
    assert event.type == "repair.command_refused"
    (job,) = jobs
    assert job.topic == "repair.say" and job.payload["text"] == event.payload["reason"]
    return str(event.payload["reason"])


def test_parse_command_tells_commands_from_reports_and_exact_from_embedded() -> None:
    d = "d" * 12  # the digest of what was shown, as the verifier printed it
    assert parse_command(f"@verifier approve coupon-01 #{d}", VERIFIER) == ("approve", "coupon-01", True, "", d)
    assert parse_command("@verifier approve coupon-01", VERIFIER) == ("approve", "coupon-01", True, "", None)
    assert parse_command(f"  @verifier reject coupon-01 #{d} \n", VERIFIER) == ("reject", "coupon-01", True, "", d)
    assert parse_command(f"@verifier accept coupon-01 {'c' * 12} #{d}", VERIFIER) == (
        "accept", "coupon-01", True, "c" * 12, d)
    assert parse_command(f"@verifier approve coupon-01 {'c' * 12} #{d}", VERIFIER) == (
        "approve", "coupon-01", False, "c" * 12, d)  # only an acceptance names a commit
    assert parse_command(f"> @verifier approve coupon-01 #{d}\nlooks right", VERIFIER) == (
        "approve", "coupon-01", False, "", d)
    assert parse_command(f"@other approve coupon-01 #{d}", VERIFIER) == ("approve", "coupon-01", False, "", d)
    assert parse_command("@verifier approve coupon-01 #not-hex", VERIFIER) == (
        "approve", "coupon-01", True, "", "not-hex")  # refused by the binding, not taken for a report
    assert parse_command("@verifier the coupon is applied twice", VERIFIER) is None


def test_exact_approval_by_the_operator_in_the_case_room_approves_and_reproduces() -> None:
    events, jobs = decide(_case(), _command(), VERIFIER)
    assert [e.type for e in events] == ["repair.approved"]
    approval = events[0].payload.pop("approval")
    assert events[0].payload == {"message_id": "$m1", "by": OPERATOR, "harness_digest": DIGEST}
    # What was approved: the contract as presented, by its digest, by whom, through which face.
    assert approval["digest"] == shown_digest(decisions.presented_contract(_case(), DIGEST))
    assert (approval["by"], approval["via"], approval["option"], approval["meaning"]) == (
        OPERATOR, "room", "approve", "approve")
    # Then: the reproduction, the contract document updated with the approval, the room told.
    assert [j.topic for j in jobs] == ["repair.reproduce", "repair.contract_approved", "repair.say"]
    assert jobs[0].key == "coupon-01:reproduce"
    assert jobs[2].payload["marker"] == message_key("$m1")


@pytest.mark.parametrize(("command", "why"), [
    (_command(room_id="room-2"), "count only in its case room"),
    (_command(sender="user:mallory"), "only the linked operator"),
    (_command(exact=False), "only the exact command `@verifier approve coupon-01 #"),
    (_command(digest="c" * 64), "the harness changed since it was presented"),
    (_command(digest="unreadable"), "the harness changed since it was presented"),
])
def test_approval_is_refused_unless_every_rule_holds(command: OperatorCommand, why: str) -> None:
    assert why in _refused(*decide(_case(), command, VERIFIER))


def test_approval_counts_only_while_the_contract_awaits_it() -> None:
    assert "is APPROVED, not awaiting approval" in _refused(*decide(_case("APPROVED"), _command(), VERIFIER))


def test_accept_needs_review_and_a_verified_candidate() -> None:
    assert "not awaiting review" in _refused(*decide(_case("CANDIDATE"), _command("accept"), VERIFIER))
    rejected = _case("AWAITING_REVIEW", verdicts={1: {"verdict": "REJECTED"}}, candidates={1: "c1"})
    assert "no VERIFIED candidate" in _refused(*decide(rejected, _command("accept"), VERIFIER))
    verified = _case("AWAITING_REVIEW", verdicts={1: {"verdict": "REJECTED", "candidate": "c1" * 20},
                                                  2: {"verdict": "VERIFIED", "candidate": CANDIDATE}},
                     candidates={1: "c1" * 20, 2: CANDIDATE})
    events, jobs = decide(verified, _command("accept"), VERIFIER)
    assert [e.type for e in events] == ["repair.accepted"] and events[0].payload["candidate"] == CANDIDATE
    assert jobs[0].payload["text"] == "coupon-01 accepted."


def test_an_acceptance_counts_only_for_the_candidate_it_names() -> None:
    """The operator reviewed attempt 1; a later candidate is under review when the acceptance
    arrives: it accepts nothing. One that names no candidate is told which to review."""
    verified = _case("AWAITING_REVIEW", verdicts={2: {"verdict": "VERIFIED", "candidate": CANDIDATE}},
                     candidates={1: "c1" * 20, 2: CANDIDATE})
    why = _refused(*decide(verified, _command("accept", candidate="c1" * 6), VERIFIER))
    assert "is not the one under review" in why and CANDIDATE[:12] in why
    for shorter in ("", CANDIDATE[:11]):  # none, or too few digits to name one
        why = _refused(*decide(verified, _command("accept", candidate=shorter), VERIFIER))
        assert "accept refused" in why
    assert "names the candidate" in _refused(*decide(verified, _command("accept", candidate=""), VERIFIER))
    events, _ = decide(verified, _command("accept", candidate=CANDIDATE), VERIFIER)  # the full id names it too
    assert [e.type for e in events] == ["repair.accepted"]


def test_reject_closes_a_case_under_review_whatever_its_verdict() -> None:
    events, _ = decide(_case("AWAITING_REVIEW", verdicts={1: {"verdict": "REJECTED"}}), _command("reject"), VERIFIER)
    assert [e.type for e in events] == ["repair.declined"]
    assert "not awaiting review" in _refused(*decide(_case("ACCEPTED"), _command("reject"), VERIFIER))


def test_a_command_for_an_unknown_case_is_refused_and_said() -> None:
    events, jobs = refuse_unknown(_command())
    assert {k: v for k, v in events[0].payload.items() if v is not None} == {"message_id": "$m1", "reason": "unknown"}
    assert jobs[0].payload["text"] == "approve refused: there is no case coupon-01."


def test_a_report_opens_a_case_from_the_watched_contract_or_notes_the_open_one() -> None:
    report = DefectReport("$r1", "room-1", "user:bob", "the coupon is applied twice " * 500)
    watch = {"contract": CONTRACT.as_json(), "operator": OPERATOR, "operator_name": "alice"}
    events, jobs = open_case("coupon-02", report, watch, "b" * 40, DIGEST)
    assert [e.type for e in events] == ["repair.reported", "repair.contract_proposed"]
    assert events[0].payload["operator"] == OPERATOR and len(events[0].payload["report"]) == 4000
    assert [(j.key, j.payload) for j in jobs] == [
        ("coupon-02:present", {"case_id": "coupon-02", "operator_name": "alice"})]
    events, jobs = note_open(_case("FIX_REQUESTED"), report)
    assert [e.type for e in events] == ["repair.noted"]
    assert jobs[0].payload["text"] == "coupon-01 is open (FIX_REQUESTED)."


def test_after_an_attempt_another_follows_until_verified_or_out_of_attempts() -> None:
    assert next_step("c", 1, "REJECTED", 2).key == "c:handoff:2"
    assert next_step("c", 1, None, 2).key == "c:handoff:2"
    assert next_step("c", 1, "VERIFIED", 2).key == "c:review"
    assert next_step("c", 2, "INCONCLUSIVE", 2).key == "c:review"


def _base_run(summary: Summary, reasons: list[dict[str, str]]) -> BaseRun:
    return BaseRun(summary.outcome, summary.assertion, summary.message, reasons, "f" * 64,
                   str(Path("/evidence/base.json")))


def test_a_base_run_that_fails_by_the_assertion_reproduces_and_hands_off() -> None:
    run = _base_run(Summary("failed", assertion=True, message="assert 8100 == 9000\nmore"), [])
    events, jobs = reproduction(_case("APPROVED"), run, "coupon-01:reproduce")
    assert [e.type for e in events] == ["repair.reproduced"]
    assert events[0].payload == {"message": "assert 8100 == 9000\nmore", "fingerprint": "f" * 64,
                                 "evidence": "/evidence/base.json"}
    assert [(j.key, j.payload.get("attempt")) for j in jobs] == [("coupon-01:handoff:1", 1),
                                                                  ("say:coupon-01:reproduce:said", None)]
    assert jobs[1].payload["text"] == "coupon-01 reproduced on base: assert 8100 == 9000"


@pytest.mark.parametrize(("summary", "reasons", "why"), [
    (Summary("passed"), [{"code": "expected_not_failing", "text": "t", "detail": "base: it passed"},
                         {"code": "regression_failed", "text": "t", "detail": "candidate: x"}], "base: it passed"),
    (Summary("failed", assertion=False, message="ImportError"), [], "failed"),
    (Summary("not_run"), [{"code": "sandbox_unavailable", "text": "no sandbox here", "detail": ""}],
     "no sandbox here"),
])
def test_any_other_base_run_blocks_the_case_and_says_why(summary: Summary, reasons: list[dict[str, str]],
                                                         why: str) -> None:
    events, jobs = reproduction(_case("APPROVED"), _base_run(summary, reasons), "k")
    assert [e.type for e in events] == ["repair.blocked"] and events[0].payload["reason"] == why
    assert [j.topic for j in jobs] == ["repair.say"]  # no hand-off: no fix is requested
    assert f"({why}). No fix will be requested." in jobs[0].payload["text"]


CARD = "repair-card:coupon-01:contract"


def _with_card(state: str = "CONTRACT_PROPOSED", stage: str = "contract",
               verbs: dict[str, str] | None = None) -> CaseState:
    request_id = f"repair-card:coupon-01:{stage}"
    return _case(state, cards={request_id: {"stage": stage, "verbs": verbs or {"approve": "approve"}}})


def _answer(**changes: object) -> dict[str, object]:
    return {"request_id": CARD, "room_id": "room-1", "outcome": "accepted", "option_id": "approve",
            "responder": OPERATOR, "allowed": True, **changes}


def test_with_a_card_asked_a_typed_command_no_longer_decides() -> None:
    why = _refused(*decide(_with_card(), _command(), VERIFIER))
    assert "approval card" in why and CARD in why
    review = _with_card("AWAITING_REVIEW", "review", {"accept": "accept", "reject": "reject"})
    assert "approval card" in _refused(*decide(review, _command("reject"), VERIFIER))
    # Without a card the typed command still decides (the fallback where a server has no cards).
    events, _ = decide(_case(), _command(), VERIFIER)
    assert [e.type for e in events] == ["repair.approved"]


def test_the_operator_answer_on_the_card_approves_by_the_same_rules() -> None:
    st = _with_card()
    command = card_command(st, _answer())
    assert command is not None and (command.verb, command.via, command.sender) == ("approve", "card", OPERATOR)
    events, _ = decide(st, replace(command, harness_digest=DIGEST), VERIFIER)
    assert [e.type for e in events] == ["repair.approved"] and events[0].payload["message_id"] == f"card:{CARD}"
    assert events[0].payload["approval"]["via"] == "card"  # the face it came through is recorded
    # The rules still hold on a card: a changed harness refuses it.
    assert "harness changed" in _refused(*decide(st, replace(command, harness_digest="c" * 64), VERIFIER))


@pytest.mark.parametrize("changes", [
    {"allowed": False, "outcome": "discarded", "responder": "user:mallory"},  # not a responder
    {"outcome": "expired", "option_id": None, "responder": None, "allowed": None},
    {"request_id": "repair-card:coupon-01:review"},  # a card this case never asked
    {"option_id": "reject"},  # an option the card does not have
    {"responder": None},
])
def test_anything_but_an_allowed_answer_on_our_card_is_no_command(changes: dict[str, object]) -> None:
    assert card_command(_with_card(), _answer(**changes)) is None


def test_a_card_answered_by_someone_else_is_refused_by_sender() -> None:
    # The server admits only named responders; if it did not, the sender rule would still refuse.
    command = card_command(_with_card(), _answer(responder="user:mallory"))
    assert command is not None
    assert "only the linked operator" in _refused(*decide(_with_card(), replace(command, harness_digest=DIGEST),
                                                          VERIFIER))


def test_a_decision_whose_digest_names_other_content_records_nothing_but_the_refusal() -> None:
    """A face that showed the content passes its digest (`shown`): one of other content (a page
    loaded before the review changed), or none at all, is refused and no approval is recorded."""
    st = _case("AWAITING_REVIEW", verdicts={1: {"verdict": "VERIFIED", "candidate": CANDIDATE, "diff": "+a"}},
               candidates={1: CANDIDATE})
    seen = shown_digest(decisions.review({"verdict": "VERIFIED", "candidate": CANDIDATE, "diff": "+b"}))
    for verb in ("accept", "reject"):
        assert _refused(*decide(st, replace(_command(verb), shown=seen), VERIFIER)).startswith(f"{verb} refused: ")
        assert _refused(*decide(st, replace(_command(verb), shown=""), VERIFIER)).startswith(f"{verb} not recorded: ")
    now = shown_digest(decisions.review(st.last_verdict))
    events, _ = decide(st, replace(_command("reject"), shown=now[:12]), VERIFIER)  # a short digest names it too
    assert [e.type for e in events] == ["repair.declined"] and events[0].payload["approval"]["meaning"] == "refuse"


# -- from the attacker's side: a typed decision binds only what its person was shown ---------------

REVIEW_1: dict[str, Any] = {"attempt": 1, "verdict": "VERIFIED", "candidate": CANDIDATE, "fingerprint": "f1" * 32,
                            "evidence": "/evidence/1.json", "diff": "+    return total - discount", "reasons": [],
                            "tamper": []}
REVIEW_2 = {**REVIEW_1, "attempt": 2, "fingerprint": "f2" * 32, "evidence": "/evidence/2.json"}  # same commit
DECIDED = {"approve": "repair.approved", "accept": "repair.accepted", "reject": "repair.declined"}


def _review(*verdicts: dict[str, Any]) -> CaseState:
    return _case("AWAITING_REVIEW", verdicts={v["attempt"]: dict(v) for v in verdicts},
                 candidates={v["attempt"]: CANDIDATE for v in verdicts})


def _printed(st: CaseState, verb: str) -> str:
    """The command a person reads for what the verifier shows in `st`: the case, an acceptance's
    candidate, and the short digest of the content shown (computed here, not by the code under test)."""
    candidate = f" {CANDIDATE[:12]}" if verb == "accept" else ""
    return f"@verifier {verb} coupon-01{candidate} #{shown_digest(decisions.shown_for(st, verb))[:12]}"


def _typed(st: CaseState, body: str) -> tuple[list[NewEvent], list[NewJob]]:
    """The operator's message `body` in the case room, as the verifier parses and decides it."""
    parsed = parse_command(body, VERIFIER)
    assert parsed is not None
    verb, case_id, exact, commit, *shown = parsed
    return decide(st, OperatorCommand(verb, case_id, exact, "$m9", "room-1", OPERATOR, DIGEST, candidate=commit,
                                      shown=shown[0] if shown else None), VERIFIER)


@pytest.mark.parametrize("verb", ["accept", "reject"])
def test_a_review_presented_twice_is_not_decided_by_what_was_typed_for_the_first(verb: str) -> None:
    """The person read the first review and typed its command; the verifier presented a second one
    (the same candidate commit, another run) before it arrived: it decides nothing, with or without
    the first digest, though it names the right commit."""
    first, second = _review(REVIEW_1), _review(REVIEW_1, REVIEW_2)
    typed = _printed(first, verb)
    assert _printed(second, verb) != typed
    why = _refused(*_typed(second, typed))
    assert f"the review of coupon-01 changed since it was shown (shown {typed.rsplit('#', 1)[1]}" in why
    assert f"`{_printed(second, verb)}`" in why  # what decides the second, once read
    bare = typed.rsplit(" #", 1)[0]  # as typed where no digest was printed
    assert _refused(*_typed(second, bare)).startswith(f"{verb} not recorded: ")
    events, _ = _typed(second, _printed(second, verb))
    assert [e.type for e in events] == [DECIDED[verb]]


@pytest.mark.parametrize("verb", ["approve", "accept", "reject"])
def test_a_typed_decision_naming_no_digest_is_not_recorded_and_is_told_the_command(verb: str) -> None:
    st = _case() if verb == "approve" else _review(REVIEW_1)
    bare = f"@verifier {verb} coupon-01" + (f" {CANDIDATE[:12]}" if verb == "accept" else "")
    why = _refused(*_typed(st, bare))  # the refusal alone: no approval, acceptance or rejection
    assert why.startswith(f"{verb} not recorded: it names no digest of what you were shown.")
    assert f"send `{_printed(st, verb)}`" in why
    assert ("document 'contract coupon-01'" if verb == "approve" else f"candidate {CANDIDATE[:12]}") in why
    assert decisions.command_for(st, verb, VERIFIER) == _printed(st, verb)  # what the verifier prints


@pytest.mark.parametrize("verb", ["approve", "accept", "reject"])
@pytest.mark.parametrize("other", ["0" * 12, "0" * 64, "not-a-digest", ""])
def test_a_typed_decision_naming_other_content_is_refused(verb: str, other: str) -> None:
    st = _case() if verb == "approve" else _review(REVIEW_1)
    command = _printed(st, verb)
    why = _refused(*_typed(st, command.rsplit("#", 1)[0] + f"#{other}"))
    if other.startswith("0"):
        assert f"{verb} refused: the " in why and "changed since it was shown" in why
    else:  # not a digest at all, or none
        assert why.startswith((f"{verb} refused: ", f"{verb} not recorded: ")) and "only the exact" not in why
    events, _ = _typed(st, command)  # the honest path: the command as printed decides
    assert [e.type for e in events] == [DECIDED[verb]]


def test_a_case_with_no_candidate_is_rejected_only_by_the_digest_of_its_review() -> None:
    st = _case("AWAITING_REVIEW")  # out of attempts, nothing verified: the review says so
    why = _refused(*_typed(st, "@verifier reject coupon-01"))
    assert why.startswith("reject not recorded: ") and "coupon-01 with no candidate" in why
    assert f"send `{_printed(st, 'reject')}`" in why
    events, _ = _typed(st, _printed(st, "reject"))
    assert [e.type for e in events] == ["repair.declined"]


# -- another attempt, asked for by the operator ---------------------------------------------------------


def _retry(st: CaseState, sender: str = OPERATOR, reason: str = "the fix drops the zero-coupon case",
           via: str = "room", room_id: str | None = "room-1") -> tuple[list[NewEvent], list[NewJob]]:
    return _stored(decisions.decide(st, decisions.Move("retry", sender, "alice", reason, via, message_key("$m7"),
                                                       room_id)))


def _ended(**changes: object) -> CaseState:
    """A case whose two attempts have ended and whose review is asked (on a card)."""
    st = _review(REVIEW_1, REVIEW_2)
    return replace(st, attempt=2, handoffs={1: {"receipt": {"sender": "v", "message_id": "$h1"}},
                                            2: {"receipt": {"sender": "v", "message_id": "$h2"}}},
                   cards={"repair-card:coupon-01:review": {"stage": "review", "verbs": {}, "candidate": ""}},
                   **changes)


def test_parse_stuck_reads_a_retry_with_its_reason() -> None:
    assert decisions.parse_stuck("@verifier retry coupon-01 it breaks refunds", VERIFIER) == (
        "retry", "coupon-01", "it breaks refunds")
    assert decisions.parse_stuck("please @verifier retry coupon-01 x", VERIFIER) is None


def test_the_operator_asks_for_another_attempt_recorded_with_who_why_and_which_message() -> None:
    st = _ended()
    events, jobs = _retry(st)
    (event,) = events
    assert event.type == "repair.retry_requested"
    assert event.payload == {"by": OPERATOR, "by_name": "alice", "reason": "the fix drops the zero-coupon case",
                             "via": "room", "key": "repair:msg:$m7", "from_message": "$m7", "attempt": 3}
    handoff, said = jobs
    assert (handoff.topic, handoff.payload) == ("repair.handoff", {"case_id": "coupon-01", "attempt": 3})
    assert "alice asked for attempt 3 (the fix drops the zero-coupon case)" in said.payload["text"]
    # Folded: the case leaves review (no accept or reject counts), the old review card decides nothing,
    # and the hand-off of attempt 3 names the operator, the message and the reason.
    after = replace(st, state="RETRY_REQUESTED", retries={3: event.payload}, cards={})
    assert decisions.why_asked(after, 3) == {"asked_by": OPERATOR, "from_message": "$m7",
                                              "reason": "asked by the operator: the fix drops the zero-coupon case"}
    assert "not awaiting review" in _refused(*decide(after, _command("reject"), VERIFIER))
    # Its review is a job and a card of its own (the first review's key and card are spent).
    assert next_step("coupon-01", 3, "REJECTED", 2, round_=1).key == "coupon-01:review:1"
    assert decisions.card_request_id("coupon-01", "review", 1) == "repair-card:coupon-01:review:1"
    assert decisions.card_case("repair-card:coupon-01:review:1") == "coupon-01"


@pytest.mark.parametrize(("sender", "reason", "state", "room_id", "why"), [
    ("user:mallory", "again", "AWAITING_REVIEW", "room-1", "only the linked operator can retry coupon-01"),
    (OPERATOR, "", "AWAITING_REVIEW", "room-1", "say why coupon-01 needs another attempt"),
    (OPERATOR, "again", "FIX_REQUESTED", "room-1", "coupon-01 is FIX_REQUESTED; another attempt is asked for once"),
    (OPERATOR, "again", "ACCEPTED", "room-1", "coupon-01 is ACCEPTED, already closed"),
    (OPERATOR, "again", "AWAITING_REVIEW", "room-2", "count only in its case room"),
])
def test_a_retry_is_refused_and_the_reason_said_in_the_room(sender: str, reason: str, state: str, room_id: str,
                                                          why: str) -> None:
    events, jobs = _retry(_ended(state=state), sender=sender, reason=reason, room_id=room_id)
    (event,) = events
    assert event.type == "repair.command_refused" and why in event.payload["reason"]
    (said,) = jobs
    assert said.topic == "repair.say" and why in said.payload["text"]


# -- a verification a person starts from the case page ------------------------------------------------


def _start(st: CaseState, candidate: str = CANDIDATE, sender: str = OPERATOR) -> tuple[list[NewEvent], list[NewJob]]:
    return _stored(decisions.decide(st, decisions.StartVerification(candidate, sender, "alice", "web", "web:k1")))


def test_a_verification_of_a_candidate_is_queued_for_the_verifier_and_said_in_the_room() -> None:
    st = _review(REVIEW_1)
    assert decisions.verification_refusal(st, decisions.StartVerification(CANDIDATE, OPERATOR, "", "web", "k")) is None
    events, jobs = _start(st)
    (event,) = events
    assert event.type == "repair.verification_requested"
    assert event.payload == {"run": 1, "candidate": CANDIDATE, "attempt": 1, "by": OPERATOR, "by_name": "alice",
                             "via": "web", "key": "web:k1"}
    job, said = jobs
    assert (job.key, job.topic, job.payload) == ("coupon-01:verify-again:1", "repair.verify_again",
                                                 {"case_id": "coupon-01", "run": 1})
    assert "alice started run 1, a verification of candidate c2c2c2c2c2c2 (attempt 1)" in said.payload["text"]
    # Its steps are recorded once each, its outcome once; neither changes the case's state or review.
    running = replace(st, checks={1: {**event.payload, "state": "running", "step": "executions (1/3)"}})
    assert _stored(decisions.decide(running, decisions.VerificationStep(1, "executions (1/3)"))) == ([], [])
    (step,), _ = _stored(decisions.decide(running, decisions.VerificationStep(1, "executions (2/3)")))
    assert step.payload == {"run": 1, "step": "executions (2/3)"}
    measured = VerificationMeasured(run=1, candidate=CANDIDATE, verdict="VERIFIED", reasons=[], fingerprint="e" * 64,
                                    evidence="/e.json")
    (done,), (told,) = _stored(decisions.decide(running, decisions.VerificationDone(measured, "job")))
    assert done.type == "repair.verification_measured" and "run 1 of candidate c2c2c2c2c2c2: VERIFIED" in \
        told.payload["text"]
    finished = replace(running, checks={1: {**running.checks[1], "state": "done"}})
    assert _stored(decisions.decide(finished, decisions.VerificationDone(measured, "job"))) == ([], [])


@pytest.mark.parametrize(("changes", "candidate", "sender", "kind", "words"), [
    ({}, CANDIDATE, "user:mallory", "refused", "only the linked operator"),
    ({}, "b" * 40, OPERATOR, "usage", "is not a candidate of coupon-01 (its candidates: c2c2c2c2c2c2)"),
    ({"state": "ABANDONED"}, CANDIDATE, OPERATOR, "conflict", "coupon-01 is ABANDONED"),
    ({"checks": {1: {"run": 1, "candidate": CANDIDATE, "state": "running"}}}, CANDIDATE, OPERATOR, "conflict",
     "run 1 of candidate c2c2c2c2c2c2 is still running"),
])
def test_a_verification_is_refused_with_who_may_fix_it(changes: dict[str, Any], candidate: str, sender: str,
                                                        kind: str, words: str) -> None:
    st = replace(_review(REVIEW_1), **changes)
    refusal = decisions.verification_refusal(st, decisions.StartVerification(candidate, sender, "", "web", "k"))
    assert refusal is not None and refusal.kind == kind and words in refusal.text
    assert _start(st, candidate, sender) == ([], [])  # decided on a case that moved: nothing recorded
