"""A repair command a live switch-core 0.19 lost in a restart, replayed
(tests/data/recordings/switch-0.19/repair_command_lost_in_a_core_restart.json, recorded on
2026-12-06 from the repair walk of docs/repair.md, "On an existing Switch server"): the operator's
stand-in addressed the verifier while it was down, the core restarted, and the verifier's stream
came back with a gap and nothing else. What the agents' loop takes from the room's re-read is the
command, once, from the bound sender, addressed; Switch's own "I'm currently offline" notices,
posted under the verifier's own sender id, are never taken or answered. The gateway's answers are
what `signoff rooms policy set|show` reads back."""

from __future__ import annotations

import json
from typing import Any

import httpx

from signoff.repair import decisions
from signoff.rooms.client import SwitchOperator, is_automated_notice, joined_as
from signoff.rooms.client._context import entries
from signoff.rooms.client._missed import missed
from tests.unit.conformance.test_replay import frames_of, recording

NAME = "repair-verifier"


def _exchanges() -> list[dict[str, Any]]:
    return recording("repair_command_lost_in_a_core_restart")


def _context() -> list[dict[str, Any]]:
    [read] = [e for e in _exchanges() if e["path"].endswith("/ops/read_context")]
    return list(entries(read["response"]["result"]))


def test_the_restarted_core_brings_only_a_gap_and_the_re_read_holds_the_lost_command_once() -> None:
    verifier_streams = [e for e in _exchanges() if "sse" in e and e["query"]["start_from"] != "head"]
    [after] = [frames_of(e["sse"]) for e in verifier_streams]
    assert [f.event for f in after] == ["connection_state", "gap"]  # the command is not on the stream
    assert after[1].data["resumed_at"] == 0
    found = _context()
    [me] = joined_as(found, NAME)
    [alice] = joined_as(found, "alice-standin")
    taken = missed("room", found, NAME, me, None)
    lost = [m for m in taken if "recorded while the verifier was down" in m["payload"]["body"]]
    assert len(lost) == 1
    p = lost[0]["payload"]
    assert p["sender"] == alice and p["addressed"] is True and p["recovered"] is True
    assert decisions.parse_stuck(p["body"], NAME) == ("abandon", "coupon-01", "recorded while the verifier was down")
    # The acceptance sent before the earlier restart is there too (its own id: the loop takes it once).
    [accept] = [m for m in taken if m["payload"]["body"].startswith(f"@{NAME} accept ")]
    parsed = decisions.parse_command(accept["payload"]["body"], NAME)
    assert parsed is not None and parsed.verb == "accept" and parsed.commit == "b5ca12fbefc2"
    # Switch's offline notices carry the verifier's own sender id: never taken, and never answered.
    notices = [e for e in found if "currently offline" in str(e.get("body"))]
    assert notices and all(e["sender"] == me for e in notices)
    assert all(is_automated_notice({"type": "message", "payload": {"body": e["body"]}}) for e in notices)
    assert not any("currently offline" in m["payload"]["body"] for m in taken)


def test_the_gateway_answers_are_what_policy_show_reads() -> None:
    recorded = {(e["method"], e["path"]): e for e in _exchanges() if e["path"].startswith("/gateway/")}

    def answer(request: httpx.Request) -> httpx.Response:
        e = recorded[(request.method, request.url.path)]
        if request.url.path == "/gateway/auth/login":
            assert json.loads(request.content)["email"] == e["request"]["email"]
            return httpx.Response(e["status"], json=e["response"], headers={"set-cookie": "switch_auth=x; Path=/"})
        assert request.headers["cookie"] == "switch_auth=x"
        return httpx.Response(e["status"], json=e["response"])

    operator = SwitchOperator("http://switch.test", "admin@example.com", "secret",
                              transport=httpx.MockTransport(answer))
    agent_path = next(p for (m, p) in recorded if m == "GET")
    [rule] = operator.policy(agent_path.rsplit("/", 1)[1])["rules"]  # type: ignore[index]
    alice = next(e for e in _exchanges() if e["path"].endswith("/ops/connect_to_room"))["path"].split("/")[2]
    assert rule["agents"] == [alice] and rule["owner"] is True and rule["users"] == []
    assert operator.user["name"] == "Admin"


def test_the_sync_face_hands_over_what_the_restart_lost_once_as_the_agent_loop_does() -> None:
    """The synchronous face's stream (`StreamSyncTransport`) takes the gap's re-read like the agent
    loop: the lost command comes over as an addressed message, once; what the stream already
    delivered is not handed over again; its own messages and Switch's notices under its name are
    not handed over."""
    import asyncio
    from collections.abc import AsyncIterator

    from signoff.rooms.client import StreamSyncTransport
    from signoff.rooms.client._stream_sync import _Stream

    found = _context()
    [me] = joined_as(found, NAME)
    report = next(e for e in found if str(e.get("body")).startswith(f"@{NAME} the coupon"))
    streamed = {"type": "message", "room_id": "room", "sequence": 7,
                "payload": {"message_id": report["id"], "body": report["body"], "addressed": True}}
    [read] = [e for e in _exchanges() if e["path"].endswith("/ops/read_context")]
    recovered = {"type": "context_recovered", "room_id": "room",
                 "payload": {"gap": {"resumed_at": 0}, "context": read["response"]["result"]}}

    class Client:
        async def events(self) -> AsyncIterator[dict[str, Any]]:
            for env in (streamed, recovered):
                yield env

    transport = StreamSyncTransport("http://switch.invalid", "verifier-id", "key", sender=me)
    try:
        stream = _Stream(Client(), "room", 0, joined={"participants": [{"id": "verifier-id", "name": NAME}]})  # type: ignore[arg-type]
        asyncio.run_coroutine_threadsafe(transport._pump(stream), transport._loop).result(10)
        handed = [env for _, env in stream.events]
    finally:
        transport.close()
    ids = [env["payload"]["message_id"] for env in handed]
    assert len(ids) == len(set(ids)) and ids[0] == report["id"]  # the streamed report, not again
    [lost] = [env for env in handed if "recorded while the verifier was down" in env["payload"]["body"]]
    assert lost["payload"]["addressed"] is True and lost["payload"]["recovered"] is True
    assert all(env["payload"]["sender"] != me for env in handed[1:])  # never its own, nor notices under its name
