"""`signoff repair agent verifier|fixer`: the two repair agents as real, separate processes over the
agent protocol, on the embedded server (in process, sharing its database) and on a real `signoff
serve` over HTTP (set up with `[rooms] url`, stored agent keys and `[rooms.people]`). Each is
SIGKILLed and started again while work is waiting; nothing is lost or done twice, and a copied
command or hand-off is ignored."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from signoff.demo.fixture import FixtureRepo, examples_root
from signoff.ledger import SqlLedger
from signoff.repair import read_case, read_cases
from signoff.rooms import OPEN, OWNER_AND_OWNER_AGENTS, Principal, RoomService
from signoff.rooms.client import RoomsUserClient, write_private_json
from signoff.rooms.client._sync import HttpUserTransport, InProcessUserTransport
from tests.conftest import wait_for
from tests.support.cards import answer_as_shown
from tests.support.cli import Result, run_cli
from tests.support.requires import require_sandbox
from tests.support.serve import serve

HARNESS = examples_root() / "coupon" / "harness"
WAIT = 180.0  # an upper bound on waiting for a state: sandboxed runs on a loaded machine
CONTRACT_CARD, REVIEW_CARD = "repair-card:coupon-01:contract", "repair-card:coupon-01:review"


@dataclass
class Stage:
    """Where the agents run: the env of their processes, how people post and read, the ledger."""

    env: dict[str, str]
    ledger_url: str
    room_id: str
    other_room_id: str
    alice: RoomsUserClient
    mallory: RoomsUserClient
    copycat: Callable[[str, str], None]  # (room_id, text): an agent of the same owner posts to the fixer
    fixer_id: str
    cards: bool  # people decide on approval cards (negotiated), else by addressed commands

    def ledger(self) -> SqlLedger:
        return SqlLedger.from_url(self.ledger_url)


def _provision(rooms: RoomService) -> tuple[Principal, str, str, dict[str, Any]]:
    owner, _ = rooms.create_user("owner", "repair bot owner")
    alice, alice_token = rooms.create_user("alice", "Alice (operator)")
    _mallory, mallory_token = rooms.create_user("mallory", "Mallory")
    verifier, verifier_key = rooms.create_agent(owner, "verifier", "repair verifier", policy=OPEN)
    fixer, fixer_key = rooms.create_agent(owner, "fixer", "coding agent", policy=OWNER_AND_OWNER_AGENTS)
    copycat, copycat_key = rooms.create_agent(owner, "copycat", "another agent of the same owner")
    room = rooms.create_room(owner, "repair coupon", agent_names=["verifier", "fixer", "copycat"],
                             user_names=["alice", "mallory"])
    other = rooms.create_room(owner, "elsewhere", agent_names=["verifier"], user_names=["alice"])
    keys = {"verifier": (verifier, verifier_key), "fixer": (fixer, fixer_key), "copycat": (copycat, copycat_key)}
    return alice, alice_token, mallory_token, {"room": room.id, "other": other.id, "keys": keys}


def _contract(tmp: Path, repo: FixtureRepo) -> Path:
    path = tmp / "contract.toml"
    path.write_text(
        f'name = "coupon"\nbehaviour = "a 10% coupon is applied once"\nrepo = "{repo.path}"\nbase = "main"\n'
        f'harness = "{HARNESS}"\nexpect = "test_coupon.py::test_coupon_applies_once"\n'
        'regression = ["test_coupon.py::test_zero_coupon_keeps_total"]\nallow = ["cart.py"]\n'
        'fixer_script = "coupon"\n')
    return path


def _base_env(home: Path, db: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}
    cache = os.environ.get("SIGNOFF_REPAIR_ENV_CACHE")
    extra = {"SIGNOFF_REPAIR_ENV_CACHE": cache} if cache else {}
    return {**env, "SIGNOFF_HOME": str(home), "SIGNOFF_DB": db, **extra}


def _cli(env: dict[str, str], *args: str) -> Result:
    return run_cli(args, env, cwd=Path(env["SIGNOFF_WORKDIR"]))


@pytest.fixture(params=["embedded", "serve"])
def stage(request: pytest.FixtureRequest, tmp_path: Path, coupon: FixtureRepo) -> Iterator[Stage]:
    require_sandbox()
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    if request.param == "embedded":
        db = f"sqlite:///{tmp_path / 'signoff.db'}"
        ledger = SqlLedger.from_url(db)
        rooms = RoomService(ledger)
        rooms.init()
        _alice, alice_token, mallory_token, made = _provision(rooms)
        env = {**_base_env(home, db), "SIGNOFF_WORKDIR": str(work)}
        copycat = made["keys"]["copycat"][0]

        def paste(room: str, text: str) -> None:
            rooms.post_message(copycat, room, text, target_names=["fixer"])

        yield Stage(env, db, made["room"], made["other"], RoomsUserClient(InProcessUserTransport(rooms, alice_token)),
                    RoomsUserClient(InProcessUserTransport(rooms, mallory_token)), paste, made["keys"]["fixer"][0].id,
                    cards=False)
        ledger.close()
        return
    server_db = f"sqlite:///{tmp_path / 'rooms.db'}"
    ledger = SqlLedger.from_url(server_db)
    rooms = RoomService(ledger)
    rooms.init()
    alice, alice_token, mallory_token, made = _provision(rooms)
    ledger.close()
    server, url = serve(_base_env(tmp_path / "server-home", server_db))
    try:
        server.ready(f"{url}/health")
        keys = tmp_path / "agents.json"
        write_private_json(keys, {"url": url, "agents": {
            role: {"name": p.name, "agent_id": p.id, "api_key": key}
            for role, (p, key) in made["keys"].items() if role != "copycat"}})
        (work / "signoff.toml").write_text(
            f'[rooms]\nurl = "{url}"\nkeys = "{keys}"\n[rooms.roles.verifier]\nname = "verifier"\n'
            f'[rooms.roles.fixer]\nname = "fixer"\n[rooms.people]\nalice = "{alice.sender}"\n')
        client_db = f"sqlite:///{tmp_path / 'client.db'}"
        env = {**_base_env(home, client_db), "SIGNOFF_WORKDIR": str(work),
               "SIGNOFF_CONFIG": str(work / "signoff.toml")}
        copycat_key = made["keys"]["copycat"][1]
        copycat_id = made["keys"]["copycat"][0].id

        def copy(room: str, text: str) -> None:
            from signoff.rooms.client import HttpSyncTransport, SyncRoomsClient

            agent = SyncRoomsClient(HttpSyncTransport(url, copycat_id, copycat_key))
            agent.open("copycat@room", room)
            agent.call("copycat@room", "send_targeted_message", {"body": text, "target_names": ["fixer"]})

        yield Stage(env, client_db, made["room"], made["other"],
                    RoomsUserClient(HttpUserTransport(url, alice_token)),
                    RoomsUserClient(HttpUserTransport(url, mallory_token)), copy, made["keys"]["fixer"][0].id,
                    cards=True)
    finally:
        server.stop()


class Agent:
    """`signoff repair agent ROLE` as a child process."""

    def __init__(self, stage: Stage, role: str) -> None:
        argv = [sys.executable, "-m", "signoff.cli.main", "repair", "agent", role, "--room", stage.room_id]
        if role == "verifier":
            argv += ["--room", stage.other_room_id, "--decisions", "auto" if stage.cards else "command"]
        # Its errors go to a file that outlives it: a failing wait shows what each agent said.
        self.log = Path(stage.env["SIGNOFF_WORKDIR"]) / f"{role}.log"
        with self.log.open("a") as err:
            self.proc = subprocess.Popen(argv, cwd=stage.env["SIGNOFF_WORKDIR"], env=stage.env,
                                         stdout=subprocess.PIPE, stderr=err, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if "ready" not in line:
            self.stop()
            raise AssertionError(f"{role} did not start: {line!r} {self.said()}")

    def said(self) -> str:
        return self.log.read_text()[-3000:]

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.communicate(timeout=30)
        assert self.proc.returncode == -signal.SIGKILL

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.communicate(timeout=60)


def _bodies(stage: Stage, room_id: str | None = None) -> list[str]:
    return [str(m["body"]) for m in stage.alice.messages(room_id or stage.room_id)]


def _digest(stage: Stage, what: str) -> str:
    """The digest the verifier printed for `what` ("contract for coupon-01", "review"), as the
    operator reads it in the room before deciding."""
    for body in reversed(_bodies(stage)):
        found = re.search(rf"{what}.*digest (#[0-9a-f]{{12}})\b", body)
        if found:
            return found.group(1)
    raise AssertionError(f"the verifier printed no digest for {what}")


def _diagnosis(stage: Stage) -> Any:
    """What a failing wait shows: the case's history, the fixer's refusals, the room's last words."""
    ledger = stage.ledger()
    try:
        cases = read_cases(ledger)
        refusals = [e.type for e in ledger.read(f"repair.fixer.{stage.fixer_id}")]
        return ([c.history for c in cases], refusals, _bodies(stage)[-6:])
    finally:
        ledger.close()


