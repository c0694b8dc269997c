"""A real `signoff serve` process on a free port, with people (alice, bob, who also have a password
for the web console), two agents (fixer, helper) and a room (ops) they share."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from signoff.gate import RoomsAgent
from signoff.kernel.settings import Settings
from signoff.kernel.tls import tls_context
from signoff.ledger import SqlLedger
from signoff.rooms import RoomService
from signoff.rooms.client import HttpUserTransport, RoomsUserClient
from signoff.rooms.domain.signin import SignIns
from tests.conftest import wait_for
from tests.support.web import password_client

PASSWORD = "people sign off in the browser too"


@dataclass
class Served:
    url: str
    home: Path
    alice_token: str
    bob_token: str
    agent: RoomsAgent
    other: RoomsAgent  # a second agent in the same room
    room_id: str

    def settings(self) -> Settings:
        return Settings.load(home=self.home, db_url=f"sqlite:///{self.home / 'client.db'}")

    def person(self, token: str) -> RoomsUserClient:
        return RoomsUserClient(HttpUserTransport(self.url, token))

    def pending_card(self, token: str, match: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first pending card this person sees that matches, once it arrived."""
        person = self.person(token)
        found: list[dict[str, Any]] = []

        def seen() -> bool:
            found[:] = [c for c in person.pending() if match(c)]
            return bool(found)

        assert wait_for(seen, timeout=30), "the card never reached the person"
        return found[0]

    def web(self, name: str) -> tuple[httpx.Client, str]:
        """The web console signed in as `name` (alice or bob), and its CSRF token; the caller closes it."""
        return password_client(self.url, name, PASSWORD)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}
        return {**env, "SIGNOFF_HOME": str(self.home), "SIGNOFF_DB": f"sqlite:///{self.home / 'client.db'}"}


def signoff(*args: str) -> list[str]:
    return [sys.executable, "-m", "signoff.cli.main", *args]


class Process:
    """A signoff command as a child process, stopped at the end. Its standard output is read as it
    comes (`printed` waits for a line), so a chatty process never blocks on a full pipe. With `log`,
    its standard error joins its output and every line is also written to that file (complete once
    `stop` returned), for tests that look at what a server logged."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path | None = None,
                 log: Path | None = None) -> None:
        self.proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE if log is None else subprocess.STDOUT, text=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.output: list[str] = []
        self._log = log
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        with self._log.open("a") if self._log is not None else contextlib.nullcontext() as log:
            for line in self.proc.stdout:
                if log is not None:
                    log.write(line)
                    log.flush()
                self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def printed(self, pattern: re.Pattern[str], timeout: float = 120) -> re.Match[str]:
        """The first line of output matching `pattern` (output read so far is kept in `output`)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"nothing matching {pattern.pattern!r} was printed: {self.output}") from None
            if line is None:
                raise AssertionError(f"process exited: {self.output} {self._stderr()}")
            self.output.append(line)
            found = pattern.search(line)
            if found:
                return found

    def _stderr(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return ""
        return self.proc.stderr.read()[-2000:]

    def ready(self, url: str) -> None:
        def answers() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(f"process exited: {self._stderr()}")
            try:
                httpx.get(url, timeout=2, verify=tls_context())
            except httpx.HTTPError:
                return False
            return True

        # Generous: a `signoff serve` on a 2-core machine that other suites load can take over 30 s.
        assert wait_for(answers, timeout=120), f"{url} did not answer"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        self._reader.join(timeout=30)  # the output's end (and the log's) is read


SERVING = re.compile(r"signoff rooms serving on (http://\S+)")
MCP_SERVING = re.compile(r"signoff mcp serving on (http://\S+)")  # `signoff mcp --transport http`


def serve(env: dict[str, str], *args: str, again_on: str | None = None, cwd: Path | None = None,
          log: Path | None = None) -> tuple[Process, str]:
    """`signoff serve` on a port the server itself picks (`--port 0`), and the base URL it printed:
    a port chosen here and passed in could be taken by another process before the server binds it.
    `again_on` restarts a stopped server on the URL it printed before, for clients that hold it (its
    port was the server's own a moment ago; if another process took it since, the start fails)."""
    port = "0" if again_on is None else again_on.rsplit(":", 1)[1]
    server = Process(signoff("serve", "--port", port, *args), env, cwd, log)
    try:
        return server, server.printed(SERVING).group(1)
    except BaseException:
        server.stop()
        raise


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("mcp") / "home"
    home.mkdir()
    db = f"sqlite:///{home / 'rooms.db'}"
    ledger = SqlLedger.from_url(db)
    rooms = RoomService(ledger)
    rooms.init()
    alice, alice_token = rooms.create_user("alice", "Alice")
    bob, bob_token = rooms.create_user("bob", "Bob")
    for person in (alice, bob):  # people also answer in the web console, signed in with a password
        SignIns(ledger).set_password(person.id, PASSWORD)
    fixer, fixer_key = rooms.create_agent(alice, "fixer", "proposes fixes")
    helper, helper_key = rooms.create_agent(alice, "helper", "another agent")
    room = rooms.create_room(alice, "ops", agent_names=["fixer", "helper"], user_names=["alice", "bob"])
    rooms.create_room(alice, "board", user_names=["alice"])  # no agent is a member
    ledger.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}
    server, url = serve({**env, "SIGNOFF_HOME": str(home), "SIGNOFF_DB": db})
    try:
        server.ready(f"{url}/health")
        yield Served(url, home, alice_token, bob_token, RoomsAgent(url, fixer.id, fixer_key),
                     RoomsAgent(url, helper.id, helper_key), room.id)
    finally:
        server.stop()
