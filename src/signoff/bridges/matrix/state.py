"""What the Matrix bridge remembers, in the ledger: its positions on both sides (the Matrix sync
token and the signoff message cursor) and which event was relayed as which message, so that a
restart of the bridge, of Synapse or of the rooms server neither loses nor doubles a message; and
which approval card became which Matrix event, and which Matrix answers, edits and redactions it
has already passed on or observed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from signoff.ledger import Event, NewEvent, SqlLedger


@dataclass
class BridgeState:
    since: str | None = None  # Matrix sync token; None before the first start
    after: int | None = None  # last signoff message sequence relayed to Matrix; None before the first start
    to_signoff: dict[str, str] = field(default_factory=dict)  # Matrix event id -> signoff message id
    # Matrix event id -> (text, signoff head, Matrix sender); the sender is None in records written
    # before identity claims, whose text is the whole posted body.
    pending: dict[str, tuple[str, int, str | None]] = field(default_factory=dict)
    own_sender: str | None = None  # the sender id the rooms server writes on the bridge's posts
    edits: set[str] = field(default_factory=set)  # Matrix ids of edits already observed
    refused: set[str] = field(default_factory=set)  # Matrix ids the rooms server refused to relay
    cards_after: int = 0  # the last approval card (its request sequence) shown in Matrix
    cards: dict[str, str] = field(default_factory=dict)  # Matrix event id of a card -> request id
    # Matrix event id of a card -> the digest of the card as shown there, which an answer carries
    # (cards shown before answers were bound have none: an answer to them is refused)
    shown: dict[str, str] = field(default_factory=dict)
    open_cards: dict[str, str] = field(default_factory=dict)  # request id -> Matrix event id, until decided
    answers: set[str] = field(default_factory=set)  # Matrix ids of replies/reactions passed on as answers
    redactions: set[str] = field(default_factory=set)  # Matrix ids of redactions observed


def apply(state: BridgeState, kind: str, p: dict[str, Any]) -> None:
    """Fold one recorded event into `state`."""
    if kind == "matrix.position":
        state.since = str(p["since"])
    elif kind == "signoff.position":
        state.after = int(p["after"])
    elif kind == "relay.pending":
        state.pending[str(p["matrix_event_id"])] = (str(p["body"]), int(p["signoff_head"]),
                                                    str(p["sender"]) if p.get("sender") else None)
    elif kind == "relay.done":
        state.pending.pop(str(p["matrix_event_id"]), None)
        state.to_signoff[str(p["matrix_event_id"])] = str(p["message_id"])
        if p.get("sender") and not p.get("claim_id"):  # a claimed person's post is not the bridge's own
            state.own_sender = str(p["sender"])
    elif kind == "relay.refused":
        state.pending.pop(str(p["matrix_event_id"]), None)
        state.refused.add(str(p["matrix_event_id"]))
    elif kind == "edit.observed":
        state.edits.add(str(p["matrix_event_id"]))
    elif kind == "card.shown":
        if p.get("matrix_event_id"):
            state.cards[str(p["matrix_event_id"])] = str(p["request_id"])
            if p.get("digest"):
                state.shown[str(p["matrix_event_id"])] = str(p["digest"])
            state.open_cards[str(p["request_id"])] = str(p["matrix_event_id"])
        state.cards_after = max(state.cards_after, int(p["sequence"]))
    elif kind == "answer.relayed":
        state.answers.add(str(p["matrix_event_id"]))
        if p.get("outcome") in ("accepted", "declined", "expired"):
            state.open_cards.pop(str(p["request_id"]), None)
    elif kind == "card.closed":
        state.open_cards.pop(str(p["request_id"]), None)
    elif kind == "redaction.observed":
        state.redactions.add(str(p["matrix_event_id"]))


def fold(history: list[Event]) -> BridgeState:
    state = BridgeState()
    for event in history:
        apply(state, event.type, event.payload)
    return state


class BridgeStore:
    """The ledger case of one bridged pair of rooms."""

    def __init__(self, ledger: SqlLedger, signoff_room: str, matrix_room: str) -> None:
        self.ledger = ledger
        self.case_id = f"bridge.matrix.{signoff_room}.{matrix_room}"

    def load(self) -> BridgeState:
        return fold(self.ledger.read(self.case_id))

    def record(self, state: BridgeState, event: NewEvent) -> None:
        """Append `event` and fold it into `state` (the ledger first: nothing counts unrecorded)."""
        self.ledger.append(self.case_id, None, [event])
        apply(state, event.type, event.payload)

    def observations(self) -> list[Event]:
        return self.ledger.read(self.case_id)
