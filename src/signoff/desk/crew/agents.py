"""The crew at work: the manager, the reproducer, the fixer, the reviewer and the smoke, each an
`AgentLoop` (the rooms client's durable runtime) in the engineering room, on the embedded server or
over HTTP (the concierge, in the public room, is `crew.concierge`).

    manager      claims the desk's engineering jobs (the ledger is the authority). For a reproduction
                 or a fix it writes the bug's room: the dossier and a work order (documents), then
                 hands the job over with one addressed, keyed message in the engineering room. The
                 triage note (advisory) it still writes itself, through the engineering service.
                 Reviews and the smoke check of a release it hands over the same way. When the
                 answer comes back it reads the answer's document and submits it to the desk with
                 the engineering credential, where the desk measures it (a review it records as an
                 advisory note, the smoke's measurement beside the release).
    reproducer   on `start_reproduction`: reads the dossier and the work order, asks its model for a
                 failing test, writes it as a document, answers `propose_reproduction`.
    fixer        on `start_fix`: the same with the confirmed test and the files it may change,
                 answering `submit_fix`.
    reviewer     on `start_review ... of=test|change`: asks its model about the test or the diff in
                 the work order and answers `submit_review` with an advisory opinion (never an approval).
    smoke        on `start_smoke`: runs the desk's deployment check (`release.acceptance_check`) on
                 the release's endpoints and answers `submit_smoke` with what it measured.

A message is acted on only when it is one of the allowlisted commands (`crew.commands`), its sender
is the role that command comes from, and it is exactly the message that sender's receipt records
(message id, addressed flag, room, sender, text: `handoff_matches`, against the receipts the
sender's own loop keeps in the ledger). A receiver can see a hand-off before its sender's loop has
written the receipt down (or the sender was killed in between): when the message carries the tag
of a keyed send its sender began and has no receipt of (`in_flight`), the receiver waits up to
`patience` for it, then leaves the event undecided (`Undecided`): its loop hands it over again
later, for as long as that holds, and the sender's next start records the receipt. A copied or
forged hand-off (no receipt, and no tag of a send in flight) is recorded as ignored at once; an
`approve`, `merge` or `deploy` is refused and recorded. Reproducer and fixer hold no desk
credential and no repository access (nor do the reviewer and the smoke): their whole input is the
room's documents, and they treat the dossier as untrusted data.

A hand-off the stream never delivered (a Switch core restarted while the receiver was down: its
buffer is gone, and the member gets only `context_recovered`) is found again by the agent loop's
missed-event handling (`AgentLoop`, in the rooms client), at start-up (`recover`) and after each
gap: every message of the engineering room its loop never received goes through `recovered_event`
and the same receipt check. A re-read does not say whether a message was addressed to the reader,
so that flag comes from the server's answer to the sender (the target status in the sender's
receipt); a command with no receipt of its sender is ignored and recorded.

Each effect is idempotent, so the loops' at-least-once hand-over is safe: hand-offs and answers are
keyed sends (once per job, once per command message), documents are updated in place, and the
manager's submissions check that the bug is still where the command says.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from signoff.agents import ProposalRejected
from signoff.desk import bug_rooms
from signoff.desk.credentials import DeskCaller
from signoff.desk.crew import Crew, crew_records
from signoff.desk.crew import commands as crew_commands
from signoff.desk.crew.commands import Command
from signoff.desk.engineering import (
    SCRIPT,
    EngineeringService,
    fix_order,
    propose_fix,
    propose_reproduction,
    propose_review,
    reproduction_order,
    review_order,
    run_smoke,
    smoke_order,
    submit_fix,
)
from signoff.desk.model import Bug
from signoff.desk.records import CommandIgnored
from signoff.desk.workflow import ENGINEERING, Desk
from signoff.kernel.errors import RefusedError
from signoff.ledger import Job, Outbox, SqlLedger, Worker
from signoff.rooms.client import (
    AgentLoop,
    AgentStore,
    RoomsClient,
    Transport,
    Undecided,
    agent_case,
    ref_tag,
)
from signoff.rooms.client import recovered_message as shared_recovered_message
from signoff.rooms.domain.receipts import Receipt, handoff_matches

ENGINEERING_PROCESSES = ("manager", "reproducer", "fixer", "reviewer", "smoke")
PROCESS_ROLES = (*ENGINEERING_PROCESSES, "concierge")  # the whole crew
IGNORED = "desk/crew/ignored"
ORDER = {"start_reproduction": "work-reproduction-r{round}", "start_fix": "work-fix-r{round}",
         "start_review": "work-review-{of}-r{round}", "start_smoke": "work-smoke-r{round}"}
RESULT = {"propose_reproduction": "reproduction-r{round}", "submit_fix": "fix-r{round}",
          "submit_review": "review-{of}-r{round}", "submit_smoke": "smoke-r{round}"}
HANDOFF = {  # engineering job step -> (command, the role it goes to)
    "reproduce": ("start_reproduction", "reproducer"), "fix": ("start_fix", "fixer"),
    "review_test": ("start_review", "reviewer"), "review_change": ("start_review", "reviewer"),
    "smoke": ("start_smoke", "smoke")}


def in_flight(store: AgentStore, body: str) -> bool:
    """Whether `body` carries the tag (`ref_tag`) of a keyed send the store's agent began and holds
    no receipt of: then this message may be that send, its receipt not written yet (the sender's
    loop writes it when the server answers, or at its next start if it was killed before)."""
    state = store.state
    return any(ref_tag(key) in body for key in state.sending - set(state.sent))


def sender_receipt(desk: Desk, crew: Crew, role: str, env: dict[str, Any]) -> tuple[Receipt | None, bool]:
    """The receipt `role`'s own loop recorded for the message in `env`, if that message is exactly
    the one it sent (the receipts live in the sender's agent case, written only by its loop); and
    whether, without one, this message is in flight for that sender (`in_flight`)."""
    payload = env.get("payload") or {}
    message_id = payload.get("message_id")
    store = AgentStore(desk.ledger, agent_case(crew.agents[role]))
    for receipt in store.state.sent.values():
        if receipt.message_id == message_id and handoff_matches(env, receipt):
            return receipt, False
    return None, in_flight(store, str(payload.get("body", "")))


async def await_receipt(desk: Desk, crew: Crew, role: str, env: dict[str, Any],
                        patience: float = 30.0) -> tuple[Receipt | None, bool]:
    """`sender_receipt`, waiting up to `patience` seconds while the message is in flight for its
    sender: a receiver can see a message before its sender has written the server's answer down.
    A copy (a message whose tag is of no send in flight) is answered at once."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + patience
    while True:
        receipt, pending = await asyncio.to_thread(sender_receipt, desk, crew, role, env)
        if receipt is not None or not pending or loop.time() >= deadline:
            return receipt, pending
        await asyncio.sleep(0.05)


def receipt_of(desk: Desk, crew: Crew, role: str, message_id: str, body: str) -> tuple[Receipt | None, bool]:
    """The receipt `role`'s loop recorded for `message_id`, whatever the message says; and
    whether, without one, the message (`body`) is in flight for that sender (`in_flight`)."""
    store = AgentStore(desk.ledger, agent_case(crew.agents[role]))
    found = next((r for r in store.state.sent.values() if r.message_id == message_id), None)
    return found, found is None and in_flight(store, body)


def recovered_message(room_id: str, entry: dict[str, Any], me: str, receipt: Receipt | None) -> dict[str, Any]:
    """The `message` event a `read_context` entry stands for, as member `me` would have received
    it. The entry does not say whether it was addressed to `me`; the server said so to the sender
    (`me`'s target status in its send's receipt), so without a receipt it is not."""
    addressed = receipt is not None and receipt.addressed and \
        receipt.target_statuses.get(me, "not_permitted") != "not_permitted"
    return shared_recovered_message(room_id, entry, addressed)


def ignored(ledger: SqlLedger) -> list[dict[str, Any]]:
    """Commands a crew member ignored (wrong sender, no matching receipt), newest last."""
    return [ev.payload() for ev in crew_records(ledger, IGNORED).ignored]


@dataclass
class Member:
    """One engineering role's behaviour, run by `crew_serve.run_member` on an `AgentLoop`."""

    role: str
    desk: Desk
    crew: Crew
    transport: Transport
    engineering: DeskCaller | None = None  # the manager's desk credential
    script: str = SCRIPT
    loop: AgentLoop | None = field(default=None, repr=False)
    patience: float = 30.0  # how long a command waits, once, for the receipt of a send in flight
    waited: set[str] = field(default_factory=set, init=False, repr=False)  # message ids that waited

    @property
    def room(self) -> str:
        return self.crew.engineering_room

    # -- receiving ------------------------------------------------------------------------------

    async def on_event(self, loop: AgentLoop, env: dict[str, Any]) -> None:
        payload = env.get("payload") or {}
        if env.get("type") != "message" or payload.get("addressed") is not True:
            return
        body = str(payload.get("body", ""))
        sender = payload.get("sender")
        sender_role = self.crew.role_of_sender(sender)
        try:
            command = crew_commands.parse(body)
        except RefusedError as exc:
            await asyncio.to_thread(crew_commands.record_refusal, self.desk.ledger, str(payload.get("message_id")),
                                    str(env.get("room_id")), str(sender), sender_role, body, exc.message)
            return
        if command is None:
            return  # plain talk: nothing to act on
        why = await self._refuse(command, sender_role, env)
        if why is not None:
            await asyncio.to_thread(self._ignore, env, command, sender_role, why)
            return
        await self.act(command, env)

    async def recover(self, loop: AgentLoop) -> int:
        """Take the engineering room's command messages this loop never received (see the module
        docstring); returns how many were handed over."""
        return await loop.recover(self.room)

    def recovered_event(self, room_id: str, found: dict[str, Any]) -> dict[str, Any] | None:
        """The agent loop's `recovered` hook: the `message` event a re-read message (`found`, as
        the loop read it back) stands for, or None when there is nothing to take (not a command,
        or a copy: recorded as ignored)."""
        if room_id != self.room:
            return None
        p = found["payload"]
        entry = {"id": p["message_id"], "sender": p.get("sender"), "sender_name": p.get("sender_name"),
                 "body": p.get("body", ""), "thread_id": p.get("thread_id"), "timestamp": p.get("timestamp")}
        return self._recovered_event(entry, self.crew.agent_name(self.role))

    def _recovered_event(self, entry: dict[str, Any], me: str) -> dict[str, Any] | None:
        message_id, body, sender = str(entry.get("id")), str(entry.get("body", "")), entry.get("sender")
        try:
            command = crew_commands.parse(body)
        except RefusedError:
            return None  # a forbidden verb is recorded when it arrives addressed; nothing to do here
        sender_role = self.crew.role_of_sender(sender)
        if command is None or sender_role == self.role:
            return None
        receipt, pending = receipt_of(self.desk, self.crew, sender_role, message_id, body) if sender_role \
            else (None, False)
        env = recovered_message(self.room, entry, me, receipt)
        if receipt is None:
            # In flight for its sender, its receipt not written yet: the stream (or the next
            # re-read) brings it again.
            if not pending and crew_commands.ALLOWED[command.verb][1] == self.role:
                self._ignore(env, command, sender_role, "found in the room's history with no receipt of its sender")
            return None
        return env

    async def _refuse(self, command: Command, sender_role: str | None, env: dict[str, Any]) -> str | None:
        """Why the command is not acted on, or None. Raises `Undecided` when its sender's receipt
        is still missing after `patience` but the message is in flight for the sender (killed
        between the server's answer and the receipt, say): the loop hands it over again later,
        and the sender's next start records the receipt."""
        if env.get("room_id") != self.crew.engineering_room:
            return "crew commands are taken only in the engineering room"
        if not crew_commands.accepts(command, sender_role, self.role):
            return f"{command.verb} is not for {self.role} from {sender_role or 'this sender'}"
        assert sender_role is not None
        message_id = str((env.get("payload") or {}).get("message_id"))
        patience = 0.0 if message_id in self.waited else self.patience  # waited once in this process
        receipt, pending = await await_receipt(self.desk, self.crew, sender_role, env, patience)
        if receipt is None and pending:
            self.waited.add(message_id)
            raise Undecided(f"{sender_role} has not written down the receipt of message {message_id} yet",
                            f"it is handed over again; {sender_role}'s next start records the receipt")
        self.waited.discard(message_id)
        if receipt is None:
            return f"no receipt of {sender_role} matches this message (a copy, or edited)"
        return None

    def _ignore(self, env: dict[str, Any], command: Command, sender_role: str | None, why: str) -> None:
        payload = env.get("payload") or {}
        self.desk.ledger.append(IGNORED, None, [CommandIgnored(
            by=self.role, message_id=payload.get("message_id"), sender=payload.get("sender"),
            sender_role=sender_role, command=command.text, why=why).new_event()],
            idempotency_key=f"ignored:{self.role}:{payload.get('message_id')}")

    async def act(self, command: Command, env: dict[str, Any]) -> None:
        work = {"start_reproduction": self._reproduce, "start_fix": self._fix, "start_review": self._review,
                "start_smoke": self._smoke}.get(command.verb)
        if work is not None:
            await work(command, env)
        elif command.verb == "propose_reproduction":
            await self._receive_reproduction(command)
        elif command.verb == "submit_fix":
            await self._receive_fix(command)
        elif command.verb == "submit_review":
            await self._receive_review(command)
        elif command.verb == "submit_smoke":
            await self._receive_smoke(command)

    # -- the bug's room -------------------------------------------------------------------------

    async def _in_bug_room(self, bug_id: str, work: Callable[[RoomsClient, str], Any]) -> Any:
        """Run `work(client, room_id)` on a connection to the bug's room (the loop itself holds
        only the engineering room)."""
        async with RoomsClient(self.transport, heartbeat_interval=3600) as client:
            room = await (bug_rooms.open_bug_room(client, self.crew, bug_id) if self.role == "manager"
                          else bug_rooms.find_bug_room(client, self.crew, bug_id))
            if room is None:
                raise RefusedError(f"{bug_id} has no room of the desk's crew", "the manager opens it first")
            await client.connect_to_room(room)
            return await work(client, room)

    async def _inputs(self, command: Command) -> tuple[str, dict[str, Any]]:
        """The dossier (untrusted) and the manager's work order for `command`."""
        manager = self.crew.agents["manager"]

        async def read(client: RoomsClient, room: str) -> tuple[str | None, str | None]:
            return (await bug_rooms.read_dossier(client, room, manager),
                    await bug_rooms.read_document(client, command.document(ORDER[command.verb]), manager))

        dossier, order = await self._in_bug_room(command.bug_id, read)
        if dossier is None or order is None:
            raise RefusedError(f"the manager's dossier or work order for {command.text} is missing",
                               "the manager writes both before it hands the work over")
        return dossier, json.loads(order)

    async def _answer(self, command: Command, env: dict[str, Any], verb: str, result: dict[str, Any]) -> None:
        assert self.loop is not None
        answer = Command(verb, command.bug_id, command.round, command.of)
        name = answer.document(RESULT[verb])

        async def write(client: RoomsClient, room: str) -> str:
            return await bug_rooms.put_document(client, name, json.dumps(result, sort_keys=True),
                                                f"{self.role}'s answer to {command.text}")

        await self._in_bug_room(command.bug_id, write)
        message_id = str((env.get("payload") or {}).get("message_id"))
        await self.loop.send(self.crew.engineering_room, answer.text, key=f"answer:{message_id}",
                             targets=[self.crew.agent_name("manager")])

    # -- reproducer and fixer -------------------------------------------------------------------

    async def _reproduce(self, command: Command, env: dict[str, Any]) -> None:
        dossier, order = await self._inputs(command)
        try:
            result = await asyncio.to_thread(propose_reproduction, self.desk, order, dossier, self.script,
                                             "desk-reproducer")
        except ProposalRejected as exc:
            raise RefusedError(f"the reproducer's proposal was rejected: {exc.message}",
                               "an owner resumes the bug or asks again") from exc
        await self._answer(command, env, "propose_reproduction", result | {"evidence_kind": result["agent"]["kind"]})

    async def _fix(self, command: Command, env: dict[str, Any]) -> None:
        dossier, order = await self._inputs(command)
        try:
            result = await asyncio.to_thread(propose_fix, self.desk, order, dossier, self.script, "desk-fixer")
        except ProposalRejected as exc:
            result = {"rejected": exc.message, "agent": {"kind": "advisory"}}
        await self._answer(command, env, "submit_fix", result | {"attempt": order["attempt"],
                                                                "evidence_kind": result["agent"]["kind"]})

    async def _review(self, command: Command, env: dict[str, Any]) -> None:
        dossier, order = await self._inputs(command)
        try:
            result = await asyncio.to_thread(propose_review, self.desk, order, dossier, self.script, "desk-reviewer")
        except ProposalRejected as exc:
            result = {"note": {"rejected": exc.message}, "agent": {"kind": "advisory"}}
        await self._answer(command, env, "submit_review", result | {
            "job_id": order["job_id"], "label": "advisory: a review note, never an approval",
            "evidence_kind": "advisory" if result["agent"]["kind"] == "advisory" else "simulated"})

    async def _smoke(self, command: Command, env: dict[str, Any]) -> None:
        _dossier, order = await self._inputs(command)
        result = await asyncio.to_thread(run_smoke, order, self.crew.agent_name("smoke"), self.desk.clock.now())
        await self._answer(command, env, "submit_smoke", result | {"job_id": order["job_id"]})

    # -- manager: answers -----------------------------------------------------------------------

    async def _result(self, command: Command, role: str) -> dict[str, Any]:
        author = self.crew.agents[role]

        async def read(client: RoomsClient, room: str) -> str | None:
            return await bug_rooms.read_document(client, command.document(RESULT[command.verb]), author)

        text = await self._in_bug_room(command.bug_id, read)
        if text is None:
            raise RefusedError(f"{role}'s document for {command.text} is missing", f"{role} writes it first")
        out: dict[str, Any] = json.loads(text)
        return out

    async def _receive_reproduction(self, command: Command) -> None:
        bug = self.desk.bug(command.bug_id)
        if bug.state not in ("reproducing", "reopened") or bug.round != command.round:
            return  # the bug moved on: a redelivered answer does nothing
        out = await self._result(command, "reproducer")
        assert self.engineering is not None
        await asyncio.to_thread(self.desk.submit_reproduction, self.engineering, command.bug_id, command.round,
                                out["test_path"], out["test_source"], out["agent"])

    async def _receive_fix(self, command: Command) -> None:
        bug = self.desk.bug(command.bug_id)
        out = await self._result(command, "fixer")
        if bug.state != "fixing" or bug.round != command.round or bug.fix_attempts + 1 != out["attempt"]:
            return
        assert self.engineering is not None
        if "rejected" in out:
            await asyncio.to_thread(self.desk.fix_failed, self.engineering, command.bug_id, command.round,
                                    out["attempt"], f"proposal rejected: {out['rejected']}", {"kind": "advisory"})
            return
        await asyncio.to_thread(submit_fix, self.desk, self.engineering, command.bug_id, command.round,
                                out["attempt"], out)

    async def _receive_review(self, command: Command) -> None:
        out = await self._result(command, "reviewer")
        assert self.engineering is not None
        # The reviewer's opinion is a note: nothing reads it to decide (an "approve" in it approves nothing).
        await asyncio.to_thread(self.desk.add_note, self.engineering, command.bug_id, "review", out["note"],
                                out["agent"], round_=command.round, key=out["job_id"])

    async def _receive_smoke(self, command: Command) -> None:
        bug = self.desk.bug(command.bug_id)
        if bug.release is None or bug.round != command.round:
            return
        out = await self._result(command, "smoke")
        assert self.engineering is not None
        await asyncio.to_thread(self.desk.record_smoke, self.engineering, command.bug_id, command.round, out,
                                key=out["job_id"])

    # -- manager: jobs --------------------------------------------------------------------------

    def work_once(self) -> bool:
        """The manager: claim and handle one engineering job (in a worker thread); False when none
        was due. The others only answer what they are handed."""
        if self.role != "manager":
            return False
        assert self.engineering is not None
        service = EngineeringService(self.desk, self.engineering, self.script)

        def handle(job: Job) -> None:
            step, p = job.payload["step"], job.payload
            if step not in HANDOFF:
                service.handle(job)  # triage: an advisory note, written in process
                return
            if not self._due(step, self.desk.bug(p["bug_id"]), p["round"]):
                return  # done already: a redelivered job is a no-op
            assert self.loop is not None
            self.loop.blocking(self._hand_over(job, step, p["bug_id"], p["round"]))

        return Worker(Outbox(self.desk.ledger, lease_seconds=300), {ENGINEERING: handle}).run_once()

    def _due(self, step: str, bug: Bug, round_: int) -> bool:
        """Whether the bug still waits for this job's step (the engineering service's own checks)."""
        if bug.round != round_:
            return False
        if step == "reproduce":
            return bug.state in ("reproducing", "reopened")
        if step == "fix":
            return bug.state == "fixing"
        if step == "review_test":
            return bug.reproduction is not None
        if step == "review_change":
            return bug.state == "in_review"
        return bug.release is not None  # smoke

    def _order(self, job: Job, step: str, bug_id: str, round_: int) -> dict[str, Any]:
        assert self.engineering is not None
        if step == "reproduce":
            return reproduction_order(self.desk, self.engineering, bug_id, round_)
        if step == "fix":
            return fix_order(self.desk, self.engineering, bug_id, round_)
        if step == "smoke":
            return smoke_order(self.desk, bug_id, round_) | {"job_id": job.job_id}
        return review_order(self.desk, self.engineering, bug_id, round_, step.removeprefix("review_"), job.job_id)

    async def _hand_over(self, job: Job, step: str, bug_id: str, round_: int) -> None:
        assert self.engineering is not None and self.loop is not None
        verb, target = HANDOFF[step]
        command = Command(verb, bug_id, round_, step.removeprefix("review_") if verb == "start_review" else None)
        order = await asyncio.to_thread(self._order, job, step, bug_id, round_)
        dossier = bug_rooms.dossier_text(await asyncio.to_thread(self.desk.dossier, self.engineering, bug_id))

        async def write(client: RoomsClient, room: str) -> None:
            await bug_rooms.store_dossier(client, room, dossier)
            await bug_rooms.put_document(client, command.document(ORDER[verb]), json.dumps(order, sort_keys=True),
                                         f"the manager's work order for {command.text}")

        await self._in_bug_room(bug_id, write)
        await self.loop.send(self.crew.engineering_room, command.text, key=f"handoff:{job.job_id}",
                             targets=[self.crew.agent_name(target)])
