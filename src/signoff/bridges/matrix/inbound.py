"""What one Matrix timeline event means to the bridge, decided without I/O.

Everything from Matrix is untrusted: an event that is not a well-formed text message, reaction or
redaction is skipped with a reason (counted, never relayed, never a crash). What a person typed is
relayed as typed, with their Matrix id beside it; the rooms server decides whether that id has a
claimed signoff identity (see signoff.rooms.domain.claims) and, if not, writes it without its `@` so that
who spoke can never address an agent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from signoff.rooms.domain.model import MAX_BODY

TEXT_TYPES = ("m.text", "m.notice", "m.emote")
# A chat message longer than this is not relayed (a long text belongs in a room document); far
# below the rooms server's own limit, so the "<sender>: " prefix always fits.
MAX_RELAYED = 16 * 1024
assert MAX_RELAYED + 512 < MAX_BODY
STATE_OR_SIGNALS = ("m.room.member", "m.room.create", "m.room.power_levels", "m.room.join_rules",
                    "m.room.history_visibility", "m.room.guest_access", "m.room.name", "m.room.topic",
                    "m.room.avatar", "m.room.encryption", "m.room.server_acl", "m.room.pinned_events",
                    "m.room.canonical_alias", "m.room.third_party_invite", "m.room.tombstone")


@dataclass(frozen=True)
class Relay:
    event_id: str
    sender: str
    body: str  # as typed (without a reply's quoted fallback)
    reply_to: str | None = None  # the event it answers (m.in_reply_to)
    mentions: tuple[str, ...] = ()  # Matrix ids the client says it mentions (m.mentions)


@dataclass(frozen=True)
class Reaction:
    event_id: str
    sender: str
    target: str
    key: str


@dataclass(frozen=True)
class Redaction:
    event_id: str
    sender: str
    redacts: str


@dataclass(frozen=True)
class Edit:
    event_id: str
    sender: str
    replaces: str
    new_body: str


@dataclass(frozen=True)
class Skip:
    reason: str  # malformed | too_large | unknown_type | unsupported_msgtype | own | state


Inbound = Relay | Edit | Reaction | Redaction | Skip


def classify(event: Any, bot_user_id: str) -> Inbound:
    if not isinstance(event, dict):
        return Skip("malformed")
    kind, sender, event_id, content = (event.get("type"), event.get("sender"), event.get("event_id"),
                                       event.get("content"))
    if not (isinstance(kind, str) and isinstance(sender, str) and isinstance(event_id, str)
            and isinstance(content, dict)):
        return Skip("malformed")
    if sender == bot_user_id:
        return Skip("own")
    if kind in STATE_OR_SIGNALS or "state_key" in event:
        return Skip("state")
    if kind == "m.reaction":
        return _reaction(event_id, sender, content)
    if kind == "m.room.redaction":
        redacts = event.get("redacts", content.get("redacts"))  # top level before room version 11
        return Redaction(event_id, sender, redacts) if isinstance(redacts, str) else Skip("malformed")
    if kind != "m.room.message":
        return Skip("unknown_type")
    msgtype, body = content.get("msgtype"), content.get("body")
    if not isinstance(msgtype, str) or not isinstance(body, str):
        return Skip("malformed")
    if msgtype not in TEXT_TYPES:
        return Skip("unsupported_msgtype")
    if len(body.encode()) > MAX_RELAYED:
        return Skip("too_large")
    relates = content.get("m.relates_to")
    if isinstance(relates, dict) and relates.get("rel_type") == "m.replace":
        new = content.get("m.new_content")
        original = relates.get("event_id")
        if not (isinstance(new, dict) and isinstance(new.get("body"), str) and isinstance(original, str)):
            return Skip("malformed")
        return Edit(event_id, sender, original, str(new["body"]))
    in_reply_to = relates.get("m.in_reply_to") if isinstance(relates, dict) else None
    reply_to = in_reply_to.get("event_id") if isinstance(in_reply_to, dict) else in_reply_to
    if reply_to is not None and not isinstance(reply_to, str):
        return Skip("malformed")
    text = without_fallback(body) if reply_to else body
    if not text.strip():
        return Skip("malformed")
    listed = content.get("m.mentions")
    user_ids = listed.get("user_ids") if isinstance(listed, dict) else None
    mentions = tuple(u for u in user_ids[:50] if isinstance(u, str)) if isinstance(user_ids, list) else ()
    return Relay(event_id, sender, text, reply_to, mentions)


def _reaction(event_id: str, sender: str, content: dict[str, Any]) -> Inbound:
    relates = content.get("m.relates_to")
    if not isinstance(relates, dict) or relates.get("rel_type") != "m.annotation":
        return Skip("malformed")
    target, key = relates.get("event_id"), relates.get("key")
    if not isinstance(target, str) or not isinstance(key, str) or len(key) > 64:
        return Skip("malformed")
    return Reaction(event_id, sender, target, key)


def without_fallback(body: str) -> str:
    """A reply's own words: clients may quote the original first (`> ...` lines, then a blank line)."""
    lines = body.split("\n")
    while lines and lines[0].startswith(">"):
        lines.pop(0)
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines)
