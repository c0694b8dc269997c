"""A hand-off found again in what a live switch-core 0.19 gave back after a restart (recorded in
tests/data/desk/switch-0.19-recovered-handoff.json): the manager handed BUG-0003 to the reproducer
while it was down, the core restarted, and the reproducer's stream brought only a gap; its client's
`context_recovered` re-read holds the hand-off. Read back as the event the reproducer missed, it
matches the manager's receipt; changed in any way, or without the receipt, it does not."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from signoff.desk.crew.agents import recovered_message
from signoff.rooms.client._context import entries
from signoff.rooms.domain.receipts import Receipt, handoff_matches
from tests.support import paths

DATA = paths.DATA / "desk" / "switch-0.19-recovered-handoff.json"


def recorded() -> tuple[Receipt, dict[str, Any], dict[str, Any]]:
    data = json.loads(DATA.read_text())
    receipt = Receipt.from_dict(data["receipt"])
    gap = data["context_recovered"]
    [entry] = [e for e in entries(gap["payload"]["context"]) if e.get("id") == receipt.message_id]
    return receipt, gap, entry


def test_the_recovered_hand_off_matches_the_managers_receipt() -> None:
    receipt, gap, entry = recorded()
    # What Switch sent: a gap from a restart (sequences reset to 0), and the re-read room.
    assert gap["type"] == "context_recovered" and gap["payload"]["gap"]["resumed_at"] == 0
    assert "restarted" in gap["payload"]["gap"]["reason"]
    assert receipt.target_statuses == {"desk-reproducer": "disconnected"}  # sent while it was down
    env = recovered_message(gap["room_id"], entry, "desk-reproducer", receipt)
    assert env["payload"]["addressed"] is True and handoff_matches(env, receipt)


@pytest.mark.parametrize(("member", "change", "entry_change"), [
    ("desk-fixer", {}, {}),  # addressed to another member
    ("desk-reproducer", {"target_statuses": {"desk-reproducer": "not_permitted"}}, {}),  # the server refused it
    ("desk-reproducer", {}, {"id": "$copy"}),  # a copy: another message with the same text
    ("desk-reproducer", {}, {"sender": "@switch-agent-5b44d76c:localhost"}),  # another sender
    ("desk-reproducer", {}, {"body": "@desk-reproducer start_reproduction BUG-0003 round=2 [ref 25bd34c901]"}),
])
def test_a_changed_or_misdirected_hand_off_does_not_match(member: str, change: dict[str, Any],
                                                           entry_change: dict[str, Any]) -> None:
    receipt, gap, entry = recorded()
    env = recovered_message(gap["room_id"], {**entry, **entry_change}, member, dataclasses.replace(receipt, **change))
    assert not handoff_matches(env, receipt)


def test_without_the_senders_receipt_nothing_found_in_history_counts_as_addressed() -> None:
    receipt, gap, entry = recorded()
    env = recovered_message(gap["room_id"], entry, "desk-reproducer", None)
    assert env["payload"]["addressed"] is False and not handoff_matches(env, receipt)
