"""The rooms domain service: identities, rooms, membership, messages with receipts, addressing
policies, documents, roles, references, approval cards and the per-agent event streams.

Every change is a ledger event under a `rooms.*` case; the query tables follow through the
projector before the call returns, so a caller reads its own writes. Usable in-process (workflows
call it directly) and behind the HTTP app (`signoff.rooms.app`).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from sqlalchemy import Select, func, select

from signoff.kernel.clock import Clock
from signoff.kernel.errors import ConflictError, NotFoundError, RefusedError, UsageError
from signoff.kernel.ids import new_id
from signoff.ledger import AppendResult, Ledger, NewEvent
from signoff.rooms import tokens
from signoff.rooms.connections import Connection, ConnectionRegistry
from signoff.rooms.deliveries import RecentDeliveries
from signoff.rooms.model import (
    CHANNEL_TYPES,
    MAX_BODY,
    MAX_DOCUMENT,
    Approval,
    ApprovalOption,
    Principal,
    Room,
    check_name,
)
from signoff.rooms.notify import Notifier
from signoff.rooms.policy import OWNER_ONLY, Sender, Target, permits, validate_policy
from signoff.rooms.projection import Applied, Projector
from signoff.rooms.receipts import Receipt
from signoff.rooms.tables import (
    rooms_agents,
    rooms_approvals,
    rooms_deliveries,
    rooms_documents,
    rooms_members,
    rooms_messages,
    rooms_references,
    rooms_roles,
    rooms_room_references,
    rooms_rooms,
    rooms_tokens,
    rooms_users,
)

MENTION = re.compile(r"(?<![\w@])@([a-z0-9][a-z0-9._-]*)")
REFUSAL = "You're not permitted to direct messages to me in this room."
DEFAULT_PROFILE: dict[str, Any] = {
    "connection_model": "always_on",
    "message_exchange": True,
    "pre_invocation_mediation": [],
    "post_invocation_mediation": [],
    "event_reporting": [],
    "task_protocol": {"can_delegate": False, "can_accept": False},
}
REFERENCE_TYPES = ("google_drive", "confluence", "github", "jira", "url")


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


@dataclass
class _Pending:
    case_id: str
    events: list[NewEvent]
    seqs: tuple[int, ...] | None = None
    error: BaseException | None = None
    done: bool = False


def _envelope(seq: int, text: str) -> dict[str, Any]:
    env: dict[str, Any] = json.loads(text)
    env["sequence"] = seq
    return env


class RoomService:
    def __init__(self, ledger: Ledger, clock: Clock | None = None) -> None:
        self.ledger = ledger
        self.clock: Clock = clock or ledger.clock
        self.notifier = Notifier()
        self._cache: dict[tuple[str, ...], Any] = {}
        self._cache_lock = threading.Lock()
        self._cache_generation = 0
        self._group = threading.Condition()
        self._pending: list[_Pending] = []
        self._leader = False
        self.projector = Projector(ledger, on_applied=self._applied)
        self.recent = RecentDeliveries(self.projector.cursor())
        self.connections = ConnectionRegistry(
            self.clock, on_change=lambda agent_id: self.notifier.notify([f"agent:{agent_id}", f"agent+:{agent_id}"])
        )
        self.projector.catch_up()

    def _applied(self, applied: Applied) -> None:
        if applied.foreign or applied.structural:
            with self._cache_lock:
                self._cache.clear()
                self._cache_generation += 1
        if applied.foreign:
            self.recent.reset(applied.cursor)
            self.notifier.notify_all()
            return
        self.recent.add(applied.deliveries)
        self.notifier.notify(applied.keys)

    # Hot-path reads (posting) come from a cache of rooms, members, roles and agent settings. It is
    # exact whenever the projector is caught up: every change to those goes through the projector,
    # which clears the cache (and another process's changes are detected as foreign).
    def _cached(self, key: tuple[str, ...], load: Callable[[], Any]) -> Any:
        with self._cache_lock:
            if key in self._cache:
                return self._cache[key]
            generation = self._cache_generation
        value = load()
        with self._cache_lock:
            if generation == self._cache_generation:
                self._cache[key] = value
        return value

    def _ensure_fresh(self) -> None:
        """Make the cache exact before a check: if the stored projection cursor is not ours, another
        process (or a catch-up in flight) moved it, so catch up. One small read, no lock."""
        if self.projector.stored_cursor() != self.projector.cursor():
            self.projector.catch_up()

    def _group_append(self, case_id: str, events: Sequence[NewEvent]) -> tuple[int, ...]:
        """Append and project, committing concurrent callers' events together (group commit):
        one transaction and one projection pass for everything that queued meanwhile."""
        item = _Pending(case_id, list(events))
        with self._group:
            self._pending.append(item)
            while not item.done and self._leader:
                self._group.wait()
            if not item.done:
                self._leader = True
                batch, self._pending = self._pending, []
            else:
                batch = []
        if batch:
            try:
                by_case: dict[str, list[_Pending]] = {}
                for it in batch:
                    by_case.setdefault(it.case_id, []).append(it)
                for case, items in by_case.items():
                    try:
                        result = self.ledger.append(case, None, [e for it in items for e in it.events])
                    except Exception as exc:  # every caller of this case gets the failure
                        for it in items:
                            it.error = exc
                        continue
                    offset = 0
                    for it in items:
                        it.seqs = result.seqs[offset:offset + len(it.events)]
                        offset += len(it.events)
                self.projector.catch_up()
            finally:
                with self._group:
                    for it in batch:
                        it.done = True
                    self._leader = False
                    self._group.notify_all()
        if item.error is not None:
            raise item.error
        assert item.seqs is not None
        return item.seqs

    # -- plumbing ------------------------------------------------------------------------------

    def _append(self, case_id: str, events: Sequence[NewEvent], expected: int | None = None,
                idempotency_key: str | None = None) -> AppendResult:
        result = self.ledger.append(case_id, expected, events, idempotency_key=idempotency_key)
        self.projector.catch_up()
        return result

    def refresh(self) -> int:
        """Apply events other processes wrote (the server calls this periodically)."""
        return self.projector.catch_up()

    def _all(self, query: Select[Any]) -> list[Any]:
        with self.ledger.engine.connect() as conn:
            return list(conn.execute(query).all())

    def _one(self, query: Select[Any]) -> Any:
        with self.ledger.engine.connect() as conn:
            return conn.execute(query).first()

    def _now_ms(self) -> int:
        return int(self.clock.now() * 1000)

    # -- identities ----------------------------------------------------------------------------

    def init(self, admin_name: str = "admin", display_name: str = "Administrator") -> dict[str, str]:
        """Create the first admin user and a registration key it owns; refuse when already done."""
        if self._one(select(rooms_users.c.user_id).where(rooms_users.c.is_admin.is_(True))) is not None:
            raise ConflictError("rooms are already initialised (an admin user exists)",
                                "use `signoff rooms user add` for more users")
        admin, token = self.create_user(admin_name, display_name, admin=True)
        key = self.create_registration_key(admin)
        return {"admin_user_id": admin.id, "admin_token": token, "registration_key": key}

    def create_user(self, name: str, display_name: str | None = None, admin: bool = False,
                    external: bool = False) -> tuple[Principal, str]:
        """A user and its token (shown once; only its digest is stored)."""
        check_name("user", name)
        if display_name is not None and (not isinstance(display_name, str) or len(display_name) > 200):
            raise UsageError("display name must be text of at most 200 characters", "shorten it")
        user_id = new_id()
        token = tokens.mint("user")
        payload = {
            "user_id": user_id, "name": name, "display_name": display_name or name, "is_admin": admin,
            "external": external, "token_hash": tokens.digest(token),
        }
        try:
            self._append(f"rooms.user.{name}", [NewEvent("user.created", payload)], expected=0)
        except ConflictError as exc:
            raise ConflictError(f"user {name!r} already exists", "pick another name") from exc
        return self.user(user_id), token

    def rotate_user_token(self, name: str) -> str:
        user = self.user_by_name(name)
        token = tokens.mint("user")
        self._append(f"rooms.user.{name}", [NewEvent("user.token_rotated",
                                                     {"user_id": user.id, "token_hash": tokens.digest(token)})])
        return token

    def create_registration_key(self, owner: Principal) -> str:
        if owner.kind != "user":
            raise RefusedError("only users own registration keys", "use a user's token")
        key = tokens.mint("registration")
        key_id = new_id()
        self._append(f"rooms.regkey.{key_id}", [NewEvent("regkey.created", {
            "key_id": key_id, "owner_user_id": owner.id, "token_hash": tokens.digest(key)})], expected=0)
        return key

    def user(self, user_id: str) -> Principal:
        row = self._one(select(rooms_users).where(rooms_users.c.user_id == user_id))
        if row is None:
            raise NotFoundError(f"no user {user_id}", "list users with `signoff rooms user list`")
        return Principal("user", row.user_id, row.name, row.display_name, row.user_id, bool(row.is_admin),
                         bool(row.external))

    def user_by_name(self, name: str) -> Principal:
        row = self._one(select(rooms_users.c.user_id).where(rooms_users.c.name == name))
        if row is None:
            raise NotFoundError(f"no user named {name!r}", "check the name or add the user")
        return self.user(row.user_id)

    def users(self) -> list[Principal]:
        rows = self._all(select(rooms_users.c.user_id).order_by(rooms_users.c.name))
        return [self.user(r.user_id) for r in rows]

    def agent(self, agent_id: str) -> Principal:
        row = self._one(select(rooms_agents).where(rooms_agents.c.agent_id == agent_id))
        if row is None:
            raise NotFoundError(f"no agent {agent_id}", "register the agent first (POST /agents)")
        return Principal("agent", row.agent_id, row.name, row.name, row.owner_user_id)

    def agent_by_name(self, name: str) -> Principal:
        row = self._one(select(rooms_agents.c.agent_id).where(rooms_agents.c.name == name))
        if row is None:
            raise NotFoundError(f"no agent named {name!r}", "check the name or register the agent")
        return self.agent(row.agent_id)

    def agent_record(self, agent_id: str) -> dict[str, Any]:
        row = self._one(select(rooms_agents).where(rooms_agents.c.agent_id == agent_id))
        if row is None:
            raise NotFoundError(f"no agent {agent_id}", "register the agent first")
        return {
            "id": row.agent_id, "name": row.name, "owner_user_id": row.owner_user_id,
            "description": row.description, "integration_profile": _loads(row.profile),
            "addressing_policy": _loads(row.policy),
        }

    def register_agent(self, registration_key: str, name: str, description: str = "",
                       profile: dict[str, Any] | None = None, overwrite: bool = False) -> tuple[Principal, str]:
        """POST /agents: a registration key's owner registers (or, with overwrite, re-keys) an agent.
        New agents start owner-only, as in Switch."""
        owner = self.authenticate_registration(registration_key)
        return self.create_agent(owner, name, description, profile=profile, overwrite=overwrite)

    def create_agent(self, owner: Principal | str, name: str, description: str = "",
                     policy: dict[str, Any] | None = OWNER_ONLY, profile: dict[str, Any] | None = None,
                     overwrite: bool = False) -> tuple[Principal, str]:
        """An agent owned by a user, and its API key (shown once). `policy` defaults to owner-only;
        pass `policy.OPEN` (None) for an open agent or your own rules."""
        owner_user = owner if isinstance(owner, Principal) else self.user(owner)
        if owner_user.kind != "user":
            raise RefusedError("an agent's owner must be a user", "pass a user")
        check_name("agent", name)
        if not isinstance(description, str):
            raise UsageError("description must be text", "send a string")
        policy = validate_policy(policy)
        profile = dict(profile or DEFAULT_PROFILE)
        key = tokens.mint("agent")
        existing = self._one(select(rooms_agents).where(rooms_agents.c.name == name))
        case_id = f"rooms.agent.{name}"
        if existing is not None:
            if not overwrite:
                raise ConflictError(f"agent {name!r} already exists", "pass overwrite=true to rotate its key")
            if existing.owner_user_id != owner_user.id and not owner_user.is_admin:
                raise RefusedError(f"agent {name!r} belongs to another owner", "pick another name")
            agent_id = existing.agent_id
            expected = None
        else:
            agent_id = new_id()
            expected = 0
        payload = {
            "agent_id": agent_id, "name": name, "owner_user_id": owner_user.id if existing is None
            else existing.owner_user_id, "description": description, "profile": profile, "policy": policy,
            "token_hash": tokens.digest(key),
        }
        try:
            self._append(case_id, [NewEvent("agent.registered", payload)], expected=expected)
        except ConflictError as exc:
            raise ConflictError(f"agent {name!r} already exists", "pass overwrite=true to rotate its key") from exc
        return self.agent(agent_id), key

    def _token_row(self, token: str) -> Any:
        if not isinstance(token, str) or not token or len(token) > 500:
            return None
        digest = tokens.digest(token)
        row = self._one(select(rooms_tokens).where(rooms_tokens.c.token_hash == digest))
        if row is None or not tokens.same_digest(row.token_hash, token):
            return None
        return row

    def authenticate(self, token: str) -> Principal:
        """The user or agent behind a bearer token; registration keys are refused here. One query:
        this runs on every request."""
        if not isinstance(token, str) or not token or len(token) > 500:
            raise RefusedError("invalid or unknown token", "send Authorization: Bearer <your user token or api key>")
        t, a, u = rooms_tokens, rooms_agents, rooms_users
        row = self._one(
            select(t.c.token_hash, t.c.kind, t.c.principal_id, a.c.name.label("a_name"), a.c.owner_user_id,
                   u.c.name.label("u_name"), u.c.display_name, u.c.is_admin, u.c.external)
            .select_from(t.outerjoin(a, (t.c.kind == "agent") & (a.c.agent_id == t.c.principal_id))
                         .outerjoin(u, (t.c.kind == "user") & (u.c.user_id == t.c.principal_id)))
            .where(t.c.token_hash == tokens.digest(token)))
        if row is None or row.kind == "registration" or not tokens.same_digest(row.token_hash, token):
            raise RefusedError("invalid or unknown token", "send Authorization: Bearer <your user token or api key>")
        if row.kind == "agent" and row.a_name is not None:
            return Principal("agent", row.principal_id, row.a_name, row.a_name, row.owner_user_id)
        if row.kind == "user" and row.u_name is not None:
            return Principal("user", row.principal_id, row.u_name, row.display_name, row.principal_id,
                             bool(row.is_admin), bool(row.external))
        raise RefusedError("invalid or unknown token", "send Authorization: Bearer <your user token or api key>")

    def authenticate_registration(self, token: str) -> Principal:
        row = self._token_row(token)
        if row is None or row.kind != "registration":
            raise RefusedError("invalid registration key", "use the key printed by `signoff rooms init`")
        return self.user(row.principal_id)

    def set_policy(self, actor: Principal, agent_id: str, policy: Any) -> dict[str, Any] | None:
        """Only the agent's owner or an admin, never an agent key."""
        target = self.agent(agent_id)
        if actor.kind != "user" or not (actor.is_admin or actor.id == target.owner_user_id):
            raise RefusedError("only the agent's owner or an admin may change its addressing policy",
                               "use the owner's user token (agent keys cannot change policies)")
        clean = validate_policy(policy)
        self._append(f"rooms.agent.{target.name}", [NewEvent("agent.policy_set", {
            "agent_id": agent_id, "policy": clean, "by": actor.sender})])
        return clean

    def policy(self, agent_id: str) -> dict[str, Any] | None:
        value: dict[str, Any] | None = self.agent_record(agent_id)["addressing_policy"]
        return value

    # -- rooms and membership ------------------------------------------------------------------

    def room(self, room_id: str) -> Room:
        row = self._one(select(rooms_rooms).where(rooms_rooms.c.room_id == room_id))
        if row is None:
            raise NotFoundError(f"no room {room_id}", "list your rooms (list_rooms) and use one of their ids")
        return Room(row.room_id, row.name, row.description, row.instructions, row.channel_type,
                    bool(row.internal_only), row.owner_user_id, row.group_name)

    def is_member(self, principal: Principal, room_id: str) -> bool:
        row = self._one(select(rooms_members.c.member_id).where(
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

    def _require_manage(self, actor: Principal, room: Room) -> None:
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
        members = [("agent", self.agent_by_name(n)) for n in agent_names]
        members += [("user", self.user_by_name(n)) for n in user_names]
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
        now = self._now_ms()
        for kind, m in members:
            events.append(NewEvent("room.member_added", {"room_id": room_id, "kind": kind, "member_id": m.id,
                                                         "name": m.display_name, "timestamp": now}))
        for role in roles:
            events.append(self._role_event(room_id, role.get("name"), role.get("instructions", ""),
                                           role.get("exclusive", False)))
        self._append(f"rooms.room.{room_id}", events, expected=0)
        return self.room(room_id)

    def add_member(self, actor: Principal, room_id: str, agent_name: str | None = None,
                   user_name: str | None = None) -> Principal:
        room = self.room(room_id)
        self._require_manage(actor, room)
        if (agent_name is None) == (user_name is None):
            raise UsageError("name exactly one agent or one user to add", "pass agent_name or user_name")
        member = self.agent_by_name(agent_name) if agent_name is not None else self.user_by_name(str(user_name))
        if room.internal_only and member.external:
            raise RefusedError(f"user {member.name} is external; room {room_id} is internal only",
                               "external identities cannot join internal-only rooms")
        if not self.is_member(member, room_id):
            self._append(f"rooms.room.{room_id}", [NewEvent("room.member_added", {
                "room_id": room_id, "kind": member.kind, "member_id": member.id, "name": member.display_name,
                "timestamp": self._now_ms(), "by": actor.sender})])
        return member

    def remove_member(self, actor: Principal, room_id: str, member: Principal) -> None:
        room = self.room(room_id)
        if not (actor.is_admin or actor.owner_user_id == room.owner_user_id or actor == member):
            raise RefusedError("only the room's owner, an admin or the member itself may remove a member",
                               "ask the room's owner")
        if self.is_member(member, room_id):
            self._append(f"rooms.room.{room_id}", [NewEvent("room.member_removed", {
                "room_id": room_id, "kind": member.kind, "member_id": member.id, "by": actor.sender})])

    def members(self, room_id: str) -> list[Principal]:
        """Members in joining order, read in one query (this runs on every post)."""
        m, a, u = rooms_members, rooms_agents, rooms_users
        rows = self._all(
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
        for r in self._all(query):
            if r.internal_only and actor.external:
                continue
            connected = actor.kind == "agent" and any(r.room_id in c.rooms for c in self.connections.connections(
                actor.id))
            out.append({"room_id": r.room_id, "name": r.name, "description": r.description,
                        "connected": connected, "archived": False})
        return out

    def _agent_settings(self, agent_ids: set[str]) -> dict[str, tuple[dict[str, Any] | None, dict[str, Any]]]:
        """(policy, profile) of several agents in one query."""
        if not agent_ids:
            return {}
        rows = self._all(select(rooms_agents.c.agent_id, rooms_agents.c.policy, rooms_agents.c.profile)
                         .where(rooms_agents.c.agent_id.in_(sorted(agent_ids))))
        return {r.agent_id: (_loads(r.policy), _loads(r.profile) or {}) for r in rows}

    def _agent_setting(self, agent_id: str) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        return self._agent_settings({agent_id})[agent_id]

    def status(self, agent_id: str, room_id: str) -> str:
        """Availability of an agent in a room, by its profile's connection model."""
        return self._status(agent_id, room_id, self.agent_record(agent_id)["integration_profile"] or {})

    def _status(self, agent_id: str, room_id: str, profile: dict[str, Any]) -> str:
        model = profile.get("connection_model", "always_on")
        conns = [c for c in self.connections.connections(agent_id)
                 if self.clock.now() - c.last_beat <= self.connections.ttl]
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
                role = self.connections.role_of(m.id)
                entry.update({"agent_type": None, "status": self.status(m.id, room_id),
                              "room_role": role[1] if role and role[0] == room_id else None,
                              "can_delegate": False, "can_accept": False, "alias": None})
            out.append(entry)
        return out

    def room_detail(self, actor: Principal, room_id: str) -> dict[str, Any]:
        room = self.require_read(actor, room_id)
        refs = self.list_references(actor, room_id)
        return {
            "id": room.id, "room_id": room.id, "name": room.name, "description": room.description,
            "instructions": room.instructions, "channel_type": room.channel_type,
            "internal_only": room.internal_only, "group_name": room.group_name,
            "owner_user_id": room.owner_user_id, "participants": self.participants(actor, room_id),
            "roles": self.list_roles(actor, room_id), **refs,
        }

    # -- messages ------------------------------------------------------------------------------

    def _resolve_thread(self, room_id: str, thread_id: str | None) -> str | None:
        if thread_id is None:
            return None
        if not isinstance(thread_id, str):
            raise UsageError("thread_id must be a message id", "pass the event_id of a message in this room")
        row = self._one(select(rooms_messages.c.thread_id).where(
            rooms_messages.c.message_id == thread_id, rooms_messages.c.room_id == room_id))
        if row is None:
            raise UsageError(f"unknown thread_id {thread_id!r} in this room",
                             "pass the event_id of a message in this room")
        return str(row.thread_id) if row.thread_id else thread_id

    def _sender(self, principal: Principal) -> Sender:
        return Sender(principal.kind, principal.id, principal.owner_user_id)

    def post_message(self, actor: Principal, room_id: str, body: str, thread_id: str | None = None,
                     target_names: Iterable[str] = (), target_roles: Iterable[str] = (),
                     attachments: list[dict[str, Any]] | None = None) -> Receipt:
        """Post `body` (prefixed with @targets when given). Returns the receipt: server-assigned
        message id, the exact stored text and per-target statuses."""
        if not isinstance(body, str) or not body.strip():
            raise UsageError("message body must be non-empty text", "send {\"body\": \"...\"}")
        if len(body.encode()) > MAX_BODY:
            raise UsageError(f"message body is over {MAX_BODY} bytes", "shorten it or attach a document")
        self._ensure_fresh()
        room: Room = self._cached(("room", room_id), lambda: self.room(room_id))
        if room.internal_only and actor.external:
            raise RefusedError(f"room {room_id} is internal only", "external identities cannot post there")
        members: list[Principal] = self._cached(("members", room_id), lambda: self.members(room_id))
        member = any(m.kind == actor.kind and m.id == actor.id for m in members)
        if not (member or actor.is_admin or (actor.kind == "user" and actor.id == room.owner_user_id)):
            raise RefusedError(f"{actor.kind} {actor.name} is not a member of room {room_id}",
                               "ask a member to invite you")
        root = self._resolve_thread(room_id, thread_id)
        agents = {m.name: m for m in members if m.kind == "agent"}
        users = {m.name for m in members if m.kind == "user"}
        names, role_list = list(target_names), list(target_roles)
        roles = {r["name"] for r in self._cached(("roles", room_id), lambda: self._roles(room_id))} \
            if (role_list or "@" in body) else set()
        for n in names:
            if n not in agents and n not in users:
                raise UsageError(f"target {n!r} is not a member of this room", "list_participants shows who is")
        for r in role_list:
            if r not in roles:
                raise UsageError(f"role {r!r} is not defined in this room", "list_roles shows the roles")
        prefix = " ".join(f"@{t}" for t in names + role_list)
        text = f"{prefix} {body}" if prefix else body

        mentioned: set[str] = set()
        for raw in MENTION.findall(text):
            for candidate in (raw, raw.rstrip("._-")):
                if candidate in agents:
                    mentioned.add(agents[candidate].id)
                elif candidate in roles:
                    mentioned.update(self.connections.role_holders(room_id, candidate))
        if room.channel_type == "direct":
            mentioned.update(a.id for a in agents.values())
        mentioned.discard(actor.id if actor.kind == "agent" else "")
        wanted = sorted(mentioned | {agents[n].id for n in names if n in agents})
        records: dict[str, tuple[dict[str, Any] | None, dict[str, Any]]] = {
            a: self._cached(("agent", a), partial(self._agent_setting, a)) for a in wanted}

        sender = self._sender(actor)
        message_id = "$" + new_id()
        now = self._now_ms()
        addressed: dict[str, bool] = {}
        refused: list[Principal] = []
        for agent in agents.values():
            if agent.id not in mentioned:
                continue
            policy = records[agent.id][0]
            target = Target(agent.id, agent.owner_user_id, policy)
            ok = permits(policy, target, sender, room_id, room.group_name)
            addressed[agent.id] = ok
            if not ok:
                refused.append(agent)
        events = [NewEvent("message.posted", {
            "room_id": room_id, "message_id": message_id, "sender_kind": actor.kind, "sender_id": actor.id,
            "sender": actor.sender, "sender_name": actor.display_name, "body": text, "thread_id": root,
            "timestamp": now, "attachments": attachments or [], "auto_reply": False,
            "addressed_agents": addressed})]
        for agent in refused:
            # The refusal appears in the thread, @-mentions the sender and never triggers refusals itself.
            events.append(NewEvent("message.posted", {
                "room_id": room_id, "message_id": "$" + new_id(), "sender_kind": "agent", "sender_id": agent.id,
                "sender": agent.sender, "sender_name": agent.display_name,
                "body": f"@{actor.name} {REFUSAL}", "thread_id": root or message_id, "timestamp": now,
                "attachments": [], "auto_reply": True,
                "addressed_agents": {actor.id: True} if actor.kind == "agent" else {}}))
        seqs = self._group_append(f"rooms.room.{room_id}", events)
        statuses: dict[str, str] = {}
        holders = {h for r in role_list for h in self.connections.role_holders(room_id, r)}
        for agent in agents.values():
            if agent.name in names or agent.id in holders:
                statuses[agent.name] = ("not_permitted" if addressed.get(agent.id) is False
                                        else self._status(agent.id, room_id, records[agent.id][1]))
        return Receipt(message_id=message_id, room_id=room_id, sender=actor.sender, body=text,
                       addressed=any(addressed.values()), thread_id=root, target_statuses=statuses,
                       sequence=seqs[0])

    def _message_dict(self, r: Any) -> dict[str, Any]:
        return {
            "sequence": int(r.seq), "message_id": r.message_id, "room_id": r.room_id, "sender": r.sender,
            "sender_kind": r.sender_kind, "sender_id": r.sender_id, "sender_name": r.sender_name,
            "body": r.body, "thread_id": r.thread_id, "timestamp": int(r.timestamp),
            "auto_reply": bool(r.auto_reply), "attachments": json.loads(r.attachments),
        }

    def read_messages(self, actor: Principal, room_id: str, after: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        """Messages of a room in order, after sequence `after` (membership checked)."""
        self.require_read(actor, room_id)
        limit = max(1, min(int(limit), 1000))
        rows = self._all(select(rooms_messages).where(rooms_messages.c.room_id == room_id,
                                                      rooms_messages.c.seq > after)
                         .order_by(rooms_messages.c.seq).limit(limit))
        return [self._message_dict(r) for r in rows]

    def message(self, actor: Principal, message_id: str) -> dict[str, Any]:
        row = self._one(select(rooms_messages).where(rooms_messages.c.message_id == message_id))
        if row is None:
            raise NotFoundError(f"no message {message_id}", "use an event_id returned by post_message")
        self.require_read(actor, row.room_id)
        return self._message_dict(row)

    def read_context(self, actor: Principal, room_id: str, limit: int = 50, since: str | None = None,
                     before: str | None = None) -> dict[str, Any]:
        """Recent messages grouped into threads (Switch's read_context shape)."""
        self.require_read(actor, room_id)
        if not isinstance(limit, int) or limit < 1:
            raise UsageError("limit must be a positive integer", "pass limit=50")
        query = select(rooms_messages).where(rooms_messages.c.room_id == room_id)
        for value, op in ((since, "since"), (before, "before")):
            if value is not None:
                try:
                    ms = int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
                except (ValueError, AttributeError) as exc:
                    raise UsageError(f"{op} must be an ISO-8601 time", "e.g. 2026-01-01T00:00:00Z") from exc
                query = query.where(rooms_messages.c.timestamp >= ms if op == "since"
                                    else rooms_messages.c.timestamp < ms)
        rows = self._all(query.order_by(rooms_messages.c.seq.desc()).limit(limit + 1))
        truncated = len(rows) > limit
        rows = list(reversed(rows[:limit]))
        threads: dict[str, dict[str, Any]] = {}
        order: list[str] = []
        for r in rows:
            entry = {"id": r.message_id, "kind": "message", "sender": r.sender, "sender_name": r.sender_name,
                     "body": r.body, "timestamp": int(r.timestamp), "attachments": json.loads(r.attachments)}
            root = r.thread_id or r.message_id
            if root not in threads:
                threads[root] = {"root": entry if root == r.message_id else {"id": root}, "replies": []}
                order.append(root)
            elif root == r.message_id:
                threads[root]["root"] = entry
            if root != r.message_id:
                threads[root]["replies"].append(entry)
        return {"threads": [threads[k] for k in order], "truncated": truncated,
                "oldest_timestamp": int(rows[0].timestamp) if rows else None}

    # -- documents -----------------------------------------------------------------------------

    def create_document(self, actor: Principal, room_id: str, name: str, content: str, description: str = "",
                        instructions: str = "") -> str:
        """A room document; its creator is its only writer."""
        self.require_read(actor, room_id)
        for field_name, value in (("name", name), ("content", content), ("description", description),
                                  ("instructions", instructions)):
            if not isinstance(value, str):
                raise UsageError(f"document {field_name} must be text", "send a string")
        if not name.strip():
            raise UsageError("document name must not be empty", "pass a name")
        if len(content.encode()) > MAX_DOCUMENT:
            raise UsageError("document content is over 1 MiB", "split it into several documents")
        taken = self._one(select(rooms_documents.c.document_id).where(
            rooms_documents.c.room_id == room_id, rooms_documents.c.name == name))
        if taken is not None:
            raise UsageError(f"a document named {name!r} already exists in this room", "pick another name")
        document_id = new_id()
        self._append(f"rooms.doc.{document_id}", [NewEvent("document.created", {
            "document_id": document_id, "room_id": room_id, "name": name, "description": description,
            "instructions": instructions, "content": content, "by_kind": actor.kind, "by_id": actor.id})],
            expected=0)
        return document_id

    def _document_row(self, document_id: str) -> Any:
        row = self._one(select(rooms_documents).where(rooms_documents.c.document_id == document_id))
        if row is None:
            raise NotFoundError(f"no document {document_id}", "list_references shows the room's documents")
        return row

    def update_document(self, actor: Principal, document_id: str, content: str | None = None,
                        name: str | None = None, description: str | None = None,
                        instructions: str | None = None) -> int:
        """Only the creating identity may update; returns the new version."""
        row = self._document_row(document_id)
        self.require_read(actor, row.room_id)
        if (row.created_by_kind, row.created_by_id) != (actor.kind, actor.id):
            raise UsageError(f"{actor.name} did not create document {row.name!r} ({document_id})",
                             "only its creator may change it; create your own document instead")
        if content is not None and (not isinstance(content, str) or len(content.encode()) > MAX_DOCUMENT):
            raise UsageError("document content must be text of at most 1 MiB", "send a smaller string")
        for value in (name, description, instructions):
            if value is not None and not isinstance(value, str):
                raise UsageError("document fields must be text", "send strings")
        version = int(row.version) + 1
        self._append(f"rooms.doc.{document_id}", [NewEvent("document.updated", {
            "document_id": document_id, "room_id": row.room_id, "content": content, "name": name,
            "description": description, "instructions": instructions, "version": version,
            "by_kind": actor.kind, "by_id": actor.id})])
        return int(self._document_row(document_id).version)

    def delete_document(self, actor: Principal, document_id: str) -> None:
        row = self._document_row(document_id)
        room = self.require_read(actor, row.room_id)
        creator = (row.created_by_kind, row.created_by_id) == (actor.kind, actor.id)
        human_owner = actor.kind == "user" and (actor.is_admin or actor.id == room.owner_user_id)
        if not (creator or human_owner):
            raise UsageError(f"{actor.name} did not create document {row.name!r}", "only its creator may delete it")
        self._append(f"rooms.doc.{document_id}", [NewEvent("document.deleted", {
            "document_id": document_id, "room_id": row.room_id, "by": actor.sender})])

    def _doc_dict(self, r: Any, content: bool) -> dict[str, Any]:
        d = {"id": r.document_id, "name": r.name, "description": r.description, "instructions": r.instructions,
             "version": int(r.version), "created_by": f"{r.created_by_kind}:{r.created_by_id}",
             "updated_at": r.updated_at}
        if content:
            d["content"] = r.content
        return d

    def load_documents(self, actor: Principal, ids: Iterable[str]) -> list[dict[str, Any]]:
        out = []
        for document_id in ids:
            row = self._document_row(document_id)
            self.require_read(actor, row.room_id)
            out.append(self._doc_dict(row, True))
        return out

    def documents(self, actor: Principal, room_id: str) -> list[dict[str, Any]]:
        self.require_read(actor, room_id)
        rows = self._all(select(rooms_documents).where(rooms_documents.c.room_id == room_id)
                         .order_by(rooms_documents.c.name))
        return [self._doc_dict(r, False) for r in rows]

    # -- roles ---------------------------------------------------------------------------------

    def _role_event(self, room_id: str, name: Any, instructions: Any, exclusive: Any) -> NewEvent:
        check_name("role", name)
        if not isinstance(instructions, str) or not isinstance(exclusive, bool):
            raise UsageError("a role needs text instructions and a true/false exclusive flag", "fix the role")
        return NewEvent("role.defined", {"room_id": room_id, "name": name, "instructions": instructions,
                                         "exclusive": exclusive})

    def define_role(self, actor: Principal, room_id: str, name: str, instructions: str = "",
                    exclusive: bool = False) -> None:
        room = self.require_read(actor, room_id)
        self._require_manage(actor, room)
        self._append(f"rooms.room.{room_id}", [self._role_event(room_id, name, instructions, exclusive)])

    def _roles(self, room_id: str) -> list[dict[str, Any]]:
        rows = self._all(select(rooms_roles).where(rooms_roles.c.room_id == room_id).order_by(rooms_roles.c.name))
        return [{"name": r.name, "instructions": r.instructions, "exclusive": bool(r.exclusive)} for r in rows]

    def list_roles(self, actor: Principal, room_id: str) -> list[dict[str, Any]]:
        self.require_read(actor, room_id)
        out = []
        for role in self._roles(room_id):
            holders = [self.agent(a) for a in self.connections.role_holders(room_id, role["name"])]
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
        self.require_read(actor, room_id)
        if actor.kind != "agent" or connection.agent_id != actor.id:
            raise RefusedError("only an agent can assume a role, on its own connection", "use your connection")
        found = [r for r in self._roles(room_id) if r["name"] == role]
        if not found:
            raise UsageError(f"role {role!r} is not defined in this room", "list_roles shows the roles")
        self.connections.set_role(connection, room_id, role, found[0]["exclusive"])
        self._append(f"rooms.room.{room_id}", [NewEvent("role.assumed", {
            "room_id": room_id, "role": role, "agent_id": actor.id, "connection_id": connection.id})])
        return {"role": role, "instructions": found[0]["instructions"]}

    def release_role(self, actor: Principal) -> dict[str, Any]:
        released = self.connections.release_role(actor.id)
        if released is not None:
            self._append(f"rooms.room.{released[0]}", [NewEvent("role.released", {
                "room_id": released[0], "role": released[1], "agent_id": actor.id})])
        return {"released": released[1] if released else None}

    # -- references ----------------------------------------------------------------------------

    def create_reference(self, actor: Principal, type: str, name: str, value: dict[str, Any],
                         description: str = "", instructions: str = "") -> str:
        if type not in REFERENCE_TYPES:
            raise UsageError(f"unknown reference type {type!r}", f"use one of {', '.join(REFERENCE_TYPES)}")
        urls = value.get("urls") if isinstance(value, dict) else None
        if not isinstance(urls, list) or not urls or not all(
                isinstance(u, str) and u.startswith(("https://", "http://")) for u in urls):
            raise UsageError("a reference value must be {\"urls\": [\"https://...\", ...]} with at least one URL",
                             "pass value={\"urls\": [\"https://example.org/doc\"]}")
        reference_id = new_id()
        self._append(f"rooms.ref.{reference_id}", [NewEvent("reference.created", {
            "reference_id": reference_id, "type": type, "name": name, "description": description,
            "instructions": instructions, "value": {"urls": urls}, "owner_user_id": actor.owner_user_id})],
            expected=0)
        return reference_id

    def attach_reference(self, actor: Principal, room_id: str, reference_id: str) -> None:
        room = self.require_read(actor, room_id)
        self._require_manage(actor, room)
        row = self._one(select(rooms_references).where(rooms_references.c.reference_id == reference_id))
        if row is None:
            raise NotFoundError(f"no reference {reference_id}", "create it with create_reference")
        if row.owner_user_id != actor.owner_user_id and not actor.is_admin:
            raise RefusedError("that reference belongs to another owner", "attach your own references")
        self._append(f"rooms.room.{room_id}", [NewEvent("reference.attached", {
            "room_id": room_id, "reference_id": reference_id, "by": actor.sender})])

    def list_references(self, actor: Principal, room_id: str) -> dict[str, Any]:
        self.require_read(actor, room_id)
        rows = self._all(select(rooms_references).join(
            rooms_room_references, rooms_room_references.c.reference_id == rooms_references.c.reference_id)
            .where(rooms_room_references.c.room_id == room_id))
        refs = [{"id": r.reference_id, "type": r.type, "name": r.name, "description": r.description,
                 "instructions": r.instructions, "value": json.loads(r.value)} for r in rows]
        return {"reference_types": list(REFERENCE_TYPES), "references": refs,
                "documents": self.documents(actor, room_id), "packages": [], "linked_rooms": []}

    # -- approval cards ------------------------------------------------------------------------

    def _approval(self, request_id: str) -> Approval:
        row = self._one(select(rooms_approvals).where(rooms_approvals.c.request_id == request_id))
        if row is None:
            raise NotFoundError(f"no approval request {request_id!r}", "use the request_id the agent created")
        card = json.loads(row.card)
        return Approval(
            request_id=row.request_id, room_id=row.room_id, requester_agent_id=row.requester_agent_id,
            title=card["title"], options=tuple(ApprovalOption(**o) for o in card["options"]),
            responders=tuple(card["responders"]), expires_at=float(row.expires_at), state=row.state,
            outcome=_loads(row.outcome),
        )

    def request_approval(self, actor: Principal, room_id: str, request_id: str, title: str,
                         options: list[dict[str, Any]], expires_at: float, responders: list[str]) -> Approval:
        """Post an approval card (idempotent by request_id: a retry returns the same card)."""
        if actor.kind != "agent":
            raise RefusedError("approval cards are requested by agents", "use an agent's key")
        if not isinstance(request_id, str) or not 1 <= len(request_id) <= 150:
            raise UsageError("request_id must be 1-150 characters", "use a stable id per decision")
        existing = self._one(select(rooms_approvals.c.request_id).where(rooms_approvals.c.request_id == request_id))
        if existing is not None:
            card = self._approval(request_id)
            if card.requester_agent_id != actor.id or card.room_id != room_id:
                raise ConflictError(f"request_id {request_id!r} is already used by another card",
                                    "use a fresh request_id")
            return card
        self.require_read(actor, room_id)
        if not isinstance(title, str) or not title.strip():
            raise UsageError("an approval card needs a title", "pass title")
        if not isinstance(options, list) or not options:
            raise UsageError("an approval card needs options", "pass [{id, label, decision: accept|decline}]")
        clean_options = []
        for o in options:
            if not isinstance(o, dict) or not isinstance(o.get("id"), str) or not isinstance(o.get("label"), str) \
                    or o.get("decision") not in ("accept", "decline"):
                raise UsageError(f"bad approval option {o!r}", "each option is {id, label, decision: accept|decline}")
            clean_options.append({"id": o["id"], "label": o["label"], "decision": o["decision"]})
        if len({o["id"] for o in clean_options}) != len(clean_options):
            raise UsageError("approval option ids must be unique", "rename the duplicates")
        if not isinstance(expires_at, int | float) or expires_at <= self.clock.now():
            raise UsageError("expires_at must be a future time in epoch seconds", "pass now + a few minutes")
        if not isinstance(responders, list) or not responders:
            raise UsageError("name at least one responder (user name or id)", "pass responders=[\"alice\"]")
        responder_ids = []
        for r in responders:
            try:
                responder_ids.append(self.user(r).id)
            except NotFoundError:
                responder_ids.append(self.user_by_name(r).id)
        payload = {"request_id": request_id, "room_id": room_id, "requester_agent_id": actor.id,
                   "requester_name": actor.name, "title": title, "options": clean_options,
                   "responders": responder_ids, "expires_at": float(expires_at)}
        try:
            self._append(f"rooms.approval.{request_id}", [NewEvent("approval.requested", payload)], expected=0)
        except ConflictError:
            return self.request_approval(actor, room_id, request_id, title, options, expires_at, responders)
        return self._approval(request_id)

    def approval(self, actor: Principal, request_id: str) -> Approval:
        card = self._approval(request_id)
        self.require_read(actor, card.room_id)
        return card

    def pending_approvals(self, actor: Principal) -> list[Approval]:
        rows = self._all(select(rooms_approvals.c.request_id).where(rooms_approvals.c.state == "pending"))
        cards = [self._approval(r.request_id) for r in rows]
        return [c for c in cards if actor.id in c.responders or actor.is_admin]

    def answer_approval(self, actor: Principal, request_id: str, option_id: str) -> dict[str, Any]:
        """A human answers. The first allowed answer decides; a wrong responder's answer is
        discarded and recorded; an answer after expiry yields the `expired` outcome."""
        if actor.kind != "user":
            raise RefusedError("only people answer approval cards", "answer with a user token")
        card = self._approval(request_id)
        if not isinstance(option_id, str) or option_id not in {o.id for o in card.options}:
            raise UsageError(f"unknown option {option_id!r}",
                             f"choose one of {', '.join(o.id for o in card.options)}")
        outcome: dict[str, Any] = {}

        def decide(history: list[Any]) -> tuple[list[NewEvent], list[Any]]:
            done = [e for e in history if e.type in ("approval.answered", "approval.expired")]
            if done:
                outcome.clear()
                outcome.update(done[0].payload)
                return [], []
            base = {"request_id": request_id, "room_id": card.room_id,
                    "requester_agent_id": card.requester_agent_id}
            if self.clock.now() >= card.expires_at:
                outcome.clear()
                outcome.update({**base, "outcome": "expired", "option_id": None, "responder": None,
                                "responder_name": None, "allowed": None})
                return [NewEvent("approval.expired", dict(outcome))], []
            allowed = actor.id in card.responders
            if not allowed:
                outcome.clear()
                outcome.update({**base, "outcome": "discarded", "option_id": option_id,
                                "responder": actor.sender, "responder_name": actor.display_name,
                                "allowed": False})
                return [NewEvent("approval.discarded", dict(outcome))], []
            option = next(o for o in card.options if o.id == option_id)
            outcome.clear()
            outcome.update({**base, "outcome": "accepted" if option.decision == "accept" else "declined",
                            "option_id": option_id, "decision": option.decision, "responder": actor.sender,
                            "responder_name": actor.display_name, "allowed": True})
            return [NewEvent("approval.answered", dict(outcome))], []

        # update() needs events; an already-decided card appends nothing, so handle that first.
        history = self.ledger.read(f"rooms.approval.{request_id}")
        events, _ = decide(history)
        if events:
            try:
                self.ledger.append(f"rooms.approval.{request_id}", len(history), events)
            except ConflictError:
                return self.answer_approval(actor, request_id, option_id)
            self.projector.catch_up()
        return dict(outcome)

    def expire_approvals(self) -> list[str]:
        """Record the `expired` outcome of every pending card past its time."""
        rows = self._all(select(rooms_approvals.c.request_id, rooms_approvals.c.room_id,
                                rooms_approvals.c.requester_agent_id).where(
            rooms_approvals.c.state == "pending", rooms_approvals.c.expires_at <= self.clock.now()))
        expired = []
        for r in rows:
            history = self.ledger.read(f"rooms.approval.{r.request_id}")
            if any(e.type in ("approval.answered", "approval.expired") for e in history):
                continue
            try:
                self.ledger.append(f"rooms.approval.{r.request_id}", len(history), [NewEvent("approval.expired", {
                    "request_id": r.request_id, "room_id": r.room_id, "requester_agent_id": r.requester_agent_id,
                    "outcome": "expired", "option_id": None, "responder": None, "responder_name": None,
                    "allowed": None})])
                expired.append(r.request_id)
            except ConflictError:
                continue
        if expired:
            self.projector.catch_up()
        return expired

    # -- streams -------------------------------------------------------------------------------

    def head(self) -> int:
        """The newest sequence number (a global, durable position; survives restarts)."""
        return self.ledger.head()[0]

    def agent_events(self, agent_id: str, after: int, limit: int = 200,
                     addressed_only: bool = False) -> list[dict[str, Any]]:
        """The agent's durable stream after `after`: envelopes with `sequence`, in order (from
        memory when recent, else from the table)."""
        cached = self.recent_events(agent_id, after, limit, addressed_only)
        if cached is not None:
            return cached
        query = (select(rooms_deliveries.c.seq, rooms_deliveries.c.envelope)
                 .where(rooms_deliveries.c.agent_id == agent_id, rooms_deliveries.c.seq > after)
                 .order_by(rooms_deliveries.c.seq).limit(limit))
        if addressed_only:
            query = query.where(rooms_deliveries.c.addressed.is_(True))
        return [_envelope(int(r.seq), r.envelope) for r in self._all(query)]

    def recent_events(self, agent_id: str, after: int, limit: int = 200,
                      addressed_only: bool = False) -> list[dict[str, Any]] | None:
        """Like agent_events, from memory only, without I/O; None when memory does not cover `after`."""
        cached = self.recent.read(agent_id, after, limit, addressed_only)
        if cached is None:
            return None
        return [_envelope(d.seq, d.envelope) for d in cached]

    def last_agent_seq(self, agent_id: str) -> int:
        value = self._one(select(func.max(rooms_deliveries.c.seq)).where(rooms_deliveries.c.agent_id == agent_id))
        return int(value[0] or 0) if value is not None else 0

    async def subscribe(self, agent_id: str, after: int = 0, poll: float = 1.0) -> AsyncIterator[dict[str, Any]]:
        """Async iterator over the agent's events after `after` (in-process consumers)."""
        key = f"agent:{agent_id}"
        cursor = after
        while True:
            seen = self.notifier.version(key)
            batch = self.agent_events(agent_id, cursor)
            for env in batch:
                cursor = env["sequence"]
                yield env
            if not batch:
                await self.notifier.wait(key, seen, poll)

    async def watch_room(self, actor: Principal, room_id: str, after: int = 0,
                         poll: float = 1.0) -> AsyncIterator[dict[str, Any]]:
        """Async iterator over a room's messages after sequence `after` (for human-side workflows)."""
        key = f"room:{room_id}"
        cursor = after
        while True:
            seen = self.notifier.version(key)
            batch = self.read_messages(actor, room_id, after=cursor)
            for msg in batch:
                cursor = msg["sequence"]
                yield msg
            if not batch:
                await self.notifier.wait(key, seen, poll)

