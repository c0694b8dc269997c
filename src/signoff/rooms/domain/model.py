"""Value objects of the rooms domain, and the typed events of the rooms cases on the aggregate
contract (`signoff.ledger.aggregate`; so far rooms, documents, room groups and approval cards: the
other rooms families are listed as untyped in tests/integration/ledger/test_old_ledgers.py)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from signoff.kernel.canonical import canonical_digest
from signoff.kernel.errors import UsageError
from signoff.ledger.aggregate import EventBody, case_type

NAME_RE = re.compile(r"[a-z0-9][a-z0-9._-]*")  # always fullmatch: `$` would let "name\n" through
CHANNEL_TYPES = ("channel_public", "channel_private", "direct")
MAX_BODY = 64 * 1024
MAX_DOCUMENT = 1024 * 1024
MAX_POSITION = 2**63 - 1  # sequence numbers are signed 64-bit in the database
# Characters that read alike once lowercased, mapped to one of them (digits that pass for letters,
# letter pairs that pass for one letter, and the separators).
_CONFUSABLE = (("rn", "m"), ("vv", "w"), ("cl", "d"), ("0", "o"), ("1", "l"), ("i", "l"), ("|", "l"),
               ("5", "s"), ("_", ""), ("-", ""), (".", ""))


def check_name(kind: str, name: Any) -> str:
    if not isinstance(name, str) or len(name) > 100 or not NAME_RE.fullmatch(name):
        raise UsageError(
            f"bad {kind} name {name!r}",
            "names are 1-100 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit",
        )
    return name


def skeleton(name: str) -> str:
    """What a name looks like to a reader: NFKC-folded, case-folded, look-alikes merged."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    for seen, same in _CONFUSABLE:
        folded = folded.replace(seen, same)
    return folded


def check_distinct(kind: str, name: str, existing: Iterable[tuple[str, str]]) -> None:
    """Refuse a new name that a reader could take for an existing (kind, name) ("victim" and
    "vict1m", or an agent named like a user). A 400, not a 409: over the agent protocol a 409
    means "reconnect"."""
    wanted = skeleton(name)
    for other_kind, other in existing:
        if (other_kind, other) != (kind, name) and skeleton(other) == wanted:
            raise UsageError(f"{kind} name {name!r} looks like the existing {other_kind} {other!r}",
                             "pick a name that reads differently")


def check_text(field_name: str, value: Any, max_bytes: int | None = None, allow_newlines: bool = True) -> str:
    """Text that can be stored and shown: a string of Unicode scalar values (no lone surrogates),
    no NUL or other control characters (tabs and, where allowed, newlines excepted)."""
    if not isinstance(value, str):
        raise UsageError(f"{field_name} must be text", "send a string")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise UsageError(f"{field_name} is not valid Unicode (a lone surrogate at {exc.start})",
                         "send UTF-8 text; encode surrogate pairs as one character") from exc
    allowed = "\t\n\r" if allow_newlines else "\t"
    bad = next((c for c in value if unicodedata.category(c) == "Cc" and c not in allowed), None)
    if bad is not None:
        raise UsageError(f"{field_name} contains the control character {bad!r}", "remove control characters")
    if max_bytes is not None and size > max_bytes:
        raise UsageError(f"{field_name} is over {max_bytes} bytes", "shorten it")
    return value


