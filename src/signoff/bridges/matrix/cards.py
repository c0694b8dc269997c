"""Approval cards in Matrix, without I/O: how a card reads there, and what a reply or a reaction to
it means. The bridge never decides whether an answer counts: it passes the chosen option to the
rooms server as the answer of the Matrix account, and the server decides (claimed? a named
responder? still pending?)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from signoff.kernel.clock import utc_minute

CARD_KEY = "org.signoff.approval"
ACCEPT_KEYS = frozenset({"👍", "✅", "✔", "+1"})
DECLINE_KEYS = frozenset({"👎", "❌", "✖", "-1"})
MAX_REASON = 1000


@dataclass(frozen=True)
class Choice:
    option_id: str
    reason: str = ""


def card_text(card: dict[str, Any]) -> str:
    options = " / ".join(f"{o['label']} ({'yes' if o['decision'] == 'accept' else 'no'})" for o in card["options"])
    asker = card.get("requester_name") or card["requester_agent_id"]
    return (f"Approval requested: {card['title']}\nOptions: {options}\n"
            f"Asked by agent {asker} at {utc_minute(card.get('requested_at'))}; "
            f"expires {utc_minute(card['expires_at'])}.\n"
            "Reply to this message with `yes` or `no <reason>`, or react with 👍 or 👎. "
            "Only the people the card names, with a claimed signoff identity, can answer.")


def _option(card: dict[str, Any], decision: str) -> str | None:
    return next((str(o["id"]) for o in card["options"] if o["decision"] == decision), None)


def reply_choice(card: dict[str, Any], text: str) -> Choice | None:
    """`yes`, `no <reason>` or an option id, as the first word of a reply; None: not an answer."""
    words = text.strip().split(maxsplit=1)
    if not words:
        return None
    first, rest = words[0].lower().rstrip(".!,:"), (words[1] if len(words) > 1 else "")[:MAX_REASON]
    ids = {str(o["id"]) for o in card["options"]}
    option = (_option(card, "accept") if first in ("yes", "y", "approve") else
              _option(card, "decline") if first in ("no", "n", "decline") else
              words[0] if words[0] in ids else None)
    return Choice(option, rest.strip()) if option else None


def reaction_choice(card: dict[str, Any], key: str) -> Choice | None:
    bare = key.replace("\ufe0f", "").strip()
    decision = "accept" if bare in ACCEPT_KEYS else "decline" if bare in DECLINE_KEYS else None
    option = _option(card, decision) if decision else None
    return Choice(option) if option else None


def outcome_text(outcome: dict[str, Any], external_id: str, event_id: str) -> str:
    """What the bridge says in Matrix after passing an answer on: decided by it, ignored, or too late."""
    via = outcome.get("via") or {}
    if outcome.get("outcome") == "discarded":
        return f"ignored: {external_id} is not a responder of this card (nothing was decided)"
    if outcome.get("outcome") == "expired":
        return "ignored: this card expired before the answer (nothing was decided)"
    who = outcome.get("responder_name") or "someone"
    verdict = "approved" if outcome.get("outcome") == "accepted" else "declined"
    if via.get("matrix_event_id") != event_id:
        return f"ignored: this card was already {verdict} by {who}"
    reason = f": {via['reason']}" if via.get("reason") else ""
    return f"{verdict} by {who} ({external_id}){reason}"


def closed_text(card: dict[str, Any]) -> str:
    """A shown card that was decided outside Matrix, or expired."""
    outcome = card.get("outcome") or {}
    if card["state"] == "expired":
        return "expired: nobody answered this card in time (nothing was decided)"
    verdict = "approved" if card["state"] == "accepted" else "declined"
    return f"{verdict} in signoff by {outcome.get('responder_name') or 'someone'}"
