"""The rooms projection's handlers: how each rooms event (case ids `rooms.*`) changes the rooms
query tables. The ledger's projector (`signoff.ledger.projection`) runs them in chain order, keeps the
cursor and rebuilds the tables from the events.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update

from signoff.ledger import Event, SqlLedger
from signoff.ledger import projection as ledger_projection
from signoff.ledger.engine import is_postgres
from signoff.rooms.storage import projection_access as access
from signoff.rooms.storage.tables import (
    rooms_agents,
    rooms_approvals,
    rooms_cursor,
    rooms_deliveries,
    rooms_documents,
    rooms_members,
    rooms_messages,
    rooms_references,
    rooms_roles,
    rooms_room_links,
    rooms_room_references,
    rooms_rooms,
    rooms_tokens,
    rooms_users,
)

PREFIX = "rooms."
# Event types that change what the service caches (rooms, members, roles, agents, policies).
STRUCTURAL = frozenset({
    "user.created", "user.token_rotated", "regkey.created", "agent.registered", "agent.policy_set",
    "room.created", "room.member_added", "room.member_removed", "role.defined",
}) | access.STRUCTURAL
CURSOR = "rooms"
BATCH = 500

# Cleared by a rebuild (the cursor row too, by the ledger's projector).
TABLES = (
    rooms_users, rooms_tokens, rooms_agents, rooms_rooms, rooms_members, rooms_messages,
    rooms_deliveries, rooms_documents, rooms_roles, rooms_references, rooms_room_references, rooms_room_links,
    rooms_approvals, *access.TABLES,
)


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


@dataclass(frozen=True)
class Delivery:
    agent_id: str
    seq: int
    room_id: str
    addressed: bool
    envelope: str  # JSON without "sequence"
    type: str


class Sink(list[Delivery]):
    """What a pass delivers, and what it writes once, at its end (`_write_rows`): message and
    delivery rows, one executemany per table (no handler reads them back). It also keeps
    the agent members of the rooms the pass has read: exact within a pass, since membership only
    changes through the pass's own events and the cursor lock keeps other passes out."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[dict[str, Any]] = []
        self.members: dict[str, list[str]] = {}


@dataclass
class Applied:
    """What one catch-up applied: notifier keys, the new deliveries, and whether another process
    had applied events this process never saw (then in-memory caches must be dropped)."""

    keys: set[str] = field(default_factory=set)
    deliveries: list[Delivery] = field(default_factory=Sink)
    foreign: bool = False
    structural: bool = False  # identities, rooms, membership, roles or policies changed
    cursor: int = 0


class Projector:
    """The ledger's projector over the rooms tables, reporting each pass as an `Applied`."""

    def __init__(self, ledger: SqlLedger, on_applied: Callable[[Applied], None] | None = None,
                 on_skip: Callable[[int, int], None] | None = None, channel: str | None = None,
                 origin: str = "") -> None:
        self._on_applied = on_applied
        self._projector: ledger_projection.Projector[Applied] = ledger_projection.Projector(
            ledger, name=CURSOR, prefix=PREFIX, cursor_table=rooms_cursor, tables=TABLES, start=Applied,
            apply=_apply_into, finish=_write_rows, on_pass=self._passed, on_skip=on_skip, channel=channel,
            origin=origin, batch=BATCH)

    def _passed(self, result: Applied | None, cursor: int) -> None:
        if self._on_applied is None:
            return
        applied = result if result is not None else Applied(foreign=True)
        applied.cursor = cursor
        self._on_applied(applied)

    def cursor(self) -> int:
        return self._projector.cursor()

    def stored_cursor(self) -> int:
        """The cursor as stored (moved by any process that applied events)."""
        return self._projector.stored_cursor()

    def catch_up(self) -> int:
        """Apply every rooms event not applied yet; returns the cursor."""
        return self._projector.catch_up()

    def follow(self, read: Callable[[int], int]) -> int:
        """Take what other processes applied: `read(cursor)` picks it up and returns the cursor it
        reached (see the ledger's `Projector.follow`)."""
        return self._projector.follow(read)

    def rebuild(self) -> int:
        """Forget the tables and replay every rooms event (after a schema change or for a check)."""
        return self._projector.rebuild()


