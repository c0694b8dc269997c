"""The crew loses no hand-off: a handler's transient failure (the server's "reconnect" 409, a 5xx
after the server already stored the answer) is retried and the work done once, a refusal is
recorded and not retried, and a hand-off the server's stream lost while its receiver was down (a
Switch core's buffer after a restart: only a gap comes back) is found in the room's history and
acted on once, through the same receipt check, while a copy found there is ignored. On the
embedded server and over HTTP to the rooms app on a real uvicorn server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from signoff.desk import crew_agents, crew_commands, crew_serve
from signoff.desk.crew import agent_name, key_role
from signoff.kernel.errors import ConflictError, RefusedError, SignoffError, UnavailableError
from signoff.rooms import RoomService
from signoff.rooms.app import create_app
from signoff.rooms.client import AgentStore, HttpTransport, InProcessTransport, RoomsConfig, Transport, agent_case
from signoff.rooms.streams import Frame, StreamParams
from tests.desk.conftest import COUPON
from tests.desk.test_crew_loop import Crewed, _until, crewed  # noqa: F401  (crewed is a fixture)
from tests.rooms.conftest import Server


@dataclass
class Faulty(Transport):
    """One agent's real transport, with faults injected into named operations: each fault is
    raised once, before the operation reaches the server or (`after`) once the server has done it."""

    inner: Transport
    faults: dict[str, list[tuple[SignoffError, bool]]] = field(default_factory=dict)
    lost: set[str] = field(default_factory=set)  # message ids the server's stream has forgotten
    gap: bool = False  # the next stream opens with a gap frame (a restarted Switch core)
    raised: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.agent_id = self.inner.agent_id

    async def call(self, op: str, args: dict[str, Any], connection_id: str | None) -> Any:
        queued = self.faults.get(op) or []
        if not queued:
            return await self.inner.call(op, args, connection_id)
        error, after = queued.pop(0)
        if after:
            await self.inner.call(op, args, connection_id)
        self.raised.append(op)
        raise error

    async def events(self, params: StreamParams) -> AsyncIterator[Frame]:
        async for frame in self.inner.events(params):
            payload = (frame.data or {}).get("payload") if isinstance(frame.data, dict) else None
            if isinstance(payload, dict) and payload.get("message_id") in self.lost:
                continue
            yield frame
            if frame.event == "connection_state" and self.gap:
                self.gap = False
                yield Frame("gap", {"from_sequence": 0, "resumed_at": 0, "reason": "server_restarted"})

    async def beat(self, connection_id: str, cursor: int) -> dict[str, Any]:
        return await self.inner.beat(connection_id, cursor)

    async def subscribe(self, connection_id: str, room_id: str, takeover: bool = False) -> dict[str, Any]:
        return await self.inner.subscribe(connection_id, room_id, takeover)

    async def unsubscribe(self, connection_id: str, room_id: str) -> dict[str, Any]:
        return await self.inner.unsubscribe(connection_id, room_id)

    async def operations(self) -> dict[str, Any]:
        return await self.inner.operations()


@dataclass
class Site:
    """The crew's rooms server, embedded or over HTTP, which can be restarted (a new server on the
    same database); `faulty` holds each role's fault-injecting transport for the current server."""

    c: Crewed
    http: bool
    server: Server | None = None
    faulty: dict[str, Faulty] = field(default_factory=dict)

    def start(self) -> None:
        self.c.rooms = RoomService(self.c.world.ledger)
        keys = RoomsConfig.from_settings(self.c.world.settings)
        base = None
        if self.http:
            self.server = Server(create_app(service=self.c.rooms, settings=self.c.world.settings))
            base = self.server.start()
        for role in crew_agents.PROCESS_ROLES:
            found = keys.key(key_role(role))
            inner: Transport = (HttpTransport(base, found["agent_id"], found["api_key"]) if base
                                else InProcessTransport(self.c.rooms, found["api_key"]))
            self.faulty[role] = Faulty(inner)

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    def restart(self) -> None:
        self.stop()
        self.start()

    async def run(self, scenario: Callable[[], Any], roles: tuple[str, ...] = crew_agents.PROCESS_ROLES) -> None:
        w = self.c.world
        running = crew_serve.members(w.desk, self.c.crew, {r: self.faulty[r] for r in roles}, w.actor("engineering"),
                                     roles, concierge=w.actor("concierge"))
        stop = asyncio.Event()
        tasks = [asyncio.create_task(crew_serve.run_member(m, stop, heartbeat_interval=0.5)) for m in running]
        try:
            await scenario()
        finally:
            stop.set()
            await asyncio.gather(*tasks)


@pytest.fixture(params=["embedded", "http"])
def site(request: pytest.FixtureRequest, crewed: Crewed) -> Iterator[Site]:  # noqa: F811
    s = Site(crewed, request.param == "http")
    s.start()
    yield s
    s.stop()


def _inbox(site: Site, role: str) -> AgentStore:
    return AgentStore(site.c.world.ledger, agent_case(site.c.crew.agents[role]))


def _handoff_key(site: Site) -> str:
    [handed] = site.c.commands("start_reproduction")
    return f"message:{handed['message_id']}"


