"""`signoff bridge matrix claim-code`, `claims` and `revoke`: a person claims a chat account from the
command line, and bad input is an error and a fix that records nothing. The commands run in this
process (`tests/support/cli.py`); moved from tests/system/bridges/test_matrix_cli.py, whose other
tests need a Synapse."""

from __future__ import annotations

import json
import os
from pathlib import Path

from signoff.ledger import Ledger, SqlLedger
from signoff.rooms import RoomService
from signoff.rooms.client import InProcessUserTransport, RoomsUserClient
from tests.support.cli import Result, run_cli


def _claims_world(tmp_path: Path) -> tuple[RoomService, Ledger, dict[str, str], str]:
    ledger = SqlLedger.from_url(f"sqlite:///{tmp_path / 'ledger.db'}")
    service = RoomService(ledger)
    service.init()
    _, bridge_token = service.create_user("matrix-bridge", external=True)
    _, alice_token = service.create_user("alice")
    env = {**os.environ, "SIGNOFF_HOME": str(tmp_path / "home"), "SIGNOFF_DB": f"sqlite:///{tmp_path / 'ledger.db'}",
           "SIGNOFF_USER_TOKEN": alice_token}
    return service, ledger, env, bridge_token


def _cli(env: dict[str, str], *args: str) -> Result:
    return run_cli(["bridge", "matrix", *args], env)


def test_claim_code_claims_and_revoke_from_the_command_line(tmp_path: Path) -> None:
    service, ledger, env, bridge_token = _claims_world(tmp_path)
    made = _cli(env, "claim-code", "--matrix-user", "@alice:example.org")
    assert made.exit_code == 0, made.stderr
    code = made.stdout.split("claim ")[-1].strip()
    bridge = RoomsUserClient(InProcessUserTransport(service, bridge_token))
    claim = bridge.redeem_claim(code, "@alice:example.org")  # what the bridge does with the direct message

    listed = json.loads(_cli(env, "claims", "--json").stdout)
    assert [(c["claim_id"], c["external_id"], c["user_name"], c["state"]) for c in listed] == [
        (claim["claim_id"], "@alice:example.org", "alice", "active")]
    ended = _cli(env, "revoke", claim["claim_id"])
    assert ended.exit_code == 0 and "is revoked" in ended.stdout
    assert [c["state"] for c in bridge.claims()] == ["revoked"]
    ledger.close()


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
        assert done.exit_code != 0 and lines[0].startswith(expected) and lines[1].startswith("fix: "), done.stderr
        assert "Traceback" not in done.stderr
    assert ledger.head() == head  # nothing recorded
    ledger.close()
