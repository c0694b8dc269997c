"""The crew as separate processes (`signoff desk crew run --role R`) against a real `signoff serve`
over HTTP: a member killed with SIGKILL and started again, and a restart of the server itself,
lose no work and repeat none; the server's crew status shows a killed member as not connected."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from signoff.desk import crew_commands
from signoff.desk.crew import Crew, key_role, setup
from signoff.desk.crew_agents import IGNORED
from signoff.desk.local import init_local
from signoff.kernel.settings import Settings
from signoff.ledger import Ledger
from signoff.rooms import RoomService
from signoff.rooms.client import HttpTransport, HttpUserTransport, RoomsClient, RoomsConfig, RoomsUserClient
from tests.conftest import wait_for
from tests.desk.conftest import COUPON
from tests.support.net import free_port
from tests.support.serve import Process, signoff


@dataclass
class Desk:
    home: Path
    db: str
    url: str
    env: dict[str, str]
    tokens: dict[str, str]
    owner_token: str  # alice's rooms token
    crew: Crew
    server: Process
    members: dict[str, Process]

    def start_server(self) -> None:
        self.server = Process(signoff("serve", "--port", self.url.rsplit(":", 1)[1]), self.env)
        self.server.ready(f"{self.url}/health")

    def start(self, role: str) -> None:
        self.members[role] = Process(signoff("desk", "crew", "run", "--role", role, "--url", self.url),
                                     {**self.env, "SIGNOFF_DESK_TOKEN": self.tokens["engineering"]})

    def kill(self, role: str) -> None:
        proc = self.members.pop(role).proc
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)

    def owner(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens['alice']}"}

    def states(self) -> dict[str, str]:
        try:
            r = httpx.get(f"{self.url}/desk/crew", headers=self.owner(), timeout=10)
        except httpx.TransportError:
            return {}
        assert r.status_code == 200, r.text
        return {s["role"]: s["state"] for s in r.json()["roles"]}

    def bug_state(self) -> str | None:
        try:
            r = httpx.get(f"{self.url}/desk/bugs/BUG-0001", headers=self.owner(), timeout=10)
        except httpx.TransportError:
            return None
        return str(r.json()["summary"]["state"]) if r.status_code == 200 else None

    def recorded(self, case: str) -> list[dict[str, Any]]:
        ledger = Ledger.from_url(self.db)
        try:
            return [dict(e.payload) for e in ledger.read(case)]
        finally:
            ledger.close()

    def commands(self) -> list[str]:
        """Every crew command the running members posted in the engineering room, and the bug's
    reproduction events, read from the ledger itself."""
        ledger = Ledger.from_url(self.db)
        try:
            rooms = RoomService(ledger)
            alice = rooms.user_by_name("alice")
            members = {self.crew.senders[r] for r in ("manager", "reproducer", "fixer")}
            bodies = [crew_commands.strip_mentions(m["body"])
                      for m in rooms.read_messages(alice, self.crew.engineering_room, 0, 1000)
                      if m["sender"] in members]
            events = [e.type for e in ledger.read("desk/bug/BUG-0001")]
        finally:
            ledger.close()
        return [b.split(" [ref")[0] for b in bodies if crew_commands.parse(b) is not None] + [
            f"event {t}" for t in events if t.startswith("reproduction.")]


@pytest.fixture
def desk(tmp_path: Path, sandbox_ok: None) -> Iterator[Desk]:
    home = tmp_path / "home"
    db = f"sqlite:///{tmp_path / 'desk.db'}"
    settings = Settings.load(home=home, db_url=db, env={}, cwd=tmp_path)
    ledger = Ledger.open(settings)
    tokens = init_local(settings, ledger).tokens
    rooms = RoomService(ledger)
    _, owner_token = rooms.create_user("alice", "Alice")
    crew = setup(rooms, settings, "alice")[0]
    ledger.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}
    env |= {"SIGNOFF_HOME": str(home), "SIGNOFF_DB": db,
            "SIGNOFF_REPAIR_ENV_CACHE": os.environ["SIGNOFF_REPAIR_ENV_CACHE"]}
    d = Desk(home, db, f"http://127.0.0.1:{free_port()}", env, tokens, owner_token, crew,
             None, {})  # type: ignore[arg-type]
    d.start_server()
    try:
        yield d
    finally:
        for proc in d.members.values():
            proc.stop()
        d.server.stop()


async def _approve_as_reviewer(d: Desk) -> None:
    key = RoomsConfig.from_settings(Settings.load(home=d.home, db_url=d.db, env={})).key(key_role("reviewer"))
    async with RoomsClient(HttpTransport(d.url, key["agent_id"], key["api_key"]), heartbeat_interval=3600) as c:
        await c.connect_to_room(d.crew.engineering_room)
        sent = await c.send_targeted_message("approve BUG-0001 round=1", ["desk-manager"])
        assert sent.addressed


def _wait(check: Any, what: str, d: Desk, timeout: float = 300) -> None:
    assert wait_for(check, timeout=timeout), f"{what}: crew {d.states()}, bug {d.bug_state()}, {d.commands()}"


@pytest.mark.slow
@pytest.mark.timeout(900)  # several sandboxed runs in child processes on a loaded machine
def test_the_crew_as_processes_survives_kills_and_a_server_restart(desk: Desk) -> None:
    d = desk
    d.start("manager")
    d.start("fixer")
    _wait(lambda: d.states().get("manager") == "connected" and d.states().get("fixer") == "connected",
          "manager and fixer connected", d)
    assert d.states()["reproducer"] == "not running"
    # The CLI asks the server for the same view.
    shown = subprocess.run(signoff("desk", "crew", "--url", d.url, "--json"), capture_output=True, text=True,
                           env={**d.env, "SIGNOFF_DESK_TOKEN": d.tokens["alice"]}, timeout=60, check=True)
    by_role = {r["role"]: r["state"] for r in json.loads(shown.stdout)["roles"]}
    assert by_role["manager"] == "connected" and by_role["reproducer"] == "not running"

    # A report arrives while the reproducer is down: the hand-off waits for it in the room.
    report = httpx.post(f"{d.url}/desk/reports", json=COUPON, timeout=30).json()
    _wait(lambda: "start_reproduction BUG-0001 round=1" in d.commands(), "the hand-off", d)
    d.start("reproducer")
    _wait(lambda: d.bug_state() == "awaiting_reporter", "the reproduction", d)

    # The owner pastes the manager's hand-off; the reviewer agent tries to approve: over HTTP, the
    # copy is ignored and the approval refused, both recorded.
    owner = RoomsUserClient(HttpUserTransport(d.url, d.owner_token))
    owner.post(d.crew.engineering_room, "start_reproduction BUG-0001 round=1", targets=["desk-reproducer"])
    owner.close()
    asyncio.run(_approve_as_reviewer(d))
    _wait(lambda: len(d.recorded(IGNORED)) == 1 and len(d.recorded(crew_commands.REFUSALS)) == 1,
          "the copy ignored and the approval refused", d)

    # The reproducer is killed: the server's view says so (its stream closed, its beats stop).
    d.kill("reproducer")
    _wait(lambda: d.states().get("reproducer") in ("stale", "not running"), "the killed reproducer shown", d)

    # The server restarts; the reporter confirms; the manager is killed and started again mid-loop.
    d.server.stop()
    d.start_server()
    confirmed = httpx.post(f"{d.url}/desk/reports/{report['report_id']}/confirm", json={"answer": "yes"},
                           headers={"X-Desk-Capability": report["capability"]}, timeout=30)
    assert confirmed.status_code == 200, confirmed.text
    _wait(lambda: "start_fix BUG-0001 round=1" in d.commands(), "the fix hand-off", d)
    d.kill("manager")
    d.start("manager")
    _wait(lambda: d.bug_state() == "in_review", "the draft", d)

    # Every step happened exactly once.
    assert d.commands() == ["start_reproduction BUG-0001 round=1", "propose_reproduction BUG-0001 round=1",
                            "start_fix BUG-0001 round=1", "submit_fix BUG-0001 round=1",
                            "event reproduction.recorded"]
    assert d.states()["manager"] == "connected" and d.states()["fixer"] == "connected"
