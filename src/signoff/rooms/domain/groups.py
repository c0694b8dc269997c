"""Room groups: a group belongs to its owner (a user, or an admin), and only rooms of its owner or
of users the owner allowed join it. Policies name groups by id (never by a name a caller picked)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from signoff.kernel.errors import ConflictError, NotFoundError, RefusedError, UsageError
from signoff.kernel.ids import new_id
from signoff.rooms.domain.identities import Identities
from signoff.rooms.domain.model import (
    GROUP,
    GroupAllowed,
    GroupCreated,
    Principal,
    check_distinct,
    check_name,
    check_text,
)
from signoff.rooms.storage.store import RoomStore
from signoff.rooms.storage.tables import rooms_groups


def _group_dict(r: Any) -> dict[str, Any]:
    return {"id": r.group_id, "name": r.name, "owner_user_id": r.owner_user_id, "description": r.description,
            "allowed_owner_ids": json.loads(r.allowed)}


class Groups:
    def __init__(self, store: RoomStore, identities: Identities) -> None:
        self.store = store
        self.identities = identities

    def _by_name(self, name: str) -> Any:
        return self.store.one(select(rooms_groups).where(rooms_groups.c.name == name))

    def group(self, group_ref: str) -> dict[str, Any]:
        """A group by id or name."""
        row = self.store.one(select(rooms_groups).where(rooms_groups.c.group_id == group_ref)) \
            or self._by_name(group_ref)
        if row is None:
            raise NotFoundError(f"no room group {group_ref!r}", "list_room_groups shows the groups")
        return _group_dict(row)

    def create_group(self, actor: Principal, name: str, description: str = "") -> dict[str, Any]:
        """A group owned by the actor's user (an agent creates it for its owner)."""
        check_name("room group", name)
        check_text("description", description)
        check_distinct("room group", name,
                       [("room group", r.name) for r in self.store.all(select(rooms_groups.c.name))])
        group_id = new_id()
        try:
            self.store.append(GROUP.prefix + name, [GroupCreated(
                group_id=group_id, name=name, owner_user_id=actor.owner_user_id, description=description,
                by=actor.sender).new_event()], expected=0)
        except ConflictError as exc:  # a 400: over the agent protocol a 409 means "reconnect"
            raise UsageError(f"room group {name!r} already exists", "pick another name") from exc
        return self.group(group_id)

    def allow_owner(self, actor: Principal, group_ref: str, user_name: str) -> dict[str, Any]:
        """Let rooms owned by `user_name` join the group (only the group's owner or an admin)."""
        group = self.group(group_ref)
        if not (actor.is_admin or (actor.kind == "user" and actor.id == group["owner_user_id"])):
            raise RefusedError(f"only the owner of room group {group['name']!r} may allow other owners",
                               "ask the group's owner")
        user = self.identities.user_by_name(user_name)
        self.store.append(GROUP.prefix + group["name"], [GroupAllowed(
            group_id=group["id"], user_id=user.id, by=actor.sender).new_event()])
        return self.group(group["id"])

    def admit(self, actor: Principal, name: str) -> dict[str, Any]:
        """The group a new room of `actor` may join under `name`: the actor's own (created on first
        use), or another owner's group that allowed the actor's owner; refused otherwise."""
        row = self._by_name(name) if isinstance(name, str) else None
        if row is None:
            return self.create_group(actor, name)
        group = _group_dict(row)
        if actor.is_admin or actor.owner_user_id == group["owner_user_id"] \
                or actor.owner_user_id in group["allowed_owner_ids"]:
            return group
        raise RefusedError(f"room group {name!r} belongs to another owner",
                           "use a group of your own, or ask its owner to allow your rooms")

    def list_groups(self, actor: Principal) -> list[dict[str, Any]]:
        """The groups the actor's rooms may join (its owner's and those that allowed it)."""
        rows = self.store.all(select(rooms_groups).order_by(rooms_groups.c.name))
        groups = [_group_dict(r) for r in rows]
        return [g for g in groups if actor.is_admin or g["owner_user_id"] == actor.owner_user_id
                or actor.owner_user_id in g["allowed_owner_ids"]]
