"""People's roles on this server: who may answer an approval card addressed to a role.

A room's roles (roles.py) are leases held by agent connections; a card addressed to `role:dba` needs
people. An admin grants a person a role (`signoff rooms role grant dba alice`) and revokes it; the
grants are ledger events of one case (`people.roles`, outside the `rooms.*` cases the projection
reads). A card's role is resolved against them when each answer arrives, by the authenticated
user's id: never when the card was asked, never from a name in a message or a card. A person whose
grant was revoked before answering may not answer; one granted after the card was asked may.
"""

from __future__ import annotations

from sqlalchemy import select

from signoff.kernel.errors import RefusedError, UsageError
from signoff.ledger import NewEvent, SqlLedger
from signoff.rooms.domain.model import Principal, check_name
from signoff.rooms.storage.store import RoomStore
from signoff.rooms.storage.tables import rooms_users

CASE = "people.roles"
PREFIX = "role:"  # user names cannot hold ':', so a responder entry "role:<name>" never reads as a person


def role_of(responder: str) -> str | None:
    """The role a card's responder entry names (`role:<name>`), or None for a person."""
    if not responder.startswith(PREFIX):
        return None
    role = responder[len(PREFIX):]
    check_name("role", role)
    return role


class PeopleRoles:
    def __init__(self, store: RoomStore) -> None:
        self.store = store

    @property
    def ledger(self) -> SqlLedger:
        return self.store.ledger

    def _change(self, actor: Principal, role: str, user_id: str, event: str) -> None:
        if actor.kind != "user" or not actor.is_admin:
            raise RefusedError("only an admin grants and revokes people's roles",
                               "ask an admin: signoff rooms role grant ROLE USER")
        check_name("role", role)
        if self.store.one(select(rooms_users.c.user_id).where(rooms_users.c.user_id == user_id)) is None:
            raise UsageError(f"no user {user_id}", "list users with `signoff rooms user list`")
        self.ledger.append(CASE, None, [NewEvent(event, {"role": role, "user_id": user_id, "by": actor.id})])

    def grant(self, actor: Principal, role: str, user_id: str) -> None:
        self._change(actor, role, user_id, "people_role.granted")

    def revoke(self, actor: Principal, role: str, user_id: str) -> None:
        if user_id not in self.holders(role):
            raise UsageError(f"that user does not hold role {role!r}", "signoff rooms role list shows who does")
        self._change(actor, role, user_id, "people_role.revoked")

    def table(self) -> dict[str, set[str]]:
        """Every role and the user ids holding it now (the grants folded in order)."""
        held: dict[str, set[str]] = {}
        for e in self.ledger.read(CASE):
            holders = held.setdefault(str(e.payload["role"]), set())
            if e.type == "people_role.granted":
                holders.add(str(e.payload["user_id"]))
            elif e.type == "people_role.revoked":
                holders.discard(str(e.payload["user_id"]))
        return {role: ids for role, ids in held.items() if ids}

    def holders(self, role: str) -> set[str]:
        return self.table().get(role, set())
