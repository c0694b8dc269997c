"""Room links: a directed link from one room to another, with a label (Switch's `link_rooms`).

A link is a pointer, never access: it shows in the source room's `linked_rooms` to whoever reads
that room, with the target's name and description and whether the reader may act there (`access`:
`member` or `not_member`). Linking takes what changing a room takes (`Membership.require_manage`, as
adding a member does: an admin, the room owner's identities, or a member), of both rooms, so a link
never names a room its maker has no part in. One `room.linked` event (`room.unlinked` to remove it)
in the source room's case.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from signoff.kernel.errors import NotFoundError, UsageError
from signoff.rooms.domain.membership import Membership
from signoff.rooms.domain.model import Principal, RoomLinked, RoomUnlinked, check_text
from signoff.rooms.storage.store import RoomStore
from signoff.rooms.storage.tables import rooms_room_links, rooms_rooms

MAX_LABEL = 200


class Links:
    def __init__(self, store: RoomStore, membership: Membership) -> None:
        self.store = store
        self.membership = membership

    def link_rooms(self, actor: Principal, source_room_id: str, target_room_id: str, label: str) -> dict[str, Any]:
        source, target = self.membership.room(source_room_id), self.membership.room(target_room_id)
        self.membership.require_manage(actor, source)
        self.membership.require_manage(actor, target)
        if source.id == target.id:
            raise UsageError("a room cannot link to itself", "link it to another room")
        check_text("label", label, allow_newlines=False)
        if not label.strip() or len(label) > MAX_LABEL:
            raise UsageError(f"a link's label must be 1-{MAX_LABEL} characters", "pass a short label, e.g. \"shared\"")
        self.store.append(f"rooms.room.{source.id}", [RoomLinked(
            room_id=source.id, target_room_id=target.id, label=label, by=actor.sender).new_event()])
        return {"target_room_id": target.id, "target_room_name": target.name,
                "target_room_description": target.description, "label": label}

    def unlink_rooms(self, actor: Principal, source_room_id: str, target_room_id: str) -> None:
        source = self.membership.room(source_room_id)
        self.membership.require_manage(actor, source)
        if not any(link["target_room_id"] == target_room_id for link in self._links(source.id)):
            raise NotFoundError(f"room {source.id} has no link to {target_room_id}",
                                "list_linked_rooms shows its links")
        self.store.append(f"rooms.room.{source.id}", [RoomUnlinked(
            room_id=source.id, target_room_id=target_room_id, by=actor.sender).new_event()])

    def list_linked_rooms(self, actor: Principal, room_id: str) -> list[dict[str, Any]]:
        self.membership.require_read(actor, room_id)
        return self.linked_rooms(actor, room_id)

    def linked_rooms(self, actor: Principal, room_id: str) -> list[dict[str, Any]]:
        """The links from `room_id`, for a caller that checked the read already: each with the
        target's name and description and whether `actor` is a member there."""
        out = []
        for link in self._links(room_id):
            member = self.membership.is_member(actor, link["target_room_id"])
            out.append({**link, "access": "member" if member else "not_member",
                        **({} if member else {"access_note": "not a member of this room: connect_to_room will "
                                                             "fail until its owner adds you"})})
        return out

    def _links(self, room_id: str) -> list[dict[str, Any]]:
        rows = self.store.all(
            select(rooms_room_links.c.target_room_id, rooms_room_links.c.label, rooms_rooms.c.name,
                   rooms_rooms.c.description)
            .join(rooms_rooms, rooms_rooms.c.room_id == rooms_room_links.c.target_room_id)
            .where(rooms_room_links.c.source_room_id == room_id)
            .order_by(rooms_rooms.c.name))
        return [{"target_room_id": r.target_room_id, "target_room_name": r.name,
                 "target_room_description": r.description, "label": r.label} for r in rows]
