"""Projection handlers of the access events: credential rotation and revocation, room groups and
invitations (kept apart from `projection` so that the access rules have one home)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Table, delete, insert, select, update

from signoff.ledger import Event
from signoff.rooms.storage.tables import rooms_groups, rooms_invitations, rooms_tokens

if TYPE_CHECKING:
    from signoff.rooms.storage.projection import Delivery

Handler = Callable[[Connection, Event, "list[Delivery]"], set[str]]


def issued_at(ev: Event) -> float:
    """When a credential was issued: the time its event was recorded."""
    return datetime.fromisoformat(ev.recorded_at.replace("Z", "+00:00")).timestamp()


def insert_token(conn: Connection, ev: Event, token_hash: str, kind: str, principal_id: str) -> None:
    conn.execute(insert(rooms_tokens).values(token_hash=token_hash, kind=kind, principal_id=principal_id,
                                             issued_at=issued_at(ev)))


def _agent_key_rotated(conn: Connection, ev: Event, sink: list[Delivery]) -> set[str]:
    p = ev.payload
    conn.execute(delete(rooms_tokens).where(rooms_tokens.c.principal_id == p["agent_id"],
                                            rooms_tokens.c.kind == "agent"))
    insert_token(conn, ev, p["token_hash"], "agent", p["agent_id"])
    return set()


def _token_revoked(conn: Connection, ev: Event, sink: list[Delivery]) -> set[str]:
    p = ev.payload
    if p.get("token_hash"):
        conn.execute(delete(rooms_tokens).where(rooms_tokens.c.token_hash == p["token_hash"]))
    else:
        conn.execute(delete(rooms_tokens).where(rooms_tokens.c.principal_id == p["principal_id"],
                                                rooms_tokens.c.kind == p["kind"]))
    return set()


def _group_created(conn: Connection, ev: Event, sink: list[Delivery]) -> set[str]:
    p = ev.payload
    conn.execute(insert(rooms_groups).values(group_id=p["group_id"], name=p["name"],
                                             owner_user_id=p["owner_user_id"], description=p["description"],
                                             allowed="[]"))
    return set()


def _group_allowed(conn: Connection, ev: Event, sink: list[Delivery]) -> set[str]:
    p = ev.payload
    current = conn.execute(select(rooms_groups.c.allowed).where(rooms_groups.c.group_id == p["group_id"])).scalar()
    allowed = sorted(set(json.loads(current or "[]")) | {p["user_id"]})
    conn.execute(update(rooms_groups).where(rooms_groups.c.group_id == p["group_id"])
                 .values(allowed=json.dumps(allowed)))
    return set()


def _invitation_created(conn: Connection, ev: Event, sink: list[Delivery]) -> set[str]:
    p = ev.payload
    conn.execute(insert(rooms_invitations).values(invitation_id=p["invitation_id"], room_id=p["room_id"],
                                                  agent_id=p["agent_id"], invited_by=p["by"], state="pending"))
    return set()


def _invitation_answered(conn: Connection, ev: Event, sink: list[Delivery]) -> set[str]:
    p = ev.payload
    conn.execute(update(rooms_invitations).where(rooms_invitations.c.invitation_id == p["invitation_id"])
                 .values(state=p["state"]))
    return set()


HANDLERS: dict[str, Handler] = {
    "agent.key_rotated": _agent_key_rotated,
    "token.revoked": _token_revoked,
    "group.created": _group_created,
    "group.allowed": _group_allowed,
    "invitation.created": _invitation_created,
    "invitation.answered": _invitation_answered,
}
STRUCTURAL = frozenset({"agent.key_rotated", "token.revoked", "group.created", "group.allowed"})
TABLES: tuple[Table, ...] = (rooms_groups, rooms_invitations)
