"""References to outside content ({urls: [...]}), owned by a user and attached to rooms; a room's
references are listed with its documents and its links (`links`)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from signoff.kernel.errors import NotFoundError, RefusedError, UsageError
from signoff.kernel.ids import new_id
from signoff.ledger import NewEvent
from signoff.rooms.domain.documents import Documents
from signoff.rooms.domain.links import Links
from signoff.rooms.domain.membership import Membership
from signoff.rooms.domain.model import Principal, check_text
from signoff.rooms.storage.store import RoomStore
from signoff.rooms.storage.tables import rooms_references, rooms_room_references

REFERENCE_TYPES = ("google_drive", "confluence", "github", "jira", "url")


class References:
    def __init__(self, store: RoomStore, membership: Membership, documents: Documents, links: Links) -> None:
        self.store = store
        self.membership = membership
        self.documents = documents
        self.links = links

    def create_reference(self, actor: Principal, type: str, name: str, value: dict[str, Any],
                         description: str = "", instructions: str = "") -> str:
        if type not in REFERENCE_TYPES:
            raise UsageError(f"unknown reference type {type!r}", f"use one of {', '.join(REFERENCE_TYPES)}")
        urls = value.get("urls") if isinstance(value, dict) else None
        if not isinstance(urls, list) or not urls or not all(
                isinstance(u, str) and u.startswith(("https://", "http://")) for u in urls):
            raise UsageError("a reference value must be {\"urls\": [\"https://...\", ...]} with at least one URL",
                             "pass value={\"urls\": [\"https://example.org/doc\"]}")
        check_text("reference name", name, allow_newlines=False)
        if not name.strip() or len(name) > 200:
            raise UsageError("reference name must be 1-200 characters", "pass a short name")
        check_text("description", description)
        check_text("instructions", instructions)
        reference_id = new_id()
        self.store.append(f"rooms.ref.{reference_id}", [NewEvent("reference.created", {
            "reference_id": reference_id, "type": type, "name": name, "description": description,
            "instructions": instructions, "value": {"urls": urls}, "owner_user_id": actor.owner_user_id})],
            expected=0)
        return reference_id

    def attach_reference(self, actor: Principal, room_id: str, reference_id: str) -> None:
        room = self.membership.require_read(actor, room_id)
        self.membership.require_manage(actor, room)
        row = self.store.one(select(rooms_references).where(rooms_references.c.reference_id == reference_id))
        if row is None:
            raise NotFoundError(f"no reference {reference_id}", "create it with create_reference")
        if row.owner_user_id != actor.owner_user_id and not actor.is_admin:
            raise RefusedError("that reference belongs to another owner", "attach your own references")
        self.store.append(f"rooms.room.{room_id}", [NewEvent("reference.attached", {
            "room_id": room_id, "reference_id": reference_id, "by": actor.sender})])

    def list_references(self, actor: Principal, room_id: str) -> dict[str, Any]:
        self.membership.require_read(actor, room_id)
        return self.references_of(actor, room_id)

    def references_of(self, actor: Principal, room_id: str) -> dict[str, Any]:
        """The room's references, documents and links (as `actor` may act on them), for a caller
        that checked the read already."""
        rows = self.store.all(select(rooms_references).join(
            rooms_room_references, rooms_room_references.c.reference_id == rooms_references.c.reference_id)
            .where(rooms_room_references.c.room_id == room_id))
        refs = [{"id": r.reference_id, "type": r.type, "name": r.name, "description": r.description,
                 "instructions": r.instructions, "value": json.loads(r.value)} for r in rows]
        return {"reference_types": list(REFERENCE_TYPES), "references": refs,
                "documents": self.documents.documents_of(room_id), "packages": [],
                "linked_rooms": self.links.linked_rooms(actor, room_id)}
