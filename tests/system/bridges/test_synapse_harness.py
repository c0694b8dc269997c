"""The test Synapse itself: it answers, registers accounts through the shared secret, refuses
open registration, and lets a burst through that its default rate limits would throttle."""

from __future__ import annotations

import asyncio

import httpx
from mautrix.types import RoomID, UserID

from signoff.kernel.tls import tls_context
from tests.support.matrix_people import MatrixPerson, body_of
from tests.support.synapse import Synapse
from tests.support.web import HTTP_WAIT

BURST = 40  # Synapse's default rc_message allows a burst of 10, then 0.2 messages a second


def test_open_registration_is_refused(synapse: Synapse) -> None:
    reply = httpx.post(f"{synapse.base}/_matrix/client/v3/register", json={"username": "intruder",
                                                                           "password": "x" * 20}, verify=tls_context(),
                       timeout=HTTP_WAIT)
    assert reply.status_code == 403
    assert httpx.get(f"{synapse.base}/health", verify=tls_context(), timeout=HTTP_WAIT).text == "OK"


def test_a_burst_is_delivered_without_throttling(synapse: Synapse) -> None:
    alice, bob = synapse.register("harness-alice"), synapse.register("harness-bob")

    async def run() -> list[str]:
        async with MatrixPerson(synapse, alice) as sender, MatrixPerson(synapse, bob) as reader:
            room = await sender.api.create_room(invitees=[UserID(bob.user_id)])
            await reader.api.join_room(RoomID(room))
            for i in range(BURST):
                await sender.say(room, f"burst {i}")  # a 429 raises here: mautrix does not retry it
            await reader.wait_for(lambda e: e["room_id"] == room and body_of(e) == f"burst {BURST - 1}")
            return [body_of(e) for e in reader.seen if e["room_id"] == room and e["type"] == "m.room.message"]

    assert asyncio.run(run()) == [f"burst {i}" for i in range(BURST)]
