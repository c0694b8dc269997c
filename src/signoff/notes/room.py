"""Human decisions from a room: people address the notes agent (`@notes approve S1`) and the
workflow applies each command exactly as the CLI would.

Who decided is the room server's authenticated sender of the message, an opaque id bound to a
person by the server's directory or by configuration (`[rooms.people]`), never a name in the
text; only people named as deciders count, agents never do, and only messages the server marked
as addressed to the notes agent are read. The decision records the room, the server-assigned
message id and the sender, and a redelivered message is not applied twice. A room shows no
sentence, so a command must name the digest of the text it decides on (`approve S1 #3fa9c2d1e0b7`);
one that does not is answered with that text and the exact command to send. The cursor into the
agent's event stream is kept in the ledger too (case `notes.room.<digest of review.json>`), bound
to the first room and agent the run was polled with.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from signoff.kernel.errors import SignoffError, UsageError
from signoff.notes.decisions import asks_for_shown
from signoff.notes.model import RoomRef
from signoff.notes.run import case_of
from signoff.notes.service import NotesService
from signoff.rooms import Principal, RoomService
from signoff.rooms.client import Identities, RoomsClient, is_automated_notice, read_room


@dataclass
class RoomOutcome:
    message_id: str
    sender: str
    command: str
    applied: bool
    detail: str


def cursor_case(folder: Path) -> str:
    """The ledger case that holds how far a run has read its room."""
    return "notes.room." + case_of(folder).removeprefix("notes.run.")


def _load_cursor(notes: NotesService, folder: Path, room_id: str, agent: Principal) -> int:
    last = notes.room_log(cursor_case(folder)).cursor
    if last is None:
        return 0
    if last.room_id != room_id or last.agent != agent.id:
        raise UsageError(f"this run takes decisions from another room or agent (room {last.room_id})",
                         "pass the --room and --agent it was started with")
    return last.cursor


def _save_cursor(notes: NotesService, folder: Path, room_id: str, agent: Principal, cursor: int) -> None:
    notes.save_cursor(cursor_case(folder), room_id, agent.id, cursor)


def _allowed(deciders: Iterable[str]) -> set[str]:
    """Who may decide from this room: the people named for it (`--decider`). The notes service
    holds each decision to its own rule too (`[notes] deciders`), as for every face."""
    allowed = set(deciders)
    if not allowed:
        raise UsageError("no deciders named", "pass --decider NAME for each person who may decide")
    return allowed


def poll_room(notes: NotesService, folder: Path, rooms: RoomService, agent: Principal, room_id: str,
              deciders: Iterable[str], identities: Identities | None = None) -> list[RoomOutcome]:
    """Apply every new command addressed to `agent` in `room_id`; reply to each in its thread.
    `identities` says who each sender id is (configured `[rooms.people]`); by default the room's
    members as this server's directory knows them."""
    allowed = _allowed(deciders)
    rooms.room(room_id)  # NotFoundError for an unknown room
    identities = identities or Identities.of_directory(rooms.members(room_id))
    cursor = _load_cursor(notes, folder, room_id, agent)
    outcomes: list[RoomOutcome] = []
    prefix = f"@{agent.name} "
    while True:
        batch = rooms.agent_events(agent.id, cursor)
        if not batch:
            break
        for env in batch:
            cursor = int(env["sequence"])
            p = env.get("payload") or {}
            if env.get("type") != "message" or env.get("room_id") != room_id or not p.get("addressed") \
                    or is_automated_notice(env):
                continue  # not for the notes agent, or the server's own notice (never answered)
            outcome = _apply(notes, folder, p, prefix, allowed, room_id, identities)
            outcomes.append(outcome)
            _reply(rooms, agent, room_id, outcome)
            _save_cursor(notes, folder, room_id, agent, cursor)
        _save_cursor(notes, folder, room_id, agent, cursor)
    return outcomes


