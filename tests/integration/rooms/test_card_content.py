"""Approval cards say what they do (issue 34, "cards not tied to content").

An agent chose what "Approve" meant: a person picked "Approve" on an option wired to decline, and the
card was recorded as declined while the room said "Approve". The server now renders every option's
label led by its decision's verb and refuses a label that says the other decision; an answer names
the digest of the card as shown (asker, times, question, every option with its meaning); and every
face shows who asks, when, and when the card expires.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from signoff.bridges.matrix.cards import card_text
from signoff.kernel.clock import utc_minute
from signoff.kernel.errors import ConflictError, UsageError
from signoff.rooms.domain.model import Approval
from signoff.web.render import templates
from tests.support.fixtures.rooms import World


def _ask(world: World, request_id: str, options: list[dict[str, str]]) -> Approval:
    s = world.service
    return s.request_approval(world.fixer, world.room_id, request_id, "Deploy to production?", options,
                              s.clock.now() + 600, ["alice"])


@pytest.mark.parametrize(("label", "decision"), [
    ("Approve", "decline"), ("Yes, approve", "decline"), ("Accept", "decline"), ("approved", "decline"),
    ("Refuse", "accept"), ("Reject", "accept"), ("No", "accept"), ("Decline the rollback", "accept")])
def test_a_label_that_says_the_other_decision_is_refused(world: World, label: str, decision: str) -> None:
    head = world.service.head()
    with pytest.raises(UsageError, match=r"says .* but the option"):
        _ask(world, "wired-backwards", [{"id": "a", "label": label, "decision": decision}])
    assert world.service.head() == head


def test_every_label_is_shown_led_by_what_its_option_does(world: World) -> None:
    card = _ask(world, "honest", [{"id": "go", "label": "Ship it", "decision": "accept"},
                                  {"id": "wait", "label": "Hold until Monday", "decision": "decline"},
                                  {"id": "yes", "label": "Approve", "decision": "accept"}])
    from signoff.rooms.domain.model import DECISION_VERBS

    shown = world.service.approval(world.alice, "honest").to_dict()["options"]
    assert [o["label"] for o in shown] == ["Approve: Ship it", "Refuse: Hold until Monday", "Approve"]
    assert all(o["label"].startswith(DECISION_VERBS[o["decision"]]) for o in shown)
    assert card is not None


def test_the_digest_covers_what_the_person_is_shown() -> None:
    """Two cards that differ in any shown part (an option's meaning, the asker, the expiry) differ in
    digest, so an answer naming one cannot decide the other."""
    from signoff.rooms.domain.model import ApprovalOption, option_label

    base = Approval("c", "r", "a", "Deploy?", (ApprovalOption("go", option_label("accept", "Go"), "accept"),),
                    ("u",), 2000.0, "pending", requester_name="fixer", requested_at=1000.0)
    changed = [
        Approval("c", "r", "a", "Deploy?", (ApprovalOption("go", option_label("decline", "Go"), "decline"),),
                 ("u",), 2000.0, "pending", requester_name="fixer", requested_at=1000.0),
        Approval("c", "r", "a", "Deploy?", base.options, ("u",), 2000.0, "pending", requester_name="helper",
                 requested_at=1000.0),
        Approval("c", "r", "a", "Deploy?", base.options, ("u",), 9000.0, "pending", requester_name="fixer",
                 requested_at=1000.0),
        Approval("c", "r", "a", "Deploy now?", base.options, ("u",), 2000.0, "pending", requester_name="fixer",
                 requested_at=1000.0),
    ]
    assert len({base.digest, *(c.digest for c in changed)}) == 1 + len(changed)


def test_an_answer_without_the_shown_digest_decides_nothing(world: World) -> None:
    _ask(world, "bound-answer", [{"id": "go", "label": "Deploy", "decision": "accept"}])
    s = world.service
    head = s.head()
    with pytest.raises(UsageError, match="must carry the digest"):
        s.answer_approval(world.alice, "bound-answer", "go", "")
    with pytest.raises(ConflictError, match="digest differs"):
        s.answer_approval(world.alice, "bound-answer", "go", "0" * 64)
    assert s.head() == head and s.approval(world.alice, "bound-answer").state == "pending"
    shown = s.approval(world.alice, "bound-answer").digest
    assert s.answer_approval(world.alice, "bound-answer", "go", shown)["outcome"] == "accepted"


def test_every_face_shows_who_asks_when_and_until_when(world: World) -> None:
    _ask(world, "shown-card", [{"id": "go", "label": "Deploy", "decision": "accept"}])
    card = world.service.approval(world.alice, "shown-card")
    asked, expires = utc_minute(card.requested_at), utc_minute(card.expires_at)
    assert card.requested_at is not None
    in_chat = card_text(card.to_dict())
    assert f"Asked by agent {world.fixer.name} at {asked}; expires {expires}." in in_chat
    page = templates.get_template("card.html").render(card=card, csrf="t", back="/", loop_index=1,
                                                      room_names={})
    # Each time as read, and its exact UTC value in the <time> element around it.
    exact = datetime.fromtimestamp(card.requested_at, UTC).isoformat().replace("+00:00", "Z")
    assert (f'asked by agent <strong>{world.fixer.name}</strong> · asked <time datetime="{exact}" '
            f'data-precision="minute">{asked}</time> · expires <time datetime=') in page
    assert f">{expires}</time>" in page
    assert f'name="digest" value="{card.digest}"' in page


def test_another_owners_agent_cannot_take_a_card_id_first(world: World) -> None:
    """Card ids used to be first come, server-wide: an agent of another owner asked the desk's
    predictable card id first, the desk's card was refused, and the reporter was never asked. Now
    each asker's ids are its own: the rightful card is asked, reaches its responder, and the answer
    decides it; the bare request id, now ambiguous, answers neither."""
    s = world.service
    mallory, _ = s.create_user("mallory", "Mallory")
    squatter, _ = s.create_agent(mallory, "squatter", "takes ids")
    den = s.create_room(mallory, "den", agent_names=["squatter"], user_names=["mallory"])
    predictable = "desk-card-BUG-0001-r1"
    taken = s.request_approval(squatter, den.id, predictable, "Pick a colour?", [
        {"id": "yes", "label": "Red", "decision": "accept"}], s.clock.now() + 600, ["mallory"])
    mine = _ask(world, predictable, [{"id": "yes", "label": "Works for me", "decision": "accept"}])
    assert mine.card_id != taken.card_id and mine.requester_agent_id == world.fixer.id
    assert [c.card_id for c in s.pending_approvals(world.alice)] == [mine.card_id]
    assert s.approval(world.fixer, predictable).card_id == mine.card_id  # an agent finds its own card
    with pytest.raises(Exception, match="you may not see or answer this approval card"):
        s.approval(world.alice, predictable)  # two cards were asked so: the bare id names neither
    shown = s.approval(world.alice, mine.card_id).digest
    assert s.answer_approval(world.alice, mine.card_id, "yes", shown)["outcome"] == "accepted"
    assert s.approval(world.fixer, predictable).state == "accepted"
    assert s.approval(mallory, taken.card_id).state == "pending"


def test_an_approval_is_dated_when_the_person_answered_not_when_it_is_read(world: World) -> None:
    """The approval record's time is the server's time of the answer: a decision read an hour later
    (by a gate, an MCP client, a workflow) still says when the person decided."""
    from signoff.kernel.clock import utc_iso
    from signoff.rooms.domain.bound import card_title, content_digest, labelled, new_request_id, read_decision
    from tests.support.cards import answer_in

    s, content = world.service, "deploy api 1.2"
    request_id = new_request_id(content_digest(content))
    s.request_approval(world.fixer, world.room_id, request_id, card_title("Deploy?", content),
                       labelled([{"id": "yes", "label": "Approve", "decision": "accept"}]), s.clock.now() + 600,
                       ["alice"])
    answered = s.clock.now()
    answer_in(s, world.alice, request_id, "yes")
    s.clock.advance(3600)  # type: ignore[attr-defined]
    decision = read_decision(s.approval(world.fixer, request_id).to_dict(), content)
    assert decision.approved and decision.approval is not None
    assert decision.approval.at == utc_iso(answered)
