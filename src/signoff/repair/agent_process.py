"""The repair agents as their own processes (`signoff repair agent verifier|fixer`), each an
`AgentLoop` over the agent protocol: in process on the embedded server, over HTTP on `signoff
serve` or a Switch core.

The verifier hands each message to the workflow (`RepairWorkflow.on_message`) and runs the outbox
jobs, which post through its loop (serially, each keyed post at most once), woken by each event
and every second for jobs that come due. The fixer hands each addressed message to `FixerWorker`,
which acts only on a hand-off matching the verifier's recorded receipt. Both keep their cursor and
inbox in the workflow's ledger (which they share), so either can be killed at any point and
started again: what arrived meanwhile is handled, and nothing already done is done again.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from signoff.kernel.errors import UsageError
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.repair.fixer import FixerWorker
from signoff.repair.rooms import LoopRepairRooms
from signoff.repair.service import RepairService
from signoff.repair.workflow import RepairWorkflow
from signoff.rooms.client import AgentLoop, Transport

JOB_WAKE_SECONDS = 1.0  # how soon a job that came due (a retry, a lapsed lease) is picked up
RECEIPT_WAIT_SECONDS = 60.0  # how long the fixer waits for the verifier's record of a hand-off it sees
POLL_WAIT_SECONDS = 0.5  # `repair run` ends once neither agent received anything for this long


def _addressed_message(env: dict[str, Any]) -> bool:
    return env.get("type") == "message" and bool((env.get("payload") or {}).get("addressed"))


class _Verifier:
    """The verifier's agent loop and workflow: every message and card answer goes to the workflow;
    each one handled wakes the job runner."""

    def __init__(self, transport: Transport, ledger: SqlLedger, settings: Settings, name: str,
                 fixer_name: str, rooms: list[str]) -> None:
        self.wake = asyncio.Event()
        self.agent = AgentLoop(transport, ledger, rooms, self.handle, agent_name=name)
        self.face = LoopRepairRooms(self.agent, name)
        self.workflow = RepairWorkflow(ledger, self.face, settings, fixer_name)

    async def handle(self, agent: AgentLoop, env: dict[str, Any]) -> None:
        if env.get("type") == "message":
            await asyncio.to_thread(self.workflow.on_message, env)
        elif env.get("type") == "approval_outcome":
            await asyncio.to_thread(self.workflow.on_card, env)
        self.wake.set()

    async def run_jobs(self) -> int:
        """Run every job that is due now; returns how many ran."""
        done = 0
        while await asyncio.to_thread(self.workflow.worker.run_once):
            done += 1
        return done


def _fixer(transport: Transport, ledger: SqlLedger, settings: Settings, name: str, rooms: list[str],
           script: str | None, max_attempts: int) -> AgentLoop:
    holder: list[FixerWorker] = []

    async def handle(agent: AgentLoop, env: dict[str, Any]) -> None:
        if _addressed_message(env):
            await asyncio.to_thread(holder[0].on_message, env)

    agent = AgentLoop(transport, ledger, rooms, handle, agent_name=name)
    holder.append(FixerWorker(ledger, LoopRepairRooms(agent, name), settings, max_attempts, script,
                              receipt_wait=RECEIPT_WAIT_SECONDS))
    return agent


async def catch_up(agent: AgentLoop, ledger: SqlLedger, settings: Settings) -> int:
    """`AgentLoop.catch_up` from when each room was watched: a report sent before the agent first
    ran is its work too. Returns how many were taken."""
    service = RepairService(ledger, settings)
    return await agent.catch_up({room: service.watched_since(room) for room in agent.rooms})


async def run_verifier(transport: Transport, ledger: SqlLedger, settings: Settings, name: str, fixer_name: str,
                       rooms: list[str], ready: Callable[[], None] = lambda: None,
                       also: Sequence[Callable[[], Coroutine[Any, Any, None]]] = (), decisions: str = "auto") -> None:
    """Run the verifier until SIGTERM or SIGINT (or until cancelled), with `also` alongside (the
    embedded server's housekeeping, when it runs in this process). `decisions`: "auto" asks on
    approval cards where the server has them, "command" always takes addressed commands."""
    verifier = _Verifier(transport, ledger, settings, name, fixer_name, rooms)

    async def jobs() -> None:
        while True:
            await verifier.run_jobs()
            verifier.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(verifier.wake.wait(), JOB_WAKE_SECONDS)

    async with verifier.agent:
        verifier.face.decision_channel = await _decision_channel(verifier.agent, rooms[0], decisions)
        await catch_up(verifier.agent, ledger, settings)
        ready()
        await _until_stopped(verifier.agent.run(), jobs(), *(work() for work in also))


async def run_fixer(transport: Transport, ledger: SqlLedger, settings: Settings, name: str, rooms: list[str],
                    script: str | None = None, max_attempts: int = 2, ready: Callable[[], None] = lambda: None,
                    also: Sequence[Callable[[], Coroutine[Any, Any, None]]] = ()) -> None:
    """Run the fixer until SIGTERM or SIGINT (or until cancelled), with `also` alongside."""
    agent = _fixer(transport, ledger, settings, name, rooms, script, max_attempts)
    async with agent:
        await catch_up(agent, ledger, settings)
        ready()
        await _until_stopped(agent.run(), *(work() for work in also))


async def run_until_idle(verifier_transport: Transport, fixer_transport: Transport, ledger: SqlLedger,
                         settings: Settings, verifier_name: str, fixer_name: str, rooms: list[str], *,
                         script: str | None = None, poll_wait: float = POLL_WAIT_SECONDS, follow: bool = False,
                         also: Sequence[Callable[[], Coroutine[Any, Any, None]]] = (),
                         progress: Callable[[int], None] = lambda n: None) -> int:
    """`signoff repair run`: the verifier and the fixer as the same agent loops as `repair agent`
    (durable inbox and cursor, the missed-event path, keyed sends), in one process, stepped in
    turn until a round brings nothing within `poll_wait` (or, with `follow`, until stopped). People
    decide by addressed command here. Returns how many events and jobs were handled; `progress`
    is told after each busy round."""
    verifier = _Verifier(verifier_transport, ledger, settings, verifier_name, fixer_name, rooms)
    fixer = _fixer(fixer_transport, ledger, settings, fixer_name, rooms, script, 2)
    background = [asyncio.create_task(work()) for work in also]
    total = 0
    try:
        async with verifier.agent, fixer:
            for agent in (verifier.agent, fixer):
                total += await catch_up(agent, ledger, settings)
            while True:
                done = await verifier.run_jobs()
                for agent in (verifier.agent, fixer):
                    while await agent.step(poll_wait):
                        done += 1
                total += done
                if done:
                    progress(done)
                elif not follow:
                    return total
    finally:
        for task in background:
            task.cancel()
        for task in background:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


async def _decision_channel(agent: AgentLoop, room_id: str, decisions: str) -> str:
    if decisions == "command":
        return "addressed_command"
    if decisions != "auto":
        raise UsageError(f"unknown decision mode {decisions!r}", "use --decisions auto or --decisions command")
    return (await agent.clients[room_id].capabilities()).decision_channel


async def _until_stopped(*work: Coroutine[Any, Any, None]) -> None:
    """Run `work` until one part ends (its error is raised) or the process is told to stop."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    tasks = [asyncio.create_task(w) for w in work]
    stopper = asyncio.create_task(stop.wait())
    try:
        done, _ = await asyncio.wait([*tasks, stopper], return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if task is not stopper and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        for task in [*tasks, stopper]:
            task.cancel()
        for task in [*tasks, stopper]:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def watched_rooms(ledger: SqlLedger, settings: Settings, verifier_name: str | None = None) -> list[str]:
    """The rooms `signoff repair watch` linked to a contract (for `verifier_name`: those whose
    commands address that verifier; other rooms are other verifiers' work)."""
    service = RepairService(ledger, settings)
    rooms = [room for room in service.watched_rooms()
             if verifier_name is None or (w := service.watched(room)) is None or w.verifier_name == verifier_name]
    if not rooms:
        raise UsageError("no room is watched yet" + (f" for {verifier_name}" if verifier_name else ""),
                         "run `signoff repair watch` first, or pass --room")
    return rooms
