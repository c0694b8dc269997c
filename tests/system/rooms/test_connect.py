"""`[rooms] url` with an agent key per role, and `signoff rooms connect`, against a real server over
HTTP (signoff's own; the same calls ran against a live Switch 0.19, see tests/system/conformance)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path

import pytest

from signoff.cli.main import main
from signoff.rooms.client import RoomsClient
from tests.support.fixtures.rooms import World

ROLES = """
[rooms.roles.verifier]
name = "repair-verifier"
description = "checks candidate fixes"

[rooms.roles.fixer]
name = "repair-fixer"
"""


def _config(home: Path, url: str, extra: str = "") -> Path:
    path = home.parent / "signoff.toml"
    path.write_text(f'[rooms]\nurl = "{url}"\n{extra}{ROLES}')
    return path


def _connect(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["rooms", "connect", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_connect_registers_every_role_and_stores_keys_owner_only(
        home: Path, http_world: tuple[World, str], capsys: pytest.CaptureFixture[str]) -> None:
    world, base = http_world
    _config(home, base)
    code, out, err = _connect(capsys, "--registration-key", world.registration_key, "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert {a["role"]: a["name"] for a in shown["agents"]} == {"verifier": "repair-verifier", "fixer": "repair-fixer"}
    keys_path = Path(shown["keys"])
    assert keys_path == home / "rooms" / "agents.json"
    assert stat.S_IMODE(keys_path.stat().st_mode) == 0o600
    assert "api_key" not in out  # the keys go to the file only
    stored = json.loads(keys_path.read_text())
    assert stored["url"] == base
    verifier = world.service.agent_by_name("repair-verifier")
    assert stored["agents"]["verifier"]["agent_id"] == verifier.id
    # The server got the full profile (what a Switch core requires), and the stored key works.
    assert world.service.agent_record(verifier.id)["integration_profile"]["connection_model"] == "always_on"
    from signoff.kernel.settings import Settings
    from signoff.rooms.client import RoomsConfig

    config = RoomsConfig.from_settings(Settings.load())

    async def use() -> None:
        async with RoomsClient(config.agent_transport("verifier"), heartbeat_interval=0.2) as client:
            rooms = await client.call("list_rooms")
            assert rooms == []

    asyncio.run(use())
    # Connecting again keeps the keys; --overwrite rotates them.
    code, out, _ = _connect(capsys, "--registration-key", world.registration_key, "--json")
    assert code == 0 and not any(a["registered_now"] for a in json.loads(out)["agents"])
    assert json.loads(keys_path.read_text()) == stored
    code, out, _ = _connect(capsys, "--registration-key", world.registration_key, "--overwrite", "--json")
    assert code == 0
    rotated = json.loads(keys_path.read_text())
    assert rotated["agents"]["verifier"]["agent_id"] == verifier.id
    assert rotated["agents"]["verifier"]["api_key"] != stored["agents"]["verifier"]["api_key"]


def test_a_planted_link_at_the_keys_path_is_replaced_not_written_through(
        home: Path, http_world: tuple[World, str], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    world, base = http_world
    _config(home, base)
    elsewhere = tmp_path / "attacker-readable.json"
    elsewhere.write_text("{}")
    elsewhere.chmod(0o644)
    keys_path = home / "rooms" / "agents.json"
    keys_path.parent.mkdir(parents=True)
    # A leftover temporary name pointing elsewhere, and the keys path itself a link.
    (keys_path.parent / f".agents.json.{os.getpid()}.tmp").symlink_to(elsewhere)
    keys_path.symlink_to(elsewhere)
    code, _, err = _connect(capsys, "--registration-key", world.registration_key)
    # The link pointed at a file that is not a keys file: refused, nothing written anywhere.
    assert code == 2 and "is not a rooms keys file" in err
    assert elsewhere.read_text() == "{}"
    keys_path.unlink()
    code, _, err = _connect(capsys, "--registration-key", world.registration_key)
    assert code == 0, err
    assert elsewhere.read_text() == "{}"
    assert not keys_path.is_symlink() and stat.S_IMODE(keys_path.stat().st_mode) == 0o600


@pytest.mark.parametrize(("toml", "message"), [
    ("[rooms]\n" + ROLES, "[rooms] url is not set"),
    ('[rooms]\nurl = "ftp://x"\n' + ROLES, "must be an http(s) URL"),
    ('[rooms]\nurl = "http://127.0.0.1:9"\n[rooms.roles.v]\nname = "Bad Name"\n', "not a valid agent name"),
    ('[rooms]\nurl = "http://127.0.0.1:9"\n', "no roles under [rooms.roles]"),
])
def test_bad_settings_get_one_line_errors(home: Path, capsys: pytest.CaptureFixture[str], toml: str,
                                          message: str) -> None:
    (home.parent / "signoff.toml").write_text(toml)
    code, out, err = _connect(capsys, "--registration-key", "k")
    assert code == 2 and message in err and "fix:" in err and "Traceback" not in err + out
    assert not (home / "rooms").exists()


def test_a_wrong_registration_key_is_refused_and_stores_nothing(
        home: Path, http_world: tuple[World, str], capsys: pytest.CaptureFixture[str]) -> None:
    world, base = http_world
    _config(home, base)
    code, _, err = _connect(capsys, "--registration-key", world.fixer_key)  # an agent key, not a registration key
    assert code != 0 and "error:" in err and "Traceback" not in err
    assert not (home / "rooms" / "agents.json").exists()
    with pytest.raises(Exception, match="repair-verifier"):
        world.service.agent_by_name("repair-verifier")


def test_keys_for_another_server_are_not_used(
        home: Path, http_world: tuple[World, str], capsys: pytest.CaptureFixture[str]) -> None:
    world, base = http_world
    _config(home, base)
    assert _connect(capsys, "--registration-key", world.registration_key)[0] == 0
    _config(home, "http://127.0.0.1:9")
    code, _, err = _connect(capsys, "--registration-key", world.registration_key)
    assert code == 2 and "holds keys for" in err
