"""Shared fixtures: database URLs for SQLite and a real PostgreSQL server."""

from __future__ import annotations

import os
import pwd
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.support.paths import TESTS
from tests.support.pg import PgServer, pg_bin
from tests.support.requires import require
from tests.support.synapse_fixture import synapse  # noqa: F401  (the session's Synapse, for tests/system/bridges)
from tests.support.template_db import copied_sqlite_migrations, migrated_pg_template

REAL_MIGRATIONS = "real_migrations"
TIERS = ("unit", "integration", "system")  # docs/testing.md
# A slow test's limit: the browser incident and the installed package's demos took 300-410 s at load
# average 10 on 2 cores (2026-12-07), against 70-90 s in CI.
SLOW_TIMEOUT_S = 1200

# Hypothesis's timing checks (a deadline per example, "input generation is slow") are timed
# assertions: on a loaded machine they fail tests whose behaviour is right. Every property test runs
# without them; what it asserts is unchanged.
settings.register_profile("signoff", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("signoff")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files with the most tests marked `slow` run first. `make test` hands whole files to its
    workers in this order (--dist loadfile --no-loadscope-reorder): a long file handed out last would
    keep one worker busy after the others had finished. The sort is stable, so a file's tests stay
    together and in order."""
    slow = Counter(item.path for item in items if item.get_closest_marker("slow"))
    items.sort(key=lambda item: -slow[item.path])
    for item in items:  # pyproject's 300 s catches a hang; a whole workflow on a loaded machine needs more
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(SLOW_TIMEOUT_S))
    for item in items:  # each test is marked with its tier, so `-m "not system"` picks tiers too
        tier = item.path.relative_to(TESTS).parts[0]
        if tier in TIERS:
            item.add_marker(tier)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """URL of a PostgreSQL server: SIGNOFF_TEST_PG if set, else a throwaway local cluster."""
    given = os.environ.get("SIGNOFF_TEST_PG")
    if given:
        yield given
        return
    have = pg_bin("initdb") is not None and pg_bin("pg_ctl") is not None
    if have and os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            have = False
    require("postgres", have, "apt-get install -y postgresql (or set SIGNOFF_TEST_PG to a server URL)")
    server = PgServer()
    url = server.start()
    try:
        yield url
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _migrations_from_template(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fresh SQLite ledgers opened in the test's own process start as a copy of a migrated template
    (tests/support/template_db.py); a test marked `real_migrations` migrates for real."""
    if request.node.get_closest_marker(REAL_MIGRATIONS):
        yield
        return
    with copied_sqlite_migrations():
        yield


@pytest.fixture(scope="session")
def _pg_template(pg_server: str) -> str:
    return migrated_pg_template(pg_server)


def _fresh_pg_database(request: pytest.FixtureRequest, server_url: str) -> str:
    """A new database on the server: a copy of the migrated template, or empty for a test marked
    `real_migrations`."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    template = "" if request.node.get_closest_marker(REAL_MIGRATIONS) else \
        f' TEMPLATE "{request.getfixturevalue("_pg_template")}"'
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"{template}')
    return server_url.replace("/postgres?", f"/{name}?", 1)


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database of each kind, at the newest schema (empty for a test marked `real_migrations`)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ledger.db'}"
    server = request.getfixturevalue("pg_server")
    return _fresh_pg_database(request, server)


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
