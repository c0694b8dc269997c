"""Which server `signoff rooms` acts on: every command that changes or lists the embedded
server's identities says so, and with `[rooms] url` set (here a real `signoff serve`) it refuses
with error/fix and changes nothing anywhere, instead of silently acting on this home's database
while the agents and workflows use the server at the url."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from signoff.ledger import SqlLedger
from signoff.rooms import RoomService
from tests.support.cli import Result, run_cli
from tests.support.serve import Served, served

__all__ = ["served"]

COMMANDS = [
    ("user", "add", "carol"),
    ("user", "list"),
    ("agent", "add", "helper2", "--owner", "alice"),
    ("room", "create", "side", "--owner", "alice"),
    ("role", "grant", "dba", "alice"),
    ("token", "rotate", "user", "alice"),
    ("init",),
]


def _run(home: Path, config: Path | None, *args: str) -> Result:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}
    env.update({"SIGNOFF_HOME": str(home / ".signoff"), "SIGNOFF_DB": f"sqlite:///{home / 'client.db'}"})
    if config is not None:
        env["SIGNOFF_CONFIG"] = str(config)
    return run_cli(["rooms", *args], env, cwd=home)


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_with_rooms_url_set_a_rooms_command_refuses_and_changes_nothing(served: Served, tmp_path: Path,
                                                                       args: tuple[str, ...]) -> None:
    config = tmp_path / "signoff.toml"
    config.write_text(f'[rooms]\nurl = "{served.url}"\n')
    ran = _run(tmp_path, config, *args)
    assert ran.exit_code != 0, ran.stdout
    assert "error:" in ran.stderr and "fix:" in ran.stderr and "Traceback" not in ran.stderr
    assert served.url in ran.stderr and "nothing was changed" in ran.stderr
    # Nothing was made in this home's database, nor on the server.
    local = SqlLedger.from_url(f"sqlite:///{tmp_path / 'client.db'}")
    try:
        assert [u.name for u in RoomService(local).users()] == []
    finally:
        local.close()
    remote = SqlLedger.from_url(f"sqlite:///{served.home / 'rooms.db'}")
    try:
        assert sorted(u.name for u in RoomService(remote).users()) == ["admin", "alice", "bob"]
    finally:
        remote.close()


def test_without_rooms_url_a_rooms_command_says_it_acts_on_this_homes_server(tmp_path: Path) -> None:
    ran = _run(tmp_path, None, "user", "add", "carol", "--json")
    assert ran.exit_code == 0, ran.stderr
    assert "server: this home's embedded rooms server (database sqlite:///" in ran.stderr
    assert '"name": "carol"' in ran.stdout  # standard output stays the command's answer
