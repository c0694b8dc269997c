"""A person whose token was revoked is out on every channel: the chat account they claimed speaks
for nobody, neither in a room nor on a card, until an admin gives them a token again. Run in
process and over HTTP (to the app over ASGI)."""

from __future__ import annotations

import pytest

from signoff.kernel.errors import RefusedError
from tests.integration.rooms.test_claims import ALICE_MX, Bridged, _claim, _head, bridged  # noqa: F401 (a fixture)


def test_a_revoked_persons_claimed_account_neither_speaks_nor_answers(bridged: Bridged) -> None:  # noqa: F811
    s, w = bridged.world.service, bridged.world
    card = s.request_approval(w.fixer, w.room_id, "deploy-1", "Deploy?", [
        {"id": "go", "label": "Deploy", "decision": "accept"}], s.clock.now() + 600, ["alice"])
    _claim(bridged)
    s.revoke_token("user", "alice")
    head = _head(bridged)
    with pytest.raises(RefusedError, match="whose token is revoked"):
        bridged.bridge.relay_answer(card.request_id, ALICE_MX, "go", card.digest, {"matrix_event_id": "$a"})
    with pytest.raises(RefusedError, match="whose token is revoked"):
        bridged.bridge.relay(w.room_id, ALICE_MX, "@fixer deploy now")
    assert _head(bridged) == head, "a refusal wrote something"
    assert [c.request_id for c in s.pending_approvals(w.alice)] == ["deploy-1"]
    s.rotate_token("user", "alice")  # a new token: the claim speaks for alice again
    answered = bridged.bridge.relay_answer(card.request_id, ALICE_MX, "go", card.digest,
                                              {"matrix_event_id": "$b"})
    assert answered["outcome"] == "accepted" and answered["responder"] == w.alice.sender
