"""Roles of a room: definitions (ledger events) and leases held by live connections."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from signoff.kernel.errors import RefusedError, UsageError
from signoff.ledger import NewEvent
from signoff.rooms.domain.model import Principal, check_distinct, check_name, check_text
from signoff.rooms.storage.connections import Connection
from signoff.rooms.storage.store import RoomStore
from signoff.rooms.storage.tables import rooms_roles

if TYPE_CHECKING:
    from signoff.rooms.domain.identities import Identities
    from signoff.rooms.domain.membership import Membership


def role_event(room_id: str, name: Any, instructions: Any, exclusive: Any, by: str,
               agent_names: Iterable[str] = ()) -> NewEvent:
    """A role's definition; `by` (the defining sender) owns it. A role may not read like one of
    `agent_names` (the room's agents of other owners): a role named after someone's agent would
    catch what `target_roles` sends "to" it."""
    check_name("role", name)
    check_distinct("role", name, [("agent", n) for n in agent_names])
    if not isinstance(instructions, str) or not isinstance(exclusive, bool):
        raise UsageError("a role needs text instructions and a true/false exclusive flag", "fix the role")
    check_text("role instructions", instructions)
    return NewEvent("role.defined", {"room_id": room_id, "name": name, "instructions": instructions,
                                     "exclusive": exclusive, "by": by})


def others_agents(actor: Principal, members: Iterable[Principal]) -> list[str]:
    """Names of the agents among `members` whose owner is not the actor's (none for an admin)."""
    if actor.is_admin:
        return []
    return [m.name for m in members if m.kind == "agent" and m.owner_user_id != actor.owner_user_id]


class Roles:
    def __init__(self, store: RoomStore, identities: Identities, membership: Membership) -> None:
        self.store = store
        self.identities = identities
        self.membership = membership

    def define_role(self, actor: Principal, room_id: str, name: str, instructions: str = "",
                    exclusive: bool = False) -> None:
        """Define a role, or redefine one this actor defined (the room's owner may redefine any).
        A role someone holds cannot be redefined: turning a held exclusive role non-exclusive
        would let another agent assume it and receive what is addressed to it."""
        room = self.membership.require_read(actor, room_id)
        self.membership.require_manage(actor, room)
        event = role_event(room_id, name, instructions, exclusive, actor.sender,
                           others_agents(actor, self.membership.members(room_id)))
        existing = next((r for r in self.roles(room_id) if r["name"] == name), None)
        if existing is not None:
            owner = actor.is_admin or actor.owner_user_id == room.owner_user_id
            if not owner and existing["defined_by"] != actor.sender:
                raise RefusedError(f"role {name!r} was defined by someone else",
                                   "only the role's definer or the room's owner may redefine it")
            if self.store.connections.role_holders(room_id, name):
                raise UsageError(f"role {name!r} is currently held; a held role cannot be redefined",
                                 "wait until its holder releases it")
        self.store.append(f"rooms.room.{room_id}", [event])

    def roles(self, room_id: str) -> list[dict[str, Any]]:
        rows = self.store.all(select(rooms_roles).where(rooms_roles.c.room_id == room_id)
                              .order_by(rooms_roles.c.name))
        return [{"name": r.name, "instructions": r.instructions, "exclusive": bool(r.exclusive),
                 "defined_by": r.defined_by} for r in rows]

    def cached_roles(self, room_id: str) -> list[dict[str, Any]]:
        """The room's roles from the store's cache (exact once `store.ensure_fresh()` has run)."""
        roles: list[dict[str, Any]] = self.store.cached(("roles", room_id), lambda: self.roles(room_id))
        return roles

    def list_roles(self, actor: Principal, room_id: str) -> list[dict[str, Any]]:
        self.membership.require_read(actor, room_id)
        return self.roles_for(actor, room_id)

    def roles_for(self, actor: Principal, room_id: str) -> list[dict[str, Any]]:
        """The room's roles as `actor` sees them, for a caller that checked the read already."""
        out = []
        for role in self.cached_roles(room_id):
            holders = [self.identities.agent(a)
                       for a in self.store.connections.role_holders(room_id, role["name"])]
            out.append({
                "name": role["name"], "exclusive": role["exclusive"],
                "held_by": [{"name": h.name, "present_here": True, "session_room": room_id} for h in holders],
                "assumable_by_me": actor.kind == "agent" and (not role["exclusive"] or not holders
                                                              or holders == [actor]),
                "instructions_preview": role["instructions"][:200],
            })
        return out

    def assume_role(self, actor: Principal, room_id: str, role: str, connection: Connection) -> dict[str, Any]:
        """A lease on the role held by `connection`; it lapses with the connection's heartbeat."""
        self.membership.require_read(actor, room_id)
        if actor.kind != "agent" or connection.agent_id != actor.id:
            raise RefusedError("only an agent can assume a role, on its own connection", "use your connection")
        found = [r for r in self.roles(room_id) if r["name"] == role]
        if not found:
            raise UsageError(f"role {role!r} is not defined in this room", "list_roles shows the roles")
        self.store.connections.set_role(connection, room_id, role, found[0]["exclusive"])
        self.store.append(f"rooms.room.{room_id}", [NewEvent("role.assumed", {
            "room_id": room_id, "role": role, "agent_id": actor.id, "connection_id": connection.id})])
        return {"role": role, "instructions": found[0]["instructions"]}

    def release_role(self, actor: Principal) -> dict[str, Any]:
        released = self.store.connections.release_role(actor.id)
        if released is not None:
            self.store.append(f"rooms.room.{released[0]}", [NewEvent("role.released", {
                "room_id": released[0], "role": released[1], "agent_id": actor.id})])
        return {"released": released[1] if released else None}
