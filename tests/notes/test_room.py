"""Decisions from a room: the authenticated sender decides, never a name in the text; agents and
people who are not deciders are refused; a redelivered message is applied once."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff.kernel.clock import FixedClock
from signoff.kernel.settings import Settings
from signoff.ledger import Ledger
from signoff.notes.decisions import decisions, state_of
from signoff.notes.room import poll_room
from signoff.notes.run import start_run
from signoff.rooms import OPEN, RoomService
from tests.notes.gitrepo import Repo


@pytest.fixture
def rooms(sqlite_url: str) -> Iterator[RoomService]:
    ledger = Ledger.from_url(sqlite_url, FixedClock(1_800_000_000.0))
    yield RoomService(ledger)
    ledger.close()


@pytest.fixture(scope="module")
def template(history: Repo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("notes-room")
    start_run(history.path, "v0.1.0..v0.2.0", folder / "run", Settings.load(home=str(folder / "home")))
    return folder / "run"


def test_room_decisions(rooms: RoomService, template: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(template, run)
    rooms.init()
    alice, _ = rooms.create_user("alice", "Alice")
    bob, _ = rooms.create_user("bob", "Bob")
    mallory, _ = rooms.create_user("mallory", "alice")  # display name copies alice: names in text prove nothing
    notes, _ = rooms.create_agent(alice, "notes", "release notes", policy=OPEN)
    fixer, _ = rooms.create_agent(alice, "fixer", "another agent", policy=OPEN)
    room = rooms.create_room(alice, "release-1", agent_names=["notes", "fixer"],
                             user_names=["alice", "bob", "mallory"])

    def say(who: object, text: str) -> str:
        return rooms.post_message(who, room.id, text, target_names=["notes"]).message_id  # type: ignore[arg-type]

    say(alice, "approve all")
    say(mallory, "ship")
    say(fixer, "approve S1")
    rooms.post_message(bob, room.id, "I think @notes approve S2")
    say(alice, "edit S1 This release brings 99 commits.")
    say(alice, "ship")
    out = poll_room(run, rooms, notes, room.id, ["alice", "bob"])
    assert [(o.command, o.applied) for o in out] == [
        ("approve all", True), ("ship", False), ("approve S1", False), ("I think @notes approve S2", False),
        ("edit S1 This release brings 99 commits.", True), ("ship", False)]
    assert "mallory is not a decider" in out[1].detail
    assert "agents cannot" in out[2].detail
    assert "right after the mention" in out[3].detail
    assert "S1: not approved since its edit; NUMBER_UNSUPPORTED '99'" in out[5].detail

    recorded = decisions(rooms.ledger, run)
    assert [d["action"] for d in recorded] == ["approve", "edit"]
    assert all(d["source"] == "room" and d["ref"]["room_id"] == room.id and d["by"] == "alice"
               and d["ref"]["sender"] == alice.sender for d in recorded)

    assert poll_room(run, rooms, notes, room.id, ["alice", "bob"]) == []  # cursor kept in the run
    say(bob, "reject S1")
    say(bob, "ship")
    out = poll_room(run, rooms, notes, room.id, ["alice", "bob"])
    assert [(o.command, o.applied, o.detail) for o in out] == [("reject S1", True, "recorded"),
                                                                ("ship", True, "shipped")]
    assert state_of(rooms.ledger, run).shipped

    # A redelivery (cursor lost) applies nothing twice.
    (run / "room.json").write_text(json.dumps({"room_id": room.id, "agent": notes.id, "cursor": 0}))
    poll_room(run, rooms, notes, room.id, ["alice", "bob"])
    assert len(decisions(rooms.ledger, run)) == 4

    replies = [m["body"] for m in rooms.read_messages(alice, room.id, limit=1000) if m["sender"] == notes.sender]
    assert any("mallory is not a decider" in r for r in replies) and any("shipped" in r for r in replies)


def test_room_cursor_belongs_to_one_room(rooms: RoomService, template: Path, tmp_path: Path) -> None:
    from signoff.kernel.errors import UsageError

    run = tmp_path / "run"
    shutil.copytree(template, run)
    rooms.init()
    alice, _ = rooms.create_user("alice", "Alice")
    notes, _ = rooms.create_agent(alice, "notes", "release notes", policy=OPEN)
    one = rooms.create_room(alice, "one", agent_names=["notes"], user_names=["alice"])
    two = rooms.create_room(alice, "two", agent_names=["notes"], user_names=["alice"])
    poll_room(run, rooms, notes, one.id, ["alice"])
    with pytest.raises(UsageError, match="another room"):
        poll_room(run, rooms, notes, two.id, ["alice"])
    with pytest.raises(UsageError, match="no deciders"):
        poll_room(run, rooms, notes, one.id, [])
