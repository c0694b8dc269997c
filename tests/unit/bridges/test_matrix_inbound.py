"""Event shapes a well-behaved Synapse refuses but a hostile or broken homeserver could still send:
each is skipped with its reason, never relayed and never an exception."""

from __future__ import annotations

from typing import Any

import pytest

from signoff.bridges.matrix import classify
from signoff.bridges.matrix.inbound import Edit, Reaction, Redaction, Relay, Skip

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


def test_a_message_is_relayed_as_typed_with_its_sender_beside_it() -> None:
    # Who spoke travels apart from the text: the rooms server decides whether the account is a
    # claimed person or an outsider (whose id it writes without its @: tests/integration/rooms/test_claims.py).
    seen = classify({**_message({"msgtype": "m.text", "body": "hello"}), "sender": "@helper:evil.test"}, BOT)
    assert seen == Relay("$e1", "@helper:evil.test", "hello")


def test_a_reply_is_its_own_words_without_the_quoted_fallback() -> None:
    quoted = "> <@bot:signoff.test> Approval requested\n> more\n\nno too risky"
    seen = classify(_message({"msgtype": "m.text", "body": quoted,
                              "m.relates_to": {"m.in_reply_to": {"event_id": "$card"}}}), BOT)
    assert seen == Relay("$e1", "@mallory:evil.test", "no too risky", reply_to="$card")


@pytest.mark.parametrize(("event", "expected"), [
    ({"type": "m.reaction", "content": {"m.relates_to": {"rel_type": "m.annotation", "event_id": "$card",
                                                         "key": "👍"}}},
     Reaction("$e1", "@mallory:evil.test", "$card", "👍")),
    ({"type": "m.reaction", "content": {"m.relates_to": {"rel_type": "m.annotation", "event_id": "$card"}}},
     Skip("malformed")),
    ({"type": "m.reaction", "content": {"m.relates_to": {"rel_type": "m.annotation", "event_id": "$card",
                                                         "key": "x" * 65}}}, Skip("malformed")),
    ({"type": "m.room.redaction", "redacts": "$answer", "content": {}},
     Redaction("$e1", "@mallory:evil.test", "$answer")),
    ({"type": "m.room.redaction", "content": {"redacts": "$answer"}},
     Redaction("$e1", "@mallory:evil.test", "$answer")),
    ({"type": "m.room.redaction", "content": {"redacts": 7}}, Skip("malformed")),
    (_message({"msgtype": "m.text", "body": "yes", "m.relates_to": {"m.in_reply_to": {"event_id": 5}}}),
     Skip("malformed")),
    (_message({"msgtype": "m.text", "body": "yes", "m.relates_to": {"m.in_reply_to": ["$card"]}}),
     Skip("malformed")),
])
def test_reactions_redactions_and_replies_are_read_strictly(event: dict[str, Any], expected: Any) -> None:
    assert classify({"sender": "@mallory:evil.test", "event_id": "$e1", **event}, BOT) == expected


def test_an_edit_is_an_observation_of_the_original() -> None:
    seen = classify(_message({"msgtype": "m.text", "body": "* yes", "m.new_content": {"msgtype": "m.text",
                              "body": "yes"}, "m.relates_to": {"rel_type": "m.replace", "event_id": "$orig"}}), BOT)
    assert seen == Edit("$e1", "@mallory:evil.test", "$orig", "yes")