def test_a_transient_failure_is_retried_and_a_retry_after_partial_success_repeats_nothing(site: Site) -> None:
    c, w = site.c, site.c.world
    reproducer = site.faulty["reproducer"]
    # The hand-off's handler fails first on the server's "reconnect" answer, then on a 502 that
    # came after the server had already stored the answer it posted.
    reproducer.faults = {
        "create_room_document": [(ConflictError("connection c1 is not open; reconnect and resume"), False)],
        "send_targeted_message": [(UnavailableError("POST send_targeted_message (502): bad gateway"), True)]}
    intake = w.desk.submit_report(COUPON, "198.51.100.7")

    async def scenario() -> None:
        await _until(lambda: w.desk.bug(intake.bug_id).state == "awaiting_reporter", "the reproduction")

    asyncio.run(site.run(scenario))
    assert reproducer.raised == ["create_room_document", "send_targeted_message"]
    # Done once: one answer in the room (the retry found the stored one by its tag), one reproduction.
    assert len(c.commands("propose_reproduction")) == 1
    assert [e.type for e in w.ledger.read(f"desk/bug/{intake.bug_id}")].count("reproduction.recorded") == 1
    state = _inbox(site, "reproducer").state
    assert state.handled[_handoff_key(site)] is None and not state.pending
    assert crew_agents.ignored(w.ledger) == []


def test_a_refusal_is_recorded_and_not_retried(site: Site) -> None:
    c, w = site.c, site.c.world
    reproducer = site.faulty["reproducer"]
    reproducer.faults = {"create_room_document": [
        (RefusedError("POST create_room_document (403): not allowed", "check the api key"), False)]}
    intake = w.desk.submit_report(COUPON, "198.51.100.7")

    async def scenario() -> None:
        await _until(lambda: bool(c.commands("start_reproduction"))
                     and _handoff_key(site) in _inbox(site, "reproducer").state.handled, "the refused hand-off")

    asyncio.run(site.run(scenario))
    assert reproducer.raised == ["create_room_document"]
    assert "403" in str(_inbox(site, "reproducer").state.handled[_handoff_key(site)])
    assert c.commands("propose_reproduction") == []
    assert w.desk.bug(intake.bug_id).state != "awaiting_reporter"


def test_a_hand_off_the_stream_lost_while_its_receiver_was_down_is_acted_on_once_and_a_copy_is_ignored(
        site: Site) -> None:
    c, w = site.c, site.c.world
    alice = c.rooms.user_by_name("alice")
    intake = w.desk.submit_report(COUPON, "198.51.100.7")
    others = tuple(r for r in crew_agents.PROCESS_ROLES if r != "reproducer")

    async def handed_off() -> None:
        await _until(lambda: len(c.commands("start_reproduction")) == 1, "the hand-off")

    # The reproducer is down: the manager hands the reproduction over, and the owner pastes the
    # exact text of the hand-off (a copy: no receipt records it).
    asyncio.run(site.run(handed_off, others))
    [handed] = c.commands("start_reproduction")
    copy = c.rooms.post_message(alice, c.crew.engineering_room, crew_commands.strip_mentions(handed["body"]),
                                target_names=[agent_name("reproducer")])
    assert copy.addressed
    # The server restarts and has lost what it had not delivered (as a Switch core's buffer): the
    # reproducer's stream brings back neither message, only a gap.
    site.restart()
    alice = c.rooms.user_by_name("alice")
    site.faulty["reproducer"].lost = {handed["message_id"], copy.message_id}
    site.faulty["reproducer"].gap = True

    async def recovered() -> None:
        await _until(lambda: w.desk.bug(intake.bug_id).state == "awaiting_reporter", "the reproduction")
        await _until(lambda: len(crew_agents.ignored(w.ledger)) == 1, "the copy ignored")

    asyncio.run(site.run(recovered))
    assert len(c.commands("propose_reproduction")) == 1
    assert [e.type for e in w.ledger.read(f"desk/bug/{intake.bug_id}")].count("reproduction.recorded") == 1
    inbox = _inbox(site, "reproducer").state
    [taken] = [env for key, env in _received(site, "reproducer") if key == f"message:{handed['message_id']}"]
    assert taken["payload"]["recovered"] is True and taken["payload"]["addressed"] is True
    assert inbox.handled[f"message:{handed['message_id']}"] is None
    [ignored] = crew_agents.ignored(w.ledger)
    assert ignored["message_id"] == copy.message_id and ignored["sender_role"] is None
    assert "no receipt" in ignored["why"]
    # Both come back again on the next start: nothing is taken or recorded twice.
    site.restart()
    site.faulty["reproducer"].gap = True

    async def started() -> None:
        return None  # run_member drains and re-reads before it first looks at `stop`

    asyncio.run(site.run(started, ("reproducer",)))
    assert len(c.commands("propose_reproduction")) == 1 and len(crew_agents.ignored(w.ledger)) == 1


def _received(site: Site, role: str) -> list[tuple[str, dict[str, Any]]]:
    case = agent_case(site.c.crew.agents[role])
    return [(e.payload["key"], e.payload["event"]) for e in site.c.world.ledger.read(case)
            if e.type == "rooms.agent.received"]
