"""Replaying what a live switch-core 0.19 answered (tests/data/recordings/switch-0.19/, recorded by hand from
a server we ran ourselves: see tests/data/recordings/README.md) against the client's parsing and decisions.
CI cannot run a Switch core; these keep the client honest about its real answers."""

from __future__ import annotations

import asyncio
import copy
import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from signoff.kernel.errors import RefusedError, UnavailableError, UsageError
from signoff.kernel.wire import error_from
from signoff.rooms import Receipt, handoff_matches
from signoff.rooms.client import (
    ContextPager,
    Frame,
    RoomsClient,
    StreamParams,
    StreamSyncTransport,
    SyncRoomsClient,
    Transport,
    is_refusal_text,
    parse_sse,
    refused_by,
    refuses,
    registration_body,
)
from tests.support.paths import DATA

RECORDINGS = DATA / "recordings" / "switch-0.19"


def recording(name: str) -> list[dict[str, Any]]:
    exchanges: list[dict[str, Any]] = json.loads((RECORDINGS / f"{name}.json").read_text())["exchanges"]
    return exchanges


def streams(exchanges: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    return (e for e in exchanges if "sse" in e)


def frames_of(lines: list[str]) -> list[Frame]:
    async def collect() -> list[Frame]:
        async def source() -> AsyncIterator[str]:
            for line in lines:
                yield line

        return [f async for f in parse_sse(source()) if f.event is not None]

    return asyncio.run(collect())


def agent_of(exchange: dict[str, Any]) -> str:
    return str(exchange["path"].split("/")[2])


def op_result(exchanges: list[dict[str, Any]], op: str, agent: str | None = None) -> list[Any]:
    return [e["response"]["result"] for e in exchanges
            if e["path"].endswith(f"/ops/{op}") and e["status"] == 200 and (agent is None or agent_of(e) == agent)]


def test_every_recorded_stream_parses_into_frames_the_client_understands() -> None:
    files = sorted(RECORDINGS.glob("*.json"))
    assert len(files) == 11
    seen = 0
    for path in files:
        for exchange in streams(recording(path.stem)):
            got = frames_of(exchange["sse"])
            state = got[0]
            assert state.event == "connection_state" and state.id is None
            assert state.data["server"]["version"] == "0.19.0"
            assert state.data["server"]["contracts"]["agent-protocol"] == {"speaks": 1, "accepts": 1}
            assert state.data["heartbeat_interval_seconds"] == 2.0
            ids = [f.id for f in got if f.id is not None]
            assert ids == sorted(set(ids)) and all(f.data["sequence"] == f.id for f in got if f.id is not None)
            assert all(f.id is None for f in got if f.event in ("connection_state", "gap", "subscription_changed"))
            seen += 1
    assert seen >= 14


def test_the_registration_body_is_the_one_switch_accepted_and_the_bare_body_is_a_usage_error() -> None:
    exchanges = recording("registration_needs_the_full_body_and_rotates_the_key")
    registrations = [e for e in exchanges if e["method"] == "POST" and e["path"] == "/agents"]
    bare, accepted = registrations[0], registrations[1]
    assert bare["status"] == 422 and {d["loc"][-1] for d in bare["response"]["detail"]} == {
        "connector_type", "integration_profile"}
    mine = registration_body(accepted["request"]["name"], accepted["request"]["description"])
    assert mine == accepted["request"] and accepted["status"] == 200
    error = error_from(422, bare["response"], json.dumps(bare["response"]), "POST /agents")
    assert isinstance(error, UsageError) and "connector_type" in error.message
    rotated = [e for e in exchanges if e["path"].endswith("/ops") and e["method"] == "GET"]
    assert rotated[0]["status"] == 401
    assert isinstance(error_from(401, rotated[0]["response"], "", "GET /ops"), RefusedError)


class Replay(Transport):
    """Plays one agent's recorded streams in order (each ends where the socket broke) and its
    recorded operation answers; keeps every beat it was asked to send."""

    def __init__(self, exchanges: list[dict[str, Any]], agent_id: str) -> None:
        self.agent_id = agent_id
        self._streams = [frames_of(e["sse"]) for e in streams(exchanges) if agent_of(e) == agent_id]
        self._answers = {op: op_result(exchanges, op, agent_id) for op in ("read_context", "connect_to_room")}
        self.params: list[StreamParams] = []
        self.beats: list[int] = []
        self.drained = asyncio.Event()  # every recorded stream was played
        self.beat_after_drain = asyncio.Event()

    async def events(self, params: StreamParams) -> AsyncIterator[Frame]:
        self.params.append(params)
        if not self._streams:
            self.drained.set()
            await asyncio.Event().wait()  # the recording is over: an idle stream
        for frame in self._streams.pop(0):
            yield frame

    async def call(self, op: str, args: dict[str, Any], connection_id: str | None) -> Any:
        return self._answers[op].pop(0)

    async def beat(self, connection_id: str, cursor: int) -> dict[str, Any]:
        self.beats.append(cursor)
        if self.drained.is_set():
            self.beat_after_drain.set()
        return {"ok": True, "cursor": cursor, "rooms": []}

    async def subscribe(self, connection_id: str, room_id: str, takeover: bool = False) -> dict[str, Any]:
        raise AssertionError("not recorded")

    async def unsubscribe(self, connection_id: str, room_id: str) -> dict[str, Any]:
        raise AssertionError("not recorded")

    async def operations(self) -> dict[str, Any]:
        raise AssertionError("not recorded")


def test_after_switch_restarted_the_client_takes_the_renumbered_events_and_beats_the_new_cursor() -> None:
    exchanges = recording("restart_that_loses_events_moves_the_cursor_and_recovers_context")
    # The reviewer: the agent whose second stream carries messages after the gap.
    reviewer = next(agent_of(e) for e in streams(exchanges) if e["step"] == "restart"
                    and any(f.event == "message" for f in frames_of(e["sse"])))
    recorded = [frames_of(e["sse"]) for e in streams(exchanges) if agent_of(e) == reviewer]
    before_ids = [f.id for f in recorded[0] if f.id is not None]
    [gap] = [f.data for f in recorded[1] if f.event == "gap"]
    after = [f for f in recorded[1] if f.id is not None]
    assert gap["resumed_at"] == 0 and max(before_ids) >= max(f.id for f in after if f.id is not None)
    transport = Replay(exchanges, reviewer)

    async def scenario() -> RoomsClient:
        client = RoomsClient(transport, heartbeat_interval=0.01, backoff_initial=0.01)
        client.rooms = [op_result(exchanges, "create_room")[0]["id"]]
        async with client:
            got = [await client.next_event(timeout=5) for _ in range(len(before_ids) + 1 + len(after))]
            await asyncio.wait_for(transport.drained.wait(), 5)
            await asyncio.wait_for(transport.beat_after_drain.wait(), 5)
        kinds = [e["type"] for e in got]
        assert kinds.count("context_recovered") == 1
        delivered = [e for e in got if e["type"] != "context_recovered"]
        assert [e["sequence"] for e in delivered] == before_ids + [f.id for f in after]
        return client

    client = asyncio.run(scenario())
    assert client.cursor == after[-1].id and client.gaps == [gap]
    assert transport.params[1].last_event_id == str(max(before_ids))  # resumed from the old cursor
    assert transport.beats[-1] == after[-1].id  # and then beats the new one, never the stale one


def test_the_busy_room_receipt_is_found_two_pages_back_and_matches_what_the_receiver_got() -> None:
    exchanges = recording("receipts_in_a_busy_room")
    [sent] = [e for e in exchanges if e["path"].endswith("/ops/send_targeted_message")]
    message_id = sent["response"]["result"]["event_id"]
    assert set(sent["response"]["result"]) == {"event_id", "target_statuses"}  # no sender, no body
    sender = agent_of(sent)
    pages = [e for e in exchanges if e["path"].endswith("/ops/read_context") and agent_of(e) == sender]
    pager = ContextPager(message_id)
    found = None
    for page in pages:
        assert pager.args() == page["request"]  # the client asks exactly what was asked of Switch
        found = pager.feed(page["response"]["result"])
    assert found is not None and len(pages) == 3
    receipt = Receipt(message_id=message_id, room_id=op_result(exchanges, "create_room")[0]["id"],
                      sender=found["sender"], body=found["body"], addressed=True,
                      target_statuses=sent["response"]["result"]["target_statuses"])
    delivered = [f.data for e in streams(exchanges) for f in frames_of(e["sse"]) if f.event == "message"
                 and f.data["payload"]["message_id"] == message_id]
    assert delivered and all(handoff_matches(event, receipt) for event in delivered)
    copy = {**delivered[0], "payload": {**delivered[0]["payload"], "sender": "@switch-agent-00000000:localhost"}}
    assert not handoff_matches(copy, receipt)


def test_the_switch_refusal_reaches_the_sender_unaddressed_and_is_still_recognised() -> None:
    exchanges = recording("refusing_policy_is_visible_to_the_sender")
    refused = [e for e in exchanges if e["path"].endswith("/ops/send_targeted_message")
               and "not_permitted" in e["response"]["result"]["target_statuses"].values()]
    [sent] = refused
    sender = agent_of(sent)
    message_id = sent["response"]["result"]["event_id"]
    # The send's read-back (and the later refusal look-up) both hold the message: the first is the receipt's.
    entry = next(x for ctx in op_result(exchanges, "read_context", sender) for t in ctx["threads"]
                 for x in [t["root"]] if x.get("id") == message_id)
    receipt = Receipt(message_id=message_id, room_id="", sender=entry["sender"], body=entry["body"],
                      addressed=False, target_statuses=sent["response"]["result"]["target_statuses"])
    assert refused_by(receipt) == list(receipt.target_statuses)
    mine = [f.data["payload"] for e in streams(exchanges) if agent_of(e) == sender
            for f in frames_of(e["sse"]) if f.event == "message"]
    refusals = [p for p in mine if refuses(p, receipt)]
    assert len(refusals) == 1
    [refusal] = refusals
    assert refusal["addressed"] is False  # through the sender's own (owner-only) policy
    assert refusal["thread_id"] == message_id and is_refusal_text(refusal["body"])
    # The same text typed as a fresh message, or by the sender itself, is not a refusal of this one.
    assert not refuses({**refusal, "thread_id": None}, receipt)
    assert not refuses({**refusal, "sender": receipt.sender}, receipt)


def test_a_second_writer_gets_a_usage_error_naming_the_document() -> None:
    exchanges = recording("documents_have_a_single_writer")
    [denied] = [e for e in exchanges if e["path"].endswith("/ops/update_room_document")]
    assert denied["status"] == 400
    error = error_from(400, denied["response"], json.dumps(denied["response"]), "update_room_document")
    assert isinstance(error, UsageError) and "did not create document" in error.message


@pytest.mark.parametrize("name", sorted(p.stem for p in RECORDINGS.glob("*.json")))
def test_recordings_hold_no_secrets(name: str) -> None:
    text = (RECORDINGS / f"{name}.json").read_text()
    for exchange in recording(name):
        for body in (exchange.get("request"), exchange.get("response")):
            if isinstance(body, dict):
                for key in ("api_key", "password", "key", "token"):
                    assert body.get(key) in (None, "<redacted>")
    assert "Bearer " not in text and "switch_auth=" not in text


def test_capabilities_are_negotiated_from_the_catalogue_switch_answered() -> None:
    from signoff.rooms.client import Capabilities

    data = json.loads((RECORDINGS.parent / "switch-0.19-operations.json").read_text())
    switch = Capabilities.from_catalogue(data["operations"])
    assert len(switch.operations) == 45
    assert not switch.approval_cards and switch.room_links
    assert switch.decision_channel == "addressed_command"
    # Everything the client and the scenario rely on is offered by Switch 0.19.
    assert switch.missing("connect_to_room", "post_message", "send_targeted_message", "read_context",
                          "create_room", "create_room_document", "update_room_document",
                          "load_internal_documents", "list_participants") == []
    assert data["operations"]["read_context"]["arguments"] == ["before", "limit", "since"]


class RecordedServer(httpx.AsyncBaseTransport):
    """One agent's side of a recording, served over httpx as the Switch core answered it: each
    stream request gets the next recorded stream (then stays open and idle), each operation the
    next recorded answer to that operation, after checking the client asked exactly what it
    asked of Switch. Beats are answered as Switch does (`{ok, cursor, rooms}`)."""

    def __init__(self, exchanges: list[dict[str, Any]], agent_id: str) -> None:
        mine = [e for e in exchanges if e["path"].startswith(f"/agents/{agent_id}/")]
        self.streams = [e for e in mine if "sse" in e]
        self.ops = [e for e in mine if "/ops/" in e["path"]]
        self.asked: list[str] = []
        self.cuts: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def cut(self) -> None:
        """End every open stream, as a server going away does."""
        for loop, cut in self.cuts:
            loop.call_soon_threadsafe(cut.set)
        self.cuts = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path.endswith("/events"):
            recorded = self.streams.pop(0)
            assert request.url.params["start_from"] == recorded["query"]["start_from"]
            return httpx.Response(200, headers={"content-type": "text/event-stream"},
                                  stream=_OpenStream(recorded["sse"], self))
        body = json.loads(request.content or b"null")
        if path.endswith("/connection/beat"):
            return httpx.Response(200, json={"ok": True, "cursor": body["cursor"], "rooms": []})
        op = path.rsplit("/", 1)[1]
        self.asked.append(op)
        recorded = next(e for e in self.ops if e["path"].endswith(f"/ops/{op}"))
        self.ops.remove(recorded)
        assert body == recorded["request"], op
        return httpx.Response(recorded["status"], json=recorded["response"])


class _OpenStream(httpx.AsyncByteStream):
    def __init__(self, lines: list[str], server: RecordedServer) -> None:
        self._data = ("\n".join(lines) + "\n").encode()
        self._server = server

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self._data
        # The recording ends here; the socket stays open until the server is cut (a restart).
        cut = asyncio.Event()
        self._server.cuts.append((asyncio.get_running_loop(), cut))
        await cut.wait()


def _sync_face(exchanges: list[dict[str, Any]], agent_id: str) -> tuple[SyncRoomsClient, RecordedServer]:
    server = RecordedServer(exchanges, agent_id)
    http = httpx.AsyncClient(transport=server, timeout=10.0)
    return SyncRoomsClient(StreamSyncTransport("http://switch.invalid", agent_id, "key", poll_wait=2.0,
                                               http=http)), server


def test_the_sync_face_learns_its_sender_polls_and_reads_history_as_switch_answered() -> None:
    exchanges = recording("sync_face_holds_the_stream_and_acts_in_the_room")
    [sent] = [e for e in exchanges if e["path"].endswith("/ops/send_targeted_message")]
    [reply] = [e for e in exchanges if e["path"].endswith("/ops/post_message")]
    fixer_id, reviewer_id = agent_of(sent), agent_of(reply)
    room_id = op_result(exchanges, "create_room")[0]["id"]
    # What the fixer's stream recorded of the reviewer's reply: the reviewer's sender id as Switch writes it.
    reply_id = reply["response"]["result"]["event_id"]
    [seen_reply] = [f.data for e in streams(exchanges) if agent_of(e) == fixer_id for f in frames_of(e["sse"])
                    if f.event == "message" and f.data["payload"]["message_id"] == reply_id]

    reviewer, server = _sync_face(exchanges, reviewer_id)
    try:
        reviewer.open("reviewer@room", room_id)
        # Switch lists no sender with the participants: it is learned from the agent's own room_join.
        assert reviewer.sender == seen_reply["payload"]["sender"]
        assert reviewer.sender.startswith("@switch-agent-")
        reviewer.call("reviewer@room", "list_participants", {})
        [event] = reviewer.events("reviewer@room", room_id, 0)
        assert event["payload"]["message_id"] == sent["response"]["result"]["event_id"]
        assert event["sequence"] == 1 and event["payload"]["addressed"] is True
        history = reviewer.history(room_id)
        [mine] = [m for m in history if m["message_id"] == event["payload"]["message_id"]]
        assert mine["body"] == event["payload"]["body"] and mine["sender"] == event["payload"]["sender"]
        assert all(m["sender"] for m in history)  # room joins are not history messages
        reviewer.call("reviewer@room", "post_message", {"body": "looking", "thread_id": mine["message_id"]})
        assert server.asked == ["connect_to_room", "read_context", "list_participants", "read_context",
                                "post_message"]
    finally:
        reviewer.close()

    fixer, _ = _sync_face(exchanges, fixer_id)
    try:
        fixer.open("fixer@room", room_id)
        assert fixer.sender.startswith("@switch-agent-") and fixer.sender != reviewer.sender
        result = fixer.call("fixer@room", "send_targeted_message", sent["request"])
        assert set(result) == {"event_id", "target_statuses"}  # no sender, no stored text
        receipt = fixer.receipt("fixer@room", room_id, result, "patch ready", True)
        assert receipt.sender == fixer.sender and receipt.body != "patch ready"  # Switch added the @-prefix
        assert handoff_matches(event, receipt)
        replies = [m for m in fixer.history(room_id) if m["message_id"] == seen_reply["payload"]["message_id"]]
        assert [m["thread_id"] for m in replies] == [receipt.message_id]
    finally:
        fixer.close()


def test_the_sync_face_resumes_from_a_saved_cursor_as_switch_answered() -> None:
    exchanges = recording("sync_face_resumes_from_the_callers_cursor")
    posts = [e for e in exchanges if e["path"].endswith("/ops/post_message")]
    first, second = (p["response"]["result"]["event_id"] for p in posts)
    reviewer_id = next(agent_of(e) for e in exchanges if e["path"].endswith("/ops/read_context")
                       and e["request"] == {"limit": 5})
    room_id = op_result(exchanges, "create_room")[0]["id"]
    face, server = _sync_face(exchanges, reviewer_id)
    try:
        face.open("reviewer@room", room_id)
        got = face.events("reviewer@room", room_id, 0)  # below where the stream began: read from 0
        ids = [e["payload"].get("message_id") for e in got]
        assert first in ids and second not in ids
        cursor = int(next(e for e in got if e["payload"].get("message_id") == first)["sequence"])
        assert len(server.streams) == 2  # the open (from head) and the poll's reopen from 0 were asked for
        # The process that saved `cursor` is gone; the next stream starts from it, as recorded.
        face.close()
        face, server = _sync_face(exchanges[exchanges.index(posts[1]):], reviewer_id)
        again = face.events("reviewer@room", room_id, cursor)
        assert [e["payload"]["message_id"] for e in again] == [second]
        older = face.events("reviewer@room", room_id, cursor - 1)
        assert [e["payload"]["message_id"] for e in older] == [first, second]
        assert face.call("reviewer@room", "read_context", {"limit": 5})["threads"]
        assert server.streams == []  # each stream started where the recorded one did (start_from checked)
    finally:
        face.close()


def test_the_sync_face_refuses_to_guess_its_sender_when_someone_else_joined_under_its_name() -> None:
    exchanges = copy.deepcopy(recording("sync_face_holds_the_stream_and_acts_in_the_room"))
    [reply] = [e for e in exchanges if e["path"].endswith("/ops/post_message")]
    reviewer_id = agent_of(reply)
    room_id = op_result(exchanges, "create_room")[0]["id"]
    context = op_result(exchanges, "read_context", reviewer_id)[0]
    [own] = [t for t in context["threads"] if t["root"].get("kind") == "room_join"
             and t["root"]["sender_name"].startswith("reviewer-")]
    # A person whose display name is the agent's name joins too: a name proves nothing.
    context["threads"].append({"root": {**own["root"], "id": "$impostor", "sender": "@mallory:localhost"},
                               "replies": []})
    face, _ = _sync_face(exchanges, reviewer_id)
    try:
        face.open("reviewer@room", room_id)
        with pytest.raises(UnavailableError, match="2 joins under its name"):
            assert face.sender
    finally:
        face.close()


def _poll_for(face: SyncRoomsClient, room_id: str, after: int, message_id: str) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = []
    deadline = time.monotonic() + 20
    while not any(e["payload"].get("message_id") == message_id for e in got):
        assert time.monotonic() < deadline, got
        got += face.events("reviewer@room", room_id, int(got[-1]["sequence"]) if got else after)
    return got


def test_the_sync_face_takes_the_renumbered_events_after_switch_restarted() -> None:
    exchanges = recording("sync_face_after_a_restart_that_loses_events_hands_over_the_renumbered_ones")
    posts = {e["request"]["body"]: e["response"]["result"]["event_id"] for e in exchanges
             if e["path"].endswith("/ops/post_message")}
    room_id = op_result(exchanges, "create_room")[0]["id"]
    fixer_id = next(agent_of(e) for e in exchanges if e["path"].endswith("/ops/post_message"))
    reviewer_id = next(agent_of(e) for e in streams(exchanges) if agent_of(e) != fixer_id)
    [gap] = [f.data for e in streams(exchanges) if agent_of(e) == reviewer_id for f in frames_of(e["sse"])
             if f.event == "gap"]
    face, server = _sync_face(exchanges, reviewer_id)
    try:
        face.open("reviewer@room", room_id)
        cursor = int(_poll_for(face, room_id, 0, posts["after the mark"])[-1]["sequence"])
        server.cut()  # Switch restarts: the stream reopens from the cursor and hears of the gap
        after = _poll_for(face, room_id, cursor, posts["after restart"])
        [new] = [e for e in after if e["payload"]["message_id"] == posts["after restart"]]
        assert new["sequence"] <= cursor  # numbered afresh, below the old cursor, and still handed over
        # What the gap's re-read holds comes over as messages (as the agent loop takes them), each
        # message once however it arrived: nothing the stream handed over before is handed again.
        ids = [e["payload"]["message_id"] for e in after if e["type"] == "message"]
        assert len(ids) == len(set(ids)) and posts["after the mark"] not in ids
        recovered = [e for e in after if "sequence" not in e]
        assert all(e["payload"]["recovered"] is True for e in recovered)
        assert face.events("reviewer@room", room_id, new["sequence"]) == []
        transport = face.transport
        assert isinstance(transport, StreamSyncTransport) and transport.status()["reviewer@room"]["gaps"] == [gap]
        assert server.streams == [] and server.asked == ["connect_to_room", "read_context"]  # the gap's re-read
    finally:
        face.close()
