"""Stream control frames, internal-only rooms, approvals over HTTP, and the client's receipt
path against a server that returns only `event_id` (as a Switch 0.19 core does)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from signoff.kernel.errors import RefusedError, UsageError
from signoff.rooms import handoff_matches
from signoff.rooms.client import InProcessTransport, RoomsClient
from signoff.rooms.http.app import create_app
from signoff.rooms.protocol.streams import StreamParams, frames, open_stream
from tests.support.fixtures.rooms import World, run


def test_subscription_changed_and_takeover(world: World) -> None:
    s = world.service

    async def scenario() -> list[Any]:
        opened = await open_stream(s, world.fixer, StreamParams("c1", scope="all", start_from="head"))
        other, _ = s.connections.open(world.fixer.id, "c2")
        stream = frames(s, opened, keepalive=0.05)
        seen = [await anext(stream)]
        s.connections.claim(opened.connection, world.room_id, takeover=False)
        seen.append(await anext(stream))
        with pytest.raises(Exception, match="already holds room"):
            s.connections.claim(other, world.room_id, takeover=False)
        s.connections.claim(other, world.room_id, takeover=True)
        while True:
            frame = await anext(stream)
            if frame.event == "subscription_changed":
                seen.append(frame)
                break
        await stream.aclose()
        return seen

    state, claimed, taken = run(scenario())
    assert state.event == "connection_state"
    assert claimed.event == "subscription_changed" and claimed.data["rooms"] == [world.room_id]
    assert taken.data["rooms"] == [] and "taken over" in taken.data["reason"]


def test_internal_only_rooms_keep_external_users_out(world: World) -> None:
    s = world.service
    outsider, _ = s.create_user("reporter", external=True)
    internal = s.create_room(world.alice, "triage", agent_names=["fixer"], user_names=["alice"],
                             internal_only=True)
    head = s.head()
    with pytest.raises(RefusedError, match="internal only"):
        s.add_member(world.alice, internal.id, user_name="reporter")
    with pytest.raises(RefusedError, match="internal"):
        s.create_room(world.alice, "x", user_names=["reporter"], internal_only=True)
    with pytest.raises(RefusedError):
        s.read_messages(outsider, internal.id)
    with pytest.raises(RefusedError):
        s.post_message(outsider, internal.id, "let me in")
    assert s.head() == head
    assert [r["room_id"] for r in s.list_rooms(outsider)] == []


def test_approval_answered_over_http(world: World) -> None:
    s = world.service
    s.request_approval(world.fixer, world.room_id, "http-1", "Ship it?",
                       [{"id": "ship", "label": "Ship", "decision": "accept"}], s.clock.now() + 60, ["alice"])
    with TestClient(create_app(service=s, keepalive_seconds=0.5)) as http:  # HTTP to the app over ASGI
        pending = http.get("/users/me/approvals", headers={"Authorization": f"Bearer {world.alice_token}"})
        assert [c["request_id"] for c in pending.json()["approvals"]] == ["http-1"]
        shown = pending.json()["approvals"][0]["digest"]
        wrong = http.post("/users/me/approvals/http-1", json={"option_id": "ship", "digest": shown},
                          headers={"Authorization": f"Bearer {world.bob_token}"})
        assert wrong.status_code == 200 and wrong.json()["allowed"] is False
        bad = http.post("/users/me/approvals/http-1", json={"option": "ship", "digest": shown},
                        headers={"Authorization": f"Bearer {world.alice_token}"})
        assert bad.status_code == 422
        unseen = http.post("/users/me/approvals/http-1", json={"option_id": "ship"},
                           headers={"Authorization": f"Bearer {world.alice_token}"})
        assert unseen.status_code == 422  # an answer names the card it answers
        ok = http.post("/users/me/approvals/http-1", json={"option_id": "ship", "digest": shown},
                       headers={"Authorization": f"Bearer {world.alice_token}"})
        assert ok.json()["outcome"] == "accepted" and ok.json()["responder_name"] == "Alice"
    assert s.approval(world.alice, "http-1").state == "accepted"


def test_approval_ids_with_a_slash_are_refused_when_asked(world: World) -> None:
    s = world.service
    head = s.head()
    with pytest.raises(UsageError, match="bad request_id 'coupon-01/merge'"):
        s.request_approval(world.fixer, world.room_id, "coupon-01/merge", "Merge?",
                           [{"id": "yes", "label": "Merge", "decision": "accept"}], s.clock.now() + 60, ["alice"])
    assert s.head() == head


class SwitchLikeTransport(InProcessTransport):
    """Our server's answers trimmed to what switch-core 0.19 returns from post operations."""

    async def call(self, op: str, args: dict[str, Any], connection_id: str | None) -> Any:
        result = await super().call(op, args, connection_id)
        if op in ("post_message", "send_targeted_message"):
            return {k: v for k, v in result.items() if k in ("event_id", "target_statuses")}
        return result


def test_client_receipt_from_a_server_that_returns_only_event_ids(world: World) -> None:
    s = world.service

    async def flow() -> None:
        client = RoomsClient(SwitchLikeTransport(s, world.fixer_key), heartbeat_interval=0.2)
        async with client:
            await client.connect_to_room(world.room_id)
            receipt = await client.send_targeted_message("handoff ready", ["reviewer"])
            assert receipt.sender == world.fixer.sender
            assert receipt.body == "@reviewer handoff ready"
            event = next(e for e in s.agent_events(world.reviewer.id, 0)
                         if e["payload"].get("message_id") == receipt.message_id)
            assert handoff_matches(event, receipt)

    run(flow())


def test_an_operation_through_a_replica_that_cached_the_connection_before_its_room_was_claimed(
        world: World, sqlite_url: str) -> None:
    """Two replicas on one database: B caches the connection as A opens it, A then claims the room.
    An operation through B reads the connection again instead of answering "Not connected to a room"
    (a replica's cache can lag a claim made a moment ago through another)."""
    from signoff.ledger import SqlLedger
    from signoff.rooms import RoomService
    from signoff.rooms.protocol.operations import call_operation

    a = world.service
    b = RoomService(SqlLedger.from_url(sqlite_url, a.clock))
    conn, _ = a.connections.open(world.fixer.id, "c-replicas")
    assert b.connections.get(world.fixer.id, "c-replicas").rooms == []  # B has it cached, roomless
    a.connections.claim(conn, world.room_id, takeover=False)
    call_operation(b, world.fixer, "post_message", {"body": "through B"}, "c-replicas")
    assert [m["body"] for m in a.read_messages(world.alice, world.room_id, after=0, limit=100)][-1] == "through B"
