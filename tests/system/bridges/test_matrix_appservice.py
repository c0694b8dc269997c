"""Application-service mode against a real Synapse that loads the registration file signoff wrote:
each agent speaks as a puppet of its own, a person addresses it by mentioning the puppet (under the
agent's policy, as ever), the puppets' own messages never come back, and a restart doubles
nothing."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from mautrix.types import UserID

from signoff.bridges.matrix import MESSAGE_ID_KEY, BridgeStore, MatrixBridge
from signoff.bridges.matrix.cards import CARD_KEY
from signoff.bridges.matrix.puppets import Puppets
from signoff.bridges.matrix.pushes import Transactions
from signoff.bridges.matrix.registration import Registration, load
from signoff.kernel.tls import tls_context
from signoff.rooms.client import HttpUserTransport, InProcessUserTransport, RoomsUserClient
from tests.support.cli import run_cli
from tests.support.matrix_people import Event, MatrixPerson, body_of
from tests.support.net import free_port
from tests.support.serve import Process, serve
from tests.support.synapse import MatrixAccount, Synapse
from tests.system.bridges.matrix_world import World, claim, from_bot, make_world, run_until, until_seen


@pytest.fixture(scope="module")
def as_synapse(synapse: Synapse) -> Iterator[tuple[Synapse, Registration]]:
    """A Synapse of its own (the session's has no application service), configured with a
    registration written by `signoff bridge matrix registration`."""
    folder = Path(tempfile.mkdtemp(prefix="signoff-synapse-as-"))
    server = Synapse(folder, synapse.python)
    path = folder / "signoff-registration.yaml"
    # The bridge's push address is chosen here: Synapse reads it from the registration before anything
    # listens there (the one kind of port the suite chooses, tests/support/net.py).
    done = run_cli(["bridge", "matrix", "registration", str(path), "--domain", server.server_name,
                    "--url", f"http://127.0.0.1:{free_port()}"], dict(os.environ))
    assert done.exit_code == 0, done.stderr
    assert path.stat().st_mode & 0o077 == 0  # it holds both tokens
    server.add_config(f"app_service_config_files: ['{path}']\n")
    try:
        server.start()
        yield server, load(path)
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.asynccontextmanager
async def _bridge(world: World, registration: Registration) -> AsyncIterator[MatrixBridge]:
    """A started bridge in application-service mode, taking the homeserver's pushes at the
    registration's URL, as `signoff bridge matrix run --registration` runs it."""
    puppets = Puppets(registration, world.synapse.base)
    rooms = RoomsUserClient(InProcessUserTransport(world.service, world.bridge_token))
    bridge = MatrixBridge(rooms, BridgeStore(world.ledger, world.room_id, world.matrix_room), puppets.bot,
                          world.room_id, world.matrix_room, puppets)
    pushes = Transactions(registration.hs_token, bridge.receive)
    where = urlsplit(registration.url or "")
    await pushes.start(str(where.hostname), int(where.port or 0))
    try:
        await bridge.start()
        yield bridge
    finally:
        await pushes.stop()
        await bridge.close()


# How long a test waits for the homeserver's pushes. A push the homeserver could not deliver (the
# bridge not listening yet, or not started: NotReady) is sent again by Synapse's recoverer after
# 2, 4, 8, 16, 32, 64, 128 s..., with everything after it queued behind it, so under load the first
# pushes can come minutes late: 240 s ran out at load 6 (2026-12-07), one retry before 2+...+128 = 254 s.
PUSH_WAIT = 600.0


def _relayed(world: World, text: str) -> list[dict[str, Any]]:
    return [m for m in world.messages() if str(m["body"]).endswith(text)]


def _from_puppet(puppet: str, text: str) -> Any:
    def match(event: Event) -> bool:
        return event.get("sender") == puppet and body_of(event) == text
    return match


@pytest.mark.slow
def test_agents_speak_as_puppets_and_a_mention_of_a_puppet_addresses_its_agent(
        as_synapse: tuple[Synapse, Registration], tmp_path: Path) -> None:
    server, registration = as_synapse
    world = make_world(server, tmp_path)
    helper_puppet = f"@{registration.puppet_prefix}helper:{server.server_name}"

    async def run() -> None:
        async with MatrixPerson(server, world.alice) as alice:
            world.matrix_room = str(await alice.api.create_room(invitees=[UserID(registration.bot)]))
            async with _bridge(world, registration) as bridge:
                answer = world.helper.call("helper-1", "post_message", {"body": "hello from the helper"})
                said = await until_seen(bridge, alice, _from_puppet(helper_puppet, "hello from the helper"))
                assert said["content"][MESSAGE_ID_KEY] == answer["event_id"]

                # a pill: the client lists the puppet in m.mentions; a typed id: in the text
                await alice.say(world.matrix_room, "helper: check the build",
                                **{"m.mentions": {"user_ids": [helper_puppet]}})
                await alice.say(world.matrix_room, f"{helper_puppet} and the docs")
                await alice.say(world.matrix_room, f"@{registration.puppet_prefix}guarded:{server.server_name} "
                                "drop the table")
                outsider = world.service.user_by_name("matrix-bridge").sender
                await run_until(bridge, lambda: len([m for m in world.messages() if m["sender"] == outsider]) == 3,
                                PUSH_WAIT)
                by_text = {str(m["body"]).split(": ", 1)[-1]: m for m in world.messages() if m["sender"] == outsider}
                assert set(by_text) == {"@helper helper: check the build", "@helper and the docs",
                                        "@guarded drop the table"}
                deliveries = {e["payload"]["message_id"]: e["payload"]["addressed"]
                              for e in world.helper.events("helper-1", world.room_id, 0) if e["type"] == "message"}
                assert deliveries[by_text["@helper helper: check the build"]["message_id"]] is True
                assert deliveries[by_text["@helper and the docs"]["message_id"]] is True
                # guarded's policy refuses the bridge's outsider; its refusal comes back from its puppet
                guarded_puppet = f"@{registration.puppet_prefix}guarded:{server.server_name}"
                await until_seen(bridge, alice, lambda e: e.get("sender") == guarded_puppet
                                 and "not permitted" in body_of(e))
                # the puppets' own messages were not relayed back into signoff
                assert not [m for m in world.messages() if "hello from the helper" in str(m["body"])
                            and m["sender_kind"] != "agent"]

            # while the bridge is down, Alice speaks: the homeserver keeps the push and sends it again
            await alice.say(world.matrix_room, "said while the bridge was down")
            async with _bridge(world, registration) as restarted:
                await run_until(restarted, lambda: bool(_relayed(world, "said while the bridge was down")), PUSH_WAIT)
                server.stop()  # the homeserver goes away, and comes back
                try:
                    world.helper.call("helper-1", "post_message", {"body": "said while synapse was down"})
                    assert await restarted.attempt(restarted.step) is False  # logged, no crash
                finally:
                    server.start()
                await until_seen(restarted, alice, _from_puppet(helper_puppet, "said while synapse was down"))
                await alice.say(world.matrix_room, "said after synapse came back")
                await run_until(restarted, lambda: bool(_relayed(world, "said after synapse came back")), PUSH_WAIT)
            async with _bridge(world, registration) as third:
                await third.step(timeout_ms=0)
            await alice.sync(0)
            for text in ("hello from the helper", "said while synapse was down"):
                assert len([e for e in alice.seen if _from_puppet(helper_puppet, text)(e)]) == 1, text
            for text in ("said while the bridge was down", "said after synapse came back"):
                assert len(_relayed(world, text)) == 1, text

    asyncio.run(run())


def test_a_claim_by_direct_message_and_a_card_work_in_application_service_mode(
        as_synapse: tuple[Synapse, Registration], tmp_path: Path) -> None:
    server, registration = as_synapse
    world = make_world(server, tmp_path)
    world.bot = MatrixAccount(str(registration.bot), registration.as_token, "", "")  # the bot is the service's

    async def run() -> None:
        async with MatrixPerson(server, world.alice) as alice:
            world.matrix_room = str(await alice.api.create_room(invitees=[UserID(registration.bot)]))
            async with _bridge(world, registration) as bridge:
                await claim(world, bridge, alice, world.alice_token)  # the invitation and the code are pushed
                await alice.say(world.matrix_room, "@deployer go")
                await run_until(bridge, lambda: bool(_relayed(world, "@deployer go")), PUSH_WAIT)
                [posted] = _relayed(world, "@deployer go")
                assert (posted["sender"], posted["body"]) == (world.service.user_by_name("alice").sender,
                                                              "@deployer go")
                world.helper.call("helper-1", "request_approval", {
                    "request_id": "as-card", "title": "Go?", "expires_at": world.service.clock.now() + 600,
                    "responders": ["alice"], "options": [{"id": "go", "label": "Go", "decision": "accept"}]})
                # The card's id is the asking agent's id, a dot, and the request id.
                card = await until_seen(bridge, alice, lambda e: str(e.get("content", {}).get(CARD_KEY, ""))
                                        .partition(".")[2] == "as-card")
                assert card["sender"] == registration.bot
                await alice.reply(world.matrix_room, card["event_id"], "yes")
                await until_seen(bridge, alice, from_bot(world, world.matrix_room, "approved by alice"))
                admin = world.service.user_by_name("admin")
                assert world.service.approval(admin, "as-card").state == "accepted"

    asyncio.run(run())


def _serve(env: dict[str, str], again_on: str | None = None) -> tuple[Process, str]:
    server, url = serve(env, again_on=again_on)  # again on its URL: the bridge holds it
    server.ready(f"{url}/health")
    return server, url


@pytest.mark.slow
def test_a_push_is_acknowledged_only_once_recorded_and_hostile_pushes_are_refused_or_counted(
        as_synapse: tuple[Synapse, Registration], tmp_path: Path) -> None:
    """What the homeserver does, done by hand: pushes to the registration's URL with its hs_token."""
    server, registration = as_synapse
    world = make_world(server, tmp_path)
    env = {**os.environ, "SIGNOFF_HOME": str(tmp_path / "home"), "SIGNOFF_DB": f"sqlite:///{tmp_path / 'ledger.db'}"}
    url = f"{registration.url}/_matrix/app/v1/transactions"
    auth = {"Authorization": f"Bearer {registration.hs_token}"}
    me = world.alice.user_id

    def message(event_id: str, body: Any) -> dict[str, Any]:
        return {"type": "m.room.message", "room_id": world.matrix_room, "sender": me, "event_id": event_id,
                "content": {"msgtype": "m.text", "body": body}}

    def relayed(text: str) -> list[dict[str, Any]]:
        return [m for m in world.messages() if str(m["body"]).endswith(text)]

    async def run() -> None:
        nonlocal signoff
        async with MatrixPerson(server, world.alice) as alice, httpx.AsyncClient(timeout=30,
                                                                                 verify=tls_context()) as push:
            world.matrix_room = str(await alice.api.create_room(invitees=[UserID(registration.bot)]))
            puppets = Puppets(registration, server.base)
            rooms = RoomsUserClient(HttpUserTransport(rooms_url, world.bridge_token))
            bridge = MatrixBridge(rooms, BridgeStore(world.ledger, world.room_id, world.matrix_room), puppets.bot,
                                  world.room_id, world.matrix_room, puppets)
            pushes = Transactions(registration.hs_token, bridge.receive)
            where = urlsplit(registration.url or "")
            await pushes.start(str(where.hostname), int(where.port or 0))
            try:
                early = await push.put(f"{url}/early", headers=auth, json={"events": [message("$early", "early")]})
                assert early.status_code == 503  # not started: the homeserver keeps it and sends it again
                await bridge.start()
                head = world.ledger.head()
                for headers, body, status in (({}, {"events": []}, 403),
                                              ({"Authorization": "Bearer forged"}, {"events": []}, 403),
                                              (auth, "not json", 400), (auth, {"events": 5}, 400)):
                    sent = await push.put(f"{url}/bad", headers=headers,
                                          **({"content": body} if isinstance(body, str) else {"json": body}))
                    assert sent.status_code == status and "errcode" in sent.json()
                assert world.ledger.head() == head  # nothing recorded

                flood = ["junk", {}, {**message("$u", "x"), "type": "org.hostile.flood"},
                         message("$big", "x" * 20_000), message("$num", 12345),
                         message("$ok", "@helper after the push flood")]
                assert (await push.put(f"{url}/t1", headers=auth, json={"events": flood})).status_code == 200
                assert dict(bridge.skipped) == {"malformed": 3, "unknown_type": 1, "too_large": 1}
                # the homeserver may send a transaction twice: the junk is counted again, nothing doubles
                assert (await push.put(f"{url}/t1", headers=auth, json={"events": flood})).status_code == 200
                assert [m["body"] for m in relayed("after the push flood")] == [
                    f"{me[1:]}: @helper after the push flood"]

                signoff.stop()  # the rooms server goes away: the push is not taken
                down = await push.put(f"{url}/t2", headers=auth, json={"events": [message("$down", "while down")]})
                assert down.status_code == 503 and relayed("while down") == []
                signoff, _ = _serve(env, again_on=rooms_url)
                for _ in range(2):  # sent again once signoff is back: relayed once
                    again = await push.put(f"{url}/t2", headers=auth,
                                           json={"events": [message("$down", "while down")]})
                    assert again.status_code == 200
                assert len(relayed("while down")) == 1
            finally:
                await pushes.stop()
                await bridge.close()
                rooms.close()

    signoff, rooms_url = _serve(env)
    try:
        asyncio.run(run())
    finally:
        signoff.stop()