def _apply_into(conn: Connection, event: Event, applied: Applied) -> None:
    assert isinstance(applied.deliveries, Sink)  # a pass's Applied always starts with one
    applied.keys.update(apply(conn, event, applied.deliveries))
    applied.structural |= event.type in STRUCTURAL


_CHANNEL_TYPES: dict[str, str] = {}  # room id -> channel type (never changes once a room exists)


def _agents(conn: Connection, room_id: str, sink: Sink) -> list[str]:
    """The room's agent members (read once per pass)."""
    if room_id not in sink.members:
        rows = conn.execute(select(rooms_members.c.member_id).where(
            rooms_members.c.room_id == room_id, rooms_members.c.member_kind == "agent")).all()
        sink.members[room_id] = [r.member_id for r in rows]
    return sink.members[room_id]


def _channel_type(conn: Connection, room_id: str) -> str | None:
    cached = _CHANNEL_TYPES.get(room_id)
    if cached is not None:
        return cached
    value = conn.execute(select(rooms_rooms.c.channel_type).where(rooms_rooms.c.room_id == room_id)).scalar()
    if value is None:
        return None
    _CHANNEL_TYPES[room_id] = str(value)
    return str(value)


def _deliver(conn: Connection, seq: int, room_id: str, type_: str, payload: dict[str, Any],
             recipients: Iterable[tuple[str, bool]], sink: Sink) -> set[str]:
    envelope = {
        "type": type_,
        "room_id": room_id,
        "bridge_id": None,
        "channel_type": _channel_type(conn, room_id),
        "payload": payload,
    }
    keys = {f"room:{room_id}"}
    # Recipients' envelopes differ in `addressed` alone, so each variant is encoded once, not once
    # per recipient (a room of 20 agents encoded the same JSON 20 times per message).
    encoded: dict[bool, str] = {}
    for agent_id, addressed in recipients:
        text_ = encoded.get(addressed)
        if text_ is None:
            env = dict(envelope)
            env["payload"] = payload if type_ == "room_join" else {**payload, "addressed": addressed}
            text_ = encoded[addressed] = _dumps(env)
        keys.add(f"agent:{agent_id}")
        if addressed:
            keys.add(f"agent+:{agent_id}")
        sink.append(Delivery(agent_id, seq, room_id, addressed, text_, type_))
    return keys  # the rows are written once per pass, by _write_rows


# On PostgreSQL a whole pass's message and delivery rows go as one statement each, with one array
# per column in psycopg's binary format (`%b`; its text format escaped every element with a
# regular expression in Python): one execution however many rows, where an executemany executes
# one INSERT per row. A message's recipients share one or two envelopes, so the envelopes go once
# each and the delivery rows name them by position. Both replaced JSON parameters (a JSON object
# per row, encoded in Python and parsed again by the server) and an executemany for messages.
_MESSAGE_COLUMNS = tuple(c.name for c in rooms_messages.columns)  # every column, in the table's order
_ARRAY_OF = {int: "bigint", str: "text", bool: "boolean"}
_PG_MESSAGES = (  # names and types from the table definition, never from input
    f"INSERT INTO rooms_messages ({', '.join(_MESSAGE_COLUMNS)}) SELECT * FROM unnest("  # noqa: S608
    + ", ".join(f"%b::{_ARRAY_OF[c.type.python_type]}[]" for c in rooms_messages.columns) + ")")
_PG_DELIVERIES = (
    "INSERT INTO rooms_deliveries (agent_id, seq, room_id, type, addressed, envelope)"
    " SELECT r.agent_id, r.seq, r.room_id, r.type, r.addressed, (%b::text[])[r.e]"
    " FROM unnest(%b::text[], %b::bigint[], %b::text[], %b::text[], %b::boolean[], %b::integer[])"
    " AS r(agent_id, seq, room_id, type, addressed, e)")


