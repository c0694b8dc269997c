"""Missed events, one behaviour for every agent (`AgentLoop`): the messages inside a
`context_recovered` (a restarted Switch core hands missed messages back only there) reach the
handler as ordinary messages, once each however often and however they are delivered, also
across a restart of the agent; and the server's own notices (an "I'm currently offline" reply, an
addressing refusal) never reach the handler, so no agent answers them.

On the embedded server, in process, with the stream made to forget messages and open with a gap
as a restarted Switch core's does (`tests.support.faulty`); and with the `context_recovered`
recorded from a live switch-core 0.19 (tests/data/desk/switch-0.19-recovered-handoff.json)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from signoff.ledger import NewEvent
from signoff.rooms.client import AgentLoop, AgentStore, InProcessTransport, agent_case, is_automated_notice
from signoff.rooms.client._agent_loop import OPENED
from tests.integration.rooms.test_agent_loop import Recorder, _ask, _until
from tests.support.faulty import Faulty
from tests.support.fixtures.rooms import World
from tests.support.paths import DATA

RECORDED = DATA / "desk" / "switch-0.19-recovered-handoff.json"


def _loop(world: World, transport: Any, handler: Any, name: str = "reviewer") -> AgentLoop:
    return AgentLoop(transport, world.service.ledger, [world.room_id], handler, agent_name=name,
                     heartbeat_interval=0.05)


def _faulty(world: World, lost: set[str] = frozenset(), gap: bool = False) -> Faulty:  # type: ignore[assignment]
    return Faulty(InProcessTransport(world.service, world.reviewer_key), lost=set(lost), gap=gap)


def test_what_a_restart_lost_comes_back_inside_context_recovered_and_is_handled_once(world: World) -> None:
    first, second, third = Recorder(), Recorder(), Recorder()
    seen: list[dict[str, Any]] = []

    async def keep(agent: AgentLoop, env: dict[str, Any]) -> None:
        seen.append(env)
        await second(agent, env)

    async def scenario() -> None:
        async with _loop(world, _faulty(world), first) as agent:
            _ask(world, "before")
            await agent.run(until=lambda: len(first.bodies) == 1)
        # While the agent is down a person accepts; the server restarts and its stream has lost it
        # (a Switch core's in-memory buffer): the next stream brings only a gap.
        accepted = _ask(world, "accept case-1")
        async with _loop(world, _faulty(world, lost={accepted}, gap=True), keep) as agent:
            await agent.run(until=lambda: len(second.bodies) == 1)
            _ask(world, "after")
            await agent.run(until=lambda: len(second.bodies) == 2)
        # Another restart: the same message comes back in the re-read again, and on the stream.
        async with _loop(world, _faulty(world, gap=True), third) as agent:
            _ask(world, "later")
            await agent.run(until=lambda: len(third.bodies) == 1)
            await _until(lambda: not agent.store.state.pending)

    asyncio.run(scenario())
    assert first.bodies == ["@reviewer before"]
    assert second.bodies == ["@reviewer accept case-1", "@reviewer after"]
    [recovered] = [e for e in seen if e["payload"]["body"] == "@reviewer accept case-1"]
    assert recovered["type"] == "message" and recovered["payload"]["recovered"] is True
    assert recovered["payload"]["addressed"] is True
    assert third.bodies == ["@reviewer later"]  # nothing handled before is handled again


def test_a_message_delivered_both_on_the_stream_and_in_the_re_read_is_handled_once(world: World) -> None:
    recorder = Recorder()

    async def scenario() -> None:
        async with _loop(world, _faulty(world), Recorder()):
            pass
        _ask(world, "twice")  # streamed after the gap, and inside the gap's re-read
        async with _loop(world, _faulty(world, gap=True), recorder) as agent:
            await agent.run(until=lambda: len(recorder.bodies) == 1)
            await _until(lambda: not agent.store.state.pending)
            _ask(world, "next")
            await agent.run(until=lambda: len(recorder.bodies) == 2)

    asyncio.run(scenario())
    assert recorder.bodies == ["@reviewer twice", "@reviewer next"]


def test_a_re_read_takes_no_history_from_before_the_agent_first_worked_in_the_room(world: World) -> None:
    recorder = Recorder()
    old = _ask(world, "long ago")  # the server's clock stands still: every message has this time
    stamp = int(world.service.ledger.clock.now() * 1000)
    # The agent first opened the room a day after that message was posted.
    store = AgentStore(world.service.ledger, agent_case(world.reviewer.id))
    store.ledger.append(store.case, store.state.version, [
        NewEvent(OPENED, {"room_id": world.room_id, "position": 0, "at": stamp + 86_400_000})])

    async def scenario() -> None:
        async with _loop(world, _faulty(world, lost={old}, gap=True), recorder) as agent:
            _ask(world, "now")
            await agent.run(until=lambda: len(recorder.bodies) == 1)
            await _until(lambda: not agent.store.state.pending)

    asyncio.run(scenario())
    assert recorder.bodies == ["@reviewer now"]


def test_the_recorded_switch_context_recovered_is_handled_once_per_message(world: World) -> None:
    data = json.loads(RECORDED.read_text())
    env = data["context_recovered"]
    handed: list[dict[str, Any]] = []

    async def keep(agent: AgentLoop, event: dict[str, Any]) -> None:
        handed.append(event)

    async def scenario() -> list[bool]:
        # Never started: events are handed over as a stream would hand them.
        loop = AgentLoop(InProcessTransport(world.service, world.reviewer_key), world.service.ledger,
                         [env["room_id"]], keep, agent_name="desk-reproducer")
        first = await loop.take(env["room_id"], env)
        again = await loop.take(env["room_id"], env)  # the same event delivered twice
        other = {**env, "payload": {**env["payload"], "gap": {**env["payload"]["gap"], "reason": "expired"}}}
        later = await loop.take(env["room_id"], other)  # another gap's re-read holding the same messages
        return [first, again, later]

    taken = asyncio.run(scenario())
    assert taken == [True, False, True]
    bodies = [e["payload"]["body"] for e in handed]
    assert bodies == [f"@desk-reproducer start_reproduction BUG-000{n} round=1 [ref {tag}]"
                      for n, tag in ((1, "40e21c1c0f"), (2, "ceff6da3cb"), (3, "25bd34c901"))]
    assert all(e["type"] == "message" and e["payload"]["addressed"] is True and e["payload"]["recovered"]
               for e in handed)
    assert handed[2]["payload"]["message_id"] == data["receipt"]["message_id"]
    assert handed[2]["payload"]["sender"] == data["manager_sender"]


def test_the_servers_own_notices_never_reach_the_handler(world: World) -> None:
    recorder = Recorder()
    offline = "@reviewer I'm currently offline \u2014 my connector isn't reporting in"
    refusal = "@reviewer You're not permitted to direct messages to me in this room"

    async def scenario() -> None:
        async with _loop(world, _faulty(world), recorder) as agent:
            for text in (offline, refusal):
                world.service.post_message(world.fixer, world.room_id, text)
            _ask(world, "a real request")
            await agent.run(until=lambda: len(recorder.bodies) == 1)
            await _until(lambda: len(agent.store.state.handled) == 3)
            notes = sorted(v or "" for v in agent.store.state.handled.values())
            assert notes[0] == "" and all("automated notice" in n for n in notes[1:])

    asyncio.run(scenario())
    assert recorder.bodies == ["@reviewer a real request"]


def test_what_marks_an_automated_notice() -> None:
    def msg(body: str, **extra: Any) -> dict[str, Any]:
        return {"type": "message", "payload": {"body": body, "addressed": True, **extra}}

    assert is_automated_notice(msg("@verifier I'm currently offline \u2014 my connector isn't reporting in"))
    assert is_automated_notice(msg("@verifier anything", auto_reply=True))  # signoff's stored flag
    assert is_automated_notice(msg("@verifier You're not permitted to direct messages to me in this room"))
    assert not is_automated_notice(msg("@verifier the coupon total is wrong"))
    assert not is_automated_notice({"type": "approval_outcome", "payload": {"body": "I'm currently offline"}})