def _case_state(stage: Stage) -> str | None:
    ledger = stage.ledger()
    try:
        cases = read_cases(ledger)
        return cases[0].state if cases else None
    finally:
        ledger.close()


@pytest.mark.slow
def test_both_agents_as_processes_survive_sigkill_and_ignore_copies(stage: Stage, tmp_path: Path,
                                                                     coupon: FixtureRepo) -> None:
    watched = _cli(stage.env, "repair", "watch", "--room", stage.room_id, "--contract",
                   str(_contract(tmp_path, coupon)), "--operator", "alice")
    assert watched.exit_code == 0, watched.stderr
    # The report arrives before either agent ever ran: each takes its room's work since the watch
    # at its first start (the stream would open at the head and never bring it).
    stage.alice.post(stage.room_id, "A 10% coupon is applied twice: 10000 cents gives 8100.", ["verifier"])
    verifier, fixer = Agent(stage, "verifier"), Agent(stage, "fixer")
    try:
        assert wait_for(lambda: _case_state(stage) == "CONTRACT_PROPOSED", WAIT)
        assert wait_for(lambda: any("contract for coupon-01" in b for b in _bodies(stage)), WAIT)

        # Addressed to the verifier, the server puts the mention in front: `@verifier approve coupon-01
        # #<digest>`, the digest the verifier printed for the contract it presented.
        # Mallory sends the operator's exact command (and, with cards, answers the operator's card);
        # the operator sends the command in the wrong room (and, with cards, types it at all).
        approve = f"approve coupon-01 {_digest(stage, 'contract for coupon-01')}"
        if stage.cards:
            assert any(f"approval card {CONTRACT_CARD}" in b for b in _bodies(stage))
            [card] = [c for c in stage.alice.pending() if c["request_id"] == CONTRACT_CARD]
            assert card["options"][0]["id"] == "approve"
            assert answer_as_shown(stage.mallory, CONTRACT_CARD, "approve")["outcome"] == "discarded"
            stage.alice.post(stage.room_id, approve, ["verifier"])
            assert wait_for(lambda: any("decided on its approval card" in b for b in _bodies(stage)), WAIT)
        stage.mallory.post(stage.room_id, approve, ["verifier"])
        stage.alice.post(stage.other_room_id, approve, ["verifier"])
        assert wait_for(lambda: any("only the linked operator" in b for b in _bodies(stage)), WAIT)
        assert wait_for(lambda: any("only in its case room" in b for b in _bodies(stage, stage.other_room_id)),
                        WAIT)
        assert _case_state(stage) == "CONTRACT_PROPOSED"

        # Both die; the real approval arrives while neither runs.
        verifier.kill()
        fixer.kill()
        if stage.cards:
            assert answer_as_shown(stage.alice, CONTRACT_CARD, "approve")["outcome"] == "accepted"
            approved_by = f"card:{CONTRACT_CARD}"
        else:
            approved_by = str(stage.alice.post(stage.room_id, approve, ["verifier"])["event_id"])
        verifier, fixer = Agent(stage, "verifier"), Agent(stage, "fixer")
        assert wait_for(lambda: _case_state(stage) == "AWAITING_REVIEW", WAIT), (
            _case_state(stage), verifier.said(), fixer.said(), _diagnosis(stage))

        # Another agent of the same owner pastes the genuine hand-off to the fixer: ignored.
        ledger = stage.ledger()
        try:
            handoff = read_case(ledger, "coupon-01").handoffs[2]["receipt"]["body"]
        finally:
            ledger.close()
        stage.copycat(stage.room_id, handoff.split(" ", 1)[1])

        def refused() -> bool:
            ledger = stage.ledger()
            try:
                return [e.type for e in ledger.read(f"repair.fixer.{stage.fixer_id}")] == ["repair.handoff_refused"]
            finally:
                ledger.close()

        assert wait_for(refused, WAIT)
        # The fixer is killed once more and restarted: its inbox says what it already handled.
        fixer.kill()
        fixer = Agent(stage, "fixer")
        if stage.cards:
            assert wait_for(lambda: any(c["request_id"] == REVIEW_CARD for c in stage.alice.pending()), WAIT)
            assert answer_as_shown(stage.alice, REVIEW_CARD, "accept")["outcome"] == "accepted"
        else:
            ledger = stage.ledger()
            try:
                candidate = str((read_case(ledger, "coupon-01").last_verdict or {})["candidate"])
            finally:
                ledger.close()
            stage.alice.post(stage.room_id, f"accept coupon-01 {candidate[:12]} {_digest(stage, 'review')}",
                             ["verifier"])
        assert wait_for(lambda: _case_state(stage) == "ACCEPTED", WAIT), (
            _case_state(stage), verifier.said(), fixer.said(), _diagnosis(stage))
        assert wait_for(lambda: any("coupon-01 accepted" in b for b in _bodies(stage)), WAIT)
    finally:
        for agent in (verifier, fixer):
            agent.stop()

    ledger = stage.ledger()
    try:
        st = read_case(ledger, "coupon-01")
        fixer_log = [e.type for e in ledger.read(f"repair.fixer.{stage.fixer_id}")]
    finally:
        ledger.close()
    assert st.history == ["REPORTED", "CONTRACT_PROPOSED", "APPROVED", "REPRODUCED", "FIX_REQUESTED",
                          "FIX_REQUESTED", "CANDIDATE", "VERIFIED", "AWAITING_REVIEW", "ACCEPTED"]
    assert sorted(st.failures) == [1] and sorted(st.proposals) == [2] and sorted(st.verdicts) == [2]
    assert fixer_log == ["repair.handoff_refused"]  # the copy; the genuine hand-offs were acted on once each
    bodies = _bodies(stage)
    assert sum('"action": "propose_fix"' in b for b in bodies) == 3  # two hand-offs and the copy
    for said in ("coupon-01 approved", "VERIFIED for candidate", "coupon-01 accepted", "contract for coupon-01",
                 "hand-off refused"):
        assert sum(said in b for b in bodies) == 1, said
    assert sum("only the linked operator" in b for b in bodies) == 1
    assert sum("decided on its approval card" in b for b in bodies) == (1 if stage.cards else 0)
    assert set(st.cards) == ({CONTRACT_CARD, REVIEW_CARD} if stage.cards else set())
    # Who asked for each attempt, and from which message.
    assert st.approval is not None and st.approval["message_id"] == approved_by
    assert (st.handoffs[1]["from_message"], st.handoffs[1]["reason"]) == (approved_by, "approved")
    assert st.handoffs[2]["from_message"] == st.handoffs[1]["receipt"]["message_id"]
    assert st.handoffs[2]["reason"].startswith("attempt 1 refused")
