"""Room links (`link_rooms`, as Switch has them): a directed pointer with a label, shown in the source
room's `linked_rooms` with whether the reader may act in the target. Linking takes what changing both
rooms takes (as adding a member does); anyone else is refused with nothing written. Kept as typed
`room.linked`/`room.unlinked` events in the source room's case, from which the table is rebuilt.
Over HTTP as an agent operation, every bad input is a 4xx."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from signoff.kernel.errors import NotFoundError, RefusedError, UsageError
from signoff.rooms import OPEN
from signoff.rooms.domain.model import RoomLinked
from signoff.rooms.http.app import create_app
from tests.support.fixtures.rooms import World


@pytest.fixture
def rooms(world: World) -> tuple[str, str]:
    """case-1 (alice's: fixer, reviewer, alice, bob) and alice's `shared` room (fixer only)."""
    shared = world.service.create_room(world.alice, "shared", "the shared room", agent_names=["fixer"],
                                       user_names=["alice"])
    return world.room_id, shared.id


def test_a_link_is_a_labelled_pointer_with_the_readers_access(world: World, rooms: tuple[str, str]) -> None:
    s = world.service
    source, target = rooms
    made = s.link_rooms(world.alice, source, target, "shared room")
    assert made == {"target_room_id": target, "target_room_name": "shared",
                    "target_room_description": "the shared room", "label": "shared room"}
    assert s.list_linked_rooms(world.fixer, source) == [{**made, "access": "member"}]
    seen_by_reviewer = s.room_detail(world.reviewer, source)["linked_rooms"]
    assert [(x["access"], "access_note" in x) for x in seen_by_reviewer] == [("not_member", True)]
    assert s.list_references(world.fixer, source)["linked_rooms"] == [{**made, "access": "member"}]
    assert s.room_detail(world.fixer, target)["linked_rooms"] == []  # one way only
    events = [e for e in world.service.ledger.read(f"rooms.room.{source}") if e.type == RoomLinked.TYPE]
    assert [RoomLinked.model_validate(e.payload).label for e in events] == ["shared room"]
    s.link_rooms(world.alice, source, target, "relabelled")
    s.projector.rebuild()  # the table is the events' projection
    assert [x["label"] for x in s.list_linked_rooms(world.fixer, source)] == ["relabelled"]
    s.unlink_rooms(world.alice, source, target)
    assert s.list_linked_rooms(world.fixer, source) == []
    with pytest.raises(NotFoundError):
        s.unlink_rooms(world.alice, source, target)


def test_only_who_may_change_the_source_and_read_the_target_links(world: World, rooms: tuple[str, str]) -> None:
    s = world.service
    source, target = rooms
    outsider, _ = s.create_agent(world.bob, "outsider", "in no room", policy=OPEN)
    head = s.head()
    with pytest.raises(RefusedError):
        s.link_rooms(outsider, source, target, "x")  # not a member of the source
    with pytest.raises(RefusedError):
        s.link_rooms(world.bob, source, target, "x")  # a member of the source, with no part in the target
    with pytest.raises(RefusedError):
        s.link_rooms(world.bob, target, source, "x")  # nor in the source
    for label in ("", " ", "a\nb", "x" * 201):
        with pytest.raises(UsageError):
            s.link_rooms(world.alice, source, target, label)
    with pytest.raises(UsageError):
        s.link_rooms(world.alice, source, source, "itself")
    s.link_rooms(world.alice, source, target, "shared")
    with pytest.raises(RefusedError):
        s.unlink_rooms(outsider, source, target)
    assert s.head() == head + 1  # only alice's link was written


def _op(http: TestClient, world: World, conn: str, name: str, body: Any) -> Any:
    return http.post(f"/agents/{world.fixer.id}/ops/{name}", json=body, headers={
        "Authorization": f"Bearer {world.fixer_key}", "X-Switch-Connection-Id": conn})


def test_link_rooms_over_http(world: World, rooms: tuple[str, str]) -> None:
    source, target = rooms
    http = TestClient(create_app(service=world.service, keepalive_seconds=0.01), raise_server_exceptions=False)
    conn, _ = world.service.connections.open(world.fixer.id, "fixer-conn")
    world.service.connections.claim(conn, source, takeover=True)
    assert "link_rooms" in http.get(f"/agents/{world.fixer.id}/ops",
                                    headers={"Authorization": f"Bearer {world.fixer_key}"}).json()["operations"]
    made = _op(http, world, conn.id, "link_rooms", {"source_room_id": source, "target_room_id": target,
                                                    "label": "shared"})
    assert made.status_code == 200 and made.json()["result"]["target_room_name"] == "shared"
    listed = _op(http, world, conn.id, "list_linked_rooms", {})
    assert [(x["target_room_id"], x["access"]) for x in listed.json()["result"]] == [(target, "member")]
    connected = _op(http, world, conn.id, "connect_to_room", {"room_id": source})
    assert [x["label"] for x in connected.json()["result"]["linked_rooms"]] == ["shared"]
    head = world.service.head()
    for body, status in (({"source_room_id": source, "target_room_id": target}, 400),
                         ({"source_room_id": source, "target_room_id": "nope", "label": "x"}, 404),
                         ({"source_room_id": source, "target_room_id": target, "label": "\u0000"}, 400)):
        refused = _op(http, world, conn.id, "link_rooms", body)
        assert refused.status_code == status and refused.json()["fix"], refused.text
    assert _op(http, world, conn.id, "unlink_rooms", {"source_room_id": target, "target_room_id": source}
               ).status_code == 404
    assert world.service.head() == head
