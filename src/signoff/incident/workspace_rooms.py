"""Part 1's rooms: a real room server, embedded in the workspace, reached through the rooms client.

The workspace's ledger `rooms.db` holds a `RoomService` with the cast of the incident's organisations
(`Parties`): each organisation's approver and agent, and the `notary` agent, in one private room per
organisation (`<org>-internal`: its approver, its other people and its agent) and the room `shared`
(every approver and agent).
Every post goes through the rooms client (in process) as that identity, and every `Message` handed to
the approver is read back from the server: its id, room, sender and text are the server's, never
what the poster claims. `rooms-secrets.json` (mode 0600) keeps each identity's credential.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from sqlalchemy.exc import DatabaseError

from signoff.incident.cases import ledger_at
from signoff.incident.parties import ORG_KEY, Parties
from signoff.kernel.errors import IntegrityError, NotFoundError, UsageError
from signoff.kernel.filelock import exclusive
from signoff.rooms import RoomService
from signoff.rooms.client import InProcessSyncTransport, InProcessUserTransport, RoomsUserClient, SyncRoomsClient
from signoff.rooms.domain.decisions import Message

SHARED_ROOM = "shared"
NOTARY_AGENT = "notary"


def private_room(org: str) -> str:
    if not ORG_KEY.match(org):
        raise UsageError(f"{org!r} is not an organisation key", "use the key the incident configuration gives it")
    return f"{org}-internal"


def write_secret_file(path: Path, data: dict[str, Any]) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True)


class WorkspaceRooms:
    def __init__(self, root: Path, parties: Parties) -> None:
        self.root = Path(root)
        self.parties = parties
        self._people_names = {n for o in parties for n in (o.approver, *o.people)}
        self.root.mkdir(parents=True, exist_ok=True)
        db = self.root / "rooms.db"
        try:
            self.ledger = ledger_at(db)
        except DatabaseError as exc:
            raise IntegrityError(f"{db} is not a rooms database", "restore it from a copy, or start a fresh "
                                 "incident folder") from exc
        self.service = RoomService(self.ledger)
        self.secrets_path = self.root / "rooms-secrets.json"
        try:
            with exclusive(self.root / "rooms.lock"):  # two first users: one provisions, the other reads
                if not self.secrets_path.exists():
                    self._provision()
            self.secrets = self._read_secrets()
        except BaseException:
            self.ledger.close()
            raise
        self._names = {sender: name for name, sender in self.secrets["senders"].items()}
        self._agents: dict[str, SyncRoomsClient] = {}
        self._people: dict[str, RoomsUserClient] = {}
        self._open: set[tuple[str, str]] = set()

    def _provision(self) -> None:
        s = self.service
        boot = s.init()
        admin = s.user(boot["admin_user_id"])
        creds: dict[str, str] = {}
        senders: dict[str, str] = {}
        for person in sorted(self._people_names):
            principal, token = s.create_user(person, person.title())
            creds[person], senders[person] = token, principal.sender
        agents = [o.agent for o in self.parties]
        for agent in (*agents, NOTARY_AGENT):
            principal, key = s.create_agent(admin, agent, f"incident part 1: {agent}")
            creds[agent], senders[agent] = key, principal.sender
        rooms = {}
        for org in self.parties:
            rooms[org.private_room] = s.create_room(admin, org.private_room, agent_names=[org.agent],
                                                    user_names=[org.approver, *org.people]).id
        rooms[SHARED_ROOM] = s.create_room(admin, SHARED_ROOM, agent_names=[*agents, NOTARY_AGENT],
                                           user_names=[o.approver for o in self.parties]).id
        write_secret_file(self.secrets_path, {"credentials": creds, "senders": senders, "rooms": rooms})

    def _read_secrets(self) -> dict[str, Any]:
        try:
            data = json.loads(self.secrets_path.read_text(encoding="utf-8"))
            if not all(isinstance(data.get(k), dict) for k in ("credentials", "senders", "rooms")):
                raise ValueError("fields")
        except ValueError as exc:
            raise IntegrityError(f"{self.secrets_path} is damaged", "restore it from a copy, or start a fresh "
                                 "incident folder") from exc
        return dict(data)

    def room_id(self, room: str) -> str:
        try:
            return str(self.secrets["rooms"][room])
        except KeyError as exc:
            raise NotFoundError(f"no room {room!r} in this workspace", f"use one of {sorted(self.secrets['rooms'])}") \
                from exc

    def name_of(self, sender: str) -> str:
        """The name of the identity the server wrote as the sender (an unknown sender stays its id)."""
        return str(self._names.get(sender, sender))

    def _agent(self, name: str) -> SyncRoomsClient:
        if name not in self._agents:
            self._agents[name] = SyncRoomsClient(InProcessSyncTransport(self.service,
                                                                        self.secrets["credentials"][name]))
        return self._agents[name]

    def _person(self, name: str) -> RoomsUserClient:
        if name not in self._people:
            self._people[name] = RoomsUserClient(InProcessUserTransport(self.service,
                                                                        self.secrets["credentials"][name]))
        return self._people[name]

    def post(self, who: str, room: str, text: str) -> Message:
        """Post as `who` (an agent or a person of the cast); the message as the server stored it."""
        if who not in self.secrets["credentials"]:
            raise NotFoundError(f"{who!r} is not an identity of this workspace",
                                f"use one of {sorted(self.secrets['credentials'])}")
        room_id = self.room_id(room)
        if who in self._people_names:
            message_id = str(self._person(who).post(room_id, text)["event_id"])
            return self._read_back(self._person(who).messages(room_id), room, message_id)
        client = self._agent(who)
        conn = f"{who}@{room}"
        if (who, room) not in self._open:
            client.open(conn, room_id)
            self._open.add((who, room))
        message_id = str(client.call(conn, "post_message", {"body": text})["event_id"])
        return self._read_back(client.history(room_id), room, message_id)

    def _read_back(self, messages: list[dict[str, Any]], room: str, message_id: str) -> Message:
        for m in messages:
            if m["message_id"] == message_id:
                return Message(message_id, room, self.name_of(str(m["sender"])), str(m["body"]))
        raise IntegrityError(f"message {message_id} is not in {room} after it was posted",
                             "the room server lost a message; check its database")

    def messages(self, room: str, reader: str | None = None) -> list[Message]:
        """Every message of `room`, oldest first, read as `reader` (by default the room's agent)."""
        reader = reader or (NOTARY_AGENT if room == SHARED_ROOM
                            else self.parties.get(room.removesuffix("-internal")).agent)
        history = self._agent(reader).history(self.room_id(room))
        return [Message(str(m["message_id"]), room, self.name_of(str(m["sender"])), str(m["body"])) for m in history]

    def close(self) -> None:
        for client in self._agents.values():
            client.close()
        for person in self._people.values():
            person.close()
        self.ledger.close()


__all__ = ["NOTARY_AGENT", "SHARED_ROOM", "WorkspaceRooms", "private_room", "write_secret_file"]
