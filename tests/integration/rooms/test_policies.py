"""Addressing policies are enforced on the server: open, owner-only, room-scoped, agent lists."""

from __future__ import annotations

import pytest

from signoff.kernel.errors import RefusedError, UsageError
from signoff.rooms import OPEN, OWNER_ONLY
from signoff.rooms.domain.policy import Sender, Target, permits, validate_policy
from tests.support.fixtures.rooms import World


def _last_to(world: World, agent_id: str) -> dict:
    return world.service.agent_events(agent_id, 0)[-1]


def test_open_policy_addresses_any_member(world: World) -> None:
    s = world.service
    receipt = s.post_message(world.bob, world.room_id, "please look", target_names=["reviewer"])
    assert receipt.target_statuses == {"reviewer": "disconnected"}
    event = _last_to(world, world.reviewer.id)
    assert event["payload"]["addressed"] is True
    assert event["payload"]["sender_name"] == "Bob"


def test_owner_only_refuses_others_and_refusal_is_visible_in_the_thread(world: World) -> None:
    s = world.service
    s.set_policy(world.alice, world.reviewer.id, OWNER_ONLY)
    receipt = s.post_message(world.bob, world.room_id, "approve it", target_names=["reviewer"])
    assert receipt.target_statuses == {"reviewer": "not_permitted"}
    assert receipt.addressed is False
    # Still posted, but reaches the target as not addressed.
    event = next(e for e in s.agent_events(world.reviewer.id, 0) if e["payload"].get("message_id") ==
                 receipt.message_id)
    assert event["payload"]["addressed"] is False
    thread = s.read_context(world.alice, world.room_id)["threads"][-1]
    assert thread["root"]["id"] == receipt.message_id
    assert len(thread["replies"]) == 1
    assert "not permitted" in thread["replies"][0]["body"]
    assert thread["replies"][0]["sender"] == world.reviewer.sender
    # The owner passes.
    ok = s.post_message(world.alice, world.room_id, "go", target_names=["reviewer"])
    assert ok.target_statuses == {"reviewer": "disconnected"}
    # Another agent of the same owner is refused without owner_agents.
    by_agent = s.post_message(world.fixer, world.room_id, "done", target_names=["reviewer"])
    assert by_agent.target_statuses == {"reviewer": "not_permitted"}
    # ...and the refusal addresses the sending agent.
    refusal = _last_to(world, world.fixer.id)
    assert refusal["payload"]["addressed"] is True and "not permitted" in refusal["payload"]["body"]


def test_room_scoped_rule(world: World) -> None:
    s = world.service
    other = s.create_room(world.alice, "other", agent_names=["fixer", "reviewer"], user_names=["bob"])
    s.set_policy(world.alice, world.reviewer.id, {"rules": [{"rooms": [world.room_id], "users": "*",
                                                             "agents": "*"}]})
    assert s.post_message(world.bob, world.room_id, "x", target_names=["reviewer"]).target_statuses == {
        "reviewer": "disconnected"}
    assert s.post_message(world.bob, other.id, "x", target_names=["reviewer"]).target_statuses == {
        "reviewer": "not_permitted"}


def test_agent_list_rule_and_mentions(world: World) -> None:
    s = world.service
    s.set_policy(world.alice, world.reviewer.id, {"rules": [{"users": [], "agents": [world.fixer.id]}]})
    by_fixer = s.post_message(world.fixer, world.room_id, "hey @reviewer, done.")
    assert by_fixer.addressed is True
    assert _last_to(world, world.reviewer.id)["payload"]["addressed"] is True
    by_bob = s.post_message(world.bob, world.room_id, "@reviewer approve")
    assert by_bob.addressed is False


def test_policy_changes_only_by_owner_or_admin(world: World) -> None:
    s = world.service
    head = s.head()
    with pytest.raises(RefusedError):
        s.set_policy(world.bob, world.reviewer.id, OPEN)
    with pytest.raises(RefusedError):
        s.set_policy(world.reviewer, world.reviewer.id, OPEN)  # an agent key never changes a policy
    assert s.head() == head
    s.set_policy(world.admin, world.reviewer.id, OWNER_ONLY)
    assert s.policy(world.reviewer.id) == validate_policy(OWNER_ONLY)


def test_bad_policy_shape_is_refused() -> None:
    with pytest.raises(UsageError, match="unknown field"):
        validate_policy({"rules": [{"roomz": "*"}]})
    with pytest.raises(UsageError):
        validate_policy({"rules": [{"users": "alice"}]})


def test_unresolvable_sender_is_denied_under_rules() -> None:
    target = Target("a1", "u1", OWNER_ONLY)
    assert not permits(OWNER_ONLY, target, Sender("unknown", None), "r", None)
    assert permits(None, target, Sender("user", "u2"), "r", None)
    assert not permits({"rules": []}, target, Sender("unknown", None), "r", None)
    assert permits(OWNER_ONLY, target, Sender("user", "u1"), "r", None)
    grouped = {"rules": [{"room_groups": ["g"], "users": "*"}]}
    assert not permits(grouped, target, Sender("user", "u2"), "r", None)
    assert permits(grouped, target, Sender("user", "u2"), "r", "g")


def test_agent_never_receives_its_own_messages(world: World) -> None:
    s = world.service
    receipt = s.post_message(world.fixer, world.room_id, "note to self @fixer")
    assert all(e["payload"].get("message_id") != receipt.message_id for e in s.agent_events(world.fixer.id, 0))
