"""Addressing policies: who may address an agent (Switch revision 1 semantics).

A policy is `{"rules": [rule, ...]}` or None. No policy or no rules: open to any room participant.
Any rule present: deny unless a rule matches. A sender that cannot be resolved is denied.

A rule has the dimensions `rooms`, `room_groups`, `users`, `agents` (each `"*"` or a list of ids;
a missing dimension means `"*"`, an empty list matches nothing) and the flags `owner` (the agent's
owner user) and `owner_agents` (agents with the same owner). A rule matches when the room and its
group match and the sender matches its kind's list or flag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from signoff.kernel.errors import UsageError

OPEN: dict[str, Any] | None = None
OWNER_ONLY: dict[str, Any] = {
    "rules": [{"rooms": "*", "room_groups": "*", "users": [], "agents": [], "owner": True, "owner_agents": False}]
}
OWNER_AND_OWNER_AGENTS: dict[str, Any] = {
    "rules": [{"rooms": "*", "room_groups": "*", "users": [], "agents": [], "owner": True, "owner_agents": True}]
}

_DIMENSIONS = ("rooms", "room_groups", "users", "agents")
_FLAGS = ("owner", "owner_agents")


@dataclass(frozen=True)
class Sender:
    """The authenticated sender as the server resolved it; kind is "user", "agent" or "unknown"."""

    kind: str
    id: str | None
    owner_user_id: str | None = None  # for agents


@dataclass(frozen=True)
class Target:
    agent_id: str
    owner_user_id: str
    policy: dict[str, Any] | None


def validate_policy(policy: Any) -> dict[str, Any] | None:
    """Check a policy's shape; returns it normalised (missing dimensions filled with "*")."""
    if policy is None:
        return None
    if not isinstance(policy, dict) or set(policy) - {"rules"} or not isinstance(policy.get("rules", []), list):
        raise UsageError(
            "an addressing policy must be {\"rules\": [...]} or null",
            "send {\"policy\": {\"rules\": [{\"rooms\": \"*\", \"owner\": true}]}} or {\"policy\": null} (open)",
        )
    rules = []
    for index, rule in enumerate(policy.get("rules", [])):
        if not isinstance(rule, dict):
            raise UsageError(f"rule {index} is not an object", "each rule is an object of dimensions and flags")
        unknown = set(rule) - set(_DIMENSIONS) - set(_FLAGS)
        if unknown:
            raise UsageError(
                f"rule {index} has unknown field(s) {sorted(unknown)}",
                f"use only {', '.join(_DIMENSIONS + _FLAGS)}",
            )
        clean: dict[str, Any] = {}
        for dim in _DIMENSIONS:
            value = rule.get(dim, "*")
            if value != "*" and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                raise UsageError(f"rule {index}: {dim} must be \"*\" or a list of ids", "fix the rule")
            clean[dim] = value
        for flag in _FLAGS:
            value = rule.get(flag, False)
            if not isinstance(value, bool):
                raise UsageError(f"rule {index}: {flag} must be true or false", "fix the rule")
            clean[flag] = value
        rules.append(clean)
    return {"rules": rules}


def _dim_matches(value: Any, item: str | None) -> bool:
    if value == "*":
        return True
    return item is not None and item in value


def permits(policy: dict[str, Any] | None, target: Target, sender: Sender, room_id: str,
            room_group: str | None) -> bool:
    """True when `sender` may address `target` in the room (fail closed on unknown senders)."""
    rules = (policy or {}).get("rules") or []
    if not rules:
        return sender.kind in ("user", "agent")
    if sender.kind not in ("user", "agent") or not sender.id:
        return False
    for rule in rules:
        if not _dim_matches(rule.get("rooms", "*"), room_id):
            continue
        groups = rule.get("room_groups", "*")
        # An ungrouped room matches only "*".
        if groups != "*" and (room_group is None or room_group not in groups):
            continue
        if sender.kind == "user":
            if _dim_matches(rule.get("users", "*"), sender.id):
                return True
            if rule.get("owner") and sender.id == target.owner_user_id:
                return True
        else:
            if _dim_matches(rule.get("agents", "*"), sender.id):
                return True
            if rule.get("owner_agents") and sender.owner_user_id == target.owner_user_id:
                return True
    return False
