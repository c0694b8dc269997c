"""The crew works the desk's loop in rooms, on the embedded server: the manager hands work over
with receipted messages, the reproducer and the fixer answer with documents, the desk measures.
A copied hand-off is ignored, an agent's `approve` is refused, and each step happens once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from signoff.desk import bug_rooms, crew_agents, crew_commands
from signoff.desk.crew import Crew, agent_name, key_role, setup
from signoff.ledger import Outbox
from signoff.rooms import RoomService
from signoff.rooms.client import InProcessTransport, RoomsClient, RoomsConfig
from tests.desk.conftest import COUPON, World


@dataclass
class Crewed:
    world: World
    rooms: RoomService
    crew: Crew

    def key(self, role: str) -> str:
        return RoomsConfig.from_settings(self.world.settings).key(key_role(role))["api_key"]

    def members(self) -> list[crew_agents.Running]:
        transports = {r: InProcessTransport(self.rooms, self.key(r)) for r in crew_agents.PROCESS_ROLES}
        return crew_agents.members(self.world.desk, self.crew, transports, self.world.actor("engineering"),
                                   concierge=self.world.actor("concierge"))

    def messages(self, room: str | None = None) -> list[dict[str, Any]]:
        return self.rooms.read_messages(self.rooms.user_by_name("alice"), room or self.crew.engineering_room,
                                        0, 1000)

    def commands(self, verb: str) -> list[dict[str, Any]]:
        return [m for m in self.messages() if crew_commands.strip_mentions(m["body"]).startswith(verb + " ")]


@pytest.fixture
def crewed(world: World, sandbox_ok: None) -> Crewed:
    rooms = RoomService(world.ledger)
    rooms.create_user("alice", "Alice")
    return Crewed(world, rooms, setup(rooms, world.settings, "alice")[0])


async def _until(check: Callable[[], bool], what: str, timeout: float = 180.0) -> None:
    """Poll the ledger until `check()` holds (the crew works in background tasks)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


def _dump(c: Crewed) -> str:
    jobs = [(j.job_id, j.status, j.last_error) for j in Outbox(c.world.ledger).jobs()]
    events = [(e.type, e.recorded_at) for e in c.world.ledger.read("desk/bug/BUG-0001")]
    from signoff.rooms.client import AgentStore, agent_case
    agents = {r: (AgentStore(c.world.ledger, agent_case(c.crew.agents[r])).state.handled,
                  list(AgentStore(c.world.ledger, agent_case(c.crew.agents[r])).state.pending))
              for r in crew_agents.PROCESS_ROLES}
    return json.dumps({"jobs": jobs, "messages": [(m["sender"], m["body"]) for m in c.messages()],
                       "events": events, "agents": agents,
                       "received": [e.payload for e in c.world.ledger.read(agent_case(c.crew.agents["reproducer"]))]},
                      indent=1)


async def _with_crew(c: Crewed, scenario: Callable[[dict[str, crew_agents.Running]], Any]) -> None:
    stop = asyncio.Event()
    running = {m.role: m for m in c.members()}
    tasks = [asyncio.create_task(crew_agents.run_member(m, stop, heartbeat_interval=0.5)) for m in running.values()]
    try:
        try:
            await scenario(running)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{_dump(c)}") from exc
    finally:
        stop.set()
        await asyncio.gather(*tasks)


