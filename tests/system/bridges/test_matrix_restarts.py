"""Restarts and hostile input: both positions live in the ledger, so nothing is lost or doubled
when the bridge or Synapse restarts, and junk from Matrix is counted and skipped."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from signoff.bridges.matrix import MESSAGE_ID_KEY, MatrixBridge
from signoff.ledger import NewEvent
from signoff.rooms.client import InProcessUserTransport, RoomsUserClient
from tests.support.matrix_people import MatrixPerson, body_of
from tests.support.serve import Process, serve
from tests.support.synapse import Synapse
from tests.system.bridges.matrix_world import (
    World,
    bridged,
    claim,
    make_world,
    open_matrix_room,
    run_until,
    until_seen,
)


def _in_signoff(world: World, text: str) -> list[dict[str, Any]]:
    return [m for m in world.messages() if str(m["body"]).endswith(text)]


def _in_matrix(world: World, person: MatrixPerson, text: str) -> list[dict[str, Any]]:
    return [e for e in person.seen if e["room_id"] == world.matrix_room and e.get("sender") == world.bot.user_id
            and body_of(e).endswith(text)]


async def _both_ways(world: World, bridge: MatrixBridge, alice: MatrixPerson, to_signoff: str,
                     to_matrix: str) -> None:
    await run_until(bridge, lambda: bool(_in_signoff(world, to_signoff)))
    await until_seen(bridge, alice, lambda e: e in _in_matrix(world, alice, to_matrix))


@pytest.mark.slow
def test_nothing_is_lost_or_doubled_across_bridge_and_synapse_restarts(synapse: Synapse, tmp_path: Path) -> None:
    world = make_world(synapse, tmp_path)

    async def run() -> None:
        async with MatrixPerson(synapse, world.alice) as alice:
            await open_matrix_room(world, alice)
            first = world.bridge()
            await first.start()
            await alice.say(world.matrix_room, "one")
            world.helper.call("helper-1", "post_message", {"body": "two"})
            await _both_ways(world, first, alice, "one", "two")
            await first.close()  # the bridge process is gone

            await alice.say(world.matrix_room, "three")  # while the bridge is down, on both sides
            world.helper.call("helper-1", "post_message", {"body": "four"})
            second = world.bridge()
            await second.start()
            await _both_ways(world, second, alice, "three", "four")

            synapse.stop()
            try:
                assert await second.attempt(second.step) is False  # the homeserver is gone: logged, no crash
                world.helper.call("helper-1", "post_message", {"body": "five"})
            finally:
                synapse.start()
            await alice.say(world.matrix_room, "six")
            await _both_ways(world, second, alice, "six", "five")
            await second.close()

            third = world.bridge()  # one more restart replays the ledger's whole record
            await third.start()
            await third.step(timeout_ms=0)
            await alice.sync(0)
            await third.close()

            for text in ("one", "three", "six"):
                assert len(_in_signoff(world, text)) == 1, text
            for text in ("two", "four", "five"):
                [event] = _in_matrix(world, alice, text)
                [original] = [m for m in world.messages() if m["body"] == text]
                assert event["content"][MESSAGE_ID_KEY] == original["message_id"]
            assert not _in_matrix(world, alice, "one")  # nothing from Matrix echoed back

    asyncio.run(run())


@pytest.mark.slow
def test_nothing_is_lost_or_doubled_across_a_restart_of_signoff_serve(synapse: Synapse, tmp_path: Path) -> None:
    world = make_world(synapse, tmp_path)
    env = {**os.environ, "SIGNOFF_HOME": str(tmp_path / "home"), "SIGNOFF_DB": f"sqlite:///{tmp_path / 'ledger.db'}"}

    def start(again_on: str | None = None) -> tuple[Process, str]:
        server, url = serve(env, again_on=again_on)  # again on its URL: the bridge holds it
        server.ready(f"{url}/health")
        return server, url

    async def run() -> None:
        server, url = start()
        try:
            async with MatrixPerson(synapse, world.alice) as alice:
                await open_matrix_room(world, alice)
                bridge = world.bridge(rooms_url=url)
                await bridge.start()
                await alice.say(world.matrix_room, "one")
                world.helper.call("helper-1", "post_message", {"body": "two"})
                await _both_ways(world, bridge, alice, "one", "two")

                await claim(world, bridge, alice, world.alice_token)  # redeemed over HTTP
                server.stop()
                assert await bridge.attempt(bridge.step) is False  # signoff is gone: logged, no crash
                await alice.say(world.matrix_room, "three")
                world.helper.call("helper-1", "post_message", {"body": "four"})  # the ledger is still there
                server, _ = start(again_on=url)
                await _both_ways(world, bridge, alice, "three", "four")
                await bridge.close()
                for text in ("one", "three"):
                    assert len(_in_signoff(world, text)) == 1, text
                # said before the claim: an outsider; after it, and across the restart: Alice herself
                [one], [three] = _in_signoff(world, "one"), _in_signoff(world, "three")
                assert one["sender"] == world.service.user_by_name("matrix-bridge").sender
                assert (three["sender"], three["body"]) == (world.service.user_by_name("alice").sender, "three")
                for text in ("two", "four"):
                    assert len(_in_matrix(world, alice, text)) == 1, text
        finally:
            server.stop()

    asyncio.run(run())


def test_relays_cut_by_a_crash_are_settled_once_and_a_lookalike_is_never_adopted(
        synapse: Synapse, tmp_path: Path) -> None:
    async def run() -> None:
        async with bridged(synapse, tmp_path) as (world, alice, bridge):
            await alice.say(world.matrix_room, "first")
            await run_until(bridge, lambda: bool(_in_signoff(world, "first")))
            speaker = world.alice.user_id[1:]
            # The crash: the bridge recorded both relays as pending and died; one post had reached
            # the rooms server, the other had not. Meanwhile Mallory, a signoff user in the room,
            # posted the very text of the first, hoping the bridge would adopt hers.
            reached, lost = await alice.say(world.matrix_room, "second"), await alice.say(world.matrix_room, "third")
            for event_id, text in ((reached, "second"), (lost, "third")):
                bridge.store.record(bridge.state, NewEvent("relay.pending", {
                    "matrix_event_id": event_id, "body": f"{speaker}: {text}", "signoff_head": bridge.state.after}))
            admin = world.service.user_by_name("admin")
            _, mallory_token = world.service.create_user("mallory")
            world.service.add_member(admin, world.room_id, user_name="mallory")
            lookalike = RoomsUserClient(InProcessUserTransport(world.service, mallory_token)).post(
                world.room_id, f"{speaker}: second")
            genuine = RoomsUserClient(InProcessUserTransport(world.service, world.bridge_token)).post(
                world.room_id, f"{speaker}: second")

            restarted = world.bridge()
            await restarted.start()
            await restarted.step(timeout_ms=0)  # the sync that replays both Matrix events
            await restarted.close()
            assert restarted.state.to_signoff[reached] == genuine["event_id"] != lookalike["event_id"]
            assert restarted.state.pending == {}
            assert [m["message_id"] for m in _in_signoff(world, "second")] == [lookalike["event_id"],
                                                                                genuine["event_id"]]
            [third] = _in_signoff(world, "third")
            assert restarted.state.to_signoff[lost] == third["message_id"]

    asyncio.run(run())


def test_a_hostile_flood_is_counted_and_skipped_and_the_next_message_still_arrives(
        synapse: Synapse, tmp_path: Path) -> None:
    async def run() -> None:
        async with bridged(synapse, tmp_path) as (world, alice, bridge):
            room = world.matrix_room
            before = len(world.messages())
            for i in range(60):
                await alice.api.send_message_event(room, "org.hostile.flood", {"n": i})  # type: ignore[arg-type]
            # Synapse refuses a message without a string body or msgtype; these two it accepts
            for junk in ({"msgtype": "m.text", "body": "   "},
                         {"msgtype": "m.text", "body": "bad edit", "m.relates_to": {"rel_type": "m.replace"}}):
                await alice.api.send_message_event(room, "m.room.message", junk)  # type: ignore[arg-type]
            for _ in range(3):
                await alice.say(room, "picture", msgtype="m.image")
            await alice.say(room, "x" * 20_000)
            await alice.say(room, "@helper after the flood")
            await run_until(bridge, lambda: bool(_in_signoff(world, "@helper after the flood")))

            relayed = world.messages()[before:]
            assert [m["body"] for m in relayed] == [f"{world.alice.user_id[1:]}: @helper after the flood"]
            assert dict(bridge.skipped) == {"unknown_type": 60, "malformed": 2, "unsupported_msgtype": 3,
                                            "too_large": 1}

    asyncio.run(run())


def test_a_claimed_persons_relays_cut_by_a_crash_are_settled_once_as_that_person(
        synapse: Synapse, tmp_path: Path) -> None:
    async def run() -> None:
        async with bridged(synapse, tmp_path) as (world, alice, bridge):
            await claim(world, bridge, alice, world.alice_token)
            await alice.say(world.matrix_room, "first")
            await run_until(bridge, lambda: bool(_in_signoff(world, "first")))
            me = str(alice.user_id)
            reached, lost = await alice.say(world.matrix_room, "second"), await alice.say(world.matrix_room, "third")
            for event_id, text in ((reached, "second"), (lost, "third")):
                bridge.store.record(bridge.state, NewEvent("relay.pending", {
                    "matrix_event_id": event_id, "body": text, "sender": me, "signoff_head": bridge.state.after}))
            # Mallory posts the very text first; then the relay that reached the server before the crash
            admin = world.service.user_by_name("admin")
            _, mallory_token = world.service.create_user("mallory")
            world.service.add_member(admin, world.room_id, user_name="mallory")
            lookalike = world.person(mallory_token).post(world.room_id, "second")
            genuine = world.person(world.bridge_token).relay(world.room_id, me, "second")

            restarted = world.bridge()
            await restarted.start()
            await restarted.step(timeout_ms=0)
            await restarted.close()
            alice_sender = world.service.user_by_name("alice").sender
            assert restarted.state.to_signoff[reached] == genuine["event_id"] != lookalike["event_id"]
            assert restarted.state.pending == {}
            assert [m["message_id"] for m in world.messages() if m["body"] == "second"] == [
                lookalike["event_id"], genuine["event_id"]]
            [third] = [m for m in world.messages() if m["body"] == "third"]
            assert restarted.state.to_signoff[lost] == third["message_id"] and third["sender"] == alice_sender
            # adopting the claimed person's post did not take her for the bridge's own sender (the
            # bridge has posted nothing as itself yet)
            assert restarted.state.own_sender is None

    asyncio.run(run())
