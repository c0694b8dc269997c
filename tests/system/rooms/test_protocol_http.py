"""The agent protocol over real HTTP: SSE frames, resume, heartbeats, eviction, negotiation,
operations and the error contract (clear 4xx, no state change)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest

from signoff.kernel.clock import FixedClock
from signoff.kernel.tls import tls_context
from signoff.ledger import SqlLedger
from signoff.rooms import RoomService, handoff_matches
from signoff.rooms.client import Frame, HttpTransport, InProcessTransport, RoomsClient, parse_sse
from signoff.rooms.http.app import create_app
from tests.support.cards import answer_in
from tests.support.fixtures.rooms import World, run
from tests.support.web import HTTP_WAIT


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def _frames(base: str, world: World, cid: str, n: int, last_event_id: str | None = None,
                  **params: str) -> list[Frame]:
    """Open the reviewer's stream and read until `n` message frames or an evicted frame."""
    headers = {**_auth(world.reviewer_key), "Accept": "text/event-stream"}
    if last_event_id is not None:
        headers["Last-Event-ID"] = last_event_id
    query = {"connection_id": cid, "scope": "all", "protocol": "1", "protocol_accepts": "1", **params}
    got: list[Frame] = []
    async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=10), verify=tls_context()) as http, http.stream(
            "GET", f"{base}/agents/{world.reviewer.id}/events", params=query, headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        async for frame in parse_sse(response.aiter_lines()):
            if frame.event is None:
                continue
            got.append(frame)
            if frame.event == "evicted" or len([f for f in got if f.event == "message"]) >= n:
                break
    return got


def test_sse_stream_resumes_with_last_event_id_after_a_dropped_socket(http_world: tuple[World, str]) -> None:
    world, base = http_world
    s = world.service
    cid = str(uuid.uuid4())
    sent = [s.post_message(world.fixer, world.room_id, f"m{i}", target_names=["reviewer"]) for i in range(2)]
    first = run(_frames(base, world, cid, 2, start_from="0"))
    state = first[0]
    assert state.event == "connection_state" and state.id is None
    assert state.data["heartbeat_interval_seconds"] == 2.0
    assert state.data["server"]["contracts"]["agent-protocol"] == {"speaks": 1, "accepts": 1}
    messages = [f for f in first if f.event == "message"]
    assert [f.data["payload"]["message_id"] for f in messages] == [r.message_id for r in sent]
    assert all(f.id == f.data["sequence"] for f in messages)
    assert handoff_matches(messages[0].data, sent[0])
    # The socket is gone; three more messages arrive meanwhile; resume from the last id.
    later = [s.post_message(world.fixer, world.room_id, f"later{i}") for i in range(3)]
    second = run(_frames(base, world, cid, 3, last_event_id=str(messages[-1].id)))
    resumed = [f for f in second if f.event == "message"]
    assert [f.data["payload"]["message_id"] for f in resumed] == [r.message_id for r in later]
    assert not [f for f in second if f.event == "gap"]


def test_heartbeat_lapse_evicts(world: World, serve_app: Any, clock: FixedClock) -> None:
    app = create_app(service=world.service, keepalive_seconds=0.2, housekeeping_seconds=3600)
    base, _ = serve_app(app)
    s = world.service
    cid = str(uuid.uuid4())

    async def scenario() -> list[Frame]:
        task = asyncio.create_task(_frames(base, world, cid, 10))
        for _ in range(500):
            if s.connections.connections(world.reviewer.id):
                break
            await asyncio.sleep(0.01)
        async with httpx.AsyncClient(verify=tls_context()) as http:
            beat = await http.post(f"{base}/agents/{world.reviewer.id}/connection/beat",
                                   json={"connection_id": cid, "cursor": 0}, headers=_auth(world.reviewer_key))
            assert beat.status_code == 200 and beat.json()["ok"] is True
            clock.advance(7)  # no beat for longer than the 6 s TTL
            assert [c.id for c in s.connections.sweep()] == [cid]
            frames = await asyncio.wait_for(task, 10)
            late = await http.post(f"{base}/agents/{world.reviewer.id}/connection/beat",
                                   json={"connection_id": cid, "cursor": 0}, headers=_auth(world.reviewer_key))
            assert late.status_code == 404
        return frames

    frames = run(scenario())
    assert frames[-1].event == "evicted" and frames[-1].data == {"reason": "heartbeat lapsed"}


def test_protocol_mismatch_is_409_with_explanation(http_world: tuple[World, str]) -> None:
    world, base = http_world
    r = httpx.get(f"{base}/agents/{world.reviewer.id}/events", headers=_auth(world.reviewer_key),
                  params={"connection_id": "c1", "protocol": "5", "protocol_accepts": "5"}, verify=tls_context(),
                  timeout=HTTP_WAIT)
    assert r.status_code == 409
    detail = r.json()["detail"]
    assert detail["contract"] == "agent-protocol"
    assert detail["server"]["speaks"] == 1 and detail["client"] == {"speaks": 5, "accepts": 5}
    assert "remedy" in detail and "5" in detail["message"]


def test_bad_requests_get_clear_4xx_and_change_nothing(http_world: tuple[World, str]) -> None:
    world, base = http_world
    s = world.service
    agent = world.fixer
    head = s.head()
    url = f"{base}/agents/{agent.id}"
    key = _auth(world.fixer_key)
    with httpx.Client(timeout=10, verify=tls_context()) as http:
        # A live connection of the reviewer, whose id the fixer then tries to use.
        s.connections.open(world.reviewer.id, "reviewer-conn")
        cases = [
            (http.post(f"{url}/ops/post_message", content=b"{not json", headers={**key, "X-Switch-Connection-Id":
                                                                              "x"}), 422, "malformed JSON"),
            (http.post(f"{url}/ops/launch_missiles", json={}, headers=key), 404, "unknown operation"),
            (http.post(f"{url}/ops/post_message", json={"body": "hi"}, headers=_auth("soa_wrong")), 401,
             "invalid"),
            (http.post(f"{url}/ops/post_message", json={"body": "hi"}), 401, "missing bearer"),
            (http.post(f"{url}/ops/post_message", json={"body": "hi"},
                       headers={**key, "X-Switch-Connection-Id": "reviewer-conn"}), 403, "another agent"),
            (http.post(f"{url}/ops/post_message", json={"body": "hi"},
                       headers={**key, "X-Switch-Connection-Id": "nobody"}), 409, "unknown or dead"),
            (http.post(f"{url}/ops/post_message", json={"body": "hi", "extra": 1},
                       headers={**key, "X-Switch-Connection-Id": "nobody"}), 400, "extra"),
            (http.post(f"{url}/ops/post_message", json={"body": "hi"}, headers=key), 400, "Not connected"),
            (http.post(f"{base}/agents/{world.reviewer.id}/ops/post_message", json={"body": "hi"}, headers=key),
             403, "belongs to agent"),
            (http.post(f"{url}/connection/beat", json={"connection_id": "reviewer-conn", "cursor": None},
                       headers=key), 422, "cursor"),
            (http.post(f"{url}/connection/beat", json={"connection_id": "reviewer-conn", "cursor": 0},
                       headers=key), 403, "another agent"),
            (http.post(f"{base}/users/me/rooms/{world.room_id}/messages", json={"body": "x"},
                       headers=_auth(world.fixer_key)), 403, "user token"),
            (http.post(f"{base}/agents", json={"name": "new-agent"}, headers=_auth("sor_bogus")), 401,
             "registration"),
            (http.post(f"{base}/agents", json={"name": "Bad Name"}, headers=_auth(world.registration_key)), 400,
             "bad agent name"),
            (http.put(f"{base}/admin/agents/{world.reviewer.id}/addressing-policy", json={"policy": None},
                      headers=_auth(world.reviewer_key)), 403, "owner"),
            (http.put(f"{base}/admin/agents/{world.reviewer.id}/addressing-policy", json={"policy": None},
                      headers=_auth(world.bob_token)), 403, "owner"),
        ]
        for response, status, words in cases:
            assert response.status_code == status, (response.request.url, response.text)
            body = response.json()
            text = str(body["detail"])
            assert words.lower() in text.lower(), (words, body)
    assert s.head() == head


def test_register_rotate_and_user_endpoints(http_world: tuple[World, str]) -> None:
    world, base = http_world
    with httpx.Client(timeout=10, verify=tls_context()) as http:
        reg = http.post(f"{base}/agents", json={"name": "helper", "description": "helps"},
                        headers=_auth(world.registration_key))
        assert reg.status_code == 200
        agent_id, key1 = reg.json()["id"], reg.json()["api_key"]
        dup = http.post(f"{base}/agents", json={"name": "helper"}, headers=_auth(world.registration_key))
        assert dup.status_code == 409
        again = http.post(f"{base}/agents", json={"name": "helper", "overwrite": True},
                          headers=_auth(world.registration_key))
        assert again.json()["id"] == agent_id and again.json()["api_key"] != key1
        assert http.get(f"{base}/agents/{agent_id}/ops", headers=_auth(key1)).status_code == 401
        ops = http.get(f"{base}/agents/{agent_id}/ops", headers=_auth(again.json()["api_key"])).json()
        for name in ("connect_to_room", "post_message", "send_targeted_message", "read_context",
                     "list_participants", "get_room_detail", "create_room", "invite_agent_to_room",
                     "create_room_document", "update_room_document", "load_internal_documents",
                     "create_reference", "attach_reference_to_room", "list_references", "define_role",
                     "assume_role", "release_role", "list_roles"):
            assert "input_schema" in ops["operations"][name]
        # New agents start owner-only (the registration key belongs to the admin).
        assert world.service.policy(agent_id) is not None
        posted = http.post(f"{base}/users/me/rooms/{world.room_id}/messages",
                           json={"body": "@reviewer please check"}, headers=_auth(world.bob_token))
        assert posted.status_code == 200
        listed = http.get(f"{base}/users/me/rooms/{world.room_id}/messages", headers=_auth(world.alice_token))
        assert [m["message_id"] for m in listed.json()["messages"]] == [posted.json()["event_id"]]
        outsider = http.post(f"{base}/admin/users", json={"name": "eve"}, headers=_auth(world.admin_token))
        eve = outsider.json()["token"]
        denied = http.get(f"{base}/users/me/rooms/{world.room_id}/messages", headers=_auth(eve))
        assert denied.status_code == 403


@pytest.mark.parametrize("kind", ["http", "inprocess"])
def test_client_full_flow(kind: str, http_world: tuple[World, str]) -> None:
    world, base = http_world
    s = world.service

    def transport(agent_id: str, key: str) -> Any:
        if kind == "http":
            return HttpTransport(base, agent_id, key)
        return InProcessTransport(s, key)

    async def flow() -> None:
        fixer = RoomsClient(transport(world.fixer.id, world.fixer_key), heartbeat_interval=0.2)
        reviewer = RoomsClient(transport(world.reviewer.id, world.reviewer_key), filter="addressed",
                               heartbeat_interval=0.2)
        async with fixer, reviewer:
            await fixer.connect_to_room(world.room_id)
            await reviewer.connect_to_room(world.room_id)
            s.post_message(world.bob, world.room_id, "chatter, not addressed")
            receipt = await fixer.send_targeted_message("patch ready", ["reviewer"])
            assert receipt.target_statuses == {"reviewer": "live"}
            assert fixer.receipts[receipt.message_id] == receipt
            event = await reviewer.next_event(lambda e: e["type"] == "message", timeout=10)
            assert event["payload"]["body"] == "@reviewer patch ready"
            assert handoff_matches(event, receipt)
            doc = await fixer.call("create_room_document", name="notes", content="draft")
            with pytest.raises(Exception, match="did not create document"):
                await reviewer.call("update_room_document", document_id=doc["document_id"], content="x")
            card = await fixer.request_approval("merge-1", "Merge?", [
                {"id": "ok", "label": "Merge", "decision": "accept"}], s.clock.now() + 600, ["alice"])
            assert card["state"] == "pending"
            answer_in(s, world.alice, "merge-1", "ok")
            outcome = await fixer.next_event(lambda e: e["type"] == "approval_outcome", timeout=10)
            assert outcome["payload"]["outcome"] == "accepted" and outcome["payload"]["allowed"] is True

    run(flow())


def test_resume_after_server_restart_loses_and_duplicates_nothing(
        sqlite_url: str, serve_app: Any, clock: FixedClock) -> None:
    from tests.support.fixtures.rooms import make_world

    ledger = SqlLedger.from_url(sqlite_url, clock)
    world = make_world(RoomService(ledger))
    base, server = serve_app(create_app(service=world.service, keepalive_seconds=0.2))
    port = int(base.rsplit(":", 1)[1])

    async def scenario() -> None:
        client = RoomsClient(HttpTransport(base, world.reviewer.id, world.reviewer_key), heartbeat_interval=0.2,
                             backoff_initial=0.05, backoff_max=0.2)
        async with client:
            await client.connect_to_room(world.room_id)
            before = [world.service.post_message(world.fixer, world.room_id, f"before{i}") for i in range(3)]
            got = [await client.next_event(lambda e: e["type"] == "message", 10) for _ in before]
            assert [e["payload"]["message_id"] for e in got] == [r.message_id for r in before]
            await asyncio.to_thread(server.stop)
            # While the server is down another process writes; then a fresh server starts on the same data.
            fresh = RoomService(SqlLedger.from_url(sqlite_url, clock))
            during = [fresh.post_message(world.fixer, world.room_id, f"during{i}") for i in range(3)]
            import uvicorn

            from tests.support.fixtures.rooms import Server

            second = Server(create_app(service=fresh, keepalive_seconds=0.2))
            second.config = uvicorn.Config(second.config.app, host="127.0.0.1", port=port, log_level="warning")
            second.server = uvicorn.Server(second.config)
            import threading

            second.thread = threading.Thread(target=second.server.run, daemon=True)
            await asyncio.to_thread(second.start)
            try:
                after = [fresh.post_message(world.fixer, world.room_id, f"after{i}") for i in range(2)]
                rest = [await client.next_event(lambda e: e["type"] == "message", 20) for _ in during + after]
                assert [e["payload"]["message_id"] for e in rest] == [r.message_id for r in during + after]
                assert client.gaps == []
                assert client._queue.empty()
            finally:
                await asyncio.to_thread(second.stop)

    run(scenario())
