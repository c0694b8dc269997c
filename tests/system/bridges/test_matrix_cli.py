"""`signoff bridge matrix run` as a process: it relays both ways, stops cleanly on SIGTERM, and bad
input or a refused token is an `error:`/`fix:` pair, never a traceback."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.matrix_people import MatrixPerson, body_of
from tests.support.synapse import Synapse
from tests.system.bridges.matrix_world import make_world, open_matrix_room

SIGNOFF = [sys.executable, "-m", "signoff.cli.main"]


def _args(room: str, matrix_room: str, synapse: Synapse, bot: str) -> list[str]:
    return ["bridge", "matrix", "run", "--room", room, "--matrix-room", matrix_room,
            "--homeserver", synapse.base, "--matrix-user", bot]


@pytest.mark.slow
def test_the_command_relays_both_ways_and_stops_on_sigterm(synapse: Synapse, tmp_path: Path) -> None:
    world = make_world(synapse, tmp_path)
    env = {**os.environ, "SIGNOFF_HOME": str(tmp_path / "home"), "SIGNOFF_DB": f"sqlite:///{tmp_path / 'ledger.db'}",
           "SIGNOFF_MATRIX_TOKEN": world.bot.access_token, "SIGNOFF_BRIDGE_TOKEN": world.bridge_token}

    async def run() -> subprocess.CompletedProcess[str]:
        async with MatrixPerson(synapse, world.alice) as alice:
            await open_matrix_room(world, alice)
            log = (tmp_path / "bridge.log").open("w")
            proc = subprocess.Popen([*SIGNOFF, *_args(world.room_id, world.matrix_room, synapse, world.bot.user_id)],
                                    env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
            try:
                # the bot joins when the bridge starts: then Alice speaks, and waits for the refusal
                await alice.wait_for(lambda e: e.get("type") == "m.room.member"
                                     and e.get("sender") == world.bot.user_id)
                await alice.say(world.matrix_room, "@guarded run the migration")
                refusal = await alice.wait_for(lambda e: e.get("sender") == world.bot.user_id
                                               and "not permitted" in body_of(e))
                assert body_of(refusal).startswith("guarded: ")
            finally:
                proc.send_signal(signal.SIGTERM)
                code = proc.wait(30)
                log.close()
            return subprocess.CompletedProcess(proc.args, code, (tmp_path / "bridge.log").read_text(), "")

    done = asyncio.run(run())
    assert done.returncode == 0, done.stdout
    assert "stopped; skipped Matrix events: none" in done.stdout
    assert [m["body"] for m in world.messages() if "migration" in str(m["body"])] == [
        f"{world.alice.user_id[1:]}: @guarded run the migration"]


@pytest.mark.slow
def test_a_refused_matrix_token_is_an_error_and_fix(synapse: Synapse, tmp_path: Path) -> None:
    world = make_world(synapse, tmp_path)
    env = {**os.environ, "SIGNOFF_HOME": str(tmp_path / "home"), "SIGNOFF_DB": f"sqlite:///{tmp_path / 'ledger.db'}",
           "SIGNOFF_MATRIX_TOKEN": "syt_forged", "SIGNOFF_BRIDGE_TOKEN": world.bridge_token}
    # A process, not run_cli: were the token taken, the bridge would run on (the timeout bounds it).
    done = subprocess.run([*SIGNOFF, *_args(world.room_id, "!nowhere:signoff.test", synapse, world.bot.user_id)],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error: the homeserver refused the bridge") and lines[1].startswith("fix: ")
    assert "Traceback" not in done.stderr
    assert world.ledger.case_ids("bridge.") == []  # nothing recorded
