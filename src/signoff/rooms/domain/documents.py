"""Room documents: single-writer (the creating identity), members read them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select

from signoff.kernel.errors import NotFoundError, UsageError
from signoff.kernel.ids import new_id
from signoff.rooms.domain.membership import Membership
from signoff.rooms.domain.model import (
    DOCUMENT,
    MAX_DOCUMENT,
    DocumentCreated,
    DocumentDeleted,
    DocumentUpdated,
    Principal,
    check_text,
)
from signoff.rooms.storage.store import RoomStore
from signoff.rooms.storage.tables import rooms_documents


def _doc_dict(r: Any, content: bool) -> dict[str, Any]:
    d = {"id": r.document_id, "name": r.name, "description": r.description, "instructions": r.instructions,
         "version": int(r.version), "created_by": f"{r.created_by_kind}:{r.created_by_id}",
         "updated_at": r.updated_at}
    if content:
        d["content"] = r.content
    return d


class Documents:
    def __init__(self, store: RoomStore, membership: Membership) -> None:
        self.store = store
        self.membership = membership

    def create_document(self, actor: Principal, room_id: str, name: str, content: str, description: str = "",
                        instructions: str = "") -> str:
        """A room document; its creator is its only writer."""
        self.membership.require_read(actor, room_id)
        check_text("document name", name, allow_newlines=False)
        for field_name, value in (("content", content), ("description", description),
                                  ("instructions", instructions)):
            check_text(f"document {field_name}", value)
        if not name.strip() or len(name) > 200:
            raise UsageError("document name must be 1-200 characters", "pass a short name")
        if len(content.encode()) > MAX_DOCUMENT:
            raise UsageError("document content is over 1 MiB", "split it into several documents")
        taken = self.store.one(select(rooms_documents.c.document_id).where(
            rooms_documents.c.room_id == room_id, rooms_documents.c.name == name))
        if taken is not None:
            raise UsageError(f"a document named {name!r} already exists in this room", "pick another name")
        document_id = new_id()
        self.store.append(DOCUMENT.case_id(document_id), [DocumentCreated(
            document_id=document_id, room_id=room_id, name=name, description=description,
            instructions=instructions, content=content, by_kind=actor.kind, by_id=actor.id).new_event()],
            expected=0)
        return document_id

    def _row(self, document_id: str) -> Any:
        row = self.store.one(select(rooms_documents).where(rooms_documents.c.document_id == document_id))
        if row is None:
            raise NotFoundError(f"no document {document_id}", "list_references shows the room's documents")
        return row

    def update_document(self, actor: Principal, document_id: str, content: str | None = None,
                        name: str | None = None, description: str | None = None,
                        instructions: str | None = None) -> int:
        """Only the creating identity may update; returns the new version."""
        row = self._row(document_id)
        self.membership.require_read(actor, row.room_id)
        if (row.created_by_kind, row.created_by_id) != (actor.kind, actor.id):
            raise UsageError(f"{actor.name} did not create document {row.name!r} ({document_id})",
                             "only its creator may change it; create your own document instead")
        if content is not None and len(check_text("document content", content).encode()) > MAX_DOCUMENT:
            raise UsageError("document content must be text of at most 1 MiB", "send a smaller string")
        for field_name, value in (("name", name), ("description", description), ("instructions", instructions)):
            if value is not None:
                check_text(f"document {field_name}", value, allow_newlines=field_name != "name")
        if name is not None and (not name.strip() or len(name) > 200):
            raise UsageError("document name must be 1-200 characters", "pass a short name")
        version = int(row.version) + 1
        self.store.append(DOCUMENT.case_id(document_id), [DocumentUpdated(
            document_id=document_id, room_id=row.room_id, content=content, name=name,
            description=description, instructions=instructions, version=version,
            by_kind=actor.kind, by_id=actor.id).new_event()])
        return int(self._row(document_id).version)

    def delete_document(self, actor: Principal, document_id: str) -> None:
        row = self._row(document_id)
        room = self.membership.require_read(actor, row.room_id)
        creator = (row.created_by_kind, row.created_by_id) == (actor.kind, actor.id)
        human_owner = actor.kind == "user" and (actor.is_admin or actor.id == room.owner_user_id)
        if not (creator or human_owner):
            raise UsageError(f"{actor.name} did not create document {row.name!r}", "only its creator may delete it")
        self.store.append(DOCUMENT.case_id(document_id), [DocumentDeleted(
            document_id=document_id, room_id=row.room_id, by=actor.sender).new_event()])

    def load_documents(self, actor: Principal, ids: Iterable[str]) -> list[dict[str, Any]]:
        out = []
        for document_id in ids:
            row = self._row(document_id)
            self.membership.require_read(actor, row.room_id)
            out.append(_doc_dict(row, True))
        return out

    def documents(self, actor: Principal, room_id: str) -> list[dict[str, Any]]:
        self.membership.require_read(actor, room_id)
        return self.documents_of(room_id)

    def documents_of(self, room_id: str) -> list[dict[str, Any]]:
        """The room's documents, for a caller that checked the read already."""
        rows = self.store.all(select(rooms_documents).where(rooms_documents.c.room_id == room_id)
                              .order_by(rooms_documents.c.name))
        return [_doc_dict(r, False) for r in rows]