def _write_rows(conn: Connection, applied: Applied) -> None:
    """The message and delivery rows of a whole pass, written once at its end: on PostgreSQL one
    statement per table (above); elsewhere one executemany per table (a statement compiled once).
    Multi-row `VALUES` statements were slower: SQLAlchemy compiles one for every distinct row count."""
    sink = applied.deliveries
    assert isinstance(sink, Sink)
    postgres = is_postgres(conn.engine)
    if sink.messages:
        if postgres:
            conn.exec_driver_sql(_PG_MESSAGES, tuple([m[c] for m in sink.messages] for c in _MESSAGE_COLUMNS))
        else:
            conn.execute(insert(rooms_messages), sink.messages)
    if not sink:
        return
    if postgres:
        position: dict[str, int] = {}  # envelope -> its 1-based position in the envelopes array
        numbers = [position.setdefault(d.envelope, len(position) + 1) for d in sink]
        conn.exec_driver_sql(_PG_DELIVERIES, (
            list(position), [d.agent_id for d in sink], [d.seq for d in sink], [d.room_id for d in sink],
            [d.type for d in sink], [d.addressed for d in sink], numbers))
        return
    conn.execute(insert(rooms_deliveries), [
        {"agent_id": d.agent_id, "seq": d.seq, "room_id": d.room_id, "type": d.type, "addressed": d.addressed,
         "envelope": d.envelope} for d in sink])


def apply(conn: Connection, event: Event, sink: Sink) -> set[str]:
    """Apply one event; returns the notifier keys it touches and adds its deliveries to `sink`."""
    handler = _HANDLERS.get(event.type)
    if handler is None:
        return set()  # audit-only events (role leases)
    return handler(conn, event, sink)


