"""Opaque sender ids: people are bound by configuration, the server's directory or a receipt probe,
never by a name in a message body or a display name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from signoff.kernel.errors import ConflictError, NotFoundError
from signoff.rooms.client import (
    Identities,
    InProcessSyncTransport,
    InProcessUserTransport,
    Person,
    RoomsUserClient,
    SyncRoomsClient,
    probe_sender,
)
from tests.support.fixtures.rooms import World


def _by_id(agent: SyncRoomsClient, room_id: str) -> Callable[[str], dict[str, Any] | None]:
    return lambda message_id: next((m for m in agent.history(room_id) if m["message_id"] == message_id), None)


def test_a_receipt_probe_learns_the_sender_the_server_wrote(world: World) -> None:
    s = world.service
    alice = RoomsUserClient(InProcessUserTransport(s, world.alice_token))
    reviewer = SyncRoomsClient(InProcessSyncTransport(s, world.reviewer_key))
    sender = probe_sender(lambda text: alice.post(world.room_id, text), _by_id(reviewer, world.room_id), "n-1")
    assert sender == world.alice.sender
    identities = Identities([Person("operator", "user", sender)])
    assert identities.who(world.alice.sender) == Person("operator", "user", world.alice.sender)
    assert identities.who(world.bob.sender) is None


def test_a_probe_answered_with_someone_elses_message_is_refused(world: World) -> None:
    s = world.service
    bob = RoomsUserClient(InProcessUserTransport(s, world.bob_token))
    reviewer = SyncRoomsClient(InProcessSyncTransport(s, world.reviewer_key))
    # Bob posts a message naming alice's nonce in the text; the probe reads back by id, so a
    # message that is not the probe's own (here: one without the nonce) is refused.
    other = bob.post(world.room_id, "alice says: identity probe n-2 is me")
    with pytest.raises(ConflictError, match="does not match"):
        probe_sender(lambda text: other, _by_id(reviewer, world.room_id), "n-2")
    with pytest.raises(NotFoundError):
        probe_sender(lambda text: {"event_id": "$nope"}, _by_id(reviewer, world.room_id), "n-3")


def test_one_sender_id_stands_for_one_person() -> None:
    identities = Identities.configured({"alice": "@switch-slack-alice:example.org"})
    assert identities.sender_of("alice") == "@switch-slack-alice:example.org"
    with pytest.raises(ConflictError, match="already bound to alice"):
        identities.bind(Person("mallory", "user", "@switch-slack-alice:example.org"))
    assert identities.who("@switch-slack-alice:example.org") == Person("alice", "user",
                                                                         "@switch-slack-alice:example.org")
