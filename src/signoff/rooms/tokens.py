"""Bearer tokens: generated once, shown once, stored only as SHA-256 digests; and the credentials
aggregate that checks them (every rooms token rule lives in this module)."""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from signoff.kernel.errors import RefusedError
from signoff.kernel.ids import new_id, new_token
from signoff.ledger import NewEvent
from signoff.rooms.model import Principal
from signoff.rooms.tables import rooms_agents, rooms_tokens, rooms_users

if TYPE_CHECKING:
    from signoff.rooms.identities import Identities
    from signoff.rooms.store import RoomStore

PREFIXES = {"user": "sou_", "agent": "soa_", "registration": "sor_"}
_INVALID = ("invalid or unknown token", "send Authorization: Bearer <your user token or api key>")


def mint(kind: str) -> str:
    return PREFIXES[kind] + new_token(32)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def same_digest(stored: str, token: str) -> bool:
    """Constant-time comparison of a stored digest with a presented token's digest."""
    return hmac.compare_digest(stored.encode(), digest(token).encode())


class Credentials:
    def __init__(self, store: RoomStore, identities: Identities) -> None:
        self.store = store
        self.identities = identities

    def _token_row(self, token: str) -> Any:
        if not isinstance(token, str) or not token or len(token) > 500:
            return None
        row = self.store.one(select(rooms_tokens).where(rooms_tokens.c.token_hash == digest(token)))
        if row is None or not same_digest(row.token_hash, token):
            return None
        return row

    def authenticate(self, token: str) -> Principal:
        """The user or agent behind a bearer token; registration keys are refused here. One query:
        this runs on every request."""
        if not isinstance(token, str) or not token or len(token) > 500:
            raise RefusedError(*_INVALID)
        t, a, u = rooms_tokens, rooms_agents, rooms_users
        row = self.store.one(
            select(t.c.token_hash, t.c.kind, t.c.principal_id, a.c.name.label("a_name"), a.c.owner_user_id,
                   u.c.name.label("u_name"), u.c.display_name, u.c.is_admin, u.c.external)
            .select_from(t.outerjoin(a, (t.c.kind == "agent") & (a.c.agent_id == t.c.principal_id))
                         .outerjoin(u, (t.c.kind == "user") & (u.c.user_id == t.c.principal_id)))
            .where(t.c.token_hash == digest(token)))
        if row is None or row.kind == "registration" or not same_digest(row.token_hash, token):
            raise RefusedError(*_INVALID)
        if row.kind == "agent" and row.a_name is not None:
            return Principal("agent", row.principal_id, row.a_name, row.a_name, row.owner_user_id)
        if row.kind == "user" and row.u_name is not None:
            return Principal("user", row.principal_id, row.u_name, row.display_name, row.principal_id,
                             bool(row.is_admin), bool(row.external))
        raise RefusedError(*_INVALID)

    def authenticate_registration(self, token: str) -> Principal:
        row = self._token_row(token)
        if row is None or row.kind != "registration":
            raise RefusedError("invalid registration key", "use the key printed by `signoff rooms init`")
        return self.identities.user(row.principal_id)

    def create_registration_key(self, owner: Principal) -> str:
        if owner.kind != "user":
            raise RefusedError("only users own registration keys", "use a user's token")
        key = mint("registration")
        key_id = new_id()
        self.store.append(f"rooms.regkey.{key_id}", [NewEvent("regkey.created", {
            "key_id": key_id, "owner_user_id": owner.id, "token_hash": digest(key)})], expected=0)
        return key

    def rotate_user_token(self, name: str) -> str:
        user = self.identities.user_by_name(name)
        token = mint("user")
        self.store.append(f"rooms.user.{name}", [NewEvent("user.token_rotated",
                                                          {"user_id": user.id, "token_hash": digest(token)})])
        return token
