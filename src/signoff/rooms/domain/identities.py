"""Identities: users, agents and their addressing policies (tokens live in `tokens`)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from sqlalchemy import select

from signoff.kernel.errors import ConflictError, NotFoundError, RefusedError, UsageError
from signoff.kernel.ids import new_id
from signoff.ledger import NewEvent
from signoff.rooms.domain import tokens
from signoff.rooms.domain.model import Principal, check_distinct, check_name, check_text
from signoff.rooms.domain.policy import OWNER_ONLY, validate_policy
from signoff.rooms.storage.store import RoomStore, loads
from signoff.rooms.storage.tables import rooms_agents, rooms_groups, rooms_users

DEFAULT_PROFILE: dict[str, Any] = {
    "connection_model": "always_on",
    "message_exchange": True,
    "pre_invocation_mediation": [],
    "post_invocation_mediation": [],
    "event_reporting": [],
    "task_protocol": {"can_delegate": False, "can_accept": False},
}


class Identities:
    def __init__(self, store: RoomStore) -> None:
        self.store = store

    def create_user(self, name: str, display_name: str | None = None, admin: bool = False,
                    external: bool = False) -> tuple[Principal, str]:
        """A user and its token (shown once; only its digest is stored)."""
        check_name("user", name)
        if display_name is not None:
            check_text("display name", display_name, allow_newlines=False)
            if not display_name.strip() or len(display_name) > 200:
                raise UsageError("display name must be 1-200 characters", "shorten it")
        check_distinct("user", name, self._names())
        user_id = new_id()
        token = tokens.mint("user")
        payload = {
            "user_id": user_id, "name": name, "display_name": display_name or name, "is_admin": admin,
            "external": external, "token_hash": tokens.digest(token),
        }
        try:
            self.store.append(f"rooms.user.{name}", [NewEvent("user.created", payload)], expected=0)
        except ConflictError as exc:
            raise ConflictError(f"user {name!r} already exists", "pick another name") from exc
        return self.user(user_id), token

    def _names(self) -> list[tuple[str, str]]:
        """Every user and agent name: people read them side by side in a room."""
        users = [("user", r.name) for r in self.store.all(select(rooms_users.c.name))]
        return users + [("agent", r.name) for r in self.store.all(select(rooms_agents.c.name))]

    def user(self, user_id: str) -> Principal:
        row = self.store.one(select(rooms_users).where(rooms_users.c.user_id == user_id))
        if row is None:
            raise NotFoundError(f"no user {user_id}", "list users with `signoff rooms user list`")
        return Principal("user", row.user_id, row.name, row.display_name, row.user_id, bool(row.is_admin),
                         bool(row.external))

    def user_by_name(self, name: str) -> Principal:
        row = self.store.one(select(rooms_users.c.user_id).where(rooms_users.c.name == name))
        if row is None:
            raise NotFoundError(f"no user named {name!r}", "check the name or add the user")
        return self.user(row.user_id)

    def users(self) -> list[Principal]:
        rows = self.store.all(select(rooms_users.c.user_id).order_by(rooms_users.c.name))
        return [self.user(r.user_id) for r in rows]

    def agent(self, agent_id: str) -> Principal:
        row = self.store.one(select(rooms_agents).where(rooms_agents.c.agent_id == agent_id))
        if row is None:
            raise NotFoundError(f"no agent {agent_id}", "register the agent first (POST /agents)")
        return Principal("agent", row.agent_id, row.name, row.name, row.owner_user_id)

    def agent_by_name(self, name: str) -> Principal:
        row = self.store.one(select(rooms_agents.c.agent_id).where(rooms_agents.c.name == name))
        if row is None:
            raise NotFoundError(f"no agent named {name!r}", "check the name or register the agent")
        return self.agent(row.agent_id)

    def agent_record(self, agent_id: str) -> dict[str, Any]:
        row = self.store.one(select(rooms_agents).where(rooms_agents.c.agent_id == agent_id))
        if row is None:
            raise NotFoundError(f"no agent {agent_id}", "register the agent first")
        return {
            "id": row.agent_id, "name": row.name, "owner_user_id": row.owner_user_id,
            "description": row.description, "integration_profile": loads(row.profile),
            "addressing_policy": loads(row.policy),
        }

    def create_agent(self, owner: Principal | str, name: str, description: str = "",
                     policy: dict[str, Any] | None = OWNER_ONLY, profile: dict[str, Any] | None = None,
                     overwrite: bool = False) -> tuple[Principal, str]:
        """An agent owned by a user, and its API key (shown once). `policy` defaults to owner-only;
        pass `policy.OPEN` (None) for an open agent or your own rules."""
        owner_user = owner if isinstance(owner, Principal) else self.user(owner)
        if owner_user.kind != "user":
            raise RefusedError("an agent's owner must be a user", "pass a user")
        check_name("agent", name)
        check_text("description", description)
        check_distinct("agent", name, self._names())
        policy = self._valid_policy(policy)
        profile = dict(profile or DEFAULT_PROFILE)
        key = tokens.mint("agent")
        existing = self.store.one(select(rooms_agents).where(rooms_agents.c.name == name))
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
            self.store.append(case_id, [NewEvent("agent.registered", payload)], expected=expected)
        except ConflictError as exc:
            raise ConflictError(f"agent {name!r} already exists", "pass overwrite=true to rotate its key") from exc
        return self.agent(agent_id), key

    def set_policy(self, actor: Principal, agent_id: str, policy: Any) -> dict[str, Any] | None:
        """Only the agent's owner or an admin, never an agent key."""
        target = self.agent(agent_id)
        if actor.kind != "user" or not (actor.is_admin or actor.id == target.owner_user_id):
            raise RefusedError("only the agent's owner or an admin may change its addressing policy",
                               "use the owner's user token (agent keys cannot change policies)")
        clean = self._valid_policy(policy)
        self.store.append(f"rooms.agent.{target.name}", [NewEvent("agent.policy_set", {
            "agent_id": agent_id, "policy": clean, "by": actor.sender})])
        return clean

    def _valid_policy(self, policy: Any) -> dict[str, Any] | None:
        """A well-formed policy whose `room_groups` name existing groups by id: a group's name is
        chosen by whoever created it, so a policy that matched names could be spoofed."""
        clean = validate_policy(policy)
        wanted = sorted({g for rule in (clean or {}).get("rules", []) if rule["room_groups"] != "*"
                         for g in rule["room_groups"]})
        if wanted:
            rows = self.store.all(select(rooms_groups.c.group_id, rooms_groups.c.name)
                                  .where(rooms_groups.c.group_id.in_(wanted) | rooms_groups.c.name.in_(wanted)))
            ids = {r.group_id for r in rows}
            for ref in wanted:
                if ref not in ids:
                    named = next((r.group_id for r in rows if r.name == ref), None)
                    raise UsageError(f"room_groups lists {ref!r}, which is not a room group id",
                                     f"use the group's id ({named})" if named else
                                     "create the group (create_room_group) and use its id")
        return clean

    def policy(self, agent_id: str) -> dict[str, Any] | None:
        value: dict[str, Any] | None = self.agent_record(agent_id)["addressing_policy"]
        return value

    def agent_settings(self, agent_ids: set[str]) -> dict[str, tuple[dict[str, Any] | None, dict[str, Any]]]:
        """(policy, profile) of several agents in one query."""
        if not agent_ids:
            return {}
        rows = self.store.all(select(rooms_agents.c.agent_id, rooms_agents.c.policy, rooms_agents.c.profile)
                              .where(rooms_agents.c.agent_id.in_(sorted(agent_ids))))
        return {r.agent_id: (loads(r.policy), loads(r.profile) or {}) for r in rows}

    def agent_setting(self, agent_id: str) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        return self.agent_settings({agent_id})[agent_id]

    def policies(self, agent_ids: Iterable[str]) -> dict[str, dict[str, Any] | None]:
        """The addressing policies of existing agents, from the store's cache (made exact first)."""
        self.store.ensure_fresh()
        return {a: self.cached_setting(a)[0] for a in agent_ids}

    def cached_setting(self, agent_id: str) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """(policy, profile) from the store's cache (exact once `store.ensure_fresh()` has run)."""
        setting: tuple[dict[str, Any] | None, dict[str, Any]] = self.store.cached(
            ("agent", agent_id), partial(self.agent_setting, agent_id))
        return setting
