"""Identity claims through the bridge, against a real Synapse: Alice mints a code with her signoff
token, sends it to the bot in a direct message, and from then on what she types in Matrix reaches
signoff as her (a policy that names her admits her); until then, and after she revokes the claim,
she is an outsider. Mallory, who saw the code, claims nothing with it."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from tests.support.matrix_people import MatrixPerson, body_of
from tests.support.synapse import Synapse
from tests.system.bridges.matrix_world import World, bridged, from_bot, open_direct, run_until, until_seen


def _in_signoff(world: World, text: str) -> list[dict[str, Any]]:
    return [m for m in world.messages() if str(m["body"]).endswith(text)]


def test_claim_in_a_direct_message_then_speak_as_yourself_then_revoke(synapse: Synapse, tmp_path: Path) -> None:
    async def run() -> None:
        async with bridged(synapse, tmp_path) as (world, alice, bridge):
            signoff_alice = world.person(world.alice_token)
            bot = world.bot.user_id
            # unclaimed: an outsider, whom the policy naming Alice does not admit
            await alice.say(world.matrix_room, "@deployer deploy v1")
            refusal = await until_seen(bridge, alice, lambda e: e["room_id"] == world.matrix_room
                                       and e.get("sender") == bot and "not permitted" in body_of(e))
            assert body_of(refusal).startswith("deployer: @matrix-bridge ")

            code = signoff_alice.claim_code("matrix-bridge", world.alice.user_id)["code"]
            direct = await open_direct(world, alice)
            await alice.say(direct, f"claim {code}")
            claimed = await until_seen(bridge, alice, from_bot(world, direct, "claimed: "))
            assert f"{world.alice.user_id} now speaks as alice in signoff" in body_of(claimed)

            await alice.say(world.matrix_room, "@deployer deploy v2")
            await run_until(bridge, lambda: bool(_in_signoff(world, "@deployer deploy v2")))
            [posted] = _in_signoff(world, "@deployer deploy v2")
            assert posted["sender"] == world.service.user_by_name("alice").sender
            assert posted["body"] == "@deployer deploy v2"  # as typed: no outsider prefix
            assert not [m for m in world.messages() if m["thread_id"] == posted["message_id"]]  # no refusal

            [claim] = signoff_alice.claims()
            signoff_alice.revoke_claim(claim["claim_id"])
            await alice.say(world.matrix_room, "@deployer deploy v3")
            await run_until(bridge, lambda: bool(_in_signoff(world, "@deployer deploy v3")))
            [outsider] = _in_signoff(world, "@deployer deploy v3")
            assert outsider["body"] == f"{world.alice.user_id[1:]}: @deployer deploy v3"
            assert outsider["sender"] == world.service.user_by_name("matrix-bridge").sender

    asyncio.run(run())


def test_a_code_seen_by_someone_else_claims_nothing_for_them(synapse: Synapse, tmp_path: Path) -> None:
    async def run() -> None:
        async with bridged(synapse, tmp_path) as (world, alice, bridge):
            code = world.person(world.alice_token).claim_code("matrix-bridge", world.alice.user_id)["code"]
            mallory_account = synapse.register(f"mallory-{uuid.uuid4().hex[:8]}")
            async with MatrixPerson(synapse, mallory_account) as mallory:
                direct = await open_direct(world, mallory)
                await mallory.say(direct, f"claim {code}")
                refused = await until_seen(bridge, mallory, from_bot(world, direct, "refused: "))
                assert "unknown, already used, expired" in body_of(refused)
                assert "\nfix: " in body_of(refused)
                await mallory.say(direct, "claim")  # not a claim: counted, not answered
                await run_until(bridge, lambda: bridge.skipped["direct_other"] == 1)
            assert world.person(world.alice_token).claims() == []
            # the code is still Alice's to use
            direct = await open_direct(world, alice)
            await alice.say(direct, f"claim {code}")
            await until_seen(bridge, alice, from_bot(world, direct, "claimed: "))

    asyncio.run(run())
