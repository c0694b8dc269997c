"""The crew on an external rooms server: a `signoff serve` process on a home of its own, which the
desk reaches only over HTTP (`[rooms] url`). `signoff desk crew setup --operator` registers the six
agents, makes the rooms as the manager's agent and sets and reads back the policies there; the
manager and the reproducer run as processes against that server to one receipt-checked hand-off
(and its answer, measured by the desk); crew status comes from the server; a policy changed on
the server is reported by the next setup and set again."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from signoff.desk import crew_commands
from signoff.desk.config import DeskConfig
from signoff.desk.crew import Crew, key_role, recorded
from signoff.desk.crew_agents import IGNORED
from signoff.desk.local import init_local
from signoff.desk.workflow import Desk as DeskWorkflow
from signoff.desk.workflow import forge_for
from signoff.kernel.settings import Settings
from signoff.ledger import Ledger
from signoff.rooms import RoomService
from signoff.rooms.client import HttpUserTransport, RoomsUserClient, SignoffOperator
from tests.conftest import wait_for
from tests.desk.conftest import COUPON
from tests.support.net import free_port
from tests.support.serve import Process, signoff


@dataclass
class Remote:
    url: str  # the rooms server (another home, its own database)
    admin: str  # the server admin's user token (the operator)
    alice: str  # the crew owner's user token on that server
    settings: Settings  # the desk's home, [rooms] url = the server
    env: dict[str, str]
    tokens: dict[str, str]  # the desk's credentials
    members: dict[str, Process] = field(default_factory=dict)

    def cli(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(signoff(*args), capture_output=True, text=True, env={**self.env, **(env or {})},
                              timeout=120)

    def setup(self, owner: str = "alice") -> subprocess.CompletedProcess[str]:
        return self.cli("desk", "crew", "setup", "--owner", owner, "--json", env={"SIGNOFF_ROOMS_OPERATOR": self.admin})

    def crew(self) -> Crew:
        ledger = Ledger.open(self.settings)
        try:
            found = recorded(ledger)
        finally:
            ledger.close()
        assert found is not None
        return found

    def start(self, role: str) -> None:
        self.members[role] = Process(signoff("desk", "crew", "run", "--role", role),
                                     {**self.env, "SIGNOFF_DESK_TOKEN": self.tokens["engineering"]})

    def kill(self, role: str) -> None:
        proc = self.members.pop(role).proc
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)

    def states(self) -> dict[str, str]:
        shown = self.cli("desk", "crew", "--json")
        assert shown.returncode == 0, shown.stderr
        return {r["role"]: r["state"] for r in json.loads(shown.stdout)["roles"]}

    def engineering_room(self) -> list[str]:
        """The crew's commands in the engineering room, as the owner reads them on the server."""
        transport = HttpUserTransport(self.url, self.alice)
        try:
            return [crew_commands.strip_mentions(str(m["body"])).split(" [ref")[0]
                    for m in RoomsUserClient(transport).messages(self.crew().engineering_room)]
        finally:
            transport.close()

    def desk(self) -> tuple[Ledger, DeskWorkflow]:
        ledger = Ledger.open(self.settings)
        return ledger, DeskWorkflow(ledger, self.settings, forge_for(self.settings, ledger), DeskConfig())


@pytest.fixture
def remote(tmp_path: Path, sandbox_ok: None) -> Iterator[Remote]:
    server_db = f"sqlite:///{tmp_path / 'server.db'}"
    ledger = Ledger.from_url(server_db)
    try:
        rooms = RoomService(ledger)
        admin = str(rooms.init()["admin_token"])
        alice = rooms.create_user("alice", "Alice")[1]
        rooms.create_user("mallory", "Mallory")
    finally:
        ledger.close()
    url = f"http://127.0.0.1:{free_port()}"
    base = {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}
    server = Process(signoff("serve", "--port", url.rsplit(":", 1)[1]),
                     {**base, "SIGNOFF_HOME": str(tmp_path / "server-home"), "SIGNOFF_DB": server_db})
    config = tmp_path / "signoff.toml"
    config.write_text(f'[rooms]\nurl = "{url}"\n')
    home, db = tmp_path / "desk-home", f"sqlite:///{tmp_path / 'desk.db'}"
    env = {**base, "SIGNOFF_HOME": str(home), "SIGNOFF_DB": db, "SIGNOFF_CONFIG": str(config),
           "SIGNOFF_REPAIR_ENV_CACHE": os.environ["SIGNOFF_REPAIR_ENV_CACHE"]}
    settings = Settings.load(home=home, db_url=db, env={"SIGNOFF_CONFIG": str(config)}, cwd=tmp_path)
    desk_ledger = Ledger.open(settings)
    try:
        tokens = init_local(settings, desk_ledger).tokens
    finally:
        desk_ledger.close()
    r = Remote(url, admin, alice, settings, env, tokens)
    try:
        server.ready(f"{url}/health")
        yield r
    finally:
        for proc in r.members.values():
            proc.stop()
        server.stop()


