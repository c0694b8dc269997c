"""Shared fixtures: database URLs for SQLite and a real PostgreSQL server."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.requires import require


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    matches = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return matches[-1] if matches else None


class _PgServer:
    """A throwaway PostgreSQL cluster on a Unix socket, run as the `postgres` user when we are root
    (the server refuses to run as root)."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="signoff-pg-"))
        self.data = self.dir / "data"
        self.sock = self.dir / "sock"
        self.sock.mkdir()
        self.user = "postgres" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name

    def _run(self, *args: str) -> None:
        cmd = list(args)
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)

    def start(self) -> str:
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres")
            shutil.chown(self.sock, "postgres")
        initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
        assert initdb and pg_ctl
        self._run(initdb, "-D", str(self.data), "-A", "trust", "-U", "signoff", "--no-sync")
        opts = f"-k {self.sock} -c listen_addresses='' -c fsync=off -c max_connections=200 -p 5432"
        self._run(pg_ctl, "-D", str(self.data), "-o", opts, "-w", "-l", str(self.dir / "log"), "start")
        return f"postgresql://signoff@/postgres?host={self.sock}"

    def stop(self) -> None:
        pg_ctl = _pg_bin("pg_ctl")
        if pg_ctl:
            try:
                self._run(pg_ctl, "-D", str(self.data), "-m", "immediate", "stop")
            except subprocess.CalledProcessError:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """URL of a PostgreSQL server: SIGNOFF_TEST_PG if set, else a throwaway local cluster."""
    given = os.environ.get("SIGNOFF_TEST_PG")
    if given:
        yield given
        return
    have = _pg_bin("initdb") is not None and _pg_bin("pg_ctl") is not None
    if have and os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            have = False
    require("postgres", have, "apt-get install -y postgresql (or set SIGNOFF_TEST_PG to a server URL)")
    server = _PgServer()
    url = server.start()
    try:
        yield url
    finally:
        server.stop()


def _fresh_pg_database(server_url: str) -> str:
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    conninfo = server_url.replace("postgresql://", "postgresql://", 1)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return server_url.replace("/postgres?", f"/{name}?", 1)


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty database of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ledger.db'}"
    server = request.getfixturevalue("pg_server")
    return _fresh_pg_database(server)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'ledger.db'}"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An isolated signoff home in a temporary working directory."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SIGNOFF_DB", raising=False)
    monkeypatch.delenv("SIGNOFF_CONFIG", raising=False)
    h = tmp_path / ".signoff"
    monkeypatch.setenv("SIGNOFF_HOME", str(h))
    return h


def wait_for(predicate, timeout: float = 10.0, interval: float = 0.02) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())
