"""Bearer tokens: generated once, shown once, stored only as SHA-256 digests; and the credentials
aggregate that checks them, lets them expire, rotates and revokes them. Every rooms token rule
lives in this module (so that it can move whole into a shared credential module).

A token expires `lifetime` seconds after it was issued (the time of its ledger event), by kind; the
lifetimes come from `[rooms]` in signoff.toml (`token_days`, `registration_key_days`), so changing
them applies to tokens already issued.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import select

from signoff.kernel.clock import utc_iso
from signoff.kernel.errors import NotFoundError, RefusedError, UsageError
from signoff.kernel.ids import new_id
from signoff.kernel.settings import Settings
from signoff.ledger import NewEvent
from signoff.rooms.domain.model import Principal
from signoff.rooms.storage.tables import rooms_agents, rooms_tokens, rooms_users
from signoff.trust import credentials

if TYPE_CHECKING:
    from signoff.rooms.domain.identities import Identities
    from signoff.rooms.storage.store import RoomStore

PREFIXES = {"user": "sou", "agent": "soa", "registration": "sor", "claim": "soc"}
_INVALID = ("invalid or unknown token", "send Authorization: Bearer <your user token or api key>")
DAY = 86400.0
Kind = Literal["user", "agent"]


@dataclass(frozen=True)
class Lifetimes:
    """How long a token of each kind is valid after it was issued, in seconds."""

    token: float = 90 * DAY  # user tokens and agent api keys
    registration_key: float = 7 * DAY

    @classmethod
    def from_settings(cls, settings: Settings | None) -> Lifetimes:
        section = settings.section("rooms") if settings is not None else {}
        values = {}
        for key, field_name, default in (("token_days", "token", 90), ("registration_key_days",
                                                                         "registration_key", 7)):
            days = section.get(key, default)
            if isinstance(days, bool) or not isinstance(days, int | float) or not 0 < days <= 3650:
                raise UsageError(f"[rooms] {key} must be a number of days from 1 to 3650, not {days!r}",
                                 f"set {key} = {default} in signoff.toml")
            values[field_name] = float(days) * DAY
        return cls(**values)

    def of(self, kind: str) -> float:
        return self.registration_key if kind == "registration" else self.token


# Minting, digests and constant-time comparison are trust.credentials' (one rule for every token).
digest = credentials.digest
same_digest = credentials.matches


def mint(kind: str) -> str:
    return credentials.mint(PREFIXES[kind])


def live_user_token(store: RoomStore, user_id: str) -> str | None:
    """The digest of the user's current token, None once it is revoked: a revoked person is out
    everywhere they act without their token (a web session is bound to it, signoff.rooms.domain.signin;
    a chat account they claimed speaks for nobody, signoff.rooms.domain.claims). Read from the exact cache."""
    store.ensure_fresh()
    row = store.cached(("user-token", user_id), lambda: store.one(
        select(rooms_tokens.c.token_hash).where(rooms_tokens.c.principal_id == user_id, rooms_tokens.c.kind == "user")))
    return None if row is None else str(row.token_hash)


class Credentials:
    def __init__(self, store: RoomStore, identities: Identities, lifetimes: Lifetimes | None = None) -> None:
        self.store = store
        self.identities = identities
        self.lifetimes = lifetimes or Lifetimes()

    def _refuse_expired(self, kind: str, issued_at: float | None) -> None:
        # The projector always sets issued_at (migration rooms_0002 replays older rows); fail closed.
        expires = (issued_at or 0.0) + self.lifetimes.of(kind)
        if self.store.clock.now() >= expires:
            raise RefusedError(f"this {'registration key' if kind == 'registration' else 'token'} expired at "
                               f"{utc_iso(expires)}",
                               "ask an admin for a new one (`signoff rooms token rotate`)")

    def _token_row(self, token: str) -> Any:
        if not isinstance(token, str) or not token or len(token) > 500:
            return None
        row = self.store.one(select(rooms_tokens).where(rooms_tokens.c.token_hash == digest(token)))
        if row is None or not same_digest(row.token_hash, token):
            return None
        return row

    def authenticate(self, token: str) -> Principal:
        """The user or agent behind a bearer token; registration keys are refused here. This runs on
        every request: the token's row comes from the store's cache (exact once `ensure_fresh` has
        run, since every credential event is structural and clears it), and its lifetime is checked
        on every use."""
        if not isinstance(token, str) or not token or len(token) > 500:
            raise RefusedError(*_INVALID)
        hashed = digest(token)
        self.store.ensure_fresh()
        row = self.store.cached(("token", hashed), lambda: self._principal_row(hashed), keep_none=False)
        if row is None or row.kind == "registration" or not same_digest(row.token_hash, token):
            raise RefusedError(*_INVALID)
        self._refuse_expired(row.kind, row.issued_at)
        if row.kind == "agent" and row.a_name is not None:
            return Principal("agent", row.principal_id, row.a_name, row.a_name, row.owner_user_id)
        if row.kind == "user" and row.u_name is not None:
            return Principal("user", row.principal_id, row.u_name, row.display_name, row.principal_id,
                             bool(row.is_admin), bool(row.external))
        raise RefusedError(*_INVALID)

    def _principal_row(self, hashed: str) -> Any:
        """The token's row joined with its user or agent (one query), or None."""
        t, a, u = rooms_tokens, rooms_agents, rooms_users
        return self.store.one(
            select(t.c.token_hash, t.c.kind, t.c.principal_id, t.c.issued_at, a.c.name.label("a_name"),
                   a.c.owner_user_id,
                   u.c.name.label("u_name"), u.c.display_name, u.c.is_admin, u.c.external)
            .select_from(t.outerjoin(a, (t.c.kind == "agent") & (a.c.agent_id == t.c.principal_id))
                         .outerjoin(u, (t.c.kind == "user") & (u.c.user_id == t.c.principal_id)))
            .where(t.c.token_hash == hashed))

    def live_user_token(self, user_id: str) -> str | None:
        return live_user_token(self.store, user_id)

    def authenticate_registration(self, token: str) -> Principal:
        row = self._token_row(token)
        if row is None or row.kind != "registration":
            raise RefusedError("invalid registration key", "use the key printed by `signoff rooms init`")
        self._refuse_expired("registration", row.issued_at)
        return self.identities.user(row.principal_id)

    def create_registration_key(self, actor: Principal, owner: Principal | None = None) -> str:
        """A registration key (shown once); agents registered with it belong to `owner` (the actor
        unless named). Only admins mint them: a key lets anyone who holds it create agents."""
        if actor.kind != "user" or not actor.is_admin:
            raise RefusedError("only admins mint registration keys", "ask an admin for a registration key")
        owner = owner or actor
        if owner.kind != "user":
            raise RefusedError("only users own registration keys", "name a user as the owner")
        key = mint("registration")
        key_id = new_id()
        self.store.append(f"rooms.regkey.{key_id}", [NewEvent("regkey.created", {
            "key_id": key_id, "owner_user_id": owner.id, "token_hash": digest(key), "by": actor.sender})],
            expected=0)
        return key

    def rotate(self, kind: Kind, name: str) -> str:
        """A new token for the user or agent `name` (shown once); the old one stops working."""
        token = mint(kind)
        if kind == "user":
            user = self.identities.user_by_name(name)
            self.store.append(f"rooms.user.{name}", [NewEvent("user.token_rotated",
                                                              {"user_id": user.id, "token_hash": digest(token)})])
        else:
            agent = self.identities.agent_by_name(name)
            self.store.append(f"rooms.agent.{name}", [NewEvent("agent.key_rotated",
                                                               {"agent_id": agent.id, "token_hash": digest(token)})])
        return token

    def revoke(self, kind: Kind, name: str) -> None:
        """The user's token or the agent's key stops working now (rotate to issue a new one)."""
        principal = self.identities.user_by_name(name) if kind == "user" else self.identities.agent_by_name(name)
        self.store.append(f"rooms.{kind}.{name}", [NewEvent("token.revoked", {
            "kind": kind, "principal_id": principal.id})])

    def revoke_registration_key(self, key: str) -> None:
        row = self._token_row(key)
        if row is None or row.kind != "registration":
            raise NotFoundError("no such registration key", "pass the key exactly as it was printed")
        self.store.append(f"rooms.regkey.revoked.{row.token_hash}", [NewEvent("token.revoked", {
            "kind": "registration", "principal_id": row.principal_id, "token_hash": row.token_hash})])
