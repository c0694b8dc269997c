"""Database engines and automatic migration on first use.

SQLite runs in WAL mode; write transactions start with BEGIN IMMEDIATE so a writer takes the lock
up front instead of failing on upgrade. PostgreSQL runs through psycopg 3.
"""

from __future__ import annotations

import contextlib
import fcntl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, OperationalError

from signoff.kernel.errors import UnavailableError, UsageError

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

MIGRATIONS = Path(__file__).parent / "migrations"
# The head revision of every migration branch. A database at these revisions needs no migration, and
# checking that needs no Alembic: importing Alembic (and the Mako and Pygments it imports) cost each
# `signoff` process about a second of CPU on our machines. tests/system/ledger/test_migrations.py checks
# that this set is what Alembic reads from the scripts, so adding a migration without it fails there.
HEADS = frozenset({"0003", "agents_0001", "rooms_0006"})
WRITE = {"signoff_write": True}
# A connection that runs each statement on its own, without BEGIN and ROLLBACK around it: for reads
# made of one statement (a statement is atomic by itself), which saves two round trips on PostgreSQL.
_SINGLE = "signoff_single_statement"


def make_engine(url: str) -> Engine:
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise UsageError(f"bad database URL {url!r}: {exc}", "use sqlite:///PATH or postgresql://...") from exc
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(url, parsed.database)
    if parsed.get_backend_name() == "postgresql":
        if parsed.drivername in ("postgresql", "postgres"):
            parsed = parsed.set(drivername="postgresql+psycopg")
        # No pre-ping: it costs a round trip per checkout; stale connections are recycled instead.
        return create_engine(parsed, pool_recycle=1800, pool_size=20, max_overflow=20)
    raise UsageError(f"unsupported database {parsed.get_backend_name()!r}", "use SQLite or PostgreSQL")


def _sqlite_engine(url: str, database: str | None) -> Engine:
    if database and database != ":memory:":
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    # A pool as large as a busy server's worker threads: past it, connections are opened and closed
    # per request, each paying for the PRAGMAs below.
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 60},
                           pool_size=20, max_overflow=40)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Take transaction control away from the driver so BEGIN is ours to issue.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA busy_timeout=60000")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        options = conn.get_execution_options()
        if options.get(_SINGLE):
            return  # the driver is in autocommit mode (isolation_level None): each statement stands alone
        if options.get("signoff_write"):
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            conn.exec_driver_sql("BEGIN")

    return engine


@contextlib.contextmanager
def single_statement(engine: Engine) -> Iterator[Connection]:
    """A connection for a read that is one statement: no transaction is opened around it."""
    with engine.connect() as conn:
        if is_postgres(engine):
            yield conn.execution_options(isolation_level="AUTOCOMMIT")
        else:
            yield conn.execution_options(**{_SINGLE: True})


def is_postgres(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"


def _alembic_config(conn: Connection | None = None) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    if conn is not None:
        cfg.attributes["connection"] = conn
    return cfg


def stored_revisions(conn: Connection) -> frozenset[str]:
    """The revisions the database is at (none for an empty database)."""
    if not inspect(conn).has_table("alembic_version"):
        return frozenset()
    return frozenset(conn.execute(text("SELECT version_num FROM alembic_version")).scalars())


def script_heads() -> frozenset[str]:
    """The head revisions as Alembic reads them from the migration scripts."""
    return frozenset(_script_directory().get_heads())


def _refuse_newer(at: frozenset[str], engine: Engine) -> None:
    """A database a newer signoff migrated is never opened by this build: Alembic could not read it
    (a revision it has no script for), and the older code would write into a schema it does not know.
    This is what a rollback that reinstalled older code without restoring the backup meets."""
    known = {script.revision for script in _script_directory().walk_revisions()}
    unknown = sorted(at - known)
    if unknown:
        raise UnavailableError(
            f"the database {engine.url.render_as_string(hide_password=True)} was migrated by a newer signoff "
            f"(revision {', '.join(unknown)}, which this version does not know); it was left as it is",
            "run the newer signoff again, or restore the backup taken before the upgrade with "
            "`signoff ledger restore` (docs/ledger.md, \"Upgrades and rollback\")")


def _script_directory() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_alembic_config())


@contextlib.contextmanager
def _migration_lock(engine: Engine) -> Iterator[None]:
    """Serialise first-use migration across processes."""
    if is_postgres(engine):
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(726354)"))
            conn.commit()
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(726354)"))
                conn.commit()
        return
    database = engine.url.database
    if not database or database == ":memory:":
        yield
        return
    lock_path = Path(database + ".migrate.lock")
    with lock_path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


_ALEMBIC = threading.Lock()


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest revision of every migration branch."""
    try:
        with engine.connect() as conn:
            at = stored_revisions(conn)
        if at == HEADS:
            return
        from alembic import command

        heads = script_heads()
        _refuse_newer(at, engine)
        # Alembic keeps its running migration in module globals: two threads of one process migrating
        # two databases at once break each other (KeyError 'script', half-made schemas).
        with _ALEMBIC, _migration_lock(engine), engine.connect() as conn:
            if stored_revisions(conn) != heads:
                command.upgrade(_alembic_config(conn), "heads")
                conn.commit()
    except OperationalError as exc:
        raise UnavailableError(
            f"cannot open the database {engine.url.render_as_string(hide_password=True)}: {exc.orig}",
            "check SIGNOFF_DB (is the server running and the user allowed?) or unset it to use SQLite",
        ) from exc
