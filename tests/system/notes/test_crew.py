"""Notes' scout, writer and editor as room agents on the embedded server, in one process: work
moves only by addressed messages that match their sender's receipt; a hand-off typed or copied by
a person is refused; people decide afterwards through the listener."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff.kernel.digests import sha256_file
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.notes.crew import EDITOR, ROLES, SCOUT, WRITER, Crew, NotesAgent, handoffs
from signoff.notes.decisions import bound
from signoff.notes.room import poll_room
from signoff.notes.run import load_review
from signoff.rooms import RoomService
from signoff.rooms.client import AgentLoop, Identities, InProcessTransport
from tests.support.deciding import notes_of, state_of
from tests.support.gitrepo import Repo
from tests.system.notes.crew_world import CrewWorld, make_crew


@pytest.fixture
def crew(tmp_path: Path) -> Iterator[tuple[CrewWorld, Settings]]:
    settings = Settings.load(home=str(tmp_path / "home"), db_url=f"sqlite:///{tmp_path / 'ledger.db'}")
    ledger = SqlLedger.open(settings)
    yield make_crew(RoomService(ledger)), settings
    ledger.close()


def _messages(world: CrewWorld) -> list[dict[str, object]]:
    return world.service.read_messages(world.alice, world.room_id, limit=1000)


async def _until(check: object, timeout: float = 60.0) -> None:
    async def poll() -> None:
        while not check():  # type: ignore[operator]
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), timeout)


def test_the_crew_hands_work_over_by_receipt_and_refuses_copies(crew: tuple[CrewWorld, Settings],
                                                                history: Repo) -> None:
    world, settings = crew
    service, room = world.service, world.room_id
    people = Identities.configured({"alice": world.alice.sender})  # mallory is bound to nobody
    agents = {role: NotesAgent(role, settings, service.ledger, room, Crew({}), people, history.path,
                               script="demo") for role in ROLES}

    async def scenario() -> str:
        loops = [AgentLoop(InProcessTransport(service, agent=world.agents[role][0], keepalive_seconds=0.1),
                           service.ledger, [room], agents[role].handle, agent_name=role, heartbeat_interval=0.1)
                 for role in ROLES]
        for loop in loops:
            await loop.start()
        tasks = [asyncio.create_task(loop.run()) for loop in loops]
        try:
            refused = service.post_message(world.mallory, room, "notes v0.1.0..v0.2.0",
                                           target_names=[SCOUT]).message_id
            service.post_message(world.alice, room, "notes v0.1.0..v0.2.0", target_names=[SCOUT])
            await _until(lambda: agents[EDITOR].done)
            run = agents[EDITOR].done[0]
            # The scout refused mallory in her thread, and did nothing for her.
            await _until(lambda: any(m.get("thread_id") == refused for m in _messages(world)))
            assert agents[SCOUT].done == [run]

            # alice (who owns the agents, so the server lets her address them) copies the writer's
            # last hand-off to the editor word for word: same text, but not the writer's message.
            folder = settings.home / "notes" / run
            last = [h for h in handoffs(service.ledger, run) if h["from"] == WRITER][-1]
            before = sha256_file(folder / "review.json")
            copy = service.post_message(world.alice, room, last["text"], target_names=[EDITOR]).message_id
            await _until(lambda: any(m.get("thread_id") == copy for m in _messages(world)))
            assert sha256_file(folder / "review.json") == before
            return run
        finally:
            for task in tasks:
                task.cancel()
            for loop in loops:
                await loop.close()

    run = asyncio.run(scenario())
    folder = settings.home / "notes" / run
    msgs = _messages(world)
    by_thread = {str(m.get("thread_id")): str(m["body"]) for m in msgs if m.get("thread_id")}
    assert any("only a person bound to this workflow may ask" in b for b in by_thread.values())
    assert any("not a hand-off the notes agents recorded" in b for b in by_thread.values())

    # Four hand-offs, each sent once, by the agent whose step it was, to the next one.
    sent = handoffs(service.ledger, run)
    assert [(h["from"], h["to"], h["text"].split(" ")[0], h["text"].split(" ")[2]) for h in sent] == [
        (SCOUT, WRITER, "draft", "facts.json"), (WRITER, EDITOR, "review", "draft.json"),
        (EDITOR, WRITER, "revise", "review.r0.json"), (WRITER, EDITOR, "review", "draft.r1.json")]
    senders = {role: world.agents[role][0].sender for role in ROLES}
    assert all(h["receipt"]["sender"] == senders[h["from"]] and h["receipt"]["room_id"] == room for h in sent)

    review = load_review(folder)
    assert [r["round"] for r in review["rounds"]] == [0, 1]
    assert any(s["status"] == "rejected" for s in review["rounds"][0]["sentences"])
    assert any(f"release notes {run} are reviewed" in str(m["body"]) and m["sender"] == senders[EDITOR]
               for m in msgs)

    # People decide through the listener, as before.
    listener = world.agents["notes"][0]
    approve_all = bound("approve all", state_of(service.ledger, folder))
    service.post_message(world.alice, room, approve_all, target_names=["notes"])
    outcomes = poll_room(notes_of(service.ledger), folder, service, listener, room, ["alice"], people)
    ship = bound("ship", state_of(service.ledger, folder))
    service.post_message(world.alice, room, ship, target_names=["notes"])
    outcomes += poll_room(notes_of(service.ledger), folder, service, listener, room, ["alice"], people)
    assert [(o.command, o.applied) for o in outcomes] == [(approve_all, True), (ship, True)]
    assert state_of(service.ledger, folder).shipped


@pytest.mark.parametrize(("args", "message"), [
    (["bogus", "--room", "r"], "unknown notes agent 'bogus'"),
    (["scout", "--room", "r"], "the notes-scout reads git"),
    (["editor", "--room", "r", "--repo", "/no/such/repo"], "repository not found: /no/such/repo"),
    (["writer", "--room", "no-such-room"], "no-such-room"),
])
def test_agent_command_errors_are_messages(home: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                           message: str) -> None:
    from signoff.cli.main import main

    code = main(["notes", "agent", *args])
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err and "fix:" in err and "Traceback" not in err
