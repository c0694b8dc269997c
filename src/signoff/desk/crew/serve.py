"""Running the crew: each member (`crew.agents.Member`, `crew.concierge.ConciergeMember`) on its own
`AgentLoop`, in this process or as `signoff desk crew run --role R`, over HTTP to `signoff serve` or
on the process's own embedded server (whose housekeeping then runs here too); and `CrewThread`,
the whole crew in a background thread (the demo)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from signoff.desk.credentials import DeskCaller
from signoff.desk.crew import Crew, key_role
from signoff.desk.crew.agents import PROCESS_ROLES, Member
from signoff.desk.crew.concierge import ConciergeMember
from signoff.desk.engineering import SCRIPT
from signoff.desk.workflow import Desk
from signoff.kernel.errors import SignoffError, UsageError
from signoff.rooms.client import AgentLoop, Transport


class Running(Protocol):
    """What `run_member` runs: a `Member`, or the concierge (`crew.concierge.ConciergeMember`)."""

    role: str
    desk: Desk
    crew: Crew
    transport: Transport
    loop: AgentLoop | None

    @property
    def room(self) -> str: ...

    async def on_event(self, loop: AgentLoop, env: dict[str, Any]) -> None: ...

    def work_once(self) -> bool: ...


async def run_member(member: Running, stop: asyncio.Event, *, idle: float = 0.2,
                     heartbeat_interval: float = 2.0) -> None:
    """Run one crew member until `stop` is set: its loop in its room and, whenever no event is
    waiting, its outbox work (the manager's engineering jobs, the concierge's notifications)."""
    recovered = member.recovered_event if isinstance(member, Member) else None
    async with AgentLoop(member.transport, member.desk.ledger, [member.room], member.on_event,
                         agent_name=member.crew.agent_name(member.role), heartbeat_interval=heartbeat_interval,
                         recovered=recovered) as loop:
        member.loop = loop
        if isinstance(member, Member):
            await loop.drain_pending()
            await member.recover(loop)  # hand-offs sent while it was down that the stream lost
        else:
            await loop.catch_up()  # e.g. a reporter's answer sent while the concierge and the core were down
        while not stop.is_set():
            await loop.run(until=stop.is_set, idle=idle)
            while not stop.is_set():
                try:
                    if not await asyncio.to_thread(member.work_once):
                        break
                except SignoffError:
                    break  # the claim itself failed (the job's own failures are recorded on it)


def members(desk: Desk, crew: Crew, transports: dict[str, Transport], engineering: DeskCaller | None,
            roles: Iterable[str] = PROCESS_ROLES, script: str = SCRIPT,
            concierge: DeskCaller | None = None) -> list[Running]:
    """The crew members for `roles`: the manager gets the engineering credential, the concierge
    the concierge credential, the others none."""
    out: list[Running] = []
    for role in roles:
        if role == "concierge":
            if concierge is None:
                raise UsageError("the concierge needs the desk's concierge credential",
                                 "pass --concierge-token or set SIGNOFF_DESK_CONCIERGE_TOKEN")
            out.append(ConciergeMember(desk, crew, transports[role], concierge))
        else:
            out.append(Member(role, desk, crew, transports[role], engineering if role == "manager" else None, script))
    return out


def transports_for(desk: Desk, crew: Crew, roles: Iterable[str], url: str | None) -> dict[str, Transport]:
    """Each role's transport with its key from the rooms keys file: over HTTP to `url` (`signoff
    serve` on this home, or the external server the crew was set up on), or in process on this
    process's embedded server."""
    from signoff.rooms.client import HttpTransport, InProcessTransport, RoomsConfig, embedded_rooms

    keys = RoomsConfig(crew.server, RoomsConfig.from_settings(desk.settings).keys_path)
    out: dict[str, Transport] = {}
    for role in roles:
        found = keys.key(key_role(role))
        out[role] = (InProcessTransport(embedded_rooms(desk.ledger), found["api_key"]) if url is None
                     else HttpTransport(url, found["agent_id"], found["api_key"]))
    return out


async def serve_crew(desk: Desk, crew: Crew, roles: Iterable[str], url: str | None, engineering: DeskCaller | None,
                     say: Callable[[str], None], stop: asyncio.Event | None = None, signals: bool = True,
                     concierge: DeskCaller | None = None) -> None:
    """Run `roles` until `stop` is set or (with `signals`, in the main thread) the process is asked
    to stop (SIGTERM, SIGINT): over HTTP to `url`, or on this process's own embedded server, whose
    housekeeping then runs here too (`RoomsConfig.housekeeping`: other processes' writes)."""
    import signal

    from signoff.rooms.client import RoomsConfig

    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT) if signals else ():
        loop.add_signal_handler(sig, stop.set)
    roles = list(roles)
    running = members(desk, crew, transports_for(desk, crew, roles, url), engineering, roles, concierge=concierge)
    beside = RoomsConfig(url, Path()).housekeeping(desk.ledger)
    tasks = [asyncio.create_task(run_member(m, stop)) for m in running]
    helpers = [asyncio.create_task(work()) for work in beside]
    say(f"crew running: {', '.join(m.role for m in running)} ({url or 'embedded server'})")
    try:
        while not stop.is_set():
            done, _ = await asyncio.wait(tasks, timeout=0.5, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                failure = task.exception()
                if failure is not None:
                    raise failure
                stop.set()  # a member ended on its own: stop the others too
    finally:
        stop.set()
        for helper in helpers:
            helper.cancel()
        await asyncio.gather(*tasks, *helpers, return_exceptions=True)
    say("crew stopped")


class CrewThread:
    """The crew in a background thread of this process, on the embedded server (the demo)."""

    def __init__(self, desk: Desk, crew: Crew, engineering: DeskCaller, concierge: DeskCaller) -> None:
        import threading

        self._loop = asyncio.new_event_loop()
        self._stop = asyncio.Event()
        self._error: BaseException | None = None

        def run() -> None:
            try:
                self._loop.run_until_complete(serve_crew(desk, crew, PROCESS_ROLES, None, engineering,
                                                         lambda _line: None, self._stop, signals=False,
                                                         concierge=concierge))
            except BaseException as exc:  # reported by stop()
                self._error = exc
            finally:
                self._loop.close()

        self._thread = threading.Thread(target=run, name="desk-crew", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=60)
        if self._error is not None:
            raise self._error
