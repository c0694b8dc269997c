"""A room-protocol agent as the incident's services and agents use it.

Each actor authenticates with its own api key and acts only through the agent protocol (over
HTTP by default; the rooms client's synchronous face, `signoff.rooms.client.SyncRoomsClient`), one
connection per room. It reads each room's
durable event stream from a cursor it keeps in the run's ledger (case `incident-cursors/<name>`,
one `incident.cursors_saved` event each time it moves), handles each event, and saves the cursor
afterwards: delivery is at-least-once, so every effect a handler has must be idempotent (it checks
the room before acting).
"""

from __future__ import annotations

from typing import Any

from signoff.incident.cases import load
from signoff.incident.decisions import save_cursors
from signoff.incident.model import CURSORS, Cursors, cursors_fold
from signoff.incident.stack import SHARED, RunInfo
from signoff.kernel.errors import ConflictError, NotFoundError, RefusedError
from signoff.ledger import Ledger
from signoff.rooms.client import SyncRoomsClient

READ_ONLY_OPS = frozenset({"list_rooms", "get_room_detail", "read_context", "list_participants",
                           "load_internal_documents", "list_references", "get_approval", "list_roles"})
# A policy refusal is posted as the target agent's reply, starting with a mention of the sender.
REFUSAL_TEXT = "You're not permitted to direct messages to me in this room."
CURSORS_PREFIX = CURSORS.prefix


def connection_id(name: str, key: str) -> str:
    """The id of `name`'s connection to room `key`. Fixed, so that two readers acting as the same
    agent (the console's in-process observer and the grader over HTTP, say) share one connection
    per room: with ids of their own, each connect_to_room would take the room over from the other
    and the other's next room-implicit read would find itself connected to nothing."""
    return f"{name}@{key}"


