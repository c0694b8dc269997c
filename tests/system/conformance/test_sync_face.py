"""The synchronous face over the event stream (`StreamSyncTransport`), against the same servers as
the scenario: signoff's own over HTTP in CI, a Switch core by hand (SIGNOFF_CONFORMANCE_URL).

On a Switch core the protocol's long poll opens no connection, so a synchronous client that polls
gets 409 for every room-implicit operation; this face holds an SSE stream per connection instead,
and reads history with read_context (by time) on both servers."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from signoff.kernel.errors import ConflictError, NotFoundError, RefusedError, UnavailableError, UsageError
from signoff.rooms import handoff_matches
from signoff.rooms.client import StreamSyncTransport, SyncRoomsClient, register_agent
from tests.conftest import wait_for
from tests.support.fixtures.conformance import Target


@dataclass
class SyncPair:
    room_id: str
    fixer: SyncRoomsClient
    reviewer: SyncRoomsClient
    fixer_name: str
    reviewer_name: str


def _face(target: Target, agent_id: str, key: str) -> SyncRoomsClient:
    http = httpx.AsyncClient(timeout=30.0, transport=target.recorder.child()) if target.recorder else None
    # The embedded server sends keep-alives every 0.5 s, a Switch core every 15 s: a stream left
    # on a server that went away is dropped after a few missed ones.
    read_timeout = 5.0 if target.kind == "embedded" else 40.0
    return SyncRoomsClient(StreamSyncTransport(target.base_url, agent_id, key, timeout=30.0, poll_wait=0.2,
                                               read_timeout=read_timeout, http=http))


@contextmanager
def sync_pair(target: Target) -> Iterator[tuple[SyncPair, dict[str, str]]]:
    target.step("registration")
    names = target.name("fixer"), target.name("reviewer")
    with target.http() as http:
        regs = [register_agent(target.base_url, target.registration_key, n, "signoff conformance", http=http)
                for n in names]
    target.step("policy")
    for reg in regs:
        target.operator.set_policy(reg.agent_id, None)
    fixer, reviewer = (_face(target, r.agent_id, r.api_key) for r in regs)
    keys = {"reviewer_id": regs[1].agent_id, "reviewer_key": regs[1].api_key}
    try:
        target.step("create_room")
        room = fixer.call("", "create_room", {"name": target.name("room"), "description": "conformance",
                                              "agent_names": list(names)})
        fixer.open("fixer@room", room["id"])
        reviewer.open("reviewer@room", room["id"])
        yield SyncPair(room["id"], fixer, reviewer, *names), keys
    finally:
        fixer.close()
        reviewer.close()


def poll_until(face: SyncRoomsClient, conn: str, room_id: str, after: int,
               found: Callable[[list[dict[str, Any]]], bool], timeout: float = 30.0) -> list[dict[str, Any]]:
    """Poll (each idle poll waits on the stream) until `found` holds for what arrived after `after`."""
    got: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        batch = face.events(conn, room_id, int(got[-1]["sequence"]) if got else after)
        got += batch
        if found(got):
            return got
    raise AssertionError(f"not delivered within {timeout} s: {[e.get('type') for e in got]}")


def _has(message_id: str) -> Callable[[list[dict[str, Any]]], bool]:
    return lambda evs: any((e.get("payload") or {}).get("message_id") == message_id for e in evs)


def test_sync_face_holds_the_stream_and_acts_in_the_room(target: Target) -> None:
    with sync_pair(target) as (p, _keys):
        target.step("sync face")
        # The sender id as the server writes it, learned without posting anything.
        assert p.fixer.sender and p.reviewer.sender and p.fixer.sender != p.reviewer.sender
        if target.kind == "embedded":
            assert p.fixer.sender == f"agent:{p.fixer.agent_id}"
        # Room-implicit operations work on the held connection (a Switch core refuses them
        # with 409 on a connection that only a long poll "opened").
        names = {x["name"] for x in p.reviewer.call("reviewer@room", "list_participants", {})}
        assert {p.fixer_name, p.reviewer_name} <= names
        sent = p.fixer.call("fixer@room", "send_targeted_message",
                            {"body": "patch ready", "target_names": [p.reviewer_name], "target_roles": []})
        assert sent["target_statuses"] == {p.reviewer_name: "live"}
        got = poll_until(p.reviewer, "reviewer@room", p.room_id, 0, _has(sent["event_id"]))
        event = next(e for e in got if e["payload"].get("message_id") == sent["event_id"])
        assert event["room_id"] == p.room_id and event["payload"]["addressed"] is True
        assert event["payload"]["sender"] == p.fixer.sender
        # The receipt holds the text as stored (a Switch core adds the @-prefix and answers only
        # the event id): the receiver's event matches it, a copy by someone else does not.
        receipt = p.fixer.receipt("fixer@room", p.room_id, sent, "patch ready", True)
        assert receipt.body.endswith("patch ready") and handoff_matches(event, receipt)
        assert not handoff_matches({**event, "payload": {**event["payload"], "sender": p.reviewer.sender}}, receipt)
        # The cursor the caller keeps: nothing at or before it comes back.
        cursor = int(got[-1]["sequence"])
        assert p.reviewer.events("reviewer@room", p.room_id, cursor) == []
        # History, as each server defines it (read_context, by time): the exact stored text and
        # the authenticated sender, oldest first.
        history = p.reviewer.history(p.room_id)
        [mine] = [m for m in history if m["message_id"] == sent["event_id"]]
        assert mine["sender"] == p.fixer.sender and mine["body"].endswith("patch ready")
        assert mine["thread_id"] is None
        stamps = [int(m["timestamp"]) for m in history]
        assert stamps == sorted(stamps)
        # A threaded reply carries its root as thread_id.
        reply = p.reviewer.call("reviewer@room", "post_message", {"body": "looking", "thread_id": sent["event_id"]})
        poll_until(p.fixer, "fixer@room", p.room_id, 0, _has(reply["event_id"]))
        [back] = [m for m in p.fixer.history(p.room_id) if m["message_id"] == reply["event_id"]]
        assert back["thread_id"] == sent["event_id"] and back["sender"] == p.reviewer.sender


def test_sync_face_resumes_from_the_callers_cursor(target: Target) -> None:
    with sync_pair(target) as (p, keys):
        target.step("resume")
        first = p.fixer.call("fixer@room", "post_message", {"body": "one"})
        got = poll_until(p.reviewer, "reviewer@room", p.room_id, 0, _has(first["event_id"]))
        cursor = int(next(e for e in got if e["payload"].get("message_id") == first["event_id"])["sequence"])
        p.reviewer.close()  # the process stops; its cursor was saved
        second = p.fixer.call("fixer@room", "post_message", {"body": "two"})
        # A new process with the saved cursor: what came after it, and nothing before.
        again = _face(target, keys["reviewer_id"], keys["reviewer_key"])
        try:
            got = poll_until(again, "reviewer@room", p.room_id, cursor, _has(second["event_id"]))
            ids = [(e.get("payload") or {}).get("message_id") for e in got]
            assert first["event_id"] not in ids
            # An older cursor than the stream began at: the face reads from there.
            older = poll_until(again, "reviewer@room", p.room_id, cursor - 1, _has(first["event_id"]))
            assert _has(second["event_id"])(older)
            # Operations on the reopened connection, without an explicit open (a poll opened it).
            assert again.call("reviewer@room", "read_context", {"limit": 5})["threads"]
        finally:
            again.close()


def test_sync_face_history_needs_an_open_connection(target: Target) -> None:
    with sync_pair(target) as (p, _keys):
        with pytest.raises(UsageError, match="no connection"):
            p.fixer.history("00000000-0000-0000-0000-000000000000")


def test_sync_face_after_a_restart_that_loses_events_hands_over_the_renumbered_ones(target: Target) -> None:
    with sync_pair(target) as (p, _keys):
        target.step("before restart")
        first = p.fixer.call("fixer@room", "post_message", {"body": "before the mark"})
        got = poll_until(p.reviewer, "reviewer@room", p.room_id, 0, _has(first["event_id"]))
        target.mark()
        lost = p.fixer.call("fixer@room", "post_message", {"body": "after the mark"})
        got += poll_until(p.reviewer, "reviewer@room", p.room_id, int(got[-1]["sequence"]), _has(lost["event_id"]))
        cursor = int(got[-1]["sequence"])  # the reviewer's saved cursor: beyond the restarted server's head
        target.step("restart")
        target.restart_losing_events()
        target.step("after restart")
        # The reviewer's stream reopens on the new server, which reports the gap (on a Switch
        # core only while its buffer is still behind the cursor: see docs/rooms.md).
        transport = p.reviewer.transport
        assert isinstance(transport, StreamSyncTransport)
        assert wait_for(lambda: len(transport.status()["reviewer@room"]["gaps"]) == 1, 90, 0.2), transport.status()
        posted: list[dict[str, Any]] = []

        def post() -> bool:  # until the fixer's stream has reopened on the new server
            try:
                posted.append(p.fixer.call("fixer@room", "post_message", {"body": "after restart"}))
            except (ConflictError, NotFoundError, UnavailableError):
                return False
            return True

        assert wait_for(post, 60, 0.2)
        # Polled with the old cursor, the new event (numbered afresh, below it) still comes.
        after = poll_until(p.reviewer, "reviewer@room", p.room_id, cursor, _has(posted[0]["event_id"]), 60)
        new = next(e for e in after if e["payload"].get("message_id") == posted[0]["event_id"])
        assert int(new["sequence"]) <= cursor
        # From then on the caller's cursor is in the new numbering.
        assert p.reviewer.events("reviewer@room", p.room_id, int(after[-1]["sequence"])) == []


def test_sync_face_with_a_wrong_key_is_refused_at_open(target: Target) -> None:
    with sync_pair(target) as (p, _keys):
        forged = SyncRoomsClient(StreamSyncTransport(target.base_url, p.reviewer.agent_id, "not-the-key",
                                                     timeout=30.0, poll_wait=0.2))
        try:
            with pytest.raises(RefusedError):
                forged.open("forged@room", p.room_id)
            with pytest.raises(RefusedError):
                forged.events("forged@room", p.room_id, 0)
        finally:
            forged.close()
        # The real reviewer's connection is untouched.
        names = {x["name"] for x in p.reviewer.call("reviewer@room", "list_participants", {})}
        assert p.reviewer_name in names
