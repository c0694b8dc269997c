"""The server the conformance scenario runs against.

By default (and in CI): signoff's own server (`create_app`, real uvicorn on loopback, SQLite
ledger), registering agents over HTTP with a registration key and operating with an admin token,
exactly as against any other server. Its "restart losing events" restores a snapshot of the
database taken earlier, so the server comes back behind the client's cursor, as a Switch core does
after a restart (its event buffer lives in memory).

With SIGNOFF_CONFORMANCE_URL set, the scenario runs against that server instead:
- SIGNOFF_CONFORMANCE_REGISTRATION_KEY: a registration key;
- SIGNOFF_CONFORMANCE_OPERATOR: `email:password` of a Switch gateway user, or a signoff user token;
- SIGNOFF_CONFORMANCE_RESTART: a shell command that restarts the server (the scenario waits for
  /health afterwards);
- SIGNOFF_CONFORMANCE_RECORD (optional): a file to write every exchange to (redacted).
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from signoff.kernel.clock import SystemClock
from signoff.kernel.tls import tls_context
from signoff.ledger import SqlLedger
from signoff.rooms import RoomService
from signoff.rooms.client import HttpTransport, Operator, SignoffOperator, operator_for
from signoff.rooms.http.app import create_app
from tests.conformance.recorder import Recorder
from tests.rooms.conftest import Server

URL = os.environ.get("SIGNOFF_CONFORMANCE_URL")


@dataclass
class Target:
    kind: str  # "embedded" or "external"
    base_url: str
    registration_key: str
    operator: Operator
    mark: Callable[[], None]  # remember the server's state now (embedded: a database snapshot)
    restart_losing_events: Callable[[], None]
    recorder: Recorder | None = None
    names: list[str] = field(default_factory=list)

    def name(self, role: str) -> str:
        """A fresh agent name (servers keep names unique; runs must not collide)."""
        name = f"{role}-{uuid.uuid4().hex[:8]}"
        self.names.append(name)
        return name

    def transport(self, agent_id: str, api_key: str) -> HttpTransport:
        client = httpx.AsyncClient(timeout=30.0, transport=self.recorder) if self.recorder else None
        return HttpTransport(self.base_url, agent_id, api_key, client=client)

    def http(self) -> httpx.Client:
        """A synchronous client for registration (recorded when recording)."""
        return httpx.Client(timeout=30.0, transport=self.recorder.sync() if self.recorder else None,
                            verify=tls_context())

    def step(self, name: str) -> None:
        if self.recorder is not None:
            self.recorder.step = name


def wait_healthy(base_url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(f"{base_url}/health", timeout=2.0, verify=tls_context()).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{base_url} did not answer /health within {timeout} s")
        time.sleep(0.2)


class Embedded:
    """signoff's server over a SQLite file, restartable on the same port."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.snapshot = path.with_suffix(".snapshot")
        self.port = 0
        self.ledger = SqlLedger.from_url(f"sqlite:///{path}", SystemClock())
        self.service = RoomService(self.ledger)
        self.boot = self.service.init()
        self.server = self._start()

    def _start(self) -> Server:
        server = Server(create_app(service=self.service, keepalive_seconds=0.5))
        if self.port:
            server.config = uvicorn.Config(server.config.app, host="127.0.0.1", port=self.port,
                                           log_level="warning", lifespan="on")
            server.server = uvicorn.Server(server.config)
            server.thread = threading.Thread(target=server.server.run, daemon=True)
        base = server.start()
        self.port = int(base.rsplit(":", 1)[1])
        return server

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def mark(self) -> None:
        with sqlite3.connect(self.path) as src, sqlite3.connect(self.snapshot) as dst:
            src.backup(dst)

    def restart_losing_events(self) -> None:
        self.server.stop()
        self.ledger.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        self.snapshot.rename(self.path)
        self.ledger = SqlLedger.from_url(f"sqlite:///{self.path}", SystemClock())
        self.service = RoomService(self.ledger)
        self.server = self._start()

    def stop(self) -> None:
        self.server.stop()
        self.ledger.close()


def _external(recorder: Recorder | None) -> Target:
    assert URL is not None
    missing = [v for v in ("SIGNOFF_CONFORMANCE_REGISTRATION_KEY", "SIGNOFF_CONFORMANCE_OPERATOR",
                           "SIGNOFF_CONFORMANCE_RESTART") if not os.environ.get(v)]
    if missing:
        pytest.fail(f"SIGNOFF_CONFORMANCE_URL is set but {', '.join(missing)} is not")
    restart = shlex.split(os.environ["SIGNOFF_CONFORMANCE_RESTART"])

    def restart_losing_events() -> None:
        subprocess.run(restart, check=True, timeout=120)
        wait_healthy(URL)

    return Target("external", URL.rstrip("/"), os.environ["SIGNOFF_CONFORMANCE_REGISTRATION_KEY"],
                  operator_for(URL, os.environ["SIGNOFF_CONFORMANCE_OPERATOR"],
                               recorder.sync() if recorder else None), lambda: None,
                  restart_losing_events, recorder)


@pytest.fixture
def target(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Target]:
    record = os.environ.get("SIGNOFF_CONFORMANCE_RECORD")
    recorder = Recorder() if record else None
    if URL:
        found = _external(recorder)
        yield found
        found.operator.close()
    else:
        embedded = Embedded(tmp_path / "rooms.db")
        found = Target("embedded", embedded.base_url, embedded.boot["registration_key"],
                       SignoffOperator(embedded.base_url, embedded.boot["admin_token"]), embedded.mark,
                       embedded.restart_losing_events, recorder)
        yield found
        found.operator.close()
        embedded.stop()
    if recorder is not None and record:
        server: dict[str, Any] = {"url_kind": found.kind, "test": request.node.name}
        recorder.save(Path(record) / f"{request.node.name}.json", server)
