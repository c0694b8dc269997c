"""Receipts, single-writer documents, exclusive roles, approval cards, concurrent sends."""

from __future__ import annotations

import threading

import pytest

from signoff.kernel.clock import FixedClock
from signoff.kernel.errors import RefusedError, UsageError
from signoff.ledger.aggregate import read_event
from signoff.rooms import Receipt, handoff_matches
from signoff.rooms.domain.model import (
    APPROVAL,
    DOCUMENT,
    GROUP,
    ROOM,
    ApprovalAnswered,
    ApprovalDiscarded,
    ApprovalExpired,
    ApprovalRequested,
    DocumentCreated,
    DocumentDeleted,
    DocumentUpdated,
    GroupAllowed,
    GroupCreated,
    MessagePosted,
    RoleAssumed,
    RoleDefined,
    RoleReleased,
    RoomCreated,
    RoomMemberAdded,
    RoomMemberRemoved,
)
from tests.support.cards import answer_in
from tests.support.fixtures.rooms import World


def _event_for(world: World, agent_id: str, message_id: str) -> dict:
    return next(e for e in world.service.agent_events(agent_id, 0)
                if e["type"] == "message" and e["payload"]["message_id"] == message_id)


def test_handoff_receipt_matches_only_the_real_message(world: World) -> None:
    s = world.service
    receipt = s.post_message(world.fixer, world.room_id, "handoff: approve patch abc123",
                             target_names=["reviewer"])
    genuine = _event_for(world, world.reviewer.id, receipt.message_id)
    assert handoff_matches(genuine, receipt)
    assert handoff_matches(genuine, receipt.to_dict())
    # Bob quotes the exact command, even naming the fixer: a different id and sender.
    quoted = s.post_message(world.bob, world.room_id, receipt.body)
    copy = _event_for(world, world.reviewer.id, quoted.message_id)
    assert copy["payload"]["body"] == receipt.body
    assert not handoff_matches(copy, receipt)
    # Forged events: right id but another sender, edited text, another room, flipped flag.
    for path, value in (("sender", world.bob.sender), ("body", receipt.body + " "), ("addressed", False)):
        forged = {**genuine, "payload": {**genuine["payload"], path: value}}
        assert not handoff_matches(forged, receipt)
    assert not handoff_matches({**genuine, "room_id": "elsewhere"}, receipt)
    assert not handoff_matches({**genuine, "type": "command"}, receipt)
    assert not handoff_matches(genuine, {"message_id": receipt.message_id})


def test_documents_are_single_writer_and_versioned(world: World) -> None:
    s = world.service
    doc = s.create_document(world.fixer, world.room_id, "plan", "v1")
    with pytest.raises(UsageError, match="did not create document"):
        s.update_document(world.reviewer, doc, content="hijacked")
    with pytest.raises(UsageError, match="did not create document"):
        s.update_document(world.bob, doc, content="hijacked")
    assert s.load_documents(world.reviewer, [doc])[0]["content"] == "v1"
    assert s.update_document(world.fixer, doc, content="v2") == 2
    loaded = s.load_documents(world.bob, [doc])[0]
    assert (loaded["content"], loaded["version"]) == ("v2", 2)
    outsider, _ = s.create_user("mallory")
    with pytest.raises(RefusedError, match="not a member"):
        s.load_documents(outsider, [doc])
    with pytest.raises(UsageError, match="already exists"):
        s.create_document(world.reviewer, world.room_id, "plan", "x")



def test_document_and_group_events_are_written_and_read_through_their_classes(world: World) -> None:
    s = world.service
    doc = s.create_document(world.fixer, world.room_id, "notes", "v1", description="what we learnt")
    s.update_document(world.fixer, doc, name="notes-2")
    s.delete_document(world.fixer, doc)
    s.create_group(world.alice, "shop")
    s.allow_group_owner(world.alice, "shop", "bob")
    read = [read_event(e) for case in (DOCUMENT.case_id(doc), GROUP.prefix + "shop") for e in s.ledger.read(case)]
    assert [type(b) for b in read] == [DocumentCreated, DocumentUpdated, DocumentDeleted, GroupCreated, GroupAllowed]
    created, updated = read[0], read[1]
    assert isinstance(created, DocumentCreated) and created.by_kind == "agent" and created.content == "v1"
    assert isinstance(updated, DocumentUpdated) and (updated.name, updated.content, updated.version) == \
        ("notes-2", None, 2)


def test_a_rooms_events_are_written_as_their_classes_read_them(world: World) -> None:
    s = world.service
    s.define_role(world.alice, world.room_id, "approver", "decide", exclusive=True)
    connection, _ = s.connections.open(world.fixer.id, "c-fixer")
    s.assume_role(world.fixer, world.room_id, "approver", connection)
    s.release_role(world.fixer)
    s.post_message(world.fixer, world.room_id, "handoff: review abc123", target_names=["reviewer"])
    s.remove_member(world.alice, world.room_id, world.bob)
    read = [read_event(e) for e in s.ledger.read(ROOM.case_id(world.room_id))]
    assert {RoomCreated, RoomMemberAdded, RoleDefined, RoleAssumed, RoleReleased, MessagePosted,
            RoomMemberRemoved} <= {type(b) for b in read}
    [posted] = [b for b in read if isinstance(b, MessagePosted)]
    assert posted.addressed_agents == {world.reviewer.id: True} and posted.via is None


