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


def _client_home(served: Served, tmp_path: Path) -> Path:
    """A home whose [rooms] url is the served server, with the fixer and the helper registered."""
    from signoff.rooms.client import RoomsConfig

    config = tmp_path / "signoff.toml"
    config.write_text(f'[rooms]\nurl = "{served.url}"\nkeys = "{tmp_path / "agents.json"}"\n'
                      '[rooms.roles.fixer]\nname = "fixer"\n[rooms.roles.helper]\nname = "helper"\n')
    RoomsConfig(served.url, tmp_path / "agents.json").store_keys({
        "fixer": {"name": "fixer", "agent_id": served.agent.agent_id, "api_key": served.agent.key},
        "helper": {"name": "helper", "agent_id": served.other.agent_id, "api_key": served.other.key}})
    return config


def test_with_rooms_url_set_rooms_policies_and_posts_are_set_up_on_that_server(served: Served,
                                                                              tmp_path: Path) -> None:
    """Setting a workflow up through signoff's own commands on the server at [rooms] url (here
    `signoff serve`; a Switch core takes the same commands, with a gateway login as operator)."""
    import json

    config = _client_home(served, tmp_path)
    made = _run(tmp_path, config, "room", "create", "side", "--as", "fixer", "--agent", "helper", "--json")
    assert made.exit_code == 0, made.stderr
    assert f"server: {served.url} ([rooms] url)" in made.stderr
    room_id = json.loads(made.stdout)["room_id"]
    # Without an operator the policy is not touched; with alice's token it is set and read back.
    refused = _run(tmp_path, config, "policy", "set", "helper", "--allow", "fixer")
    assert refused.exit_code != 0 and "--operator" in refused.stderr and "Traceback" not in refused.stderr
    env_token = ["--operator", served.alice_token]
    done = _run(tmp_path, config, "policy", "set", "helper", "--allow", "fixer", "--room", room_id, *env_token,
                "--json")
    assert done.exit_code == 0, done.stderr
    [rule] = json.loads(done.stdout)["policy"]["rules"]
    assert rule["agents"] == [served.agent.agent_id] and rule["rooms"] == [room_id] and rule["users"] == []
    # bob owns neither agent: the server refuses him, nothing changes.
    assert _run(tmp_path, config, "policy", "set", "helper", "--open", "--operator", served.bob_token).exit_code != 0
    shown = _run(tmp_path, config, "policy", "show", "helper", *env_token, "--json")
    assert json.loads(shown.stdout)["policy"]["rules"] == [rule]
    remote = SqlLedger.from_url(f"sqlite:///{served.home / 'rooms.db'}")
    try:
        rooms = RoomService(remote)
        assert rooms.agent_record(served.other.agent_id)["addressing_policy"]["rules"] == [rule]
        assert rooms.room(room_id).owner_user_id == rooms.user_by_name("alice").id
    finally:
        remote.close()
    # The sender id to bind under [rooms.people], and a post as one of this home's agents.
    sender = _run(tmp_path, config, "sender", "fixer", "--room", room_id)
    assert sender.stdout.strip() == f"agent:{served.agent.agent_id}", sender.stderr
    posted = _run(tmp_path, config, "post", "--as", "fixer", "--room", room_id, "@helper please look", "--json")
    receipt = json.loads(posted.stdout)
    assert receipt["body"] == "@helper please look" and receipt["sender"] == f"agent:{served.agent.agent_id}"
    assert receipt["target_statuses"] == {"helper": "disconnected"}
    # The embedded-server form of `room create` is refused there, naming the server.
    owned = _run(tmp_path, config, "room", "create", "x", "--owner", "alice")
    assert owned.exit_code != 0 and "--as" in owned.stderr and served.url in owned.stderr


def test_without_rooms_url_policies_and_sender_ids_are_this_homes_servers(tmp_path: Path) -> None:
    assert _run(tmp_path, None, "user", "add", "carol").exit_code == 0
    assert _run(tmp_path, None, "agent", "add", "scout", "--owner", "carol").exit_code == 0
    assert _run(tmp_path, None, "agent", "add", "writer", "--owner", "carol").exit_code == 0
    done = _run(tmp_path, None, "policy", "set", "writer", "--allow", "scout", "--json")
    assert done.exit_code == 0, done.stderr
    assert "server: this home's embedded rooms server" in done.stderr
    local = SqlLedger.from_url(f"sqlite:///{tmp_path / 'client.db'}")
    try:
        rooms = RoomService(local)
        scout, writer = rooms.agent_by_name("scout"), rooms.agent_by_name("writer")
        assert rooms.agent_record(writer.id)["addressing_policy"]["rules"][0]["agents"] == [scout.id]
    finally:
        local.close()
    assert _run(tmp_path, None, "sender", "scout").stdout.strip() == scout.sender
    assert _run(tmp_path, None, "policy", "set", "writer", "--no-owner").exit_code != 0  # admits nobody: refused
