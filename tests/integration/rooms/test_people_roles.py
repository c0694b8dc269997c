"""Approval cards addressed to a people's role (`role:NAME`): granted by an admin, resolved by the
server when each answer arrives, never from a name in a card or a message."""

from __future__ import annotations

import pytest

from signoff.kernel.errors import RefusedError, UsageError
from signoff.ledger.aggregate import read_event
from signoff.rooms.domain.model import APPROVAL, ApprovalAnswered, ApprovalRequested
from signoff.rooms.domain.people_roles import CASE
from tests.support.cards import answer_in
from tests.support.fixtures.rooms import World

OPTIONS = [{"id": "yes", "label": "Approve", "decision": "accept"},
           {"id": "no", "label": "Refuse", "decision": "decline"}]


def _ask(world: World, request_id: str, responders: list[str]) -> None:
    s = world.service
    s.request_approval(world.fixer, world.room_id, request_id, "Run the migration?", OPTIONS,
                       s.clock.now() + 600, responders)


def test_a_holder_of_the_role_answers_and_the_outcome_names_the_role(world: World) -> None:
    s = world.service
    s.grant_person_role(world.admin, "dba", world.bob.id)
    _ask(world, "m-1", ["role:dba"])
    card = s.approval(world.bob, "m-1")
    assert card.responders == () and card.responder_roles == ("dba",)
    assert [c.request_id for c in s.pending_approvals(world.bob)] == ["m-1"]
    assert s.pending_approvals(world.alice) == []  # alice holds no role: not hers to answer
    outcome = answer_in(s, world.bob, "m-1", "yes")
    assert outcome["outcome"] == "accepted" and outcome["allowed"] is True and outcome["responder_role"] == "dba"
    assert s.approval(world.alice, "m-1").state == "accepted"
    # The stored card and answer read through their classes, the role included.
    requested, answered = [read_event(e) for e in s.ledger.read(APPROVAL.case_id(card.card_id))]
    assert isinstance(requested, ApprovalRequested) and requested.responder_roles == ["dba"]
    assert isinstance(answered, ApprovalAnswered) and answered.responder_role == "dba"


def test_someone_without_the_role_is_discarded(world: World) -> None:
    s = world.service
    s.grant_person_role(world.admin, "dba", world.bob.id)
    _ask(world, "m-2", ["role:dba"])
    # Alice is in the room and says in a message that she is the DBA: it proves nothing.
    s.post_message(world.alice, world.room_id, "I am on the dba rota today, role:dba")
    outcome = answer_in(s, world.alice, "m-2", "yes")
    assert outcome["outcome"] == "discarded" and outcome["allowed"] is False
    assert s.approval(world.bob, "m-2").state == "pending"


def test_the_role_is_resolved_when_the_answer_arrives(world: World) -> None:
    s = world.service
    s.grant_person_role(world.admin, "dba", world.bob.id)
    _ask(world, "m-3", ["role:dba"])
    # Revoked after the card was asked, before the answer: the answer is discarded.
    s.grant_person_role(world.admin, "dba", world.alice.id)
    s.revoke_person_role(world.admin, "dba", world.bob.id)
    assert answer_in(s, world.bob, "m-3", "yes")["outcome"] == "discarded"
    assert "m-3" not in [c.request_id for c in s.pending_approvals(world.bob)]
    # Granted after the card was asked: that person may answer.
    outcome = answer_in(s, world.alice, "m-3", "no")
    assert outcome["outcome"] == "declined" and outcome["responder_role"] == "dba"


def test_named_people_and_a_role_on_one_card(world: World) -> None:
    s = world.service
    s.grant_person_role(world.admin, "dba", world.bob.id)
    _ask(world, "m-4", ["alice", "role:dba"])
    outcome = answer_in(s, world.alice, "m-4", "yes")
    assert outcome["outcome"] == "accepted" and "responder_role" not in outcome


def test_only_an_admin_grants_or_revokes(world: World) -> None:
    s = world.service
    head = s.ledger.read(CASE)
    for actor in (world.alice, world.fixer):
        with pytest.raises(RefusedError, match="only an admin"):
            s.grant_person_role(actor, "dba", world.alice.id)
    s.grant_person_role(world.admin, "dba", world.bob.id)
    with pytest.raises(RefusedError, match="only an admin"):
        s.revoke_person_role(world.bob, "dba", world.bob.id)
    assert [e.type for e in s.ledger.read(CASE)] == [*(e.type for e in head), "people_role.granted"]
    assert s.people_role_table() == {"dba": {world.bob.id}}


def test_bad_roles_are_refused_before_a_card_exists(world: World) -> None:
    s = world.service
    with pytest.raises(UsageError, match="nobody holds the role 'dba'") as nobody:
        _ask(world, "m-5", ["role:dba"])
    assert nobody.value.fix and "signoff rooms role grant dba" in nobody.value.fix
    with pytest.raises(UsageError, match="bad role name"):
        _ask(world, "m-6", ["role:DBA;drop"])
    with pytest.raises(UsageError, match="bad role name"):
        s.grant_person_role(world.admin, "", world.bob.id)
    with pytest.raises(UsageError, match="does not hold"):
        s.revoke_person_role(world.admin, "dba", world.bob.id)
    for rid in ("m-5", "m-6"):
        with pytest.raises(RefusedError):
            s.approval(world.alice, rid)
