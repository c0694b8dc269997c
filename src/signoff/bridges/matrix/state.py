"""What the Matrix bridge remembers, in the ledger: its positions on both sides (the Matrix sync
token and the signoff message cursor) and which event was relayed as which message, so that a
restart of the bridge, of Synapse or of the rooms server neither loses nor doubles a message."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from signoff.ledger import Event, Ledger, NewEvent


@dataclass
class BridgeState:
    since: str | None = None  # Matrix sync token; None before the first start
    after: int | None = None  # last signoff message sequence relayed to Matrix; None before the first start
    to_signoff: dict[str, str] = field(default_factory=dict)  # Matrix event id -> signoff message id
    pending: dict[str, tuple[str, int]] = field(default_factory=dict)  # Matrix event id -> (body, signoff head)
    own_sender: str | None = None  # the sender id the rooms server writes on the bridge's posts
    edits: set[str] = field(default_factory=set)  # Matrix ids of edits already observed


def apply(state: BridgeState, kind: str, p: dict[str, Any]) -> None:
    """Fold one recorded event into `state`."""
    if kind == "matrix.position":
        state.since = str(p["since"])
    elif kind == "signoff.position":
        state.after = int(p["after"])
    elif kind == "relay.pending":
        state.pending[str(p["matrix_event_id"])] = (str(p["body"]), int(p["signoff_head"]))
    elif kind == "relay.done":
        state.pending.pop(str(p["matrix_event_id"]), None)
        state.to_signoff[str(p["matrix_event_id"])] = str(p["message_id"])
        state.own_sender = str(p["sender"]) if p.get("sender") else state.own_sender
    elif kind == "edit.observed":
        state.edits.add(str(p["matrix_event_id"]))


def fold(history: list[Event]) -> BridgeState:
    state = BridgeState()
    for event in history:
        apply(state, event.type, event.payload)
    return state


class BridgeStore:
    """The ledger case of one bridged pair of rooms."""

    def __init__(self, ledger: Ledger, signoff_room: str, matrix_room: str) -> None:
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
