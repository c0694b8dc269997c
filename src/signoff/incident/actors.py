"""A room-protocol agent as the incident's services and agents use it.

Each actor authenticates with its own api key and acts only through the agent protocol's
operations (`signoff.rooms.operations.call_operation`, the same code the HTTP server runs), one
connection per room. It reads its durable event stream from a cursor it keeps in its own folder,
handles each event, and saves the cursor afterwards: delivery is at-least-once, so every effect a
handler has must be idempotent (it checks the room before acting).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from signoff.incident.stack import ROLE_OF, SHARED, RunInfo
from signoff.kernel.errors import ConflictError, NotFoundError, RefusedError
from signoff.rooms import RoomService
from signoff.rooms.model import Principal
from signoff.rooms.operations import call_operation

READ_ONLY_OPS = frozenset({"list_rooms", "get_room_detail", "read_context", "list_participants",
                           "load_internal_documents", "list_references", "get_approval", "list_roles"})
# A policy refusal is posted as the target agent's reply, starting with a mention of the sender.
REFUSAL_TEXT = "You're not permitted to direct messages to me in this room."


class Actor:
    def __init__(self, rooms: RoomService, info: RunInfo, name: str, api_key: str, room_keys: list[str],
                 state_dir: Path, allowed_ops: frozenset[str] | None = None) -> None:
        self.rooms = rooms
        self.info = info
        self.name = name
        self.principal: Principal = rooms.authenticate(api_key)
        if self.principal.kind != "agent" or self.principal.name != name:
            raise RefusedError(f"the key given for {name} is not {name}'s", "use the agent's own api key")
        self.room_keys = room_keys
        self.allowed_ops = allowed_ops
        self.state_path = Path(state_dir) / f"{name}.cursor"
        self.cursor = self._load_cursor()
        self.handlers: list[Callable[[dict[str, Any]], None]] = []
        self.connect()

    # -- connection ---------------------------------------------------------------------------

    def conn_id(self, key: str) -> str:
        return f"{self.name}@{key}"

    def connect(self) -> None:
        """Open one connection per room, claim it, and hold this agent's role in the shared room."""
        for key in self.room_keys:
            self.rooms.connections.open(self.principal.id, self.conn_id(key), scope="single", filter_="all")
            call_operation(self.rooms, self.principal, "connect_to_room", {"room_id": self.info.rooms[key]},
                           self.conn_id(key))
        role = ROLE_OF.get(self.name)
        if role and SHARED in self.room_keys:
            call_operation(self.rooms, self.principal, "assume_role", {"role": role}, self.conn_id(SHARED))

    def beat(self) -> None:
        """Heartbeat every connection; reconnect (and re-take the role) when one lapsed."""
        try:
            for key in self.room_keys:
                self.rooms.connections.beat(self.principal.id, self.conn_id(key), self.cursor)
            role = ROLE_OF.get(self.name)
            if role and SHARED in self.room_keys and self.rooms.connections.role_of(self.principal.id) is None:
                raise NotFoundError("role lease lapsed", "re-take it")
        except (NotFoundError, ConflictError):
            self.connect()

    def op(self, key: str, operation: str, /, **args: Any) -> Any:
        if self.allowed_ops is not None and operation not in self.allowed_ops:
            raise RefusedError(f"{self.name} may only use {', '.join(sorted(self.allowed_ops))}",
                               "this identity is read-only")
        self.beat()
        return call_operation(self.rooms, self.principal, operation, args, self.conn_id(key))

    # -- helpers over operations --------------------------------------------------------------

    def post(self, key: str, body: str, targets: list[str] | None = None, roles: list[str] | None = None,
             thread_id: str | None = None) -> dict[str, Any]:
        if targets or roles:
            result: dict[str, Any] = self.op(key, "send_targeted_message", body=body, target_names=targets or [],
                                             target_roles=roles or [], thread_id=thread_id)
        else:
            result = self.op(key, "post_message", body=body, thread_id=thread_id)
        return result

    def replied(self, key: str, message_id: Any) -> bool:
        """True when this actor already answered in the thread of `message_id` (a redelivery)."""
        return any(m["sender"] == self.principal.sender and m.get("thread_id") == message_id
                   for m in self.messages(key))

    def messages(self, key: str) -> list[dict[str, Any]]:
        """Every message of a room, oldest first (membership is checked by the server)."""
        out: list[dict[str, Any]] = []
        after = 0
        while True:
            batch = self.rooms.read_messages(self.principal, self.info.rooms[key], after=after, limit=1000)
            out += batch
            if len(batch) < 1000:
                return out
            after = batch[-1]["sequence"]

    def documents(self, key: str) -> dict[str, dict[str, Any]]:
        """The room's documents by name, with content."""
        detail = self.op(key, "get_room_detail", room_id=self.info.rooms[key])
        ids = [d["id"] for d in detail.get("documents", [])]
        if not ids:
            return {}
        docs = self.op(key, "load_internal_documents", ids=ids)
        return {d["name"]: d for d in docs}

    def own_document(self, key: str, name: str) -> dict[str, Any] | None:
        doc = self.documents(key).get(name)
        if doc is not None and doc["created_by"] == self.principal.sender:
            return doc
        return None

    def write_document(self, key: str, name: str, content: str, description: str = "") -> None:
        """Create or update this actor's own document (single writer: the server refuses anyone else)."""
        doc = self.documents(key).get(name)
        if doc is None:
            self.op(key, "create_room_document", name=name, content=content, description=description)
        elif doc["created_by"] != self.principal.sender:
            raise RefusedError(f"document {name!r} in {key} belongs to someone else", "use another name")
        elif doc["content"] != content:
            self.op(key, "update_room_document", document_id=doc["id"], content=content)

    # -- the event loop -----------------------------------------------------------------------

    def _load_cursor(self) -> int:
        try:
            return int(json.loads(self.state_path.read_text(encoding="utf-8"))["cursor"])
        except FileNotFoundError:
            return 0

    def _save_cursor(self) -> None:
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"cursor": self.cursor}), encoding="utf-8")
        os.replace(tmp, self.state_path)

    def poll(self) -> int:
        """Handle every event after the cursor; the cursor moves only after a handler returned."""
        self.beat()
        handled = 0
        for env in self.rooms.agent_events(self.principal.id, self.cursor):
            self.handle(env)
            self.cursor = int(env["sequence"])
            self._save_cursor()
            handled += 1
        return handled

    def handle(self, env: dict[str, Any]) -> None:
        """Overridden by each playbook."""

    # -- reading an event ---------------------------------------------------------------------

    def event_room(self, env: dict[str, Any]) -> str | None:
        return self.info.room_key(str(env.get("room_id")))

    def sender_name(self, env: dict[str, Any]) -> str:
        return self.info.name_of(str(env.get("payload", {}).get("sender", "")))


def strip_mentions(body: str) -> str:
    """The text after the leading @mentions the server put in front of a targeted message."""
    words = body.split(" ")
    while words and words[0].startswith("@"):
        words.pop(0)
    return " ".join(words).strip()