def _user_created(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    conn.execute(
        insert(rooms_users).values(
            user_id=p["user_id"], name=p["name"], display_name=p["display_name"], is_admin=p["is_admin"],
            external=p["external"], created_at=ev.recorded_at,
        )
    )
    access.insert_token(conn, ev, p["token_hash"], "user", p["user_id"])
    return set()


def _user_token_rotated(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    conn.execute(delete(rooms_tokens).where(rooms_tokens.c.principal_id == p["user_id"],
                                            rooms_tokens.c.kind == "user"))
    access.insert_token(conn, ev, p["token_hash"], "user", p["user_id"])
    return set()


def _regkey_created(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    access.insert_token(conn, ev, p["token_hash"], "registration", p["owner_user_id"])
    return set()


def _agent_registered(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    exists = conn.execute(select(rooms_agents.c.agent_id).where(rooms_agents.c.agent_id == p["agent_id"])).first()
    values = {
        "name": p["name"], "owner_user_id": p["owner_user_id"], "description": p["description"],
        "profile": _dumps(p["profile"]),
    }
    if exists is None:
        conn.execute(
            insert(rooms_agents).values(
                agent_id=p["agent_id"], policy=None if p["policy"] is None else _dumps(p["policy"]),
                created_at=ev.recorded_at, **values,
            )
        )
    else:
        # Re-registration with overwrite: new key and profile; the policy stays (as in Switch).
        conn.execute(update(rooms_agents).where(rooms_agents.c.agent_id == p["agent_id"]).values(**values))
    conn.execute(delete(rooms_tokens).where(rooms_tokens.c.principal_id == p["agent_id"],
                                            rooms_tokens.c.kind == "agent"))
    access.insert_token(conn, ev, p["token_hash"], "agent", p["agent_id"])
    return set()


def _agent_policy_set(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    policy = None if p["policy"] is None else _dumps(p["policy"])
    conn.execute(update(rooms_agents).where(rooms_agents.c.agent_id == p["agent_id"]).values(policy=policy))
    return set()


def _room_created(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    conn.execute(
        insert(rooms_rooms).values(
            room_id=p["room_id"], name=p["name"], description=p["description"], instructions=p["instructions"],
            channel_type=p["channel_type"], internal_only=p["internal_only"], owner_user_id=p["owner_user_id"],
            group_name=p.get("group_name"), group_id=p.get("group_id"), created_at=ev.recorded_at,
        )
    )
    return set()


def _member_added(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    room_id, kind, member_id = p["room_id"], p["kind"], p["member_id"]
    exists = conn.execute(
        select(rooms_members.c.member_id).where(
            rooms_members.c.room_id == room_id, rooms_members.c.member_kind == kind,
            rooms_members.c.member_id == member_id,
        )
    ).first()
    if exists is not None:
        return set()
    others = [a for a in _agents(conn, room_id, sink) if a != member_id]
    conn.execute(insert(rooms_members).values(room_id=room_id, member_kind=kind, member_id=member_id,
                                              joined_seq=ev.seq))
    sink.members.pop(room_id, None)
    payload = {
        "member": f"{kind}:{member_id}",
        "member_name": p["name"],
        "timestamp": p["timestamp"],
        "listening": bool(p.get("listening", False)),
    }
    return _deliver(conn, ev.seq, room_id, "room_join", payload, [(a, False) for a in others], sink)


def _member_removed(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    conn.execute(
        delete(rooms_members).where(
            rooms_members.c.room_id == p["room_id"], rooms_members.c.member_kind == p["kind"],
            rooms_members.c.member_id == p["member_id"],
        )
    )
    sink.members.pop(p["room_id"], None)
    return {f"room:{p['room_id']}"}


def _message_posted(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    room_id = p["room_id"]
    sink.messages.append(dict(
        seq=ev.seq, message_id=p["message_id"], room_id=room_id, sender_kind=p["sender_kind"],
        sender_id=p["sender_id"], sender=p["sender"], sender_name=p["sender_name"], body=p["body"],
        thread_id=p.get("thread_id"), timestamp=p["timestamp"], auto_reply=bool(p.get("auto_reply")),
        attachments=_dumps(p.get("attachments") or [])))
    addressed: dict[str, bool] = p.get("addressed_agents") or {}
    # An agent never receives its own messages.
    recipients = [
        (a, bool(addressed.get(a, False)))
        for a in _agents(conn, room_id, sink)
        if not (p["sender_kind"] == "agent" and a == p["sender_id"])
    ]
    payload = {
        "addressed": False,
        "sender": p["sender"],
        "sender_name": p["sender_name"],
        "message_id": p["message_id"],
        "body": p["body"],
        "timestamp": p["timestamp"],
        "thread_id": p.get("thread_id"),
        "attachments": p.get("attachments") or [],
    }
    return _deliver(conn, ev.seq, room_id, "message", payload, recipients, sink)


def _document_created(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    conn.execute(
        insert(rooms_documents).values(
            document_id=p["document_id"], room_id=p["room_id"], name=p["name"], description=p["description"],
            instructions=p["instructions"], content=p["content"], created_by_kind=p["by_kind"],
            created_by_id=p["by_id"], version=1, updated_at=ev.recorded_at,
        )
    )
    return {f"room:{p['room_id']}"}


def _document_updated(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    changes = {k: p[k] for k in ("name", "description", "instructions", "content") if p.get(k) is not None}
    conn.execute(
        update(rooms_documents)
        .where(rooms_documents.c.document_id == p["document_id"])
        .values(version=rooms_documents.c.version + 1, updated_at=ev.recorded_at, **changes)
    )
    return {f"room:{p['room_id']}"}


def _document_deleted(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    conn.execute(delete(rooms_documents).where(rooms_documents.c.document_id == ev.payload["document_id"]))
    return {f"room:{ev.payload['room_id']}"}


def _role_defined(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    conn.execute(delete(rooms_roles).where(rooms_roles.c.room_id == p["room_id"], rooms_roles.c.name == p["name"]))
    conn.execute(insert(rooms_roles).values(room_id=p["room_id"], name=p["name"], instructions=p["instructions"],
                                            exclusive=p["exclusive"], defined_by=p.get("by")))
    return set()


def _reference_created(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    conn.execute(
        insert(rooms_references).values(
            reference_id=p["reference_id"], type=p["type"], name=p["name"], description=p["description"],
            instructions=p["instructions"], value=_dumps(p["value"]), owner_user_id=p["owner_user_id"],
        )
    )
    return set()


def _reference_attached(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    exists = conn.execute(
        select(rooms_room_references.c.room_id).where(
            rooms_room_references.c.room_id == p["room_id"],
            rooms_room_references.c.reference_id == p["reference_id"],
        )
    ).first()
    if exists is None:
        conn.execute(insert(rooms_room_references).values(room_id=p["room_id"], reference_id=p["reference_id"]))
    return set()


def _room_linked(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    _room_unlinked(conn, ev, sink)  # linked again: the newer label stands
    conn.execute(insert(rooms_room_links).values(source_room_id=p["room_id"], target_room_id=p["target_room_id"],
                                                 label=p["label"], linked_by=p["by"]))
    return set()


def _room_unlinked(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    conn.execute(delete(rooms_room_links).where(rooms_room_links.c.source_room_id == p["room_id"],
                                                rooms_room_links.c.target_room_id == p["target_room_id"]))
    return set()


def _approval_requested(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    card = {k: p[k] for k in ("title", "options", "responders", "expires_at")}
    card["responder_roles"] = p.get("responder_roles", [])  # cards asked before people's roles have none
    card.update({k: p[k] for k in ("requester_name", "requested_at") if k in p})  # older cards lack them
    card["request_id"] = p["request_id"]  # as its asker named it; the row's key is the card id
    conn.execute(
        insert(rooms_approvals).values(
            request_id=p.get("card_id", p["request_id"]), room_id=p["room_id"],
            requester_agent_id=p["requester_agent_id"],
            card=_dumps(card), expires_at=p["expires_at"], state="pending", outcome=None, requested_seq=ev.seq,
        )
    )
    recipients = [(a, a == p["requester_agent_id"]) for a in _agents(conn, p["room_id"], sink)]
    return _deliver(conn, ev.seq, p["room_id"], "approval_request", dict(p), recipients, sink)


def _approval_outcome(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    conn.execute(
        update(rooms_approvals)
        .where(rooms_approvals.c.request_id == p.get("card_id", p["request_id"]))
        .values(state=p["outcome"], outcome=_dumps(p))
    )
    requester = p["requester_agent_id"]
    recipients = [(a, a == requester) for a in _agents(conn, p["room_id"], sink)]
    return _deliver(conn, ev.seq, p["room_id"], "approval_outcome", dict(p), recipients, sink)


def _approval_discarded(conn: Connection, ev: Event, sink: Sink) -> set[str]:
    p = ev.payload
    requester = p["requester_agent_id"]
    return _deliver(conn, ev.seq, p["room_id"], "approval_response_discarded", dict(p), [(requester, True)],
                    sink)


_HANDLERS: dict[str, Callable[[Connection, Event, Sink], set[str]]] = {
    "user.created": _user_created,
    "user.token_rotated": _user_token_rotated,
    "regkey.created": _regkey_created,
    "agent.registered": _agent_registered,
    "agent.policy_set": _agent_policy_set,
    "room.created": _room_created,
    "room.member_added": _member_added,
    "room.member_removed": _member_removed,
    "message.posted": _message_posted,
    "document.created": _document_created,
    "document.updated": _document_updated,
    "document.deleted": _document_deleted,
    "role.defined": _role_defined,
    "reference.created": _reference_created,
    "reference.attached": _reference_attached,
    "room.linked": _room_linked,
    "room.unlinked": _room_unlinked,
    "approval.requested": _approval_requested,
    "approval.answered": _approval_outcome,
    "approval.expired": _approval_outcome,
    "approval.discarded": _approval_discarded,
    **access.HANDLERS,
}