def _wait(check: Any, what: str, r: Remote, timeout: float = 300) -> None:
    assert wait_for(check, timeout=timeout, interval=0.5), f"{what}: crew {r.states()}, room {r.engineering_room()}"


@pytest.mark.slow
@pytest.mark.timeout(900)  # a sandboxed run in a child process on a loaded machine
def test_the_crew_set_up_on_an_external_server_hands_off_and_reports_drift(remote: Remote) -> None:
    r = remote
    # Without the operator credential, setup says what it needs; nothing is recorded.
    bare = r.cli("desk", "crew", "setup", "--owner", "alice")
    assert bare.returncode != 0 and "error:" in bare.stderr and "--operator" in bare.stderr
    assert "Traceback" not in bare.stderr

    done = r.setup()
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["server"] == r.url and out["drift_found"] == []
    crew = r.crew()
    keys_file = r.settings.home / "rooms" / "agents.json"
    assert stat.S_IMODE(keys_file.stat().st_mode) == 0o600
    stored = json.loads(keys_file.read_text())
    assert stored["url"] == r.url
    stored = stored["agents"]
    assert {stored[key_role(role)]["agent_id"] for role in crew.agents} == set(crew.agents.values())
    # The server holds what the desk set, read with the operator's own credential.
    operator = SignoffOperator(r.url, r.admin)
    try:
        assert all(operator.policy(crew.agents[role]) == crew.policies[role] for role in crew.agents)
    finally:
        operator.close()
    listed = httpx.get(f"{r.url}/users/me/rooms", headers={"Authorization": f"Bearer {r.alice}"}, timeout=30)
    names = {room["name"] for room in listed.json()["rooms"]}
    assert {"desk-intake", "desk-engineering"} <= names

    # Another owner is refused (nothing changes).
    other = r.setup("mallory")
    assert other.returncode != 0 and "belongs to alice" in other.stderr and "fix:" in other.stderr

    # The manager and the reproducer run against the server; the status comes from it.
    r.start("manager")
    r.start("reproducer")
    _wait(lambda: r.states() == {"concierge": "not running", "manager": "connected", "reproducer": "connected",
                                 "fixer": "not running", "reviewer": "not running", "smoke": "not running"},
          "manager and reproducer connected, the rest not running", r)

    ledger, desk = r.desk()
    try:
        intake = desk.submit_report(COUPON, "198.51.100.7")
        _wait(lambda: desk.bug(intake.bug_id).state == "awaiting_reporter", "the measured reproduction", r)
    finally:
        ledger.close()
    said = r.engineering_room()
    assert said.count(f"start_reproduction {intake.bug_id} round=1") == 1
    assert sum(1 for b in said if b.startswith(f"propose_reproduction {intake.bug_id} round=1")) == 1

    # The owner pastes the hand-off on the server: the reproducer ignores the copy and records it.
    transport = HttpUserTransport(r.url, r.alice)
    try:
        RoomsUserClient(transport).post(crew.engineering_room, f"start_reproduction {intake.bug_id} round=1",
                                        targets=["desk-reproducer"])
    finally:
        transport.close()

    def ignored() -> list[dict[str, Any]]:
        ledger = Ledger.open(r.settings)
        try:
            return [dict(e.payload) for e in ledger.read(IGNORED)]
        finally:
            ledger.close()

    _wait(lambda: len(ignored()) == 1, "the copied hand-off ignored", r)
    assert sum(1 for b in r.engineering_room() if b.startswith("propose_reproduction")) == 1

    # A killed reproducer shows as not running once the server's connection lapses.
    r.kill("reproducer")
    _wait(lambda: r.states()["reproducer"] == "not running", "the killed reproducer shown", r)
    assert r.states()["manager"] == "connected"

    # Someone opens the manager's policy on the server: the next setup reports it and sets it again.
    operator = SignoffOperator(r.url, r.admin)
    try:
        operator.set_policy(crew.agents["manager"], None)
        again = r.setup()
        assert again.returncode == 0, again.stderr
        found = json.loads(again.stdout)["drift_found"]
        assert [d.split(":")[0] for d in found] == ["manager"] and "the server holds None" in found[0]
        assert operator.policy(crew.agents["manager"]) == crew.policies["manager"]
    finally:
        operator.close()
    assert r.crew() == crew  # same identities, rooms and group: nothing re-keyed or made twice
