"""The demo's visitor and the work the demos leave waiting for them, so that `signoff serve --demo`
has real decisions to make, through the real workflows:

- an approval card asked by a scripted assistant (`ask_card`, at the first `serve --demo`);
- a repair case whose contract waits for the visitor's approval, and one whose verified fix waits
  for their acceptance (`leave_repair_work`, from `signoff demo repair`); `RepairAgents` runs both
  cases' verifier and fixer in the served process, so an approval from the page moves the case on
  (reproduction, fixer attempts and verification in the sandbox), up to the acceptance;
- a release notes run with every sentence undecided (`signoff demo notes`), the visitor a decider;
- a bug whose change waits for review and merge (`signoff demo desk`), the visitor a desk owner;
- the incident demo's recorded run, to replay and view as each company.

Every scripted step says so where a person reads it ("simulated"), and the scripted people are
named to the pages (`SCRIPTED`) so that their approvals and merges are labelled simulated too.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signoff.kernel.errors import ConflictError, NotFoundError
from signoff.kernel.settings import Settings
from signoff.rooms import Principal, RoomService

VISITOR = "visitor"
VISITOR_NAME = "Demo visitor"
# The demo's scripted people and agents: whatever they decide is simulated (design rule 6).
SCRIPTED = frozenset({"demo-approver", "alice", "priya", "ravi", "demo-assistant"})
REPAIR_WORK = "visitor-cases.json"  # under <home>/demo-repair: the visitor's cases and their agents
CARD_ID = "demo-visitor-card-1"
SIMULATED = "(simulated: the demo wrote this for you)"


def ensure_visitor(rooms: RoomService, home: Path) -> Principal:
    """The room user `visitor`, an admin (so every demo room is readable), made on first use; a
    `visitor` that is not an admin is someone else's, and is never taken over."""
    try:
        user = rooms.user_by_name(VISITOR)
    except NotFoundError:
        user, _ = rooms.create_user(VISITOR, VISITOR_NAME, admin=True)
    if not user.is_admin:
        raise ConflictError(f"a room user {VISITOR!r} exists on {home} and is not the demo's visitor",
                            "serve a home that only `signoff demo` wrote to, or remove that user")
    return user


# -- repair ------------------------------------------------------------------------------------------


def leave_repair_work(ledger: Any, settings: Settings, contract: Any) -> dict[str, str]:
    """Two coupon cases whose operator is the visitor: one waits for the contract's approval, the
    other (its contract approved by the demo in the visitor's name, said so in the room) for the
    acceptance of its verified fix. Returns each case's state."""
    from signoff.demo.repair_room import open_repair_room

    rooms = RoomService(ledger)
    visitor = ensure_visitor(rooms, settings.home)
    kept, states = [], {}
    for stage in ("contract", "review"):
        room = open_repair_room(ledger, settings, contract, operator=visitor)
        said = SIMULATED if stage == "contract" else (
            "(simulated: the demo wrote this report, and approves its contract in your name, so that a verified "
            "fix waits for your acceptance)")
        room.say(visitor, f"@{room.verifier.name} {said} A 10% coupon is applied twice. On a 10000-cent cart I "
                          "expect 9000 cents.")
        room.run()
        case_id = next(c.case_id for c in room.workflow.cases() if c.room_id == room.room_id)
        if stage == "review":
            room.say(visitor, room.asked("approve", case_id))
            room.run()
        states[case_id] = room.workflow.case(case_id).state
        kept.append({"room_id": room.room_id, "verifier": room.verifier.id, "fixer": room.fixer_agent.id})
    folder = settings.home / "demo-repair"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / REPAIR_WORK
    # A demo run again on the same home adds its cases: the earlier ones still wait, and their agents run too.
    earlier = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
    path.write_text(json.dumps([*earlier, *kept]), encoding="utf-8")
    return states


@dataclass
class RepairAgents:
    """The verifier and fixer of the visitor's repair cases, run in the served process (a thread),
    as `signoff repair run` would: an approval or acceptance sent from the page is acted on."""

    rooms: RoomService
    settings: Settings
    stop: threading.Event
    thread: threading.Thread | None = None

    def start(self) -> RepairAgents:
        path = self.settings.home / "demo-repair" / REPAIR_WORK
        if not path.is_file():
            return self
        import signoff.demo.coupon_fixer  # noqa: F401  (registers the coupon fixer script the cases name)
        from signoff.demo.repair_room import embedded_agents

        pairs = []
        for kept in json.loads(path.read_text(encoding="utf-8")):
            verifier, fixer = self.rooms.agent(kept["verifier"]), self.rooms.agent(kept["fixer"])
            pairs.append(embedded_agents(self.rooms.ledger, self.rooms, self.settings, verifier, fixer))

        def loop() -> None:
            while not self.stop.is_set():
                busy = 0
                for workflow, fixer_worker in pairs:
                    try:
                        busy += workflow.poll() + fixer_worker.poll()
                    except Exception:
                        time.sleep(1.0)
                if not busy:
                    self.stop.wait(1.0)

        self.thread = threading.Thread(target=loop, name="demo-repair-agents", daemon=True)
        self.thread.start()
        return self


# -- an approval card --------------------------------------------------------------------------------


def ask_card(rooms: RoomService, visitor: Principal) -> None:
    """A scripted assistant asks the visitor one approval card (once: a card already asked, answered
    or not, is not asked again)."""
    try:
        assistant = rooms.user_by_name("demo-assistant-owner")
    except NotFoundError:
        assistant, _ = rooms.create_user("demo-assistant-owner", "Demo assistant's owner (simulated)")
    try:
        agent = rooms.agent_by_name("demo-assistant")
    except NotFoundError:
        agent, _ = rooms.create_agent(assistant, "demo-assistant", "a scripted assistant (simulated)")
    room_id = next((r["room_id"] for r in rooms.list_rooms(visitor) if r["name"] == "demo: your approvals"), None)
    if room_id is None:
        room_id = rooms.create_room(assistant, "demo: your approvals", agent_names=[agent.name],
                                    user_names=[visitor.name]).id
    rooms.request_approval(agent, room_id, CARD_ID,
                           "(simulated) May the assistant post the coupon fix's release note to the shop's blog?",
                           [{"id": "yes", "label": "Approve", "decision": "accept"},
                            {"id": "no", "label": "Reject", "decision": "decline"}],
                           time.time() + 30 * 24 * 3600, [visitor.name])
