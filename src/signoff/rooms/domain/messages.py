"""Messages: posting with addressing policies enforced on the server (receipts), reading a room's
messages in order and as threads."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import or_, select

from signoff.kernel.errors import NotFoundError, UsageError
from signoff.kernel.ids import new_id
from signoff.ledger import NewEvent
from signoff.rooms.domain.identities import Identities
from signoff.rooms.domain.membership import Membership
from signoff.rooms.domain.model import MAX_BODY, Principal, check_position, check_text
from signoff.rooms.domain.policy import Sender, Target, permits
from signoff.rooms.domain.receipts import Receipt
from signoff.rooms.domain.roles import Roles
from signoff.rooms.storage.store import RoomStore
from signoff.rooms.storage.tables import rooms_messages

MENTION = re.compile(r"(?<![\w@])@([a-z0-9][a-z0-9._-]*)")
REFUSAL = "You're not permitted to direct messages to me in this room."
MAX_PAGE = 1000  # messages per read; larger limits are read as this


def _attachments(stored: str) -> list[Any]:
    attachments: list[Any] = [] if stored == "[]" else json.loads(stored)  # most messages have none
    return attachments


def _message_dict(r: Any) -> dict[str, Any]:
    return {
        "sequence": int(r.seq), "message_id": r.message_id, "room_id": r.room_id, "sender": r.sender,
        "sender_kind": r.sender_kind, "sender_id": r.sender_id, "sender_name": r.sender_name,
        "body": r.body, "thread_id": r.thread_id, "timestamp": int(r.timestamp),
        "auto_reply": bool(r.auto_reply), "attachments": _attachments(r.attachments),
    }


class Messages:
    def __init__(self, store: RoomStore, identities: Identities, membership: Membership, roles: Roles) -> None:
        self.store = store
        self.identities = identities
        self.membership = membership
        self.roles = roles

    def _resolve_thread(self, room_id: str, thread_id: str | None) -> str | None:
        if thread_id is None:
            return None
        if not isinstance(thread_id, str):
            raise UsageError("thread_id must be a message id", "pass the event_id of a message in this room")
        row = self.store.one(select(rooms_messages.c.thread_id).where(
            rooms_messages.c.message_id == thread_id, rooms_messages.c.room_id == room_id))
        if row is None:
            raise UsageError(f"unknown thread_id {thread_id!r} in this room",
                             "pass the event_id of a message in this room")
        return str(row.thread_id) if row.thread_id else thread_id

    def post_message(self, actor: Principal, room_id: str, body: str, thread_id: str | None = None,
                     target_names: Iterable[str] = (), target_roles: Iterable[str] = (),
                     attachments: list[dict[str, Any]] | None = None, via: dict[str, Any] | None = None
                     ) -> Receipt:
        """Post `body` (prefixed with @targets when given). Returns the receipt: server-assigned
        message id, the exact stored text and per-target statuses. `via` records, in the ledger,
        the bridge that relayed the message for `actor` under an identity claim (see claims)."""
        if not isinstance(body, str) or not body.strip():
            raise UsageError("message body must be non-empty text", "send {\"body\": \"...\"}")
        check_text("message body", body)
        if len(body.encode()) > MAX_BODY:
            raise UsageError(f"message body is over {MAX_BODY} bytes", "shorten it or attach a document")
        room = self.membership.require_read(actor, room_id)
        members = self.membership.cached_members(room_id)
        root = self._resolve_thread(room_id, thread_id)
        agents = {m.name: m for m in members if m.kind == "agent"}
        users = {m.name for m in members if m.kind == "user"}
        names, role_list = list(target_names), list(target_roles)
        roles = {r["name"] for r in self.roles.cached_roles(room_id)} \
            if (role_list or "@" in body) else set()
        for n in names:
            if n not in agents and n not in users:
                raise UsageError(f"target {n!r} is not a member of this room", "list_participants shows who is")
        for r in role_list:
            if r not in roles:
                raise UsageError(f"role {r!r} is not defined in this room", "list_roles shows the roles")
        prefix = " ".join(f"@{t}" for t in names + role_list)
        text = f"{prefix} {body}" if prefix else body

        mentioned: set[str] = set()
        for raw in MENTION.findall(text):
            for candidate in (raw, raw.rstrip("._-")):
                if candidate in agents:
                    mentioned.add(agents[candidate].id)
                elif candidate in roles:
                    mentioned.update(self.store.connections.role_holders(room_id, candidate))
        if room.channel_type == "direct":
            mentioned.update(a.id for a in agents.values())
        mentioned.discard(actor.id if actor.kind == "agent" else "")
        wanted = sorted(mentioned | {agents[n].id for n in names if n in agents})
        records: dict[str, tuple[dict[str, Any] | None, dict[str, Any]]] = {
            a: self.identities.cached_setting(a) for a in wanted}

        sender = Sender(actor.kind, actor.id, actor.owner_user_id)
        message_id = "$" + new_id()
        now = self.store.now_ms()
        addressed: dict[str, bool] = {}
        refused: list[Principal] = []
        for agent in agents.values():
            if agent.id not in mentioned:
                continue
            policy = records[agent.id][0]
            target = Target(agent.id, agent.owner_user_id, policy)
            ok = permits(policy, target, sender, room_id, room.group_id)
            addressed[agent.id] = ok
            if not ok:
                refused.append(agent)
        events = [NewEvent("message.posted", {
            "room_id": room_id, "message_id": message_id, "sender_kind": actor.kind, "sender_id": actor.id,
            "sender": actor.sender, "sender_name": actor.display_name, "body": text, "thread_id": root,
            "timestamp": now, "attachments": attachments or [], "auto_reply": False,
            "addressed_agents": addressed, **({"via": via} if via else {})})]
        for agent in refused:
            # The refusal appears in the thread, @-mentions the sender and never triggers refusals itself.
            events.append(NewEvent("message.posted", {
                "room_id": room_id, "message_id": "$" + new_id(), "sender_kind": "agent", "sender_id": agent.id,
                "sender": agent.sender, "sender_name": agent.display_name,
                "body": f"@{actor.name} {REFUSAL}", "thread_id": root or message_id, "timestamp": now,
                "attachments": [], "auto_reply": True,
                "addressed_agents": {actor.id: True} if actor.kind == "agent" else {}}))
        seqs = self.store.group_append(f"rooms.room.{room_id}", events)
        statuses: dict[str, str] = {}
        # A sender holding a targeted role is not its own target (it never receives its own post).
        holders = {h for r in role_list for h in self.store.connections.role_holders(room_id, r)} - {actor.id}
        for agent in agents.values():
            if agent.name in names or agent.id in holders:
                statuses[agent.name] = ("not_permitted" if addressed.get(agent.id) is False
                                        else self.membership.status_by_profile(agent.id, room_id, records[agent.id][1]))
        return Receipt(message_id=message_id, room_id=room_id, sender=actor.sender, body=text,
                       addressed=any(addressed.values()), thread_id=root, target_statuses=statuses,
                       sequence=seqs[0])

    def read_messages(self, actor: Principal, room_id: str, after: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        """Messages of a room in order, after sequence `after` (membership checked)."""
        self.membership.require_read(actor, room_id)
        check_position("after", after)
        limit = max(1, min(int(limit), MAX_PAGE))
        rows = self.store.all(select(rooms_messages).where(rooms_messages.c.room_id == room_id,
                                                      rooms_messages.c.seq > after)
                         .order_by(rooms_messages.c.seq).limit(limit))
        return [_message_dict(r) for r in rows]

    def message(self, actor: Principal, message_id: str) -> dict[str, Any]:
        row = self.store.one(select(rooms_messages).where(rooms_messages.c.message_id == message_id))
        if row is None:
            raise NotFoundError(f"no message {message_id}", "use an event_id returned by post_message")
        self.membership.require_read(actor, row.room_id)
        return _message_dict(row)

    def read_context(self, actor: Principal, room_id: str, limit: int = 50, since: str | None = None,
                     before: str | None = None, before_sequence: int | None = None) -> dict[str, Any]:
        """Recent messages grouped into threads (Switch's read_context shape). `before_sequence`
        pages back exactly (by the room's sequence, which no two messages share, where `before` is
        a millisecond time); `oldest_sequence` is where the next page back starts."""
        self.membership.require_read(actor, room_id)
        if not isinstance(limit, int) or limit < 1:
            raise UsageError("limit must be a positive integer", "pass limit=50")
        limit = min(limit, MAX_PAGE)
        query = select(rooms_messages).where(rooms_messages.c.room_id == room_id)
        if before_sequence is not None:
            check_position("before_sequence", before_sequence)
            query = query.where(rooms_messages.c.seq < before_sequence)
        for value, op in ((since, "since"), (before, "before")):
            if value is not None:
                try:
                    ms = int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
                except (ValueError, AttributeError, OverflowError) as exc:
                    raise UsageError(f"{op} must be an ISO-8601 time", "e.g. 2026-01-01T00:00:00Z") from exc
                query = query.where(rooms_messages.c.timestamp >= ms if op == "since"
                                    else rooms_messages.c.timestamp < ms)
        rows = self.store.all(query.order_by(rooms_messages.c.seq.desc()).limit(limit + 1))
        truncated = len(rows) > limit
        rows = list(reversed(rows[:limit]))
        threads: dict[str, dict[str, Any]] = {}
        order: list[str] = []
        for r in rows:
            entry = {"id": r.message_id, "kind": "message", "sender": r.sender, "sender_name": r.sender_name,
                     "body": r.body, "timestamp": int(r.timestamp), "attachments": _attachments(r.attachments)}
            root = r.thread_id or r.message_id
            if root not in threads:
                threads[root] = {"root": entry if root == r.message_id else {"id": root}, "replies": []}
                order.append(root)
            elif root == r.message_id:
                threads[root]["root"] = entry
            if root != r.message_id:
                threads[root]["replies"].append(entry)
        return {"threads": [threads[k] for k in order], "truncated": truncated,
                "oldest_timestamp": int(rows[0].timestamp) if rows else None,
                "oldest_sequence": int(rows[0].seq) if rows else None}

    def search_messages(self, actor: Principal, room_id: str, words: list[str], limit: int = 50,
                        before_sequence: int | None = None) -> dict[str, Any]:
        """A room's messages whose text or sender name holds every one of `words` (case-blind),
        newest first, `limit` a page, paged back by sequence like read_context. Matched in the
        database (the room's sequence index bounds the scan's order; no room is read whole into
        Python); `oldest_sequence` is where the next page starts, None on the last page."""
        self.membership.require_read(actor, room_id)
        limit = max(1, min(int(limit), MAX_PAGE))
        body, sender = rooms_messages.c.body, rooms_messages.c.sender_name
        query = select(rooms_messages).where(
            rooms_messages.c.room_id == room_id,
            *[or_(body.icontains(w, autoescape=True), sender.icontains(w, autoescape=True)) for w in words])
        if before_sequence is not None:
            check_position("before_sequence", before_sequence)
            query = query.where(rooms_messages.c.seq < before_sequence)
        rows = self.store.all(query.order_by(rooms_messages.c.seq.desc()).limit(limit + 1))
        found = [_message_dict(r) for r in rows[:limit]]
        return {"messages": found, "oldest_sequence": found[-1]["sequence"] if len(rows) > limit else None}

    async def watch_room(self, actor: Principal, room_id: str, after: int = 0, poll: float = 1.0,
                         allowed: Callable[[], Awaitable[bool]] | None = None) -> AsyncIterator[dict[str, Any]]:
        """Async iterator over a room's messages after sequence `after` (for human-side workflows).
        `allowed`, when given, is asked before every batch (at least every `poll` seconds): the
        watch ends once it says no (a web session that was ended or whose person was revoked)."""
        key = f"room:{room_id}"
        cursor = after
        while True:
            seen = self.store.notifier.version(key)
            batch = self.read_messages(actor, room_id, after=cursor)
            # Asked after the read, never before it: a "yes" given before a sign-out that lands
            # between the two would let the read carry messages posted after the sign-out.
            if allowed is not None and not await allowed():
                return
            for msg in batch:
                cursor = msg["sequence"]
                yield msg
            if not batch:
                await self.store.notifier.wait(key, seen, poll)

