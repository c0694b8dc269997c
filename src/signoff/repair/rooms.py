"""How the repair agents reach their rooms: through the rooms client only, on any server.

`RepairRooms` is what the verifier's jobs need from a room: post a message at most once (by its
marker), and list and create documents. Two faces implement it:
- `SyncRepairRooms`, over the synchronous client (`SyncRoomsClient`, in process for the embedded
  server or over HTTP to `signoff serve`), also polls each room's events for a step-by-step driver
  (`signoff repair run`, the demo);
- `LoopRepairRooms`, over an `AgentLoop` (any server, a Switch core included), for the agents as
  their own processes (`signoff repair agent`); the loop delivers the events, and these calls are
  made from the outbox worker's thread.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from signoff.rooms import Receipt
from signoff.rooms.client import AgentLoop, SyncRoomsClient, ref_tag


class RepairRooms(ABC):
    """One agent's rooms, as the repair jobs use them."""

    name: str  # the agent's name: people address it as `@<name>`
    agent_id: str
    # How people decide (`Capabilities.decision_channel`): "approval_card" where the server has
    # cards and this face uses them, else "addressed_command" (a typed, receipt-checked command).
    decision_channel: str = "addressed_command"

    def events(self) -> list[dict[str, Any]]:
        """New events, for a step-by-step driver; none where an `AgentLoop` delivers them."""
        return []

    @abstractmethod
    def post(self, room_id: str, text: str, marker: str, targets: Iterable[str] = ()) -> Receipt:
        """Post `text` (addressed to `targets`) once: a repeat with the same marker returns the first
        post's receipt."""

    def describe(self, room_id: str) -> dict[str, Any]:
        """The room as the server describes it to this agent (NotFoundError: not a room of ours)."""
        return dict(self.call(room_id, "get_room_detail", room_id=room_id))

    def documents(self, room_id: str) -> dict[str, str]:
        """The room's documents: name -> document id."""
        return {str(d["name"]): str(d["id"]) for d in self.describe(room_id).get("documents") or []}

    def create_document(self, room_id: str, name: str, content: str, description: str) -> str:
        # A Switch core requires `instructions` (signoff's server takes it too): how to use it.
        return str(self.call(room_id, "create_room_document", name=name, content=content, description=description,
                             instructions=f"Written by the repair verifier ({description}); read it, do not edit it."
                             )["document_id"])

    def read_document(self, room_id: str, document_id: str) -> str:
        """A room document's content."""
        (doc,) = self.call(room_id, "load_internal_documents", ids=[document_id])
        return str(doc.get("content") or "")

    def update_document(self, room_id: str, document_id: str, content: str) -> None:
        """Replace the content of a document this agent created."""
        self.call(room_id, "update_room_document", document_id=document_id, content=content)

    @abstractmethod
    def call(self, room_id: str, op: str, /, **args: Any) -> Any:
        """Any other operation, on this agent's connection to `room_id`."""

    def request_card(self, room_id: str, request_id: str, title: str, options: list[dict[str, str]],
                     responders: list[str], expires_at: float) -> dict[str, Any]:
        """Ask `responders` to decide on an approval card (idempotent by request id)."""
        return dict(self.call(room_id, "request_approval", request_id=request_id, title=title, options=options,
                              expires_at=expires_at, responders=responders))


class SyncRepairRooms(RepairRooms):
    """Over the synchronous client: one connection per room, opened on first use."""

    def __init__(self, client: SyncRoomsClient, name: str) -> None:
        self.client, self.name, self.agent_id = client, name, client.agent_id
        self._open: set[str] = set()
        self.cursors: dict[str, int] = {}  # per room, in memory: a new process reads from the start

    def _conn(self, room_id: str) -> str:
        conn = f"{self.name}@{room_id}"
        if room_id not in self._open:
            self.client.open(conn, room_id)
            self._open.add(room_id)
        return conn

    def call(self, room_id: str, op: str, /, **args: Any) -> Any:
        return self.client.call(self._conn(room_id), op, args)

    def events(self) -> list[dict[str, Any]]:
        """Every event after this face's cursors, in each room the agent is a member of."""
        rooms = [str(r["room_id"]) for r in self.client.call("", "list_rooms", {})]  # needs no connection
        out: list[dict[str, Any]] = []
        for room_id in rooms:
            batch = self.client.events(self._conn(room_id), room_id, self.cursors.get(room_id, 0))
            if batch:
                self.cursors[room_id] = int(batch[-1]["sequence"])
            out.extend(batch)
        return out

    def post(self, room_id: str, text: str, marker: str, targets: Iterable[str] = ()) -> Receipt:
        tag, names = ref_tag(marker), list(targets)
        for msg in self.client.history(room_id):
            if msg["sender"] == self.client.sender and tag in msg["body"]:
                return Receipt(str(msg["message_id"]), room_id, str(msg["sender"]), str(msg["body"]), bool(names),
                               msg.get("thread_id"))
        body = f"{text} {tag}"
        if names:
            result = self.call(room_id, "send_targeted_message", body=body, target_names=names)
        else:
            result = self.call(room_id, "post_message", body=body)
        return self.client.receipt(self._conn(room_id), room_id, result, body, bool(names))



class LoopRepairRooms(RepairRooms):
    """Over an `AgentLoop`, called from a worker thread: each call runs on the loop's event loop."""

    def __init__(self, agent: AgentLoop, name: str) -> None:
        self.agent, self.name, self.agent_id = agent, name, agent.agent_id

    def post(self, room_id: str, text: str, marker: str, targets: Iterable[str] = ()) -> Receipt:
        return self.agent.blocking(self.agent.send(room_id, text, key=marker, targets=list(targets)))

    def call(self, room_id: str, op: str, /, **args: Any) -> Any:
        return self.agent.blocking(self.agent.call(room_id, op, **args))