def _apply(notes: NotesService, folder: Path, p: dict[str, Any], prefix: str, allowed: set[str],
           room_id: str, identities: Identities) -> RoomOutcome:
    body, sender, message_id = str(p.get("body", "")).strip(), str(p.get("sender", "")), str(p.get("message_id"))
    command = body[len(prefix):].strip() if body.startswith(prefix) else body

    def refuse(why: str) -> RoomOutcome:
        return RoomOutcome(message_id, sender, command, False, why)

    person = identities.who(sender)
    if person is None:
        return refuse("the sender is not bound to anyone who decides here")
    if person.kind != "user":
        return refuse("only people decide on release notes; agents cannot")
    if person.name not in allowed:
        return refuse(f"{person.name} is not a decider for this run")
    if not body.startswith(prefix):
        return refuse(f"write the command right after the mention: `{prefix}approve S1`")
    try:
        # A room shows no sentence: a command that names no digest is answered with the text it
        # would decide on and the command that decides on exactly that text.
        ask = asks_for_shown(notes.state(folder), command, prefix)
        if ask is not None:
            return refuse(ask)
        state = notes.decide(folder, command, person.name, "room",
                             RoomRef(room_id=room_id, message_id=message_id, sender=sender))
    except SignoffError as exc:
        return refuse(exc.message + (f" ({exc.fix})" if exc.fix else ""))
    return RoomOutcome(message_id, sender, command, True, "shipped" if state.shipped else "recorded")


def _reply_text(outcome: RoomOutcome) -> str:
    text = (f"{outcome.command}: {outcome.detail}" if outcome.applied
            else f"not applied ({outcome.command}): {outcome.detail}")
    return text[:4000]


def _reply(rooms: RoomService, agent: Principal, room_id: str, outcome: RoomOutcome) -> None:
    try:
        rooms.post_message(agent, room_id, _reply_text(outcome), thread_id=outcome.message_id)
    except SignoffError:
        pass  # the decision log is the record; a reply that cannot be posted changes nothing


# -- any server, through the rooms client -----------------------------------------------------


def handled_case(folder: Path) -> str:
    """The ledger case listing the room messages a run has answered (and its own replies)."""
    return cursor_case(folder) + ".handled"


async def poll_room_client(notes: NotesService, folder: Path, client: RoomsClient, agent_name: str, room_id: str,
                           deciders: Iterable[str], identities: Identities) -> list[RoomOutcome]:
    """The same decisions from a room on any server (`signoff serve`, a Switch core): the room's
    context is read back through the client (a Switch core keeps no durable event cursor: its
    numbering restarts with the server), and every message that mentions the agent and has not
    been answered yet is applied, oldest first, and answered in its thread. Who decided comes
    from `identities` only. What was answered is kept in the ledger (`handled_case`), and a
    decision already recorded for a message id is never recorded twice."""
    allowed = _allowed(deciders)
    await client.connect_to_room(room_id)
    case = handled_case(folder)
    log = notes.room_log(case)
    done, own = log.handled, log.own
    prefix, mention = f"@{agent_name} ", f"@{agent_name}"
    outcomes: list[RoomOutcome] = []
    for entry in await read_room(client.call):
        message_id, sender = str(entry.get("id")), str(entry.get("sender", ""))
        if message_id in done or sender in own or mention not in str(entry.get("body", "")):
            continue
        if entry.get("sender_name") == agent_name:
            # Our own greeting or reply from before we learned our sender id (it is opaque). Skipping
            # on a display name only ever drops that sender's own message, never grants anything.
            continue
        outcome = _apply(notes, folder, {"body": entry.get("body"), "sender": sender, "message_id": message_id},
                         prefix, allowed, room_id, identities)
        outcomes.append(outcome)
        notes.handled(case, message_id)
        try:
            reply = await client.post_message(_reply_text(outcome), thread_id=message_id)
        except SignoffError:
            continue  # the decision log is the record; a reply that cannot be posted changes nothing
        own.add(reply.sender)  # our own replies mention the agent too: never read them as commands
        notes.handled(case, reply.message_id, reply.sender)
    return outcomes


def outcomes_json(outcomes: list[RoomOutcome]) -> list[dict[str, Any]]:
    return [asdict(o) for o in outcomes]
