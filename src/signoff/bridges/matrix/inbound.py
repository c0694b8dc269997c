"""What one Matrix timeline event means to the bridge, decided without I/O.

Everything from Matrix is untrusted: an event that is not a well-formed text message is skipped
with a reason (counted, never relayed, never a crash). The Matrix sender's id is written without
its `@`, so that a display of who spoke can never address a signoff agent by accident; only the
words the person typed can mention an agent, and the rooms server's policy decides whether that
mention addresses it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from signoff.rooms.model import MAX_BODY

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
    body: str  # as it will be posted in signoff


@dataclass(frozen=True)
class Edit:
    event_id: str
    sender: str
    replaces: str
    new_body: str


@dataclass(frozen=True)
class Skip:
    reason: str  # malformed | too_large | unknown_type | unsupported_msgtype | own | state


Inbound = Relay | Edit | Skip


def speaker(user_id: str) -> str:
    return user_id[1:] if user_id.startswith("@") else user_id


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
    if not body.strip():
        return Skip("malformed")
    return Relay(event_id, sender, f"{speaker(sender)}: {body}")
