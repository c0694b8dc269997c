"""Send receipts: the proof that a hand-off came from who it claims to.

A sender records a `Receipt` when the server returns the message id of what it posted. A receiver
accepts a hand-off only when the event it received matches that receipt field by field. A name
typed into a message body, or a quoted or copied command posted by anybody else, never matches,
because the server-assigned id and the authenticated sender differ.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Receipt:
    message_id: str
    room_id: str
    sender: str  # the authenticated sender id as the server writes it in events
    body: str  # the exact text the server stored (after any @-prefix it added)
    addressed: bool = True  # what the sender expects the receiver to see
    thread_id: str | None = None
    target_statuses: Mapping[str, str] = field(default_factory=dict)
    sequence: int | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["target_statuses"] = dict(self.target_statuses)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Receipt:
        return cls(
            message_id=str(data["message_id"]),
            room_id=str(data["room_id"]),
            sender=str(data["sender"]),
            body=str(data["body"]),
            addressed=bool(data.get("addressed", True)),
            thread_id=data.get("thread_id"),
            target_statuses=dict(data.get("target_statuses") or {}),
            sequence=data.get("sequence"),
        )


def _same(a: Any, b: Any) -> bool:
    if not isinstance(a, str) or not isinstance(b, str):
        return False
    return hmac.compare_digest(a.encode(), b.encode())


def handoff_matches(event: Mapping[str, Any], receipt: Receipt | Mapping[str, Any]) -> bool:
    """True only when `event` (a `message` event as delivered: `{type, room_id, payload{...}}`) is
    exactly the message the sender recorded in `receipt`: same server-assigned message id, same
    addressed flag, same room, same authenticated sender, same text. Anything malformed is False."""
    try:
        rec = receipt if isinstance(receipt, Receipt) else Receipt.from_dict(receipt)
    except (KeyError, TypeError, ValueError):
        return False
    if not isinstance(event, Mapping) or event.get("type") != "message":
        return False
    payload = event.get("payload")
    if not isinstance(payload, Mapping):
        return False
    addressed = payload.get("addressed")
    if not isinstance(addressed, bool) or addressed is not rec.addressed:
        return False
    return (
        _same(payload.get("message_id"), rec.message_id)
        and _same(event.get("room_id"), rec.room_id)
        and _same(payload.get("sender"), rec.sender)
        and _same(payload.get("body"), rec.body)
    )
