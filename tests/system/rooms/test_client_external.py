"""The client's handling of what other Switch-protocol servers do differently, on signoff's own
server: reading a receipt back through a burst of messages in one millisecond, gaps with several
rooms, and the operator adapter over `/admin`."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from signoff.kernel.errors import NotFoundError, RefusedError
from signoff.rooms import OWNER_ONLY
from signoff.rooms.client import (
    ContextPager,
    InProcessTransport,
    RoomsClient,
    SignoffOperator,
    operator_for,
    page_back_sync,
)
from signoff.rooms.protocol.operations import call_operation
from tests.support.fixtures.rooms import World


def test_a_receipt_is_found_behind_a_burst_sharing_one_millisecond(world: World) -> None:
    # The world's clock is fixed: every message has the same timestamp, so paging by time alone
    # would never get past the first page; the pager widens the page instead.
    s = world.service
    target = s.post_message(world.fixer, world.room_id, "the one to find", target_names=["reviewer"])
    for i in range(130):
        s.post_message(world.reviewer, world.room_id, f"busy {i}")
    conn = "fixer@burst"
    s.connections.open(world.fixer.id, conn, scope="single", filter_="all")
    call_operation(s, world.fixer, "connect_to_room", {"room_id": world.room_id}, conn)
    asked: list[dict[str, Any]] = []

    def call(op: str, **args: Any) -> Any:
        asked.append(args)
        return call_operation(s, world.fixer, op, dict(args), conn)

    found = page_back_sync(call, target.message_id)
    assert found is not None and (found["sender"], found["body"]) == (target.sender, target.body)
    assert [a["limit"] for a in asked] == [50, 50, 100, 100, 200]  # widened twice, never skipped a message
    assert page_back_sync(call, "$not-there") is None  # the room's start ends the search


def test_the_pager_gives_up_honestly_on_a_malformed_or_final_page() -> None:
    pager = ContextPager("$x")
    assert pager.feed({"threads": [{"root": {"id": "$y", "body": "b"}}], "truncated": True,
                       "oldest_timestamp": "yesterday"}) is None
    assert pager.done
    pager = ContextPager("$x", max_pages=1)
    assert pager.feed({"threads": [], "truncated": True, "oldest_timestamp": 5}) is None and pager.done


def test_a_gap_with_several_rooms_moves_the_cursor_and_leaves_the_context_to_the_consumer(world: World) -> None:
    s = world.service
    second = s.create_room(world.alice, "case-2", agent_names=["fixer", "reviewer"]).id

    async def scenario() -> RoomsClient:
        client = RoomsClient(InProcessTransport(s, world.reviewer_key), scope="all", heartbeat_interval=0.05)
        async with client:
            await client.connect_to_room(world.room_id)
            await client.connect_to_room(second)
            await client._on_gap({"from_sequence": 90, "resumed_at": 3, "reason": "test"})
            sent = s.post_message(world.fixer, second, "after the gap")
            event = await client.next_event(lambda e: e.get("type") != "context_recovered", 10)
            assert event["payload"]["message_id"] == sent.message_id
        return client

    client = asyncio.run(scenario())
    assert client.stale and client.gaps[-1]["resumed_at"] == 3
    assert client.cursor is not None and client.cursor > 3


def test_the_signoff_operator_sets_policies_mints_keys_and_adds_users(http_world: tuple[World, str]) -> None:
    world, base = http_world
    s = world.service
    admin = operator_for(base, world.admin_token)
    assert isinstance(admin, SignoffOperator)
    assert admin.set_policy(world.reviewer.id, OWNER_ONLY)["policy"] == OWNER_ONLY
    assert s.agent_record(world.reviewer.id)["addressing_policy"] == OWNER_ONLY
    key = admin.registration_key()
    assert s.authenticate_registration(key).id == world.admin.id
    made = admin.create_user("carol")
    assert s.user_by_name("carol").id == made["id"]
    # Someone who is neither the owner nor an admin changes nothing.
    bob = SignoffOperator(base, world.bob_token)
    with pytest.raises(RefusedError):
        bob.set_policy(world.reviewer.id, None)
    with pytest.raises(RefusedError):
        bob.create_user("dave")
    assert s.agent_record(world.reviewer.id)["addressing_policy"] == OWNER_ONLY
    with pytest.raises(NotFoundError):
        s.user_by_name("dave")
    for op in (admin, bob):
        op.close()


def test_a_switch_login_against_a_server_without_a_gateway_is_a_clear_error(http_world: tuple[World, str]) -> None:
    _, base = http_world
    with pytest.raises(NotFoundError, match="/gateway/auth/login"):
        operator_for(base, "admin@example.com:secret")

