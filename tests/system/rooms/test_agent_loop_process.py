"""The agent runtime as its own process against a real `signoff serve` over HTTP: killed with
SIGKILL inside a handler and started again, it loses no message and answers none twice."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff.ledger import SqlLedger
from signoff.rooms.client import agent_case, ref_tag
from signoff.rooms.client._agent_loop import HANDLED
from tests.conftest import wait_for
from tests.support.paths import ROOT
from tests.support.serve import Served, served

__all__ = ["served"]



class Agent:
    """tests/support/echo_agent.py as a child process, its key given on stdin."""

    def __init__(self, s: Served, db: str, hold: bool) -> None:
        argv = [sys.executable, "-m", "tests.support.echo_agent", s.url, s.other.agent_id, db, s.room_id]
        self.proc = subprocess.Popen([*argv, *(["--hold"] if hold else [])], cwd=ROOT, env=s.env(),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        assert self.proc.stdin is not None
        self.proc.stdin.write(s.other.key + "\n")
        self.proc.stdin.close()
        self.proc.stdin = None  # communicate() must not flush it again

    def said(self, prefix: str) -> str:
        """The next line the agent printed, which must start with `prefix`."""
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith(prefix):
            raise AssertionError(f"agent said {line!r}; stderr: {self.stop()[-3000:]}")
        return line.strip()

    def stop(self, sig: int = signal.SIGTERM) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        _, err = self.proc.communicate(timeout=30)
        return err


@pytest.fixture
def agent_db(tmp_path: Path) -> Iterator[str]:
    yield f"sqlite:///{tmp_path / 'agent.db'}"


@pytest.mark.slow
def test_an_agent_killed_inside_a_handler_loses_and_repeats_nothing(served: Served, agent_db: str) -> None:
    alice = served.person(served.alice_token)
    helper = "helper"

    def ask(text: str) -> str:
        return str(alice.post(served.room_id, text, [helper])["event_id"])

    def replies() -> dict[str, int]:
        counts: dict[str, int] = {}
        for m in alice.messages(served.room_id):
            if str(m["body"]).startswith("seen "):
                asked = str(m["body"]).split(" ")[1]
                counts[asked] = counts.get(asked, 0) + 1
        return counts

    first = Agent(served, agent_db, hold=True)
    try:
        first.said("ready")
        asked = [ask("one"), ask("two"), ask("hold on"), ask("three")]
        assert first.said("holding") == f"holding {asked[2]}"
    finally:
        first.stop(signal.SIGKILL)
    assert first.proc.returncode == -signal.SIGKILL
    asked.append(ask("while it is down"))

    def handled() -> list[str]:
        ledger = SqlLedger.from_url(agent_db)
        try:
            return [e.payload["key"] for e in ledger.read(agent_case(served.other.agent_id)) if e.type == HANDLED]
        finally:
            ledger.close()

    second = Agent(served, agent_db, hold=False)
    try:
        second.said("ready")
        asked.append(ask("after the restart"))
        # A handler records its event as handled after its reply is posted: stopping the agent in
        # between is a restart that hands the event over again, so wait for both before stopping.
        assert wait_for(lambda: set(replies()) >= set(asked)
                        and {f"message:{m}" for m in asked} <= set(handled()), timeout=60), (replies(), handled())
    finally:
        assert second.stop() is not None
    assert replies() == {m: 1 for m in asked}
    addressed = [k for k in handled() if k.removeprefix("message:") in asked]
    assert sorted(addressed) == sorted(f"message:{m}" for m in asked)  # each once, the held one included
    bodies = [str(m["body"]) for m in alice.messages(served.room_id)]
    assert all(sum(ref_tag(f"reply:{m}") in b for b in bodies) == 1 for m in asked)
