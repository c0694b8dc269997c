"""Approval cards in Matrix, against a real Synapse: the card shows its question and options; the
right person (claimed, and named by the card) decides it by reply or by reaction; a wrong
responder, claimed or not, is ignored visibly and decides nothing; an edit or a redaction of the
deciding answer afterwards changes nothing approved and is recorded as an observation."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from signoff.bridges.matrix.cards import CARD_KEY
from tests.support.cards import answer_as_shown
from tests.support.matrix_people import Event, MatrixPerson, body_of
from tests.support.synapse import Synapse
from tests.system.bridges.matrix_world import World, another_person, bridged, claim, from_bot, run_until, until_seen

OPTIONS = [{"id": "ship", "label": "Ship it", "decision": "accept"},
           {"id": "hold", "label": "Hold", "decision": "decline"}]


def _ask(world: World, request_id: str) -> dict[str, Any]:
    result: dict[str, Any] = world.helper.call("helper-1", "request_approval", {
        "request_id": request_id, "title": "Release 2.1 to production?", "options": OPTIONS,
        "expires_at": world.service.clock.now() + 3600, "responders": ["alice"]})
    return result


def _card_event(request_id: str) -> Any:
    """The Matrix event that shows the card asked as `request_id` (it carries the card's id, which
    is the asking agent's id, a dot, and the request id)."""
    def match(event: Event) -> bool:
        content = event.get("content")
        return isinstance(content, dict) and str(content.get(CARD_KEY, "")).partition(".")[2] == request_id
    return match


def _reply_to(world: World, event_id: str, start: str) -> Any:
    def match(event: Event) -> bool:
        relates = event.get("content", {}).get("m.relates_to", {})
        return from_bot(world, world.matrix_room, start)(event) \
            and relates.get("m.in_reply_to", {}).get("event_id") == event_id
    return match


def _state(world: World, request_id: str) -> dict[str, Any]:
    return world.service.approval(world.service.user_by_name("alice"), request_id).to_dict()


def test_only_the_claimed_responder_decides_and_wrong_responders_are_ignored_visibly(
        synapse: Synapse, tmp_path: Path) -> None:
    async def run() -> None:
        async with bridged(synapse, tmp_path) as (world, alice, bridge):
            admin = world.service.user_by_name("admin")
            _, bob_token = world.service.create_user("bob")
            world.service.add_member(admin, world.room_id, user_name="bob")
            await claim(world, bridge, alice, world.alice_token)
            bob_account = await another_person(world, alice, "bob")
            mallory_account = await another_person(world, alice, "mallory")
            async with MatrixPerson(synapse, bob_account) as bob, MatrixPerson(synapse, mallory_account) as mallory:
                await claim(world, bridge, bob, bob_token)  # bob is claimed, but the card does not name him
                _ask(world, "release-2.1")
                card = await until_seen(bridge, alice, _card_event("release-2.1"))
                assert body_of(card).startswith("Approval requested: Release 2.1 to production?\n"
                                                "Options: Approve: Ship it (yes) / Refuse: Hold (no)\n"
                                                "Asked by agent helper at ")

                await mallory.reply(world.matrix_room, card["event_id"], "yes")
                ignored = await until_seen(bridge, alice, _reply_to(world, card["event_id"], "ignored: "))
                assert "has not claimed a signoff identity" in body_of(ignored)
                await bob.react(world.matrix_room, card["event_id"], "👍")
                ignored = await until_seen(bridge, alice, _reply_to(world, card["event_id"],
                                                                    f"ignored: {bob.user_id} is not a responder"))
                assert _state(world, "release-2.1")["state"] == "pending"

                answer = await alice.reply(world.matrix_room, card["event_id"], "no the changelog is wrong")
                said = await until_seen(bridge, alice, _reply_to(world, card["event_id"], "declined by alice"))
                assert body_of(said) == f"declined by alice ({alice.user_id}): the changelog is wrong"
                decided = _state(world, "release-2.1")
                assert decided["state"] == "declined"
                assert decided["outcome"]["responder"] == world.service.user_by_name("alice").sender
                assert decided["outcome"]["via"]["matrix_event_id"] == answer
                # the answers were not relayed as chat messages
                assert not [m for m in world.messages() if "changelog" in str(m["body"])
                            or str(m["body"]).endswith(": yes")]
                # the agent that asked sees the wrong responder's discarded answer and the outcome
                kinds = [e["type"] for e in world.helper.events("helper-1", world.room_id, 0)
                         if e["type"].startswith("approval")]
                assert kinds == ["approval_request", "approval_response_discarded", "approval_outcome"]

    asyncio.run(run())


def test_an_edit_or_redaction_of_the_deciding_answer_changes_nothing_approved(
        synapse: Synapse, tmp_path: Path) -> None:
    async def run() -> None:
        async with bridged(synapse, tmp_path) as (world, alice, bridge):
            await claim(world, bridge, alice, world.alice_token)
            _ask(world, "release-2.2")
            card = await until_seen(bridge, alice, _card_event("release-2.2"))
            await bridge.close()  # a restart: the card is not shown twice, and answers to it still count
            bridge = world.bridge()
            await bridge.start()
            answer = await alice.react(world.matrix_room, card["event_id"], "👍")
            await until_seen(bridge, alice, _reply_to(world, card["event_id"], "approved by alice"))
            approved = _state(world, "release-2.2")
            assert approved["state"] == "accepted" and approved["outcome"]["via"]["matrix_event_id"] == answer

            reply = await alice.reply(world.matrix_room, card["event_id"], "yes")  # late: already decided
            await until_seen(bridge, alice, _reply_to(world, card["event_id"], "ignored: this card was already"))
            edit = await alice.edit(world.matrix_room, reply, "no")
            redaction = await alice.redact(world.matrix_room, answer)
            await run_until(bridge, lambda: len({e.type for e in bridge.store.observations()
                                                 if e.type in ("edit.observed", "redaction.observed")}) == 2)
            observed = {e.type: e.payload for e in bridge.store.observations()
                        if e.type in ("edit.observed", "redaction.observed")}
            assert observed["edit.observed"]["matrix_event_id"] == edit
            assert observed["edit.observed"]["edits_an_answer"] is True
            assert observed["redaction.observed"] == {
                "matrix_event_id": redaction, "redacts": answer, "sender": str(alice.user_id), "message_id": None,
                "redacts_an_answer": True}
            assert _state(world, "release-2.2") == approved
            await bridge.close()
            await alice.sync(0)
            assert len([e for e in alice.seen if _card_event("release-2.2")(e)]) == 1

    asyncio.run(run())


def test_a_card_decided_in_signoff_is_closed_in_matrix_once(synapse: Synapse, tmp_path: Path) -> None:
    async def run() -> None:
        async with bridged(synapse, tmp_path) as (world, alice, bridge):
            await claim(world, bridge, alice, world.alice_token)
            _ask(world, "release-2.3")
            card = await until_seen(bridge, alice, _card_event("release-2.3"))
            answer_as_shown(world.person(world.alice_token), "release-2.3", "ship")  # on the web console or the API
            said = await until_seen(bridge, alice, _reply_to(world, card["event_id"], "approved in signoff"))
            assert body_of(said) == "approved in signoff by alice"
            await alice.reply(world.matrix_room, card["event_id"], "no")  # too late, from Matrix
            await until_seen(bridge, alice, _reply_to(world, card["event_id"],
                                                      "ignored: this card was already approved by alice"))
            await bridge.close()
            restarted = world.bridge()
            await restarted.start()
            await restarted.step(timeout_ms=0)
            await restarted.close()
            await alice.sync(0)
            assert len([e for e in alice.seen if _reply_to(world, card["event_id"], "approved in signoff")(e)]) == 1
            assert _state(world, "release-2.3")["state"] == "accepted"

    asyncio.run(run())
