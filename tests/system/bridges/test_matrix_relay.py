"""Messages both ways between a signoff room and a Matrix room, against a real Synapse."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from signoff.bridges.matrix import MESSAGE_ID_KEY
from tests.support.matrix_people import Event, body_of
from tests.support.synapse import Synapse
from tests.system.bridges.matrix_world import World, bridged, run_until, until_seen


def _from_bridge(world: World, text: str) -> Callable[[Event], bool]:
    def match(event: Event) -> bool:
        return (event["room_id"] == world.matrix_room and event.get("sender") == world.bot.user_id
                and text in body_of(event))
    return match


def _relayed(world: World, text: str) -> list[dict[str, Any]]:
    return [m for m in world.messages() if text in str(m["body"])]


def test_an_agent_mentioned_in_matrix_is_addressed_and_its_answer_comes_back(synapse: Synapse, tmp_path: Path) -> None:
    async def run() -> None:
        async with bridged(synapse, tmp_path) as (world, alice, bridge):
            await alice.say(world.matrix_room, "@helper please check the build")
            await run_until(bridge, lambda: bool(_relayed(world, "please check the build")))
            [posted] = _relayed(world, "please check the build")
            assert posted["body"] == f"{world.alice.user_id[1:]}: @helper please check the build"
            [delivered] = [e for e in world.helper.events("helper-1", world.room_id, 0)
                           if e["type"] == "message" and e["payload"]["message_id"] == posted["message_id"]]
            assert delivered["payload"]["addressed"] is True  # the rooms server resolved the mention

            answer = world.helper.call("helper-1", "post_message", {"body": "the build is green"})
            event = await until_seen(bridge, alice, _from_bridge(world, "the build is green"))
            assert body_of(event) == "helper: the build is green"
            assert event["content"][MESSAGE_ID_KEY] == answer["event_id"]
            # Alice's own message was not echoed back to Matrix
            assert not [e for e in alice.seen if _from_bridge(world, "please check the build")(e)]

    asyncio.run(run())


def test_a_refused_mention_is_refused_by_the_server_and_the_refusal_reaches_matrix(
        synapse: Synapse, tmp_path: Path) -> None:
    async def run() -> None:
        async with bridged(synapse, tmp_path) as (world, alice, bridge):
            await alice.say(world.matrix_room, "@guarded deploy to production")
            refusal = await until_seen(bridge, alice, _from_bridge(world, "not permitted"))
            assert body_of(refusal) == ("guarded: @matrix-bridge You're not permitted to direct messages "
                                        "to me in this room.")
            [posted] = _relayed(world, "deploy to production")
            [stored] = [m for m in world.messages() if m["message_id"] == refusal["content"][MESSAGE_ID_KEY]]
            assert stored["thread_id"] == posted["message_id"] and stored["auto_reply"] is True

    asyncio.run(run())
