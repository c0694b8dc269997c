"""A ready room for a repair case on the embedded server: an operator, a bystander, the verifier
and fixer agents, the case room and a second room. Used by `signoff demo repair` and the workflow
tests. The people and rooms are provisioned on the server; the agents act through the rooms
client only (in process)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from signoff.kernel.ids import new_id
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.repair.rooms import SyncRepairRooms
from signoff.repair.workflow import Contract, FixerWorker, RepairWorkflow
from signoff.rooms import OPEN, OWNER_AND_OWNER_AGENTS, Principal, RoomService
from signoff.rooms.client import InProcessSyncTransport, Person, SyncRoomsClient, embedded_rooms


@dataclass
class RepairRoom:
    rooms: RoomService
    workflow: RepairWorkflow
    fixer: FixerWorker
    room_id: str
    other_room_id: str
    operator: Principal
    bystander: Principal
    verifier: Principal
    fixer_agent: Principal
    contract: Contract
    tag: str = ""

    def say(self, who: Principal, text: str, room_id: str | None = None) -> str:
        receipt = self.rooms.post_message(who, room_id or self.room_id, text)
        return receipt.message_id

    def asked(self, verb: str, case_id: str, room_id: str | None = None) -> str:
        """The command the verifier last printed for `verb` on `case_id` (see `asked_in`)."""
        return asked_in(self.rooms, self.operator, room_id or self.room_id, self.verifier, verb, case_id)

    def run(self, rounds: int = 50) -> None:
        """Let both agents work until neither has anything left to do."""
        for _ in range(rounds):
            if self.workflow.poll() + self.fixer.poll() == 0:
                return


def asked_in(rooms: RoomService, reader: Principal, room_id: str, verifier: Principal, verb: str,
             case_id: str) -> str:
    """The command `verifier` last printed in the room for `verb` on `case_id`, as a person copies
    it after reading what was shown: it names the digest of that content."""
    command = re.compile(rf"`(@{re.escape(verifier.name)} {verb} {re.escape(case_id)}(?: [^`]+)?)`")
    for message in reversed(rooms.read_messages(reader, room_id, limit=1000)):
        found = command.search(message["body"]) if message["sender"] == verifier.sender else None
        if found:
            return found.group(1)
    raise LookupError(f"{verifier.name} has not asked for {verb} on {case_id} in the room")


def coupon_contract(repo: Path, harness: Path, name: str = "coupon") -> Contract:
    return Contract(
        name=name,
        behaviour="A 10% coupon on a 10000-cent cart leaves 9000 cents (applied once); a zero coupon keeps "
                  "the total; an empty cart costs nothing.",
        repo=str(repo), base="main", harness=str(harness),
        expect="test_coupon.py::test_coupon_applies_once",
        regression=["test_coupon.py::test_zero_coupon_keeps_total", "test_coupon.py::test_empty_cart_costs_nothing"],
        allow=["cart.py"], fixer_script="coupon", timeout=60.0)


def open_repair_room(ledger: SqlLedger, settings: Settings, contract: Contract,
                     suffix: str | None = None, operator: Principal | None = None) -> RepairRoom:
    """A fresh case room; its operator is `operator` (the demo's visitor, say), or a new user."""
    import signoff.demo.coupon_fixer  # noqa: F401  (registers the coupon fixer script)

    tag = suffix or new_id()[:6]
    rooms = embedded_rooms(ledger)
    owner, _ = rooms.create_user(f"repair-owner-{tag}", "repair bot owner")
    if operator is None:
        operator, _ = rooms.create_user(f"alice-{tag}", "Alice (operator)")
    bystander, _ = rooms.create_user(f"mallory-{tag}", "Mallory")
    # Anyone in the room may address the verifier (so a refusal can be said back); only agents of the
    # same owner -- the verifier -- may address the fixer.
    verifier, _ = rooms.create_agent(owner, f"verifier-{tag}", "deterministic repair verifier", policy=OPEN)
    fixer, _ = rooms.create_agent(owner, f"fixer-{tag}", "coding agent (scripted)", policy=OWNER_AND_OWNER_AGENTS)
    room = rooms.create_room(owner, f"repair {contract.name} {tag}", agent_names=[verifier.name, fixer.name],
                             user_names=[operator.name, bystander.name])
    other = rooms.create_room(owner, f"elsewhere {tag}", agent_names=[verifier.name], user_names=[operator.name])
    workflow, fixer_worker = embedded_agents(ledger, rooms, settings, verifier, fixer)
    workflow.watch(room.id, contract, Person(operator.name, "user", operator.sender))
    return RepairRoom(rooms, workflow, fixer_worker, room.id, other.id, operator, bystander, verifier, fixer,
                      contract, tag)


def agent_rooms(rooms: RoomService, agent: Principal) -> SyncRepairRooms:
    """An agent's rooms on the embedded server, through the in-process client."""
    return SyncRepairRooms(SyncRoomsClient(InProcessSyncTransport(rooms, agent=agent)), agent.name)


def embedded_agents(ledger: SqlLedger, rooms: RoomService, settings: Settings, verifier: Principal, fixer: Principal,
                    script: str | None = None) -> tuple[RepairWorkflow, FixerWorker]:
    """The verifier's workflow and the fixer's worker, each acting as its own agent."""
    workflow = RepairWorkflow(ledger, agent_rooms(rooms, verifier), settings, fixer.name)
    return workflow, workflow.fixer_worker(agent_rooms(rooms, fixer), script)