def test_exclusive_role_has_one_live_holder(world: World, clock: FixedClock) -> None:
    s = world.service
    s.define_role(world.alice, world.room_id, "approver", "decide", exclusive=True)
    c1, _ = s.connections.open(world.fixer.id, "c-fixer")
    c2, _ = s.connections.open(world.reviewer.id, "c-reviewer")
    s.assume_role(world.fixer, world.room_id, "approver", c1)
    with pytest.raises(UsageError, match="exclusive and currently held"):
        s.assume_role(world.reviewer, world.room_id, "approver", c2)
    # @role addresses the live holder only.
    receipt = s.post_message(world.bob, world.room_id, "over to you", target_roles=["approver"])
    assert receipt.target_statuses == {"fixer": "live"}
    assert _event_for(world, world.fixer.id, receipt.message_id)["payload"]["addressed"] is True
    # The lease lapses with the heartbeat; then the role is free.
    clock.advance(7)
    s.connections.beat(world.reviewer.id, "c-reviewer", 0)  # the reviewer keeps beating
    s.connections.sweep()
    s.assume_role(world.reviewer, world.room_id, "approver", c2)
    assert [h["name"] for h in s.list_roles(world.alice, world.room_id)[0]["held_by"]] == ["reviewer"]


def _card(world: World, request_id: str = "approve-1", expires: float = 600) -> dict:
    return {"request_id": request_id, "title": "Merge patch abc123?",
            "options": [{"id": "yes", "label": "Merge", "decision": "accept"},
                        {"id": "no", "label": "Reject", "decision": "decline"}],
            "expires_at": world.service.clock.now() + expires, "responders": ["alice"]}


def _approval_events(world: World) -> list[type]:
    """The classes the approval cards' stored events read as, case by case."""
    ledger = world.service.ledger
    return [type(read_event(e)) for case in ledger.case_ids(APPROVAL.prefix) for e in ledger.read(case)]


def test_approval_card_is_idempotent_by_request_id(world: World) -> None:
    s = world.service
    first = s.request_approval(world.fixer, world.room_id, **_card(world))
    head = s.head()
    again = s.request_approval(world.fixer, world.room_id, **_card(world))
    assert again == first and s.head() == head
    # Another agent's card of the same request id is its own card (ids are scoped by their asker).
    other = s.request_approval(world.reviewer, world.room_id, **_card(world))
    assert other.card_id != first.card_id and other.requester_agent_id == world.reviewer.id
    requests = [e for e in s.agent_events(world.fixer.id, 0) if e["type"] == "approval_request"]
    assert [e["payload"]["card_id"] for e in requests] == [first.card_id, other.card_id]


def test_wrong_responder_is_discarded_and_recorded_then_right_one_decides(world: World) -> None:
    s = world.service
    s.request_approval(world.fixer, world.room_id, **_card(world))
    wrong = answer_in(s, world.bob, "approve-1", "yes")
    assert wrong["outcome"] == "discarded" and wrong["allowed"] is False
    assert s.approval(world.alice, "approve-1").state == "pending"
    right = answer_in(s, world.alice, "approve-1", "no")
    assert right["outcome"] == "declined" and right["allowed"] is True
    assert right["responder"] == world.alice.sender and right["responder_name"] == "Alice"
    # A later answer changes nothing.
    assert answer_in(s, world.alice, "approve-1", "yes")["outcome"] == "declined"
    kinds = [e["type"] for e in s.agent_events(world.fixer.id, 0) if e["type"].startswith("approval")]
    assert kinds == ["approval_request", "approval_response_discarded", "approval_outcome"]
    with pytest.raises(UsageError, match="unknown option"):
        answer_in(s, world.alice, "approve-1", "maybe")
    with pytest.raises(RefusedError):
        answer_in(s, world.fixer, "approve-1", "yes")
    assert _approval_events(world) == [ApprovalRequested, ApprovalDiscarded, ApprovalAnswered]


def test_approval_expiry(world: World, clock: FixedClock) -> None:
    s = world.service
    s.request_approval(world.fixer, world.room_id, **_card(world, "a-exp", expires=60))
    s.request_approval(world.fixer, world.room_id, **_card(world, "a-late", expires=60))
    clock.advance(61)
    assert sorted(s.expire_approvals()) == ["a-exp", "a-late"]
    assert s.expire_approvals() == []
    assert s.approval(world.alice, "a-exp").state == "expired"
    late = answer_in(s, world.alice, "a-late", "yes")
    assert late["outcome"] == "expired"
    outcome = [e for e in s.agent_events(world.fixer.id, 0) if e["type"] == "approval_outcome"]
    assert {e["payload"]["outcome"] for e in outcome} == {"expired"}
    assert _approval_events(world) == [ApprovalRequested, ApprovalExpired] * 2


def test_concurrent_sends_from_one_agent_keep_order_and_unique_ids(world: World) -> None:
    s = world.service
    per_thread, threads = 15, 4
    results: dict[int, list[Receipt]] = {}

    def send(t: int) -> None:
        results[t] = [s.post_message(world.fixer, world.room_id, f"t{t}-m{i}") for i in range(per_thread)]

    workers = [threading.Thread(target=send, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    receipts = [r for rs in results.values() for r in rs]
    assert len({r.message_id for r in receipts}) == per_thread * threads
    assert len({r.sequence for r in receipts}) == per_thread * threads
    for rs in results.values():  # each sender's own order is kept
        assert [r.sequence for r in rs] == sorted(r.sequence for r in rs if r.sequence is not None)
    seen = [e for e in s.agent_events(world.reviewer.id, 0, limit=1000) if e["type"] == "message"]
    assert [e["sequence"] for e in seen] == sorted(e["sequence"] for e in seen)
    by_id = {e["payload"]["message_id"]: e for e in seen}
    for r in receipts:
        assert by_id[r.message_id]["payload"]["body"] == r.body
