"""Application-service mode against a real Synapse that loads the registration file signoff wrote:
each agent speaks as a puppet of its own, a person addresses it by mentioning the puppet (under the
agent's policy, as ever), the puppets' own messages never come back, and a restart doubles
nothing."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from mautrix.types import UserID

from signoff.bridges.matrix import MESSAGE_ID_KEY, BridgeStore, MatrixBridge
from signoff.bridges.matrix.appservice import Puppets, Registration, Transactions, load
from signoff.rooms.client import InProcessUserTransport, RoomsUserClient
from tests.bridges.matrix_world import World, make_world, run_until, until_seen
from tests.support.matrix_people import Event, MatrixPerson, body_of
from tests.support.net import free_port
from tests.support.synapse import Synapse

SIGNOFF = [sys.executable, "-m", "signoff.cli.main"]


@pytest.fixture(scope="module")
def as_synapse(synapse: Synapse) -> Iterator[tuple[Synapse, Registration]]:
    """A Synapse of its own (the session's has no application service), configured with a
    registration written by `signoff bridge matrix registration`."""
    folder = Path(tempfile.mkdtemp(prefix="signoff-synapse-as-"))
    server = Synapse(folder, synapse.python)
    path = folder / "signoff-registration.yaml"
    done = subprocess.run([*SIGNOFF, "bridge", "matrix", "registration", str(path), "--domain", server.server_name,
                           "--url", f"http://127.0.0.1:{free_port()}"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
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


def _from_puppet(puppet: str, text: str) -> Any:
    def match(event: Event) -> bool:
        return event.get("sender") == puppet and body_of(event) == text
    return match


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
                await run_until(bridge, lambda: len([m for m in world.messages() if m["sender"] == outsider]) == 3)
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

            async with _bridge(world, registration) as restarted:
                await restarted.step(timeout_ms=0)
            await alice.sync(0)
            assert len([e for e in alice.seen if _from_puppet(helper_puppet, "hello from the helper")(e)]) == 1

    asyncio.run(run())


def test_a_registration_is_not_overwritten_and_a_bad_one_is_an_error_and_fix(tmp_path: Path) -> None:
    path = tmp_path / "registration.yaml"
    path.write_text("not: ours\n")
    again = subprocess.run([*SIGNOFF, "bridge", "matrix", "registration", str(path), "--domain", "example.org"],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and again.stderr.startswith(f"error: {path} exists\nfix: ")
    assert path.read_text() == "not: ours\n"
    run = subprocess.run([*SIGNOFF, "bridge", "matrix", "run", "--room", "r", "--matrix-room", "!x:example.org",
                          "--homeserver", "http://127.0.0.1:9", "--matrix-user", "@signoff:example.org",
                          "--registration", str(path)], capture_output=True, text=True, timeout=60,
                         env={"SIGNOFF_BRIDGE_TOKEN": "t", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and lines[0].startswith(f"error: {path} is not a registration file written by signoff")
    assert lines[1].startswith("fix: ") and "Traceback" not in run.stderr
