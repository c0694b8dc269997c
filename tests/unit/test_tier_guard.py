"""The unit tier's guard (tests/unit/conftest.py): a test here that opens a socket, starts a process or
opens a database file fails with the tier rule, and what it tried does not happen."""

from __future__ import annotations

import multiprocessing
import os
import socket
import sqlite3
import subprocess
from pathlib import Path

import pytest
import sqlalchemy

from tests.support import paths
from tests.support.tier_rules import database_is_file

REFUSED = pytest.fail.Exception
RULE = "tests/unit is pure: no socket, no process, no database file"


def test_binding_a_socket_fails_the_test_and_binds_nothing() -> None:
    with socket.socket() as sock:
        with pytest.raises(REFUSED, match=RULE) as refused:
            sock.bind(("127.0.0.1", 0))
        assert sock.getsockname()[1] == 0
    assert "bind to ('127.0.0.1', 0)" in str(refused.value)


def test_connecting_anywhere_fails_the_test() -> None:
    with pytest.raises(REFUSED, match=RULE):
        socket.create_connection(("127.0.0.1", 9), timeout=1)
    with socket.socket(socket.AF_UNIX) as sock, pytest.raises(REFUSED, match=RULE):
        sock.connect_ex("/nonexistent/socket")


def test_starting_a_process_fails_the_test_and_runs_nothing(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    with pytest.raises(REFUSED, match=RULE) as refused:
        subprocess.run(["touch", str(ran)], check=True)
    assert not ran.exists()
    assert "touch" in str(refused.value)


def test_a_multiprocessing_child_is_refused_before_it_starts() -> None:
    child = multiprocessing.get_context("spawn").Process(target=print)
    with pytest.raises(REFUSED, match=RULE):
        child.start()
    assert child.pid is None


def test_forking_fails_the_test() -> None:
    with pytest.raises(REFUSED, match=RULE):
        if os.fork() == 0:  # reached only if the guard let the fork through: the child leaves at once
            os._exit(0)


def test_an_sqlite_file_is_refused_and_never_created(tmp_path: Path) -> None:
    with pytest.raises(REFUSED, match=RULE):
        sqlite3.connect(tmp_path / "direct.db")
    engine = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'engine.db'}")
    with pytest.raises(REFUSED, match=RULE):
        engine.connect()
    engine.dispose()
    assert list(tmp_path.iterdir()) == []


def test_postgresql_is_refused() -> None:
    import psycopg

    with pytest.raises(REFUSED, match=RULE):
        psycopg.connect("postgresql://nobody@/nothing?host=/nonexistent")


def test_in_memory_databases_are_allowed() -> None:
    with sqlite3.connect(":memory:") as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    with sqlalchemy.create_engine("sqlite://").connect() as conn:
        assert conn.execute(sqlalchemy.text("SELECT 2")).scalar() == 2


@pytest.mark.parametrize(("database", "uri", "is_file"), [
    (":memory:", False, False), ("", False, False), ("ledger.db", False, True), (Path("x.db"), False, True),
    ("file::memory:?cache=shared", True, False), ("file:shared?mode=memory&cache=shared", True, False),
    ("file:ledger.db?mode=ro", True, True), ("file::memory:", False, True),  # without uri=True it is a name
])
def test_what_counts_as_a_database_file(database: str | Path, uri: bool, is_file: bool) -> None:
    assert database_is_file(database, uri) is is_file


def test_every_test_file_sits_in_a_tier() -> None:
    """A test file outside tests/unit, tests/integration and tests/system (one merged from before the
    tiers, say) would run with none of its area's fixtures and in no `make` target but `make test`."""
    stray = [str(path.relative_to(paths.TESTS)) for path in paths.TESTS.rglob("test_*.py")
             if path.relative_to(paths.TESTS).parts[0] not in ("unit", "integration", "system")]
    assert not stray, f"test files outside the tiers (docs/testing.md says where each goes): {stray}"
