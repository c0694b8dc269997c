"""Rooms and membership: who is in a room, who may read and change it, and agents' availability.

An agent joins a room only with its owner's consent: when the one adding it is its owner (or an
admin), or when its addressing policy lets that sender address it in that room. Otherwise the
add becomes an invitation, which the agent or its owner accepts or declines; until then nothing
of the room reaches the agent's stream."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select

from signoff.kernel.errors import NotFoundError, RefusedError, UsageError
from signoff.kernel.ids import new_id
from signoff.ledger import NewEvent
from signoff.rooms.domain.groups import Groups
from signoff.rooms.domain.identities import Identities
from signoff.rooms.domain.model import CHANNEL_TYPES, Principal, Room, check_text
from signoff.rooms.domain.policy import Sender, Target, permits
from signoff.rooms.domain.roles import others_agents, role_event
from signoff.rooms.storage.store import RoomStore
from signoff.rooms.storage.tables import rooms_agents, rooms_invitations, rooms_members, rooms_rooms, rooms_users


class Membership:
    def __init__(self, store: RoomStore, identities: Identities, groups: Groups) -> None:
        self.store = store
        self.identities = identities
        self.groups = groups

    def room(self, room_id: str) -> Room:
        row = self.store.one(select(rooms_rooms).where(rooms_rooms.c.room_id == room_id))
        if row is None:
            raise NotFoundError(f"no room {room_id}", "list your rooms (list_rooms) and use one of their ids")
        return Room(row.room_id, row.name, row.description, row.instructions, row.channel_type,
                    bool(row.internal_only), row.owner_user_id, row.group_name, row.group_id)

    def is_member(self, principal: Principal, room_id: str) -> bool:
        row = self.store.one(select(rooms_members.c.member_id).where(
            rooms_members.c.room_id == room_id, rooms_members.c.member_kind == principal.kind,
            rooms_members.c.member_id == principal.id))
        return row is not None

    def cached_room(self, room_id: str) -> Room:
        """The room from the store's cache (exact once `store.ensure_fresh()` has run)."""
        room: Room = self.store.cached(("room", room_id), lambda: self.room(room_id))
        return room

    def cached_members(self, room_id: str) -> list[Principal]:
        """The room's members from the store's cache (exact once `store.ensure_fresh()` has run)."""
        members: list[Principal] = self.store.cached(("members", room_id), lambda: self.members(room_id))
        return members

    def require_read(self, actor: Principal, room_id: str) -> Room:
        """Membership (or ownership, or admin) is checked on every read and every post; internal-only
        rooms are closed to external users whatever else holds. The room and its members come from
        the store's cache, made exact first: every change to either is structural and clears it."""
        self.store.ensure_fresh()
        room = self.cached_room(room_id)
        if room.internal_only and actor.external:
            raise RefusedError(f"room {room_id} is internal only", "external identities cannot read or post there")
        if actor.is_admin or (actor.kind == "user" and actor.id == room.owner_user_id):
            return room
        if not any(m.kind == actor.kind and m.id == actor.id for m in self.cached_members(room_id)):
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
        check_text("room name", name, allow_newlines=False)
        check_text("description", description)
        check_text("instructions", instructions)
        if not name.strip() or len(name) > 200:
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
        role_events = []
        for role in roles:
            if not isinstance(role, dict):
                raise UsageError("each role is an object {name, instructions, exclusive}", "fix the roles list")
            role_events.append(role_event(room_id, role.get("name"), role.get("instructions", ""),
                                          role.get("exclusive", False), actor.sender,
                                          others_agents(actor, [m for _, m in members])))
        group = self.groups.admit(actor, group_name) if group_name is not None else None
        events = [NewEvent("room.created", {
            "room_id": room_id, "name": name, "description": description, "instructions": instructions,
            "channel_type": channel_type, "internal_only": bool(internal_only),
            "owner_user_id": actor.owner_user_id, "group_name": group["name"] if group else None,
            "group_id": group["id"] if group else None, "created_by": actor.sender})]
        draft = Room(room_id, name, description, instructions, channel_type, bool(internal_only),
                     actor.owner_user_id, group["name"] if group else None, group["id"] if group else None)
        now = self.store.now_ms()
        for kind, m in members:
            if kind == "agent" and not self.may_bring(actor, m, draft):
                events.append(self._invitation(actor, room_id, m))
                continue
            events.append(NewEvent("room.member_added", {"room_id": room_id, "kind": kind, "member_id": m.id,
                                                         "name": m.display_name, "timestamp": now}))
        events += role_events
        self.store.append(f"rooms.room.{room_id}", events, expected=0)
        return self.room(room_id)

    # -- consent -------------------------------------------------------------------------------

    def may_bring(self, actor: Principal, agent: Principal, room: Room) -> bool:
        """Whether `actor` may put `agent` in `room` without asking: its owner or an admin may, and
        anyone its addressing policy admits there (by room id, group id or sender id)."""
        if actor.is_admin or actor.owner_user_id == agent.owner_user_id:
            return True
        policy = self.identities.agent_setting(agent.id)[0]
        return permits(policy, Target(agent.id, agent.owner_user_id, policy),
                       Sender(actor.kind, actor.id, actor.owner_user_id), room.id, room.group_id)

    def _invitation(self, actor: Principal, room_id: str, agent: Principal) -> NewEvent:
        return NewEvent("invitation.created", {"invitation_id": new_id(), "room_id": room_id,
                                               "agent_id": agent.id, "by": actor.sender})

    def invite_agent(self, actor: Principal, room_id: str, agent_name: str) -> dict[str, Any]:
        """Add the agent when it consents (see `may_bring`), else invite it (once per room)."""
        room = self.room(room_id)
        self.require_manage(actor, room)
        agent = self.identities.agent_by_name(agent_name)
        out: dict[str, Any] = {"room_id": room_id, "agent_id": agent.id, "agent_name": agent.name}
        if self.is_member(agent, room_id):
            return {**out, "status": "joined", "invitation_id": None}
        if self.may_bring(actor, agent, room):
            self._join(actor, room_id, agent)
            return {**out, "status": "joined", "invitation_id": None}
        pending = self.store.one(select(rooms_invitations.c.invitation_id).where(
            rooms_invitations.c.room_id == room_id, rooms_invitations.c.agent_id == agent.id,
            rooms_invitations.c.state == "pending"))
        if pending is None:
            event = self._invitation(actor, room_id, agent)
            self.store.append(f"rooms.room.{room_id}", [event])
            return {**out, "status": "invited", "invitation_id": event.payload["invitation_id"]}
        return {**out, "status": "invited", "invitation_id": pending.invitation_id}

    def invitations(self, actor: Principal) -> list[dict[str, Any]]:
        """Pending invitations of the actor (an agent) or of the agents the actor (a user) owns."""
        i, a, r = rooms_invitations, rooms_agents, rooms_rooms
        query = (select(i, a.c.name.label("agent_name"), a.c.owner_user_id, r.c.name.label("room_name"))
                 .join(a, a.c.agent_id == i.c.agent_id).join(r, r.c.room_id == i.c.room_id)
                 .where(i.c.state == "pending").order_by(i.c.invitation_id))
        query = query.where(i.c.agent_id == actor.id) if actor.kind == "agent" else \
            query.where(a.c.owner_user_id == actor.id)
        return [{"invitation_id": row.invitation_id, "room_id": row.room_id, "room_name": row.room_name,
                 "agent_id": row.agent_id, "agent_name": row.agent_name, "invited_by": row.invited_by}
                for row in self.store.all(query)]

    def room_invitations(self, room_id: str) -> list[dict[str, Any]]:
        """Pending invitations of a room (what its creator sees after create_room)."""
        i, a = rooms_invitations, rooms_agents
        rows = self.store.all(select(i.c.invitation_id, a.c.name).join(a, a.c.agent_id == i.c.agent_id)
                              .where(i.c.room_id == room_id, i.c.state == "pending").order_by(a.c.name))
        return [{"invitation_id": r.invitation_id, "agent_name": r.name} for r in rows]

    def answer_invitation(self, actor: Principal, invitation_id: str, accept: bool) -> dict[str, Any]:
        """The invited agent, its owner or an admin accepts (the agent joins) or declines."""
        row = self.store.one(select(rooms_invitations).where(rooms_invitations.c.invitation_id == invitation_id))
        agent = self.identities.agent(row.agent_id) if row is not None else None
        if row is None or agent is None or not (
                actor.is_admin or actor == agent or (actor.kind == "user" and actor.id == agent.owner_user_id)):
            raise NotFoundError(f"no invitation {invitation_id!r} for you", "list_invitations shows yours")
        if row.state != "pending":
            return {"invitation_id": invitation_id, "state": row.state, "room_id": row.room_id}
        state = "accepted" if accept else "declined"
        events = [NewEvent("invitation.answered", {"invitation_id": invitation_id, "room_id": row.room_id,
                                                   "agent_id": agent.id, "state": state, "by": actor.sender})]
        if accept:
            events.append(self._member_event(actor, row.room_id, agent))
        self.store.append(f"rooms.room.{row.room_id}", events)
        return {"invitation_id": invitation_id, "state": state, "room_id": row.room_id}

    def _member_event(self, actor: Principal, room_id: str, member: Principal) -> NewEvent:
        return NewEvent("room.member_added", {
            "room_id": room_id, "kind": member.kind, "member_id": member.id, "name": member.display_name,
            "timestamp": self.store.now_ms(), "by": actor.sender})

    def _join(self, actor: Principal, room_id: str, member: Principal) -> None:
        self.store.append(f"rooms.room.{room_id}", [self._member_event(actor, room_id, member)])

    def add_member(self, actor: Principal, room_id: str, agent_name: str | None = None,
                   user_name: str | None = None) -> Principal:
        """Add a user, or an agent that consents (else it is invited: see `invite_agent`)."""
        room = self.room(room_id)
        self.require_manage(actor, room)
        if (agent_name is None) == (user_name is None):
            raise UsageError("name exactly one agent or one user to add", "pass agent_name or user_name")
        if agent_name is not None:
            return self.identities.agent(self.invite_agent(actor, room_id, agent_name)["agent_id"])
        member = self.identities.user_by_name(str(user_name))
        if room.internal_only and member.external:
            raise RefusedError(f"user {member.name} is external; room {room_id} is internal only",
                               "external identities cannot join internal-only rooms")
        if not self.is_member(member, room_id):
            self._join(actor, room_id, member)
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
        conns = self.store.connections.live_connections(agent_id)
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
        return self.participants_of(room_id)

    def participants_of(self, room_id: str) -> list[dict[str, Any]]:
        """The room's members with their kind and status, for a caller that checked the read already."""
        out = []
        for m in self.cached_members(room_id):
            entry: dict[str, Any] = {"id": m.id, "name": m.name, "display_name": m.display_name,
                                     "type": m.kind, "sender": m.sender}
            if m.kind == "agent":
                role = self.store.connections.role_of(m.id)
                entry.update({"agent_type": None,
                              "status": self.status_by_profile(m.id, room_id, self.identities.cached_setting(m.id)[1]),
                              "room_role": role[1] if role and role[0] == room_id else None,
                              "can_delegate": False, "can_accept": False, "alias": None})
            out.append(entry)
        return out
