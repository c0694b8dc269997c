"""Value objects of the rooms domain."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from signoff.kernel.errors import UsageError

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
CHANNEL_TYPES = ("channel_public", "channel_private", "direct")
MAX_BODY = 64 * 1024
MAX_DOCUMENT = 1024 * 1024


def check_name(kind: str, name: Any) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name) or len(name) > 100:
        raise UsageError(
            f"bad {kind} name {name!r}",
            "names are 1-100 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit",
        )
    return name


@dataclass(frozen=True)
class Principal:
    """An authenticated identity. Agents act with their owner's permissions."""

    kind: Literal["user", "agent"]
    id: str
    name: str
    display_name: str
    owner_user_id: str  # for a user: itself
    is_admin: bool = False
    external: bool = False

    @property
    def sender(self) -> str:
        """The id written as `sender` in events (what receipts compare)."""
        return f"{self.kind}:{self.id}"


@dataclass(frozen=True)
class Room:
    id: str
    name: str
    description: str
    instructions: str
    channel_type: str
    internal_only: bool
    owner_user_id: str
    group_name: str | None


@dataclass(frozen=True)
class ApprovalOption:
    id: str
    label: str
    decision: Literal["accept", "decline"]


@dataclass(frozen=True)
class Approval:
    request_id: str
    room_id: str
    requester_agent_id: str
    title: str
    options: tuple[ApprovalOption, ...]
    responders: tuple[str, ...]  # user ids
    expires_at: float
    state: str  # pending | accepted | declined | expired
    outcome: dict[str, Any] | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "request_id": self.request_id,
            "room_id": self.room_id,
            "requester_agent_id": self.requester_agent_id,
            "title": self.title,
            "options": [{"id": o.id, "label": o.label, "decision": o.decision} for o in self.options],
            "responders": list(self.responders),
            "expires_at": self.expires_at,
            "state": self.state,
            "outcome": self.outcome,
        }
