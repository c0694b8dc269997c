"""Two services on one database (as two server processes): caches and streams stay exact."""

from __future__ import annotations

import asyncio

from signoff.ledger import SqlLedger
from signoff.rooms import OWNER_ONLY, RoomService
from tests.support.fixtures.rooms import make_world


def test_a_policy_changed_elsewhere_applies_at_once(db_url: str) -> None:
    first = RoomService(SqlLedger.from_url(db_url))
    world = make_world(first)
    second = RoomService(SqlLedger.from_url(db_url))
    # Warm the first service's caches, then change the policy through the second one.
    assert first.post_message(world.bob, world.room_id, "hi", target_names=["reviewer"]).target_statuses == {
        "reviewer": "disconnected"}
    second.set_policy(second.user(world.alice.id), world.reviewer.id, OWNER_ONLY)
    refused = first.post_message(world.bob, world.room_id, "again", target_names=["reviewer"])
    assert refused.target_statuses == {"reviewer": "not_permitted"}
    # A member added elsewhere can post here at once.
    dave, _ = second.create_user("dave")
    second.add_member(second.user(world.alice.id), world.room_id, user_name="dave")
    first.post_message(first.user(dave.id), world.room_id, "hello from dave")
    first.ledger.close()
    second.ledger.close()


def test_streams_see_messages_written_by_another_process(sqlite_url: str) -> None:
    first = RoomService(SqlLedger.from_url(sqlite_url))
    world = make_world(first)
    second = RoomService(SqlLedger.from_url(sqlite_url))
    local = first.post_message(world.fixer, world.room_id, "one", target_names=["reviewer"])
    remote = second.post_message(second.agent(world.fixer.id), world.room_id, "two", target_names=["reviewer"])
    local2 = first.post_message(world.fixer, world.room_id, "three", target_names=["reviewer"])

    async def collect() -> list[str]:
        got: list[str] = []
        async for event in first.subscribe(world.reviewer.id, after=0, poll=0.05):
            if event["type"] == "message":
                got.append(event["payload"]["message_id"])
            if len(got) == 3:
                return got
        return got

    assert asyncio.run(asyncio.wait_for(collect(), 10)) == [local.message_id, remote.message_id,
                                                             local2.message_id]
    sequences = [e["sequence"] for e in first.agent_events(world.reviewer.id, 0)]
    assert sequences == sorted(set(sequences))


def test_an_agent_stream_sees_a_message_posted_by_another_process(sqlite_url: str) -> None:
    """The in-process transport's stream (what `signoff notes agent` runs on the embedded server)
    wakes for a message another RoomService on the same database posted."""
    from signoff.rooms.client import InProcessTransport, RoomsClient

    first = RoomService(SqlLedger.from_url(sqlite_url))
    world = make_world(first)
    second = RoomService(SqlLedger.from_url(sqlite_url))

    async def scenario() -> str:
        transport = InProcessTransport(first, world.reviewer_key, keepalive_seconds=0.05)
        async with RoomsClient(transport, heartbeat_interval=0.05) as client:
            await client.connect_to_room(world.room_id)
            sent = second.post_message(second.user(world.alice.id), world.room_id, "from elsewhere",
                                       target_names=["reviewer"])
            event = await client.next_event(lambda e: e.get("type") == "message", timeout=20)
            assert event["payload"]["message_id"] == sent.message_id
            return str(event["payload"]["body"])

    try:
        assert asyncio.run(scenario()) == "@reviewer from elsewhere"
    finally:
        first.ledger.close()
        second.ledger.close()
def test_an_agent_polling_sees_a_message_another_process_wrote_with_nothing_written_here(db_url: str) -> None:
    """A long-running agent process (`signoff repair run --follow`) that only reads must still see a
    message that `signoff serve` wrote (a person's click in the pages), without a write of its own."""
    first = RoomService(SqlLedger.from_url(db_url))
    world = make_world(first)
    second = RoomService(SqlLedger.from_url(db_url))
    seen = first.agent_events(world.reviewer.id, 0)
    cursor = seen[-1]["sequence"] if seen else 0
    remote = second.post_message(second.agent(world.fixer.id), world.room_id, "from elsewhere",
                                 target_names=["reviewer"])
    got = [e["payload"]["message_id"] for e in first.agent_events(world.reviewer.id, cursor)
           if e["type"] == "message"]
    assert got == [remote.message_id]
    first.ledger.close()
    second.ledger.close()
