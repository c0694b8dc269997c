"""Event shapes a well-behaved Synapse refuses but a hostile or broken homeserver could still send:
each is skipped with its reason, never relayed and never an exception."""

from __future__ import annotations

from typing import Any

import pytest

from signoff.bridges.matrix import classify
from signoff.bridges.matrix.inbound import Edit, Relay, Skip

BOT = "@bot:signoff.test"


def _message(content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "m.room.message", "sender": "@mallory:evil.test", "event_id": "$e1", "content": content,
            **extra}


@pytest.mark.parametrize(("event", "reason"), [
    ("not an object", "malformed"),
    ({"type": "m.room.message"}, "malformed"),
    (_message(["list", "content"]), "malformed"),
    (_message({"msgtype": "m.text", "body": 12345}), "malformed"),
    (_message({"msgtype": 5, "body": "x"}), "malformed"),
    (_message({"body": "no msgtype"}), "malformed"),
    (_message({"msgtype": "m.text", "body": "e", "m.relates_to": {"rel_type": "m.replace", "event_id": "$x"},
               "m.new_content": "not an object"}), "malformed"),
    (_message({"msgtype": "m.file", "body": "a.bin"}), "unsupported_msgtype"),
    (_message({"msgtype": "m.text", "body": "x" * 16_385}), "too_large"),
    ({**_message({}), "type": "org.hostile.flood"}, "unknown_type"),
    (_message({"msgtype": "m.text", "body": "mine"}, sender=BOT), "own"),
    ({**_message({"membership": "join"}), "type": "m.room.member", "state_key": "@x:y"}, "state"),
])
def test_bad_events_are_skipped_with_their_reason(event: Any, reason: str) -> None:
    assert classify(event, BOT) == Skip(reason)


def test_the_speaker_is_written_without_at_so_it_can_never_address_an_agent() -> None:
    # a Matrix account named like a signoff agent must not address that agent by speaking
    seen = classify({**_message({"msgtype": "m.text", "body": "hello"}), "sender": "@helper:evil.test"}, BOT)
    assert seen == Relay("$e1", "@helper:evil.test", "helper:evil.test: hello")


def test_an_edit_is_an_observation_of_the_original() -> None:
    seen = classify(_message({"msgtype": "m.text", "body": "* yes", "m.new_content": {"msgtype": "m.text",
                              "body": "yes"}, "m.relates_to": {"rel_type": "m.replace", "event_id": "$orig"}}), BOT)
    assert seen == Edit("$e1", "@mallory:evil.test", "$orig", "yes")
