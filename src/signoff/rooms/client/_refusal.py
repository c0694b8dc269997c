"""Recognising an addressing refusal, as each server defines it.

Both servers post the refusal into the room as a threaded reply that @-mentions the sender, and
both report `not_permitted` in the send's `target_statuses`. They differ in how it reaches the
sender:
- signoff addresses the refusal to the sending agent (`addressed: true`), so a stream filtered to
  addressed events still sees it; the stored message carries `auto_reply`.
- a Switch core delivers it through the sender's own addressing policy: under the default
  owner-only policy it arrives with `addressed: false` (an addressed-only stream drops it), and the
  auto-reply flag is internal. Only its text tells it apart (the protocol notes say to match it).
So the client recognises a refusal by its thread and text, never by the `addressed` flag, and can
read it back from the room when the stream filtered it out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from signoff.rooms.domain.receipts import Receipt

# Phrases of the refusal texts: signoff's, Switch's policy refusal (which adds why) and Switch's
# "this chat account is not linked to a Switch user" variant.
MARKERS = ("not permitted to direct messages to me", "linked to a Switch user")


def is_refusal_text(body: object) -> bool:
    return isinstance(body, str) and any(marker in body for marker in MARKERS)


def refuses(entry: Mapping[str, Any], receipt: Receipt, thread_id: str | None = None) -> bool:
    """True when `entry` (a `message` payload, or a `read_context` reply whose thread root is
    `thread_id`) is a refusal of the message `receipt` records: a reply in its thread, not by the
    sender, with a refusal text. Advisory only: on Switch anyone in the room can type that text;
    the send's `target_statuses` (`refused_by`) is what the server itself decided."""
    if entry.get("sender") == receipt.sender or not is_refusal_text(entry.get("body")):
        return False
    if entry.get("auto_reply") is False:
        return False  # signoff marks what is not an auto-reply; a person typing the text is not one
    thread = thread_id or entry.get("thread_id")
    return thread is not None and thread in (receipt.message_id, receipt.thread_id)


def refused_by(receipt: Receipt) -> list[str]:
    """The targets the server reported as refusing at send time."""
    return sorted(name for name, status in receipt.target_statuses.items() if status == "not_permitted")
