"""Identity claims, from the attacker's side: a bridge may speak (and answer cards) only for chat
accounts whose person claimed them through it with a one-time code, only into rooms the bridge is
in; a leaked, reused, expired or foreign code claims nothing; everyone else is an outsider whom no
policy admits by name. Each refusal leaves the ledger as it was. Run in process and over HTTP
(to the app in process over ASGI: no server)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from signoff.kernel.clock import FixedClock
from signoff.kernel.errors import NotFoundError, RefusedError, UsageError
from signoff.rooms import Principal
from signoff.rooms.client import RoomsUserClient
from signoff.rooms.domain.claims import CODE_SECONDS, MAX_WAITING_CODES
from tests.support.fixtures.rooms import World

ALICE_MX, MALLORY_MX = "@alice:example.org", "@mallory:evil.test"


@dataclass
class Bridged:
    world: World
    bridge: RoomsUserClient  # the bridge's own credential: what an attacker who owns the bridge holds
    other_bridge: RoomsUserClient
    alice: RoomsUserClient
    bob: RoomsUserClient
    guarded: Principal  # an agent whose policy admits Alice by name, and nobody else


@pytest.fixture
def bridged(world: World, person_in_process_or_asgi: Callable[[str], RoomsUserClient]) -> Bridged:
    person_for = person_in_process_or_asgi
    s = world.service
    _, bridge_token = s.create_user("matrix-bridge", external=True)
    _, other_token = s.create_user("other-bridge", external=True)
    guarded, _ = s.create_agent(world.alice, "guarded", policy={"rules": [{"users": [world.alice.id]}]})
    s.add_member(world.alice, world.room_id, user_name="matrix-bridge")
    s.add_member(world.alice, world.room_id, user_name="other-bridge")
    s.add_member(world.alice, world.room_id, agent_name="guarded")
    return Bridged(world, person_for(bridge_token), person_for(other_token), person_for(world.alice_token),
                   person_for(world.bob_token), guarded)


def _claim(b: Bridged, person: RoomsUserClient | None = None, account: str = ALICE_MX) -> dict[str, Any]:
    code = (person or b.alice).claim_code("matrix-bridge", account)["code"]
    return b.bridge.redeem_claim(code, account)


def _head(b: Bridged) -> int:
    return b.world.service.ledger.head()[0]


def _posted(b: Bridged, event_id: str) -> dict[str, Any]:
    return b.world.service.message(b.world.admin, event_id)


def _addressed(b: Bridged, event_id: str) -> bool:
    [event] = [e for e in b.world.service.agent_events(b.guarded.id, 0, limit=1000)
               if e["type"] == "message" and e["payload"]["message_id"] == event_id]
    return bool(event["payload"]["addressed"])


def test_a_claimed_account_speaks_as_its_person_under_policies_that_name_them(bridged: Bridged) -> None:
    claim = _claim(bridged)
    assert (claim["user_name"], claim["external_id"], claim["bridge"], claim["state"]) == (
        "alice", ALICE_MX, "matrix-bridge", "active")
    relayed = bridged.bridge.relay(bridged.world.room_id, ALICE_MX, "@guarded ship it")
    posted = _posted(bridged, relayed["event_id"])
    assert (posted["sender"], posted["body"]) == (bridged.world.alice.sender, "@guarded ship it")
    assert relayed["sender"] == bridged.world.alice.sender and relayed["claim"]["claim_id"] == claim["claim_id"]
    assert _addressed(bridged, relayed["event_id"]) is True
    # the ledger says which bridge relayed it, under which claim
    [event] = [e for e in bridged.world.service.ledger.read(f"rooms.room.{bridged.world.room_id}")
               if e.payload.get("message_id") == relayed["event_id"]]
    assert event.payload["via"] == {"bridge": "user:" + bridged.world.service.user_by_name("matrix-bridge").id,
                                    "external_id": ALICE_MX, "claim_id": claim["claim_id"]}


def test_an_unclaimed_account_is_an_outsider_whom_no_policy_admits_by_name(bridged: Bridged) -> None:
    _claim(bridged)
    # Mallory names her Matrix account like Alice's signoff user: she is still the bridge's outsider
    for account in (MALLORY_MX, "@alice:evil.test"):
        relayed = bridged.bridge.relay(bridged.world.room_id, account, "@guarded ship it")
        posted = _posted(bridged, relayed["event_id"])
        assert posted["sender"] == "user:" + bridged.world.service.user_by_name("matrix-bridge").id
        assert posted["body"] == f"{account[1:]}: @guarded ship it"  # no @: who spoke addresses nobody
        assert relayed["claim"] is None and _addressed(bridged, relayed["event_id"]) is False


def test_a_leaked_code_claims_nothing_from_another_account(bridged: Bridged) -> None:
    code = bridged.alice.claim_code("matrix-bridge", ALICE_MX)["code"]
    head = _head(bridged)
    with pytest.raises(RefusedError, match="unknown, already used, expired"):
        bridged.bridge.redeem_claim(code, MALLORY_MX)  # she saw it pasted in a public room
    assert _head(bridged) == head
    assert bridged.bridge.redeem_claim(code, ALICE_MX)["user_name"] == "alice"  # still Alice's


def test_a_code_works_once_and_a_retry_from_the_same_account_returns_the_same_claim(bridged: Bridged) -> None:
    code = bridged.alice.claim_code("matrix-bridge", ALICE_MX)["code"]
    first = bridged.bridge.redeem_claim(code, ALICE_MX)
    head = _head(bridged)
    assert bridged.bridge.redeem_claim(code, ALICE_MX) == first  # a bridge that crashed and retried
    assert _head(bridged) == head
    bridged.alice.revoke_claim(first["claim_id"])
    with pytest.raises(RefusedError, match="unknown, already used, expired"):
        bridged.bridge.redeem_claim(code, ALICE_MX)  # a revoked claim is not revived by its code


def test_an_expired_or_forged_code_is_refused(bridged: Bridged, clock: FixedClock) -> None:
    code = bridged.alice.claim_code("matrix-bridge", ALICE_MX)["code"]
    clock.advance(CODE_SECONDS)
    head = _head(bridged)
    for attempt in (code, "soc_" + "A" * 43, "", "x" * 5000):
        with pytest.raises((RefusedError, UsageError)):
            bridged.bridge.redeem_claim(attempt, ALICE_MX)
    assert _head(bridged) == head


def test_another_bridge_can_neither_redeem_nor_use_a_claim_made_through_this_one(bridged: Bridged) -> None:
    code = bridged.alice.claim_code("matrix-bridge", ALICE_MX)["code"]
    with pytest.raises(RefusedError, match="unknown, already used, expired"):
        bridged.other_bridge.redeem_claim(code, ALICE_MX)
    bridged.bridge.redeem_claim(code, ALICE_MX)
    relayed = bridged.other_bridge.relay(bridged.world.room_id, ALICE_MX, "@guarded ship it")
    assert _posted(bridged, relayed["event_id"])["sender"] != bridged.world.alice.sender
    assert relayed["claim"] is None and _addressed(bridged, relayed["event_id"]) is False


def test_a_claim_never_reaches_a_room_the_bridge_is_not_in(bridged: Bridged) -> None:
    _claim(bridged)
    s = bridged.world.service
    private = s.create_room(bridged.world.alice, "alice-private", agent_names=["guarded"])
    head = _head(bridged)
    with pytest.raises(RefusedError):
        bridged.bridge.relay(private.id, ALICE_MX, "@guarded delete everything")
    assert _head(bridged) == head


def test_only_the_person_the_bridge_or_an_admin_revokes_and_then_the_account_is_an_outsider(
        bridged: Bridged) -> None:
    claim = _claim(bridged)
    assert [c["claim_id"] for c in bridged.alice.claims()] == [claim["claim_id"]]
    assert [c["claim_id"] for c in bridged.bridge.claims()] == [claim["claim_id"]]
    assert bridged.bob.claims() == [] and bridged.other_bridge.claims() == []
    head = _head(bridged)
    for stranger in (bridged.bob, bridged.other_bridge):
        with pytest.raises(NotFoundError):
            stranger.revoke_claim(claim["claim_id"])
    assert _head(bridged) == head
    revoked = bridged.alice.revoke_claim(claim["claim_id"])
    assert revoked["state"] == "revoked" and revoked["reason"] == "revoked"
    assert bridged.alice.revoke_claim(claim["claim_id"]) == revoked  # twice changes nothing
    relayed = bridged.bridge.relay(bridged.world.room_id, ALICE_MX, "@guarded ship it")
    assert relayed["claim"] is None and _addressed(bridged, relayed["event_id"]) is False
    second = _claim(bridged)
    assert bridged.bridge.revoke_claim(second["claim_id"])["state"] == "revoked"


def test_a_newer_claim_of_the_same_account_supersedes_the_older(bridged: Bridged) -> None:
    old = _claim(bridged)
    bridged.world.service.add_member(bridged.world.alice, bridged.world.room_id, user_name="bob")
    new = _claim(bridged, person=bridged.bob)  # the account's owner sent Bob's code
    states = {c["claim_id"]: (c["state"], c["reason"]) for c in bridged.bridge.claims()}
    assert states == {old["claim_id"]: ("revoked", "superseded"), new["claim_id"]: ("active", None)}
    relayed = bridged.bridge.relay(bridged.world.room_id, ALICE_MX, "hello")
    assert relayed["sender"] == bridged.world.bob.sender


def test_codes_are_minted_by_people_for_a_named_bridge_and_never_by_a_bridge_for_itself(bridged: Bridged) -> None:
    head = _head(bridged)
    with pytest.raises(UsageError, match="does not claim accounts for itself"):
        bridged.bridge.claim_code("matrix-bridge", MALLORY_MX)
    with pytest.raises(NotFoundError):
        bridged.alice.claim_code("no-such-bridge", ALICE_MX)
    for bad in ("alice", "@a b:example.org", "@" + "a" * 300 + ":x"):
        with pytest.raises(UsageError, match="not a chat account id"):
            bridged.alice.claim_code("matrix-bridge", bad)
    assert _head(bridged) == head


def test_answers_are_decided_as_the_claimed_person_and_nobody_answers_for_an_outsider(bridged: Bridged) -> None:
    s, w = bridged.world.service, bridged.world
    card = s.request_approval(w.fixer, w.room_id, "deploy-1", "Deploy?", [
        {"id": "go", "label": "Deploy", "decision": "accept"},
        {"id": "stop", "label": "Hold", "decision": "decline"}], s.clock.now() + 600, ["alice"])
    _claim(bridged)
    _claim(bridged, person=bridged.bob, account="@bob:example.org")
    head = _head(bridged)
    shown = card.digest  # the card as the bridge showed it in chat
    with pytest.raises(RefusedError, match="has not claimed"):
        bridged.bridge.relay_answer(card.request_id, MALLORY_MX, "go", shown, {"matrix_event_id": "$m"})
    assert _head(bridged) == head
    wrong = bridged.bridge.relay_answer(card.request_id, "@bob:example.org", "go", shown, {"matrix_event_id": "$b"})
    assert wrong["outcome"] == "discarded" and wrong["responder"] == w.bob.sender
    right = bridged.bridge.relay_answer(card.request_id, ALICE_MX, "stop", shown,
                                        {"matrix_event_id": "$a", "reason": "too risky"})
    assert (right["outcome"], right["responder"], right["via"]["matrix_event_id"], right["via"]["reason"]) == (
        "declined", w.alice.sender, "$a", "too risky")
    assert bridged.alice.approval(card.request_id)["state"] == "declined"
    # a later answer, even from Alice, changes nothing that was decided
    again = bridged.bridge.relay_answer(card.request_id, ALICE_MX, "go", shown, {"matrix_event_id": "$a2"})
    assert again["outcome"] == "declined" and again["via"]["matrix_event_id"] == "$a"


def test_an_agent_key_cannot_claim_or_relay(bridged: Bridged, world: World) -> None:
    fixer = world.service.authenticate(world.fixer_key)
    with pytest.raises(RefusedError):
        world.service.claims.issue_code(fixer, "matrix-bridge", ALICE_MX)
    with pytest.raises(RefusedError):
        world.service.claims.relay_message(fixer, world.room_id, ALICE_MX, "hi")


def test_nobody_piles_unused_codes_into_a_bridges_claims(bridged: Bridged, clock: FixedClock) -> None:
    for _ in range(MAX_WAITING_CODES):
        bridged.alice.claim_code("matrix-bridge", ALICE_MX)
    head = _head(bridged)
    with pytest.raises(RefusedError, match="unused claim codes"):
        bridged.alice.claim_code("matrix-bridge", ALICE_MX)
    assert _head(bridged) == head
    bridged.bob.claim_code("matrix-bridge", "@bob:example.org")  # a limit per person
    clock.advance(CODE_SECONDS)
    bridged.alice.claim_code("matrix-bridge", ALICE_MX)  # expired codes no longer count


def test_a_bridge_cannot_restate_what_the_server_records_about_an_answer(bridged: Bridged) -> None:
    """A compromised bridge sends `evidence` naming another bridge, account or claim, hoping the
    recorded answer shows them instead of what the server knows (issue 34). It is refused whole."""
    s, w = bridged.world.service, bridged.world
    card = s.request_approval(w.fixer, w.room_id, "deploy-2", "Deploy?", [
        {"id": "go", "label": "Deploy", "decision": "accept"}], s.clock.now() + 600, ["alice"])
    claim = _claim(bridged)
    head = _head(bridged)
    for forged in ({"claim_id": "someone-elses-claim"}, {"bridge": "user:trusted-bridge"},
                   {"external_id": "@ceo:example.org"}):
        with pytest.raises(UsageError, match="evidence may not name"):
            bridged.bridge.relay_answer(card.request_id, ALICE_MX, "go", card.digest,
                                        {"matrix_event_id": "$x", **forged})
    assert _head(bridged) == head and s.approval(w.alice, card.request_id).state == "pending"
    done = bridged.bridge.relay_answer(card.request_id, ALICE_MX, "go", card.digest, {"matrix_event_id": "$y"})
    assert (done["via"]["claim_id"], done["via"]["external_id"]) == (claim["claim_id"], ALICE_MX)
