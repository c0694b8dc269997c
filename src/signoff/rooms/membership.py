"""Rooms and membership: who is in a room, who may read and change it, and agents' availability."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select

from signoff.kernel.errors import NotFoundError, RefusedError, UsageError
from signoff.kernel.ids import new_id
from signoff.ledger import NewEvent
from signoff.rooms.identities import Identities
from signoff.rooms.model import CHANNEL_TYPES, Principal, Room
from signoff.rooms.roles import role_event
from signoff.rooms.store import RoomStore
from signoff.rooms.tables import rooms_agents, rooms_members, rooms_rooms, rooms_users


class Membership:
    def __init__(self, store: RoomStore, identities: Identities) -> None:
        self.store = store
        self.identities = identities

    def room(self, room_id: str) -> Room:
        row = self.store.one(select(rooms_rooms).where(rooms_rooms.c.room_id == room_id))
        if row is None:
            raise NotFoundError(f"no room {room_id}", "list your rooms (list_rooms) and use one of their ids")
        return Room(row.room_id, row.name, row.description, row.instructions, row.channel_type,
                    bool(row.internal_only), row.owner_user_id, row.group_name)

    def is_member(self, principal: Principal, room_id: str) -> bool:
        row = self.store.one(select(rooms_members.c.member_id).where(
            rooms_members.c.room_id == room_id, rooms_members.c.member_kind == principal.kind,
            rooms_members.c.member_id == principal.id))
        return row is not None

    def require_read(self, actor: Principal, room_id: str) -> Room:
        """Membership (or ownership, or admin) is checked on every read; internal-only rooms are
        closed to external users whatever else holds."""
        room = self.room(room_id)
        if room.internal_only and actor.external:
            raise RefusedError(f"room {room_id} is internal only", "external identities cannot read it")
        if actor.is_admin or (actor.kind == "user" and actor.id == room.owner_user_id):
            return room
        if not self.is_member(actor, room_id):
            raise RefusedError(f"{actor.kind} {actor.name} is not a member of room {room_id}",
                               "ask a member to invite you")
        return room

    def require_manage(self, actor: Principal, room: Room) -> None:
        if actor.is_admin or actor.owner_user_id == room.owner_user_id or self.is_member(actor, room.id):
            return
        raise RefusedError(f"{actor.name} may not change room {room.id}", "ask the room's owner or a member")

    def create_room(self, actor: Principal, name: str, description: str = "", agent_names: Iterable[str] = (),
                    user_names: Iterable[str] = (), channel_type: str = "channel_private",
                    internal_only: bool = False, instructions: str = "", group_name: str | None = None,
                    roles: Iterable[dict[str, Any]] = ()) -> Room:
        """A room owned by the actor's user; the actor is not added unless named."""
        if not isinstance(name, str) or not name.strip() or len(name) > 200:
            raise UsageError("room name must be 1-200 characters", "pass a short name")
        if channel_type not in CHANNEL_TYPES:
            raise UsageError(f"channel_type must be one of {CHANNEL_TYPES}", "pick one of them")
        members = [("agent", self.identities.agent_by_name(n)) for n in agent_names]
        members += [("user", self.identities.user_by_name(n)) for n in user_names]
        if internal_only:
            for _, m in members:
                if m.external:
                    raise RefusedError(f"user {m.name} is external; room is internal only",
                                       "leave the user out or make the room not internal_only")
        room_id = new_id()
        events = [NewEvent("room.created", {
            "room_id": room_id, "name": name, "description": description, "instructions": instructions,
            "channel_type": channel_type, "internal_only": bool(internal_only),
            "owner_user_id": actor.owner_user_id, "group_name": group_name, "created_by": actor.sender})]
        now = self.store.now_ms()
        for kind, m in members:
            events.append(NewEvent("room.member_added", {"room_id": room_id, "kind": kind, "member_id": m.id,
                                                         "name": m.display_name, "timestamp": now}))
        for role in roles:
            events.append(role_event(room_id, role.get("name"), role.get("instructions", ""),
                                     role.get("exclusive", False)))
        self.store.append(f"rooms.room.{room_id}", events, expected=0)
        return self.room(room_id)

    def add_member(self, actor: Principal, room_id: str, agent_name: str | None = None,
                   user_name: str | None = None) -> Principal:
        room = self.room(room_id)
        self.require_manage(actor, room)
        if (agent_name is None) == (user_name is None):
            raise UsageError("name exactly one agent or one user to add", "pass agent_name or user_name")
        member = (self.identities.agent_by_name(agent_name) if agent_name is not None
                  else self.identities.user_by_name(str(user_name)))
        if room.internal_only and member.external:
            raise RefusedError(f"user {member.name} is external; room {room_id} is internal only",
                               "external identities cannot join internal-only rooms")
        if not self.is_member(member, room_id):
            self.store.append(f"rooms.room.{room_id}", [NewEvent("room.member_added", {
                "room_id": room_id, "kind": member.kind, "member_id": member.id, "name": member.display_name,
                "timestamp": self.store.now_ms(), "by": actor.sender})])
        return member

    def remove_member(self, actor: Principal, room_id: str, member: Principal) -> None:
        room = self.room(room_id)
        if not (actor.is_admin or actor.owner_user_id == room.owner_user_id or actor == member):
            raise RefusedError("only the room's owner, an admin or the member itself may remove a member",
                               "ask the room's owner")
        if self.is_member(member, room_id):
            self.store.append(f"rooms.room.{room_id}", [NewEvent("room.member_removed", {
                "room_id": room_id, "kind": member.kind, "member_id": member.id, "by": actor.sender})])

    def members(self, room_id: str) -> list[Principal]:
        """Members in joining order, read in one query (this runs on every post)."""
        m, a, u = rooms_members, rooms_agents, rooms_users
        rows = self.store.all(
            select(m.c.member_kind, m.c.member_id, a.c.name.label("a_name"), a.c.owner_user_id,
                   u.c.name.label("u_name"), u.c.display_name, u.c.is_admin, u.c.external)
            .select_from(m.outerjoin(a, (m.c.member_kind == "agent") & (a.c.agent_id == m.c.member_id))
                         .outerjoin(u, (m.c.member_kind == "user") & (u.c.user_id == m.c.member_id)))
            .where(m.c.room_id == room_id).order_by(m.c.joined_seq, m.c.member_id))
        out = []
        for r in rows:
            if r.member_kind == "agent" and r.a_name is not None:
                out.append(Principal("agent", r.member_id, r.a_name, r.a_name, r.owner_user_id))
            elif r.member_kind == "user" and r.u_name is not None:
                out.append(Principal("user", r.member_id, r.u_name, r.display_name, r.member_id,
                                     bool(r.is_admin), bool(r.external)))
        return out

    def list_rooms(self, actor: Principal) -> list[dict[str, Any]]:
        query = select(rooms_rooms).order_by(rooms_rooms.c.created_at)
        if not actor.is_admin:
            member_of = select(rooms_members.c.room_id).where(
                rooms_members.c.member_kind == actor.kind, rooms_members.c.member_id == actor.id)
            query = query.where(rooms_rooms.c.room_id.in_(member_of))
        out = []
        connections = self.store.connections
        for r in self.store.all(query):
            if r.internal_only and actor.external:
                continue
            connected = actor.kind == "agent" and any(r.room_id in c.rooms for c in connections.connections(
                actor.id))
            out.append({"room_id": r.room_id, "name": r.name, "description": r.description,
                        "connected": connected, "archived": False})
        return out

    def status(self, agent_id: str, room_id: str) -> str:
        """Availability of an agent in a room, by its profile's connection model."""
        return self.status_by_profile(agent_id, room_id,
                                      self.identities.agent_record(agent_id)["integration_profile"] or {})

    def status_by_profile(self, agent_id: str, room_id: str, profile: dict[str, Any]) -> str:
        model = profile.get("connection_model", "always_on")
        connections, now = self.store.connections, self.store.clock.now()
        conns = [c for c in connections.connections(agent_id) if now - c.last_beat <= connections.ttl]
        if model == "session_passive":
            return "awaiting_manual_poll"
        if model == "always_on":
            return "live" if conns else "disconnected"
        if any(room_id in c.rooms for c in conns):
            return "live"
        if model == "auto_session":
            return "dormant" if conns else "disconnected"
        return "dormant" if any(c.spawn_capable for c in conns) else "no_session"

    def participants(self, actor: Principal, room_id: str) -> list[dict[str, Any]]:
        self.require_read(actor, room_id)
        out = []
        for m in self.members(room_id):
            entry: dict[str, Any] = {"id": m.id, "name": m.name, "display_name": m.display_name,
                                     "type": m.kind, "sender": m.sender}
            if m.kind == "agent":
                role = self.store.connections.role_of(m.id)
                entry.update({"agent_type": None, "status": self.status(m.id, room_id),
                              "room_role": role[1] if role and role[0] == room_id else None,
                              "can_delegate": False, "can_accept": False, "alias": None})
            out.append(entry)
        return out