class RoomAgent:
    def __init__(self, client: SyncRoomsClient, info: RunInfo, name: str, room_keys: list[str], ledger: Ledger,
                 allowed_ops: frozenset[str] | None = None) -> None:
        self.client = client
        self.info = info
        self.name = name
        if info.agents.get(name) != client.agent_id:
            raise RefusedError(f"the key given for {name} is not {name}'s", "use the agent's own api key")
        self.sender = client.sender
        self.room_keys = room_keys
        self.allowed_ops = allowed_ops
        self.ledger = ledger
        self.cursor_case = CURSORS.case_id(name)
        self.cursors = self._load_cursors()
        self._stored = dict(self.cursors)  # as last saved
        # Reads of the room within one handled event; any write of this actor's clears them.
        self._cache: dict[tuple[str, str], Any] = {}
        self.connect()

    # -- connection ---------------------------------------------------------------------------

    def conn_id(self, key: str) -> str:
        return connection_id(self.info.server_name(self.name), key)  # ids are the server's, as names are

    def connect(self) -> None:
        """Open one connection per room, claim it, and hold this agent's role in the shared room."""
        for key in self.room_keys:
            self.client.open(self.conn_id(key), self.info.rooms[key])
        role = self.info.cast.role_of.get(self.name)
        if role and SHARED in self.room_keys:
            self.client.call(self.conn_id(SHARED), "assume_role", {"role": role})

    def beat(self) -> None:
        """Keep the shared-room connection (and with it the role lease) alive."""
        if self.info.cast.role_of.get(self.name) and SHARED in self.room_keys:
            try:
                self.client.events(self.conn_id(SHARED), self.info.rooms[SHARED], self._head_hint())
            except (NotFoundError, ConflictError):
                self.connect()

    def _head_hint(self) -> int:
        # Any cursor works for a keep-alive poll; the newest one returns the least.
        return max(self.cursors.values(), default=0)

    def op(self, key: str, operation: str, /, **args: Any) -> Any:
        if self.allowed_ops is not None and operation not in self.allowed_ops:
            raise RefusedError(f"{self.name} may only use {', '.join(sorted(self.allowed_ops))}",
                               "this identity is read-only")
        if operation not in READ_ONLY_OPS:
            self._cache.clear()
        try:
            return self.client.call(self.conn_id(key), operation, args)
        except ConflictError:
            self.connect()  # the connection lapsed (or the server restarted): reopen and retry once
            return self.client.call(self.conn_id(key), operation, args)

    # -- helpers over operations --------------------------------------------------------------

    def post(self, key: str, body: str, targets: list[str] | None = None, roles: list[str] | None = None,
             thread_id: str | None = None) -> dict[str, Any]:
        if targets or roles:
            names = [self.info.server_name(t) for t in targets or []]
            result: dict[str, Any] = self.op(key, "send_targeted_message", body=body, target_names=names,
                                             target_roles=roles or [], thread_id=thread_id)
        else:
            result = self.op(key, "post_message", body=body, thread_id=thread_id)
        return result

    def replied(self, key: str, message_id: Any) -> bool:
        """True when this actor already answered in the thread of `message_id` (a redelivery)."""
        return any(m["sender"] == self.sender and m.get("thread_id") == message_id for m in self.messages(key))

    def forget(self) -> None:
        """Drop what this actor read of its rooms (read them again), e.g. between two polls."""
        self._cache.clear()

    def messages(self, key: str) -> list[dict[str, Any]]:
        """Every message of a room, oldest first (membership is checked by the server)."""
        if ("m", key) not in self._cache:
            self._cache[("m", key)] = self.client.history(self.info.rooms[key])
        return list(self._cache[("m", key)])

    def documents(self, key: str) -> dict[str, dict[str, Any]]:
        """The room's documents by name, with content."""
        if ("d", key) not in self._cache:
            detail = self.op(key, "get_room_detail", room_id=self.info.rooms[key])
            ids = [d["id"] for d in detail.get("documents", [])]
            docs = self.op(key, "load_internal_documents", ids=ids) if ids else []
            self._cache[("d", key)] = {d["name"]: d for d in docs}
        return dict(self._cache[("d", key)])

    def own_document(self, key: str, name: str) -> dict[str, Any] | None:
        doc = self.documents(key).get(name)
        if doc is not None and doc["created_by"] == self.sender:
            return doc
        return None

    def write_document(self, key: str, name: str, content: str, description: str = "") -> None:
        """Create or update this actor's own document (single writer: the server refuses anyone else)."""
        doc = self.documents(key).get(name)
        if doc is None:
            self.op(key, "create_room_document", name=name, content=content, description=description)
        elif doc["created_by"] != self.sender:
            raise RefusedError(f"document {name!r} in {key} belongs to someone else", "use another name")
        elif doc["content"] != content:
            self.op(key, "update_room_document", document_id=doc["id"], content=content)

    # -- the event loop -----------------------------------------------------------------------

    def _saved(self) -> Cursors:
        return load(self.ledger, cursors_fold, self.cursor_case, Cursors(self.name),
                    "the run's ledger was written behind its back; restore it, or start a new run")

    def _load_cursors(self) -> dict[str, int]:
        return dict(self._saved().cursors)

    def _save_cursor(self) -> None:
        # This agent is its cursor case's only writer, so it decides on the cursors it holds and
        # appends with no version check (the last save counts) rather than reading the case again.
        decision = save_cursors(Cursors(self.name, self._stored), self.cursors)
        if decision.events:
            self.ledger.append(self.cursor_case, None, [body.new_event() for body in decision.events])
        self._stored = dict(self.cursors)

    def poll(self) -> int:
        """Handle every event after each room's cursor; a cursor moves only after its handler returned."""
        handled = 0
        for key in self.room_keys:
            for env in self.client.events(self.conn_id(key), self.info.rooms[key], self.cursors.get(key, 0)):
                self._cache.clear()
                try:
                    self.handle(env)
                finally:
                    self._cache.clear()
                self.cursors[key] = int(env["sequence"])
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
