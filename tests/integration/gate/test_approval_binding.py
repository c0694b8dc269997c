"""The gate reads a card's decision through the one content-bound approval (signoff.rooms.domain.bound on
signoff.ledger.approval), from the attacker's side: a "yes" on a card that showed other content
than the call's, or on a card whose title shows other content than its digest names, approves
nothing and makes no approval record; a "yes" on exactly the call's content is recorded as one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from signoff.gate import call_content
from signoff.gate.record import record_decision
from signoff.kernel.settings import Settings
from signoff.kernel.shown import shown_digest
from signoff.ledger import SqlLedger
from signoff.rooms.domain.bound import card_title, content_digest, labelled, new_request_id, read_decision

QUESTION = "Run deploy with these arguments?"
CALL = call_content("deploy", {"service": "api", "version": "1.2"})
OTHER = call_content("deploy", {"service": "api", "version": "6.6"})
OPTIONS = labelled([{"id": "yes", "label": "Approve", "decision": "accept"},
                    {"id": "no", "label": "Refuse", "decision": "decline"}])


def answered(content: str, title: str | None = None, option: str = "yes") -> dict[str, Any]:
    """A card as the rooms server returns it once a listed person answered it."""
    return {"request_id": new_request_id(content_digest(content)), "room_id": "room-1",
            "title": title or card_title(QUESTION, content), "options": OPTIONS, "state": "accepted",
            "outcome": {"allowed": True, "responder": "u-alice", "responder_name": "Alice", "option_id": option}}


class TestGateCardApproval:
    def test_a_yes_to_exactly_the_calls_content_is_the_approval_record(self, tmp_path: Path) -> None:
        decision = read_decision(answered(CALL), CALL, at="2026-12-06T07:00:00Z")
        assert decision.approved and decision.approval is not None
        assert decision.approval.digest == shown_digest({"question": QUESTION, "content": CALL})
        assert (decision.approval.by, decision.approval.via, decision.approval.meaning) == ("Alice", "room", "approve")
        settings = Settings.load(home=tmp_path / "home", env={})
        record = record_decision(settings, "deploy", content_digest(CALL), decision, "approved", "embedded:")
        assert record["decision"]["approval"]["digest"] == decision.approval.digest

    def test_a_yes_for_other_content_is_refused_and_records_no_approval(self, tmp_path: Path) -> None:
        decision = read_decision(answered(OTHER), CALL)
        assert (decision.state, decision.approved, decision.approval) == ("unbound", False, None)
        settings = Settings.load(home=tmp_path / "home", env={})
        record = record_decision(settings, "deploy", content_digest(CALL), decision, "refused", "embedded:")
        ledger = SqlLedger.open(settings)
        try:
            stored = [e.payload for e in ledger.read("gate/deploy")]
        finally:
            ledger.close()
        assert [p["decision"]["approval"] for p in stored] == [None] and record["decision"]["approved"] is False

    def test_a_card_whose_title_shows_other_content_than_its_digest_approves_nothing(self) -> None:
        forged = {**answered(CALL), "title": card_title(QUESTION, OTHER)}
        for content in (None, CALL, OTHER):
            decision = read_decision(forged, content)
            assert (decision.state, decision.approval) == ("unbound", None)

    def test_a_no_is_recorded_as_a_refusal_not_an_approval(self) -> None:
        decision = read_decision({**answered(CALL, option="no"), "state": "declined"}, CALL)
        assert decision.state == "declined" and not decision.approved
        assert decision.approval is not None and decision.approval.meaning == "refuse"
