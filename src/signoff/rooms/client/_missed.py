"""What an agent missed, and what it must not answer: the pieces `AgentLoop` uses to turn a
server's deliveries into one stream of events an agent handles once each.

- Missed messages. A Switch core keeps its event buffer in memory: after it restarts (or when a
  cursor expired) the stream brings a `gap`, and `RoomsClient` reads the room's context back and
  hands it over as one `context_recovered` event. The messages inside it are what the agent
  missed. `recovered_messages` turns them into ordinary `message` events (flagged `recovered`), so
  the loop dedupes them with streamed ones by the server's message id and the agent's handler sees
  one kind of event however it arrived.
- A re-read does not say whether a message was addressed to the reader (the server decides that
  on delivery, from mentions and the addressing policy). `mentioned` reads the leading `@name`
  mention the servers address by; the policy gate cannot be re-run, so an agent's own sender
  checks (bound people, receipts) are the gate for a recovered message, as they are for every
  message from a plain Matrix user under an open policy.
- Automated notices. Both servers post notices of their own into the room: an addressing refusal
  (signoff stores `auto_reply`; Switch's flag is internal, only the text tells), and Switch's
  "I'm currently offline" / "starting a session" replies for an agent that is not connected.
  They @-mention the sender, so they arrive addressed; an agent that answered them would talk to
  the server's automaton (and to another agent's automaton, in a loop). `is_automated_notice`
  recognises them by the `auto_reply` field where the server exposes it, else by the text the
  protocol notes say to match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from signoff.rooms.client._context import entries
from signoff.rooms.client._refusal import is_refusal_text

RECOVERED = "context_recovered"

# Switch 0.19's own replies for an agent that is not available (recorded live: "I'm currently
# offline — my connector isn't reporting in"; the protocol notes name the "starting a session"
# variant for session agents).
OFFLINE_MARKERS = ("I'm currently offline", "I\u2019m currently offline", "connector isn't reporting in",
                   "starting a session")


def is_automated_notice(env: Mapping[str, Any]) -> bool:
    """True for a message the server posted by itself (a refusal, an offline notice): never a
    person's or an agent's request, so never answered."""
    if env.get("type") != "message":
        return False
    p = env.get("payload")
    payload: Mapping[str, Any] = p if isinstance(p, Mapping) else {}
    if payload.get("auto_reply") is True:
        return True
    body = payload.get("body")
    return is_refusal_text(body) or (isinstance(body, str) and any(m in body for m in OFFLINE_MARKERS))


def mentioned(body: str, name: str | None) -> bool:
    """Whether `body` addresses `name` by a leading mention (`@name ...`, after any other leading
    mentions), as a server decides `addressed` for a message it delivers."""
    if not name:
        return False
    for word in body.split():
        if not word.startswith("@"):
            return False
        if re.fullmatch(rf"@{re.escape(name)}[:,]?", word):
            return True
    return False


def recovered_message(room_id: str, entry: Mapping[str, Any], addressed: bool) -> dict[str, Any]:
    """The `message` event a `read_context` entry stands for, flagged `recovered`."""
    return {"type": "message", "room_id": room_id, "payload": {
        "message_id": str(entry.get("id")), "sender": entry.get("sender"), "sender_name": entry.get("sender_name"),
        "body": str(entry.get("body", "")), "thread_id": entry.get("thread_id"), "timestamp": entry.get("timestamp"),
        "attachments": list(entry.get("attachments") or []), "recovered": True, "addressed": addressed}}


def context_messages(env: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The message entries inside a `context_recovered` event, oldest first."""
    p = env.get("payload")
    context = p.get("context") if isinstance(p, Mapping) else None
    if not isinstance(context, dict):
        return []
    return sorted(entries(context), key=lambda e: int(e.get("timestamp") or 0))


def missed(room_id: str, found: Iterable[Mapping[str, Any]], me: str | None, own_sender: str | None,
           since_ms: int | None) -> list[dict[str, Any]]:
    """The `message` events among re-read entries `found` that this agent may have missed: not its
    own, and not from before it first worked in the room (`since_ms`: older history was never
    its work). Addressed when the text mentions `me`."""
    out = []
    for entry in found:
        if entry.get("kind", "message") != "message" or not entry.get("id") or "body" not in entry:
            continue
        if own_sender is not None and entry.get("sender") == own_sender:
            continue
        if own_sender is None and me is not None and entry.get("sender_name") == me:
            continue
        stamp = entry.get("timestamp")
        if since_ms is not None and isinstance(stamp, int) and stamp < since_ms:
            continue
        out.append(recovered_message(room_id, entry, mentioned(str(entry.get("body", "")), me)))
    return out