def test_the_crew_reproduces_and_fixes_through_rooms_once_each(crewed: Crewed) -> None:
    c = crewed
    w = c.world
    intake = w.desk.submit_report(COUPON, "198.51.100.7")

    async def scenario(_: dict[str, crew_agents.Running]) -> None:
        await _until(lambda: w.desk.bug(intake.bug_id).state == "awaiting_reporter", "the reproduction")
        w.desk.confirm(w.desk.reporter(intake.report_id, intake.capability), "yes", bug_id=intake.bug_id)
        await _until(lambda: w.desk.bug(intake.bug_id).state == "in_review", "the draft")
        await _until(lambda: len(reviews()) == 2, "the reviewer's notes on the test and the draft")

    def reviews() -> list[dict[str, Any]]:
        return [n for n in w.desk.notes(intake.bug_id) if n["type"] == "note.review"]

    asyncio.run(_with_crew(c, scenario))
    bug = w.desk.bug(intake.bug_id)
    assert bug.change is not None and bug.reproduction is not None
    types = [e.type for e in w.ledger.read(f"desk/bug/{intake.bug_id}")]
    assert types.count("reproduction.recorded") == 1
    # One hand-off and one answer per step, each addressed and each from its own identity.
    for verb, sender in (("start_reproduction", "manager"), ("propose_reproduction", "reproducer"),
                         ("start_fix", "manager"), ("submit_fix", "fixer"), ("start_review", "manager"),
                         ("submit_review", "reviewer")):
        sent = c.commands(verb)
        assert len(sent) == (2 if "review" in verb else 1), (verb, [m["body"] for m in c.messages()])
        assert sent[0]["sender"] == c.crew.senders[sender]
    # The bug's room holds the dossier (headed untrusted), the work orders and the answers.
    alice = c.rooms.user_by_name("alice")
    [room] = [r["room_id"] for r in c.rooms.list_rooms(alice) if r["name"] == bug_rooms.room_name(intake.bug_id)]
    docs = {d["name"]: d for d in c.rooms.documents(alice, room)}
    assert set(docs) == {"dossier", "work-reproduction-r1", "reproduction-r1", "work-fix-r1", "fix-r1",
                         "work-review-test-r1", "review-test-r1", "work-review-change-r1", "review-change-r1"}
    [dossier] = c.rooms.load_documents(alice, [docs["dossier"]["id"]])
    assert dossier["content"].startswith(bug_rooms.HEADER + "\n")
    assert docs["dossier"]["created_by"] == f"agent:{c.crew.agents['manager']}"
    assert docs["reproduction-r1"]["created_by"] == f"agent:{c.crew.agents['reproducer']}"
    [proposal] = c.rooms.load_documents(alice, [docs["reproduction-r1"]["id"]])
    assert json.loads(proposal["content"])["test_source"] == bug.reproduction["test_source"]
    assert json.loads(proposal["content"])["evidence_kind"] == "simulated"  # a scripted agent's proposal
    assert "evidence kind: reported" in dossier["content"]
    # The desk measured it: the reproduction is measured evidence, the agents' part simulated.
    assert bug.reproduction["agent"]["kind"] == "simulated"
    assert crew_agents.ignored(w.ledger) == [] and crew_commands.refusals(w.ledger) == []
    # The reviewer's opinions are advisory notes, written by its identity in the room; the scripted
    # reviewer recommends "approve" for the draft, and that approves nothing.
    assert docs["review-change-r1"]["created_by"] == f"agent:{c.crew.agents['reviewer']}"
    [review] = c.rooms.load_documents(alice, [docs["review-change-r1"]["id"]])
    assert json.loads(review["content"])["label"].startswith("advisory")
    assert json.loads(review["content"])["note"]["recommendation"] == "approve"
    assert [n["evidence_kind"] for n in reviews()] == ["simulated", "simulated"]  # scripted, never measured
    assert bug.approvals == [] and bug.state == "in_review"


def test_a_copied_hand_off_is_ignored_and_an_agents_approve_is_refused(crewed: Crewed) -> None:
    c = crewed
    w = c.world
    alice = c.rooms.user_by_name("alice")
    intake = w.desk.submit_report(COUPON, "198.51.100.7")

    async def scenario(running: dict[str, crew_agents.Running]) -> None:
        await _until(lambda: len(c.commands("start_reproduction")) == 1, "the hand-off")
        original = c.commands("start_reproduction")[0]
        text = crew_commands.strip_mentions(original["body"])
        # The owner pastes the manager's exact hand-off; the manager's identity posts it again outside
        # a keyed send (so no receipt records it): both copies reach the reproducer, addressed.
        c.rooms.post_message(alice, c.crew.engineering_room, text, target_names=[agent_name("reproducer")])
        manager = running["manager"].loop
        assert manager is not None
        copy = await manager.send(c.crew.engineering_room, text, targets=[agent_name("reproducer")])
        assert copy.addressed and copy.body == original["body"]
        # The reviewer (an engineering agent the manager takes answers from) tries to approve.
        async with RoomsClient(InProcessTransport(c.rooms, c.key("reviewer")), heartbeat_interval=3600) as reviewer:
            await reviewer.connect_to_room(c.crew.engineering_room)
            for verb in ("approve", "merge", "deploy"):
                sent = await reviewer.send_targeted_message(f"{verb} {intake.bug_id} round=1", [agent_name("manager")])
                assert sent.addressed
        await _until(lambda: len(crew_agents.ignored(w.ledger)) == 2 and len(crew_commands.refusals(w.ledger)) == 3,
                     "the copies ignored and the approvals refused")
        await _until(lambda: w.desk.bug(intake.bug_id).state == "awaiting_reporter", "the reproduction")

    asyncio.run(_with_crew(c, scenario))
    ignored = crew_agents.ignored(w.ledger)
    assert {i["sender_role"] for i in ignored} == {None, "manager"}
    assert all(i["by"] == "reproducer" for i in ignored)
    assert any("no receipt" in i["why"] for i in ignored)
    refused = crew_commands.refusals(w.ledger)
    assert sorted(r["text"].split()[0] for r in refused) == ["approve", "deploy", "merge"]
    assert {r["sender_role"] for r in refused} == {"reviewer"}
    # One reproduction, from the manager's own hand-off; nothing was approved.
    assert len(c.commands("propose_reproduction")) == 1
    types = [e.type for e in w.ledger.read(f"desk/bug/{intake.bug_id}")]
    assert types.count("reproduction.recorded") == 1 and "reproduction.failed" not in types
    assert w.desk.bug(intake.bug_id).approvals == []