def check_position(field_name: str, value: Any) -> int:
    """A sequence position or count the database can hold."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_POSITION:
        raise UsageError(f"{field_name} must be an integer from 0 to {MAX_POSITION}", f"pass {field_name}=0")
    return value


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
    group_id: str | None = None  # what addressing policies match


# What each decision says first on a card, whoever wrote the option: a label cannot dress a "yes"
# as a "no". Words that say the other decision may not appear in a label at all.
DECISION_VERBS = {"accept": "Approve", "decline": "Refuse"}
_SAYS = {"accept": frozenset({"approve", "approved", "accept", "accepted", "allow", "yes"}),
         "decline": frozenset({"refuse", "refused", "decline", "declined", "reject", "rejected", "deny", "no"})}


def option_label(decision: str, label: str) -> str:
    """The label a card shows for an option: led by its decision's verb ("Approve: canary first");
    a label that says the other decision anywhere is refused."""
    verb = DECISION_VERBS[decision]
    text = label.strip()
    other = next(d for d in DECISION_VERBS if d != decision)
    said = set(re.findall(r"[a-z]+", text.casefold())) & _SAYS[other]
    if said:
        raise UsageError(f"option label {label!r} says {sorted(said)[0]!r} but the option {decision}s the card",
                         f"label a {decision} option by what it does (the card shows {verb!r} first)")
    if text == verb or text.startswith(f"{verb}: "):
        return text
    return f"{verb}: {text}" if text else verb


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
    responder_roles: tuple[str, ...] = ()  # people's roles (people_roles.py), resolved at each answer
    requester_name: str | None = None  # cards asked before these were recorded have None
    requested_at: float | None = None
    scoped_id: str | None = None  # the card id, where it differs from the request id

    @property
    def card_id(self) -> str:
        """Server-wide: `<asker agent id>.<request id>` (cards asked before ids were scoped: the request id)."""
        return self.scoped_id or self.request_id

    def shown(self) -> dict[str, Any]:
        """What a person is shown and answers: the digest of this is what an answer must carry."""
        return {"request_id": self.request_id, "card_id": self.card_id, "room_id": self.room_id,
                "requester_agent_id": self.requester_agent_id, "requester_name": self.requester_name,
                "requested_at": self.requested_at, "title": self.title,
                "options": [{"id": o.id, "label": o.label, "decision": o.decision} for o in self.options],
                "responders": list(self.responders), "responder_roles": list(self.responder_roles),
                "expires_at": self.expires_at}

    @property
    def digest(self) -> str:
        return canonical_digest(self.shown())

    def to_dict(self) -> dict[str, Any]:
        return {**self.shown(), "digest": self.digest, "state": self.state, "outcome": self.outcome}


# -- typed events ---------------------------------------------------------------------------------
# The prefixes and payloads are the ones 491180a already wrote (hashed into existing ledgers).

DOCUMENT = case_type("rooms.document", "rooms.doc.")  # rooms.doc.<document id>
GROUP = case_type("rooms.group", "rooms.group.")  # rooms.group.<group name>
APPROVAL = case_type("rooms.approval", "rooms.approval.")  # rooms.approval.<card id>
ROOM = case_type("rooms.room", "rooms.room.")  # rooms.room.<room id>: the room, its members, roles, messages


class DocumentCreated(EventBody, type="document.created", case=DOCUMENT):
    document_id: str
    room_id: str
    name: str
    description: str
    instructions: str
    content: str
    by_kind: Literal["user", "agent"]
    by_id: str


class DocumentUpdated(EventBody, type="document.updated", case=DOCUMENT):
    """A new version: each field given replaces the old one (None: unchanged)."""

    document_id: str
    room_id: str
    content: str | None
    name: str | None
    description: str | None
    instructions: str | None
    version: int
    by_kind: Literal["user", "agent"]
    by_id: str


class DocumentDeleted(EventBody, type="document.deleted", case=DOCUMENT):
    document_id: str
    room_id: str
    by: str  # the deleting identity's sender


class GroupCreated(EventBody, type="group.created", case=GROUP):
    group_id: str
    name: str
    owner_user_id: str
    description: str
    by: str


class GroupAllowed(EventBody, type="group.allowed", case=GROUP):
    """Rooms owned by `user_id` may join the group."""

    group_id: str
    user_id: str
    by: str


# Approval cards are read through these classes; `approvals` writes their payloads as dicts, since a
# key it leaves out (`via`, `responder_role`, `responder_roles`) must stay absent, not become null.
# 491180a wrote no `card_id` or `requested_at` (it keyed a card's case by its request id).

class StoredOption(BaseModel):
    """An option as an approval card's event stores it (the card's `ApprovalOption`)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    id: str
    label: str
    decision: Literal["accept", "decline"]


