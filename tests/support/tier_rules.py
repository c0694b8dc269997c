"""What sets the test tiers apart (docs/testing.md): a test in tests/unit opens no socket, starts no
process and opens no database file; tests/integration stays in one process (databases, in-memory or
files, and the suite's PostgreSQL server); tests/system may do anything.

`watching(on_act)` calls `on_act(kind, detail)` before each such act in this process: `socket` (a
connect or bind), `process` (a subprocess, a fork), `sqlite-file` (an SQLite database that is a file)
and `postgres` (a connection to PostgreSQL, which psycopg makes in C, out of the socket module's
sight). tests/unit/conftest.py refuses them all; tests/support/tier_probe.py records them.
"""

from __future__ import annotations

import multiprocessing.process
import os
import socket
import sqlite3
import sqlite3.dbapi2
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

OnAct = Callable[[str, str], None]

UNIT_RULE = ("tests/unit is pure: no socket, no process, no database file (docs/testing.md). "
             "A test that needs one belongs in tests/integration (databases) or tests/system "
             "(sockets, processes)")


def database_is_file(database: object, uri: bool = False) -> bool:
    """Whether sqlite3.connect(database) opens a file rather than a private in-memory database."""
    name = os.fsdecode(database) if isinstance(database, (str, bytes, os.PathLike)) else str(database)
    if name in ("", ":memory:"):
        return False
    if uri and name.startswith("file:"):
        path, _, query = name[len("file:"):].partition("?")
        return path not in ("", ":memory:") and "mode=memory" not in query
    return True


@contextmanager
def watching(on_act: OnAct) -> Iterator[None]:
    """While active, `on_act` hears of every socket, process and database this process opens; when it
    raises, the act does not happen."""
    real_connect, real_connect_ex, real_bind = socket.socket.connect, socket.socket.connect_ex, socket.socket.bind
    real_popen_init, real_fork, real_sqlite = subprocess.Popen.__init__, os.fork, sqlite3.connect
    real_start = multiprocessing.process.BaseProcess.start

    def connect(self: socket.socket, address: Any) -> None:
        on_act("socket", f"connect to {address!r}")
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        on_act("socket", f"connect to {address!r}")
        return real_connect_ex(self, address)

    def bind(self: socket.socket, address: Any) -> None:
        # urllib3 learns whether IPv6 works by binding a socket it never uses, when first imported.
        if sys._getframe(1).f_code.co_name != "_has_ipv6":
            on_act("socket", f"bind to {address!r}")
        real_bind(self, address)

    def popen_init(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        on_act("process", f"start {args!r}")
        real_popen_init(self, args, *rest, **kwargs)

    def fork() -> int:
        on_act("process", "os.fork()")
        return real_fork()

    def start_process(self: multiprocessing.process.BaseProcess) -> None:
        on_act("process", f"start the multiprocessing process {self.name}")
        real_start(self)

    def sqlite_connect(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        if database_is_file(database, bool(kwargs.get("uri", False))):
            on_act("sqlite-file", f"open the SQLite file {database!s}")
        return real_sqlite(database, *args, **kwargs)

    patches: list[tuple[Any, str, Any]] = [
        (socket.socket, "connect", connect), (socket.socket, "connect_ex", connect_ex),
        (socket.socket, "bind", bind), (subprocess.Popen, "__init__", popen_init), (os, "fork", fork),
        # multiprocessing's `spawn` starts its child through _posixsubprocess, past Popen and fork.
        (multiprocessing.process.BaseProcess, "start", start_process),
        # SQLAlchemy calls sqlite3.dbapi2.connect, the same function under the module it imports.
        (sqlite3, "connect", sqlite_connect), (sqlite3.dbapi2, "connect", sqlite_connect),
    ]
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is a dependency; the guard works without it
        pass
    else:
        real_pg = psycopg.Connection.connect.__func__  # type: ignore[attr-defined]

        def pg_connect(cls: Any, *args: Any, **kwargs: Any) -> Any:
            on_act("postgres", "connect to PostgreSQL")
            return real_pg(cls, *args, **kwargs)

        # psycopg.connect is the classmethod, bound when psycopg was imported: both names are replaced.
        patches += [(psycopg.Connection, "connect", classmethod(pg_connect)),
                    (psycopg, "connect", lambda *args, **kwargs: pg_connect(psycopg.Connection, *args, **kwargs))]
    # socket.socket inherits connect and bind from the C type: undoing deletes what was set on it.
    saved = [(owner, name, owner.__dict__.get(name)) for owner, name, _ in patches]
    for owner, name, replacement in patches:
        setattr(owner, name, replacement)
    try:
        yield
    finally:
        for owner, name, original in reversed(saved):
            if original is None:
                delattr(owner, name)
            else:
                setattr(owner, name, original)
