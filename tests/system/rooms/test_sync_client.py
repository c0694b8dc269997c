"""The rooms client's synchronous face behaves the same in process and over HTTP."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from signoff.kernel.errors import RefusedError
from signoff.rooms.client import (
    HttpSyncTransport,
    HttpUserTransport,
    InProcessSyncTransport,
    RoomsUserClient,
    SyncRoomsClient,
)
from tests.support.cards import answer_as_shown
from tests.support.fixtures.rooms import World

Faces = tuple[World, SyncRoomsClient, RoomsUserClient]


@pytest.fixture
def faces(request: pytest.FixtureRequest, http_world: tuple[World, str],
          person_for: Callable[[str], RoomsUserClient]) -> Iterator[Faces]:
    world, base = http_world
    over_http = isinstance(person_for(world.bob_token).transport, HttpUserTransport)
    agent = SyncRoomsClient(HttpSyncTransport(base, world.fixer.id, world.fixer_key, timeout=20) if over_http
                            else InProcessSyncTransport(world.service, world.fixer_key))
    yield world, agent, person_for(world.alice_token)
    agent.close()


def test_events_after_a_cursor_and_server_assigned_receipts(faces: Faces) -> None:
    world, agent, person = faces
    assert agent.sender == world.fixer.sender
    agent.open("fixer@case", world.room_id)
    sent = person.post(world.room_id, "please look at coupon-01", ["fixer"])
    assert set(sent["target_statuses"]) == {"fixer"}
    events = agent.events("fixer@case", world.room_id, 0)
    mine = [e for e in events if e["type"] == "message" and e["payload"]["message_id"] == sent["event_id"]]
    assert len(mine) == 1 and mine[0]["payload"]["addressed"] is True
    cursor = max(int(e["sequence"]) for e in events)
    assert agent.events("fixer@case", world.room_id, cursor) == []  # nothing new after the cursor
    again = person.post(world.room_id, "and coupon-02", ["fixer"])
    later = agent.events("fixer@case", world.room_id, cursor)
    assert [e["payload"]["message_id"] for e in later if e["type"] == "message"] == [again["event_id"]]
    reply = agent.call("fixer@case", "post_message", {"body": "on it", "thread_id": sent["event_id"]})
    stored = [m for m in person.messages(world.room_id) if m["message_id"] == reply["event_id"]]
    assert stored and stored[0]["sender"] == world.fixer.sender and stored[0]["body"] == "on it"


@pytest.mark.slow
def test_history_reads_past_one_page(faces: Faces) -> None:
    world, agent, person = faces
    for n in range(1003):
        world.service.post_message(world.bob, world.room_id, f"line {n}")
    bodies = [m["body"] for m in agent.history(world.room_id) if m["body"].startswith("line ")]
    assert bodies == [f"line {n}" for n in range(1003)]
    assert [m["body"] for m in person.messages(world.room_id) if m["body"].startswith("line ")] == bodies


def test_refusals_are_the_same_errors_on_both_transports(faces: Faces,
                                                        person_for: Callable[[str], RoomsUserClient]) -> None:
    world, agent, _ = faces
    agent.open("fixer@case", world.room_id)
    with pytest.raises(RefusedError):  # a card one may not read and a missing card answer alike (no probing)
        agent.call("fixer@case", "get_approval", {"request_id": "no-such-card"})
    other = world.service.create_room(world.alice, "case-2", agent_names=[], user_names=["alice"])
    with pytest.raises(RefusedError):
        agent.history(other.id)  # not a member
    _, token = world.service.create_user("carol", "Carol")
    with pytest.raises(RefusedError):
        person_for(token).messages(world.room_id)


def test_a_person_answers_an_approval_card(faces: Faces) -> None:
    world, agent, person = faces
    agent.open("fixer@case", world.room_id)
    agent.call("fixer@case", "request_approval", {
        "request_id": "sync-1", "title": "Ship it?", "options": [{"id": "ship", "label": "Ship", "decision": "accept"}],
        "expires_at": world.service.clock.now() + 60, "responders": ["alice"]})
    assert [c["request_id"] for c in person.pending()] == ["sync-1"]
    outcome = answer_as_shown(person, "sync-1", "ship")
    assert outcome["outcome"] == "accepted" and person.pending() == []
    assert world.service.approval(world.alice, "sync-1").state == "accepted"
