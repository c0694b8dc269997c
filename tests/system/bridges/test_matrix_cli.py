"""`signoff bridge matrix run` as a process: it relays both ways, stops cleanly on SIGTERM, and bad
input or a refused token is an `error:`/`fix:` pair, never a traceback."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from signoff.ledger import Ledger, SqlLedger
from signoff.rooms import RoomService
from signoff.rooms.client import InProcessUserTransport, RoomsUserClient
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
    done = subprocess.run([*SIGNOFF, *_args(world.room_id, "!nowhere:signoff.test", synapse, world.bot.user_id)],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error: the homeserver refused the bridge") and lines[1].startswith("fix: ")
    assert "Traceback" not in done.stderr
    assert world.ledger.case_ids("bridge.") == []  # nothing recorded


def _claims_world(tmp_path: Path) -> tuple[RoomService, Ledger, dict[str, str], str]:
    ledger = SqlLedger.from_url(f"sqlite:///{tmp_path / 'ledger.db'}")
    service = RoomService(ledger)
    service.init()
    _, bridge_token = service.create_user("matrix-bridge", external=True)
    _, alice_token = service.create_user("alice")
    env = {**os.environ, "SIGNOFF_HOME": str(tmp_path / "home"), "SIGNOFF_DB": f"sqlite:///{tmp_path / 'ledger.db'}",
           "SIGNOFF_USER_TOKEN": alice_token}
    return service, ledger, env, bridge_token


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SIGNOFF, "bridge", "matrix", *args], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.slow
def test_claim_code_claims_and_revoke_from_the_command_line(tmp_path: Path) -> None:
    service, ledger, env, bridge_token = _claims_world(tmp_path)
    made = _cli(env, "claim-code", "--matrix-user", "@alice:example.org")
    assert made.returncode == 0, made.stderr
    code = made.stdout.split("claim ")[-1].strip()
    bridge = RoomsUserClient(InProcessUserTransport(service, bridge_token))
    claim = bridge.redeem_claim(code, "@alice:example.org")  # what the bridge does with the direct message

    listed = json.loads(_cli(env, "claims", "--json").stdout)
    assert [(c["claim_id"], c["external_id"], c["user_name"], c["state"]) for c in listed] == [
        (claim["claim_id"], "@alice:example.org", "alice", "active")]
    ended = _cli(env, "revoke", claim["claim_id"])
    assert ended.returncode == 0 and "is revoked" in ended.stdout
    assert [c["state"] for c in bridge.claims()] == ["revoked"]
    ledger.close()


@pytest.mark.slow
def test_claim_commands_refuse_bad_input_with_error_and_fix(tmp_path: Path) -> None:
    _, ledger, env, _ = _claims_world(tmp_path)
    head = ledger.head()
    for args, env_, expected in (
            (("claim-code", "--matrix-user", "alice"), env, "error: 'alice' is not a chat account id"),
            (("claim-code", "--matrix-user", "@alice:x", "--bridge", "nobody"), env, "error: no user named 'nobody'"),
            (("revoke", "no-such-claim"), env, "error: no claim 'no-such-claim' of yours"),
            (("claims",), {**env, "SIGNOFF_USER_TOKEN": "sou_forged"}, "error: invalid or unknown token"),
            (("claims",), {k: v for k, v in env.items() if k != "SIGNOFF_USER_TOKEN"},
             "error: SIGNOFF_USER_TOKEN is not set")):
        done = _cli(env_, *args)
        lines = done.stderr.strip().splitlines()
        assert done.returncode != 0 and lines[0].startswith(expected) and lines[1].startswith("fix: "), done.stderr
        assert "Traceback" not in done.stderr
    assert ledger.head() == head  # nothing recorded
    ledger.close()
