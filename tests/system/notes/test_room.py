"""Decisions from a room: the authenticated sender decides, never a name in the text; agents and
people who are not deciders are refused; a redelivered message is applied once; a command names the
digest of the text it decides on, and one that names none is answered with that text instead."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from signoff.kernel.clock import FixedClock
from signoff.kernel.settings import Settings
from signoff.ledger import NewEvent, SqlLedger
from signoff.notes.decisions import bound
from signoff.notes.room import RoomOutcome, cursor_case, poll_room
from signoff.notes.run import start_run
from signoff.rooms import OPEN, Principal, Room, RoomService
from tests.support.deciding import decisions, notes_of, state_of
from tests.support.gitrepo import Repo


@pytest.fixture
def rooms(sqlite_url: str) -> Iterator[RoomService]:
    ledger = SqlLedger.from_url(sqlite_url, FixedClock(1_800_000_000.0))
    yield RoomService(ledger)
    ledger.close()


def _poll(run: Path, rooms: RoomService, *rest: Any) -> list[RoomOutcome]:
    return poll_room(notes_of(rooms.ledger), run, rooms, *rest)


def named(ledger: SqlLedger, run: Path, command: str) -> str:
    """`command` naming the digest of what it decides on now, as a person copies it from the page."""
    return bound(command, state_of(ledger, run))


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

    say(alice, "approve all")  # names no text: answered with the text and the command that names it
    approve_all = named(rooms.ledger, run, "approve all")
    say(alice, approve_all)
    say(mallory, "ship")
    say(fixer, "approve S1")
    rooms.post_message(bob, room.id, "I think @notes approve S2")
    edit = named(rooms.ledger, run, "edit S1 This release brings 99 commits.")
    say(alice, edit)
    out = _poll(run, rooms, notes, room.id, ["alice", "bob"])
    assert [(o.command, o.applied) for o in out] == [
        ("approve all", False), (approve_all, True), ("ship", False), ("approve S1", False),
        ("I think @notes approve S2", False), (edit, True)]
    assert "names no text" in out[0].detail and f"send `@notes {approve_all}`" in out[0].detail
    assert "It would decide on: S1: This release " in out[0].detail
    assert "mallory is not a decider" in out[2].detail
    assert "agents cannot" in out[3].detail
    assert "right after the mention" in out[4].detail
    say(alice, named(rooms.ledger, run, "ship"))
    (out,) = _poll(run, rooms, notes, room.id, ["alice", "bob"])
    assert not out.applied and "S1: not approved since its edit; NUMBER_UNSUPPORTED '99'" in out.detail

    recorded = decisions(rooms.ledger, run)
    assert [d["action"] for d in recorded] == ["approve", "edit"]
    assert all(d["source"] == "room" and d["ref"]["room_id"] == room.id and d["by"] == "alice"
               and d["ref"]["sender"] == alice.sender for d in recorded)

    assert _poll(run, rooms, notes, room.id, ["alice", "bob"]) == []  # cursor kept in the run
    reject = named(rooms.ledger, run, "reject S1")
    say(bob, reject)
    assert [o.applied for o in _poll(run, rooms, notes, room.id, ["alice", "bob"])] == [True]
    ship = named(rooms.ledger, run, "ship")
    say(bob, ship)
    out = _poll(run, rooms, notes, room.id, ["alice", "bob"])
    assert [(o.command, o.applied, o.detail) for o in out] == [(ship, True, "shipped")]
    assert state_of(rooms.ledger, run).shipped

    # A redelivery (cursor reset to the start) applies nothing twice.
    rooms.ledger.append(cursor_case(run), None, [NewEvent("notes.room_cursor", {
        "room_id": room.id, "agent": notes.id, "cursor": 0})])
    _poll(run, rooms, notes, room.id, ["alice", "bob"])
    assert len(decisions(rooms.ledger, run)) == 4

    replies = [m["body"] for m in rooms.read_messages(alice, room.id, limit=1000) if m["sender"] == notes.sender]
    assert any("mallory is not a decider" in r for r in replies) and any("shipped" in r for r in replies)


def _alice_and_notes(rooms: RoomService, template: Path, tmp_path: Path,
                     *room_names: str) -> tuple[Path, Principal, Principal, list[Room]]:
    """A copy of the run, user alice, the notes agent, and rooms holding both."""
    run = tmp_path / "run"
    shutil.copytree(template, run)
    rooms.init()
    alice, _ = rooms.create_user("alice", "Alice")
    notes, _ = rooms.create_agent(alice, "notes", "release notes", policy=OPEN)
    made = [rooms.create_room(alice, name, agent_names=["notes"], user_names=["alice"]) for name in room_names]
    return run, alice, notes, made


def test_room_cursor_belongs_to_one_room(rooms: RoomService, template: Path, tmp_path: Path) -> None:
    from signoff.kernel.errors import UsageError

    run, _, notes, (one, two) = _alice_and_notes(rooms, template, tmp_path, "one", "two")
    _poll(run, rooms, notes, one.id, ["alice"])
    with pytest.raises(UsageError, match="another room"):
        _poll(run, rooms, notes, two.id, ["alice"])
    with pytest.raises(UsageError, match="no deciders"):
        _poll(run, rooms, notes, one.id, [])


class _Crash(BaseException):
    """The process dying between a decision and saving the cursor."""


def test_a_poll_that_dies_before_saving_its_cursor_applies_nothing_twice(
        rooms: RoomService, template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import signoff.notes.room as room_module

    run, alice, notes, (room,) = _alice_and_notes(rooms, template, tmp_path, "release-1")
    approve_all, reject = named(rooms.ledger, run, "approve all"), named(rooms.ledger, run, "reject S1")
    rooms.post_message(alice, room.id, approve_all, target_names=["notes"])
    rooms.post_message(alice, room.id, reject, target_names=["notes"])

    def crashing_save(*args: object) -> None:
        raise _Crash()

    monkeypatch.setattr(room_module, "_save_cursor", crashing_save)
    with pytest.raises(_Crash):
        _poll(run, rooms, notes, room.id, ["alice"])
    assert [d["action"] for d in decisions(rooms.ledger, run)] == ["approve"]
    monkeypatch.undo()

    out = _poll(run, rooms, notes, room.id, ["alice"])  # reads both messages again
    assert [(o.command, o.applied) for o in out] == [(approve_all, True), (reject, True)]
    assert [d["action"] for d in decisions(rooms.ledger, run)] == ["approve", "reject"]
    assert _poll(run, rooms, notes, room.id, ["alice"]) == []  # the cursor is saved now


def test_configured_identities_decide_and_a_copied_display_name_does_not(
        rooms: RoomService, template: Path, tmp_path: Path) -> None:
    from signoff.rooms.client import Identities

    run, alice, notes, (room,) = _alice_and_notes(rooms, template, tmp_path, "external")
    mallory, _ = rooms.create_user("mallory", "alice")  # the same display name as alice
    rooms.add_member(alice, room.id, user_name="mallory")
    # Sender ids as an external server would write them: opaque, bound by configuration only.
    identities = Identities.configured({"alice": alice.sender})
    approve_all = named(rooms.ledger, run, "approve all")
    rooms.post_message(mallory, room.id, approve_all, target_names=["notes"])
    rooms.post_message(alice, room.id, approve_all, target_names=["notes"])
    out = _poll(run, rooms, notes, room.id, ["alice", "mallory"], identities)
    assert [(o.sender, o.applied) for o in out] == [(mallory.sender, False), (alice.sender, True)]
    assert "not bound to anyone" in out[0].detail
    assert [d["by"] for d in decisions(rooms.ledger, run)] == ["alice"]


def test_decisions_through_the_rooms_client_on_any_server(rooms: RoomService, template: Path,
                                                          tmp_path: Path) -> None:
    """The client path (used with [rooms] url): the room's context read back, sender ids bound by
    configuration, each command answered once, our own replies never read as commands."""
    import asyncio

    from signoff.notes.room import poll_room_client
    from signoff.rooms.client import Identities, InProcessTransport, RoomsClient

    run = tmp_path / "run"
    shutil.copytree(template, run)
    rooms.init()
    alice, _ = rooms.create_user("alice", "Alice")
    bob, _ = rooms.create_user("bob", "Bob")
    mallory, _ = rooms.create_user("mallory", "alice")
    notes, notes_key = rooms.create_agent(alice, "notes", "release notes", policy=OPEN)
    room = rooms.create_room(alice, "release-x", agent_names=["notes"], user_names=["alice", "bob", "mallory"])
    identities = Identities.configured({"alice": alice.sender, "bob": bob.sender})

    def poll() -> list[Any]:
        async def go() -> list[Any]:
            async with RoomsClient(InProcessTransport(rooms, notes_key), heartbeat_interval=0.2) as client:
                return await poll_room_client(notes_of(rooms.ledger), run, client, "notes", room.id, ["alice", "bob"],
                                              identities)
        return asyncio.run(go())

    approve_all = named(rooms.ledger, run, "approve all")
    rooms.post_message(alice, room.id, approve_all, target_names=["notes"])
    rooms.post_message(mallory, room.id, "ship", target_names=["notes"])
    rooms.post_message(bob, room.id, "I think @notes approve S2")
    rooms.post_message(alice, room.id, "just chatting")
    out = poll()
    assert [(o.sender, o.command, o.applied) for o in out] == [
        (alice.sender, approve_all, True), (mallory.sender, "ship", False),
        (bob.sender, "I think @notes approve S2", False)]
    assert "not bound to anyone" in out[1].detail and "right after the mention" in out[2].detail
    assert poll() == []  # answered once; the replies (which mention @notes) are not commands
    reject = named(rooms.ledger, run, "reject S1")
    rooms.post_message(bob, room.id, reject, target_names=["notes"])
    out = poll()
    ship = named(rooms.ledger, run, "ship")
    rooms.post_message(bob, room.id, ship, target_names=["notes"])
    out += poll()
    assert [(o.command, o.applied, o.detail) for o in out] == [(reject, True, "recorded"), (ship, True, "shipped")]
    assert [(d["by"], d["ref"]["sender"]) for d in decisions(rooms.ledger, run)] == [
        ("alice", alice.sender), ("bob", bob.sender), ("bob", bob.sender)]
    replies = [m for m in rooms.read_messages(alice, room.id, limit=1000) if m["sender"] == notes.sender]
    assert len(replies) == 5 and all(m["thread_id"] for m in replies)


def test_notes_room_cli_on_a_server_at_rooms_url(rooms: RoomService, template: Path, tmp_path: Path,
                                                 home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from signoff.cli.main import main
    from signoff.rooms.http.app import create_app
    from tests.support.fixtures.rooms import Server

    run = tmp_path / "run"
    shutil.copytree(template, run)
    boot = rooms.init()
    alice, _ = rooms.create_user("alice", "Alice")
    server = Server(create_app(service=rooms, keepalive_seconds=0.5))
    base = server.start()
    try:
        config = home.parent / "signoff.toml"
        config.write_text(f'[notes]\ndeciders = ["alice"]\n[rooms]\nurl = "{base}"\n'
                          '[rooms.roles.notes]\nname = "notes"\n')
        # Without bound deciders an external server is refused up front.
        assert main(["rooms", "connect", "--registration-key", boot["registration_key"]]) == 0
        notes = rooms.agent_by_name("notes")
        rooms.set_policy(rooms.user(boot["admin_user_id"]), notes.id, OPEN)
        room = rooms.create_room(alice, "release-cli", agent_names=["notes"], user_names=["alice"])
        capsys.readouterr()
        assert main(["notes", "room", str(run), "--room", room.id, "--decider", "alice"]) == 2
        assert "[rooms.people]" in capsys.readouterr().err
        config.write_text(config.read_text() + f'[rooms.people]\nalice = "{alice.sender}"\n')
        approve_all = named(rooms.ledger, run, "approve all")
        rooms.post_message(alice, room.id, approve_all, target_names=["notes"])
        assert main(["notes", "room", str(run), "--room", room.id, "--decider", "alice", "--json"]) == 0
        [outcome] = json.loads(capsys.readouterr().out)
        assert (outcome["command"], outcome["applied"], outcome["sender"]) == (approve_all, True, alice.sender)
        assert main(["notes", "room", str(run), "--room", room.id, "--decider", "alice", "--json"]) == 0
        assert json.loads(capsys.readouterr().out) == []
    finally:
        server.stop()


def test_a_room_approval_of_text_edited_since_it_was_shown_is_refused(rooms: RoomService, template: Path,
                                                                      tmp_path: Path) -> None:
    """Alice copies `approve S2 #<digest>` from her page; Bob edits S2 in the room before it is read:
    her approval is answered with the refusal and records nothing."""
    run, alice, notes, (room,) = _alice_and_notes(rooms, template, tmp_path, "release-2")
    bob, _ = rooms.create_user("bob", "Bob")
    rooms.add_member(alice, room.id, user_name="bob")
    seen = named(rooms.ledger, run, "approve S2")
    edit = named(rooms.ledger, run, "edit S2 " + "Notably, " + state_of(rooms.ledger, run).get("S2").text)
    rooms.post_message(bob, room.id, edit, target_names=["notes"])
    rooms.post_message(alice, room.id, seen, target_names=["notes"])
    out = _poll(run, rooms, notes, room.id, ["alice", "bob"])
    assert [(o.command, o.applied) for o in out] == [(edit, True), (seen, False)]
    assert "the sentence S2 changed since it was shown" in out[1].detail and "reload" in out[1].detail
    assert [d["action"] for d in decisions(rooms.ledger, run)] == ["edit"]
    assert state_of(rooms.ledger, run).get("S2").status == "pending"
