"""`signoff notes agent scout|writer|editor` as three real processes, on the embedded server (one
database shared by the processes) and on a real `signoff serve` over HTTP (each agent with its own
key from `[rooms.roles]`). The writer is killed with SIGKILL before the work reaches it and started
again: the hand-off waits in the server for it, and nothing is done twice."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from signoff.ledger import SqlLedger
from signoff.notes.crew import EDITOR, SCOUT, WRITER, handoffs
from signoff.notes.run import load_review
from signoff.rooms import RoomService
from signoff.rooms.client import HttpUserTransport, InProcessUserTransport, RoomsUserClient, write_private_json
from tests.conftest import wait_for
from tests.support.gitrepo import Repo
from tests.support.paths import ROOT
from tests.support.serve import serve, signoff
from tests.system.notes.crew_world import AGENTS, CrewWorld, make_crew

ROLE_ARG = {SCOUT: "scout", WRITER: "writer", EDITOR: "editor"}


@dataclass
class Setup:
    env: dict[str, str]
    home: Path
    db: str  # the agents' ledger
    room_id: str
    alice: RoomsUserClient
    senders: dict[str, str]


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}


def _toml(path: Path, url: str | None, people: dict[str, str]) -> None:
    lines = ["[rooms]", *([f'url = "{url}"'] if url else [])]
    for name in AGENTS:
        lines += [f"[rooms.roles.{name}]", f'name = "{name}"']
    lines += ["[rooms.people]", *(f'{k} = "{v}"' for k, v in people.items())]
    path.write_text("\n".join(lines) + "\n")


def _world(db: str) -> CrewWorld:
    ledger = SqlLedger.from_url(db)
    try:
        return make_crew(RoomService(ledger))
    finally:
        ledger.close()


@pytest.fixture(params=["embedded", "serve"])
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Setup]:
    home = tmp_path / "home"
    home.mkdir()
    config = tmp_path / "signoff.toml"
    if request.param == "embedded":
        db = f"sqlite:///{home / 'signoff.db'}"
        world = _world(db)
        _toml(config, None, {"alice": world.alice.sender})
        env = {**_clean_env(), "SIGNOFF_HOME": str(home), "SIGNOFF_DB": db, "SIGNOFF_CONFIG": str(config)}
        ledger = SqlLedger.from_url(db)
        alice = RoomsUserClient(InProcessUserTransport(RoomService(ledger), world.alice_token))
        try:
            yield Setup(env, home, db, world.room_id, alice, {n: p.sender for n, (p, _) in world.agents.items()})
        finally:
            ledger.close()
        return
    server_db = f"sqlite:///{tmp_path / 'rooms.db'}"
    world = _world(server_db)
    server, url = serve({**_clean_env(), "SIGNOFF_HOME": str(tmp_path / "server"), "SIGNOFF_DB": server_db})
    try:
        server.ready(f"{url}/health")
        _toml(config, url, {"alice": world.alice.sender})
        # What `signoff rooms connect` stores (tests/system/rooms/test_connect.py runs the command itself).
        write_private_json(home / "rooms" / "agents.json", {"url": url, "agents": {
            name: {"name": name, "agent_id": world.agents[name][0].id, "api_key": world.agents[name][1]}
            for name in AGENTS}})
        db = f"sqlite:///{home / 'client.db'}"
        env = {**_clean_env(), "SIGNOFF_HOME": str(home), "SIGNOFF_DB": db, "SIGNOFF_CONFIG": str(config)}
        alice = RoomsUserClient(HttpUserTransport(url, world.alice_token))
        yield Setup(env, home, db, world.room_id, alice, {n: p.sender for n, (p, _) in world.agents.items()})
        alice.close()
    finally:
        server.stop()


class Agent:
    def __init__(self, s: Setup, role: str, repo: Path) -> None:
        argv = [*signoff("notes", "agent", ROLE_ARG[role], "--room", s.room_id), "--script", "demo"]
        if role != WRITER:
            argv += ["--repo", str(repo)]
        self.proc = subprocess.Popen(argv, cwd=ROOT, env=s.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)

    def ready(self) -> None:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if "ready" not in line:
            raise AssertionError(f"agent said {line!r}; stderr: {self.stop()[-3000:]}")

    def stop(self, sig: int = signal.SIGTERM) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        _, err = self.proc.communicate(timeout=30)
        return err


@pytest.mark.slow
def test_three_agent_processes_produce_a_reviewed_run(setup: Setup, history: Repo) -> None:
    s = setup
    agents = {role: Agent(s, role, history.path) for role in (SCOUT, WRITER, EDITOR)}
    try:
        for agent in agents.values():
            agent.ready()
        agents[WRITER].stop(signal.SIGKILL)  # down before the work reaches it
        asked = str(s.alice.post(s.room_id, "notes v0.1.0..v0.2.0", [SCOUT])["event_id"])

        def said(text: str, by: str) -> list[dict[str, object]]:
            return [m for m in s.alice.messages(s.room_id) if text in str(m["body"]) and m["sender"] == s.senders[by]]

        assert wait_for(lambda: said("the writer has them", SCOUT), timeout=120), agents[SCOUT].stop()
        agents[WRITER] = Agent(s, WRITER, history.path)
        agents[WRITER].ready()
        assert wait_for(lambda: said("are reviewed", EDITOR), timeout=180), \
            "\n".join(a.stop()[-2000:] for a in agents.values())
    finally:
        errors = {role: a.stop() for role, a in agents.items()}
    run = str(said("the writer has them", SCOUT)[0]["body"]).split(" ")[1].rstrip(":")
    assert said("the writer has them", SCOUT)[0]["thread_id"] == asked
    ledger = SqlLedger.from_url(s.db)
    try:
        sent = handoffs(ledger, run)
    finally:
        ledger.close()
    assert [(h["from"], h["to"]) for h in sent] == [(SCOUT, WRITER), (WRITER, EDITOR), (EDITOR, WRITER),
                                                    (WRITER, EDITOR)], errors
    assert all(h["receipt"]["sender"] == s.senders[h["from"]] for h in sent)
    # Each hand-off reached the room once, and the editor announced the review once.
    bodies = [str(m["body"]) for m in s.alice.messages(s.room_id)]
    for h in sent:
        assert sum(h["text"] in b for b in bodies) == 1, h["text"]
    assert len(said("are reviewed", EDITOR)) == 1
    review = load_review(s.home / "notes" / run)
    assert [r["round"] for r in review["rounds"]] == [0, 1]
