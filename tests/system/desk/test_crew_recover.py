"""The crew loses no hand-off: a handler's transient failure (the server's "reconnect" 409, a 5xx
after the server already stored the answer) is retried and the work done once, a refusal is
recorded and not retried, and a hand-off the server's stream lost while its receiver was down (a
Switch core's buffer after a restart: only a gap comes back) is found in the room's history and
acted on once, through the same receipt check, while a copy found there is ignored. On the
embedded server and over HTTP to the rooms app on a real uvicorn server. A hand-off whose sender
was killed after the server took it, before its loop wrote the receipt, waits (undecided, handed
over again) until the sender's next start records the receipt, then is acted on once; a copy
whose tag is of no send in flight is ignored at once, even while another send is in flight."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from signoff.desk.crew import agent_name, key_role
from signoff.desk.crew import agents as crew_agents
from signoff.desk.crew import commands as crew_commands
from signoff.desk.crew import serve as crew_serve
from signoff.kernel.errors import ConflictError, RefusedError, UnavailableError
from signoff.rooms import RoomService
from signoff.rooms.client import (
    AgentStore,
    HttpTransport,
    InProcessTransport,
    RoomsConfig,
    Transport,
    agent_case,
    ref_tag,
)
from signoff.rooms.http.app import create_app
from tests.support.faulty import Faulty
from tests.support.fixtures.desk import COUPON
from tests.support.fixtures.rooms import Server
from tests.system.desk.test_crew_loop import Crewed, _until, crewed  # noqa: F401  (crewed is a fixture)


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


Tasks = dict[str, "asyncio.Task[None]"]  # each running member's task, by role


class Killed(BaseException):
    """Stands for SIGKILL: raised from a transport, it ends the member's process there (no error
    handling records anything: the outbox job stays claimed, a begun send stays without receipt)."""


def _start(site: Site, roles: tuple[str, ...], stop: asyncio.Event, tasks: Tasks,
           patience: float | None = None) -> dict[str, crew_serve.Running]:
    """Start `roles` (each member's own task in `tasks`), with the given receipt patience."""
    w = site.c.world
    running = {m.role: m for m in crew_serve.members(w.desk, site.c.crew, {r: site.faulty[r] for r in roles},
                                                     w.actor("engineering"), roles, concierge=w.actor("concierge"))}
    for role, member in running.items():
        if isinstance(member, crew_agents.Member) and patience is not None:
            member.patience = patience
        tasks[role] = asyncio.create_task(crew_serve.run_member(member, stop, heartbeat_interval=0.5))
    return running


async def _stop(stop: asyncio.Event, tasks: Tasks) -> None:
    """Stop every member; a member that failed fails the test, unless it was killed on purpose."""
    stop.set()
    for outcome in await asyncio.gather(*tasks.values(), return_exceptions=True):
        if outcome is not None and not isinstance(outcome, Killed):
            raise outcome


def _with_crew(site: Site, scenario: Callable[[asyncio.Event, Tasks], Awaitable[None]]) -> None:
    """Run `scenario` with a stop event and the members' tasks it starts (`_start`); then stop every
    member (`_stop`) and, last, the site."""
    async def run() -> None:
        stop: asyncio.Event = asyncio.Event()
        tasks: Tasks = {}
        try:
            await scenario(stop, tasks)
        finally:
            await _stop(stop, tasks)

    try:
        asyncio.run(run())
    finally:
        site.stop()


def _deferred(member: crew_serve.Running, event: str, times: int) -> bool:
    return member.loop is not None and member.loop.deferrals.get(event, 0) >= times


def test_a_hand_off_whose_sender_died_before_writing_its_receipt_waits_for_it_and_is_acted_on_once(
        crewed: Crewed) -> None:  # noqa: F811
    c, w = crewed, crewed.world
    site = Site(c, http=False)
    site.start()
    # The manager is killed right after the server took its hand-off: the send was begun (its key
    # is in `sending`), the message is in the room with the key's tag, the receipt is not written.
    site.faulty["manager"].faults = {"send_targeted_message": [(Killed("SIGKILL"), True)]}
    intake = w.desk.submit_report(COUPON, "198.51.100.7")

    async def scenario(stop: asyncio.Event, tasks: Tasks) -> None:
        reproducer = _start(site, crew_agents.PROCESS_ROLES, stop, tasks, patience=0.2)["reproducer"]
        await _until(lambda: tasks["manager"].done(), "the manager killed mid-send")
        assert isinstance(tasks["manager"].exception(), Killed)
        [handed] = c.commands("start_reproduction")
        manager = _inbox(site, "manager").state
        [key] = manager.sending - set(manager.sent)
        assert handed["body"].endswith(ref_tag(key)) and handed["sender"] == c.crew.senders["manager"]
        event = f"message:{handed['message_id']}"
        # The reproducer's patience passes, more than once: the hand-off is neither ignored
        # nor acted on; it stays pending and its loop hands it over again.
        await _until(lambda: _deferred(reproducer, event, 2), "the hand-off handed over again")
        assert crew_agents.ignored(w.ledger) == [] and c.commands("propose_reproduction") == []
        assert event in _inbox(site, "reproducer").state.pending
        # The manager starts again: its loop finds the hand-off by its tag and records the
        # receipt (its job is still claimed: it hands nothing over again), and the reproducer acts.
        site.faulty["manager"] = Faulty(site.faulty["manager"].inner)
        _start(site, ("manager",), stop, tasks)
        await _until(lambda: w.desk.bug(intake.bug_id).state == "awaiting_reporter", "the reproduction")
        assert _inbox(site, "reproducer").state.handled[event] is None

    _with_crew(site, scenario)
    # One hand-off (never re-posted), one answer, one reproduction; nothing ignored.
    assert len(c.commands("start_reproduction")) == 1 and len(c.commands("propose_reproduction")) == 1
    assert [e.type for e in w.ledger.read(f"desk/bug/{intake.bug_id}")].count("reproduction.recorded") == 1
    assert crew_agents.ignored(w.ledger) == [] and crew_commands.refusals(w.ledger) == []


def test_a_copy_of_a_receipted_hand_off_is_ignored_at_once_while_another_send_is_in_flight(
        crewed: Crewed) -> None:  # noqa: F811
    c, w = crewed, crewed.world
    site = Site(c, http=False)
    site.start()
    intake = w.desk.submit_report(COUPON, "198.51.100.7")

    async def scenario(stop: asyncio.Event, tasks: Tasks) -> None:
        # A copy waiting for a receipt would outlast the wait for it to be ignored below.
        running = _start(site, crew_agents.PROCESS_ROLES, stop, tasks, patience=120.0)
        reproducer = running["reproducer"]
        assert isinstance(reproducer, crew_agents.Member)
        await _until(lambda: w.desk.bug(intake.bug_id).state == "awaiting_reporter", "the reproduction")
        [handed] = c.commands("start_reproduction")
        # A send of the manager is in flight (begun, no receipt), unrelated to the hand-off;
        # the manager's credential posts the old hand-off again outside a keyed send.
        manager = running["manager"].loop
        assert manager is not None
        manager.store.begin_send("unrelated", c.crew.engineering_room, True, None)
        copy = await manager.send(c.crew.engineering_room, crew_commands.strip_mentions(handed["body"]),
                                  targets=[agent_name("reproducer")])
        assert copy.addressed and copy.body == handed["body"] and copy.message_id != handed["message_id"]
        await _until(lambda: len(crew_agents.ignored(w.ledger)) == 1, "the copy ignored", timeout=30.0)
        assert copy.message_id not in reproducer.waited

    _with_crew(site, scenario)
    [ignored] = crew_agents.ignored(w.ledger)
    assert ignored["sender_role"] == "manager" and ignored["by"] == "reproducer"
    assert "no receipt of manager" in ignored["why"]
    assert len(c.commands("propose_reproduction")) == 1
    assert [e.type for e in w.ledger.read(f"desk/bug/{intake.bug_id}")].count("reproduction.recorded") == 1


def _received(site: Site, role: str) -> list[tuple[str, dict[str, Any]]]:
    case = agent_case(site.c.crew.agents[role])
    return [(e.payload["key"], e.payload["event"]) for e in site.c.world.ledger.read(case)
            if e.type == "rooms.agent.received"]