class ApprovalRequested(EventBody, type="approval.requested", case=APPROVAL):
    request_id: str
    card_id: str | None = None
    room_id: str
    requester_agent_id: str
    requester_name: str
    requested_at: float | None = None
    title: str
    options: list[StoredOption]
    responders: list[str]  # user ids
    responder_roles: list[str] | None = None  # role names; who holds one is decided at each answer
    expires_at: float


class _ApprovalOutcome(EventBody):
    request_id: str
    card_id: str | None = None
    room_id: str
    requester_agent_id: str
    via: dict[str, Any] | None = None  # the identity claim of an answer a bridge relayed
    outcome: Literal["accepted", "declined", "discarded", "expired"]
    option_id: str | None
    responder: str | None
    responder_name: str | None
    allowed: bool | None


class ApprovalAnswered(_ApprovalOutcome, type="approval.answered", case=APPROVAL):
    """The first allowed answer: it decides the card."""

    decision: Literal["accept", "decline"]
    responder_role: str | None = None  # the role the responder answered in, when not named
    answered_at: str | None = None  # UTC ISO 8601, the server's clock; answers stored before it have none


class ApprovalDiscarded(_ApprovalOutcome, type="approval.discarded", case=APPROVAL):
    """An answer from someone the card does not name: recorded, and it decides nothing."""


class ApprovalExpired(_ApprovalOutcome, type="approval.expired", case=APPROVAL):
    """The card expired unanswered (or was answered after it expired)."""


# A room's events are read through these classes; `membership`, `roles`, `references` and `messages`
# write them as dicts, since a key they leave out (a post's `via`; a member's `by`, which the members a
# room is created with and 491180a's members have none of) must stay absent, not become null.

class RoomCreated(EventBody, type="room.created", case=ROOM):
    room_id: str
    name: str
    description: str
    instructions: str
    channel_type: str
    internal_only: bool
    owner_user_id: str
    group_name: str | None
    group_id: str | None
    created_by: str


class RoomMemberAdded(EventBody, type="room.member_added", case=ROOM):
    room_id: str
    kind: Literal["user", "agent"]
    member_id: str
    name: str  # the member's display name
    timestamp: int  # milliseconds
    by: str | None = None  # absent for the members a room was created with


class RoomMemberRemoved(EventBody, type="room.member_removed", case=ROOM):
    room_id: str
    kind: Literal["user", "agent"]
    member_id: str
    by: str


class InvitationCreated(EventBody, type="invitation.created", case=ROOM):
    invitation_id: str
    room_id: str
    agent_id: str
    by: str


class InvitationAnswered(EventBody, type="invitation.answered", case=ROOM):
    invitation_id: str
    room_id: str
    agent_id: str
    state: str
    by: str


class RoleDefined(EventBody, type="role.defined", case=ROOM):
    room_id: str
    name: str
    instructions: str
    exclusive: bool
    by: str


class RoleAssumed(EventBody, type="role.assumed", case=ROOM):
    room_id: str
    role: str
    agent_id: str
    connection_id: str


class RoleReleased(EventBody, type="role.released", case=ROOM):
    room_id: str
    role: str
    agent_id: str


class ReferenceAttached(EventBody, type="reference.attached", case=ROOM):
    room_id: str
    reference_id: str
    by: str


class RoomLinked(EventBody, type="room.linked", case=ROOM):
    """A directed link from `room_id` to `target_room_id` (shown in `room_id`'s `linked_rooms`)."""

    room_id: str
    target_room_id: str
    label: str
    by: str


class RoomUnlinked(EventBody, type="room.unlinked", case=ROOM):
    room_id: str
    target_room_id: str
    by: str


class MessagePosted(EventBody, type="message.posted", case=ROOM):
    room_id: str
    message_id: str
    sender_kind: Literal["user", "agent"]
    sender_id: str
    sender: str
    sender_name: str
    body: str
    thread_id: str | None
    timestamp: int  # milliseconds
    attachments: list[dict[str, Any]]
    auto_reply: bool  # an agent's refusal, posted by the server: it never triggers another
    addressed_agents: dict[str, bool]  # agent id -> whether its policy let the message address it
    via: dict[str, Any] | None = None  # the identity claim of a post a bridge relayed
