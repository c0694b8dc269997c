"""Fresh test databases start as copies of one migrated template instead of running Alembic again.

Running the migrations on a fresh SQLite file costs about 65 ms of CPU, and the suite makes thousands
of them inside its worker processes (the largest single item in the workers' CPU). Each worker
migrates one template per kind the first time it needs one, with the real `migrate`, and then:

- SQLite: the ledger's own `migrate`, where the ledger modules call it in this process, first copies
  the template into a database file that has no tables yet (SQLite's online backup, under the same
  lock the real migration takes), then runs the real `migrate`, which finds every head stored;
- PostgreSQL: `CREATE DATABASE ... TEMPLATE` copies the migrated template.

Processes the tests start (`signoff` commands, servers) migrate for real, and so do the tests marked
`real_migrations` (tests/system/ledger/test_migrations.py, test_schema.py), so the migration path itself
stays covered.
"""

from __future__ import annotations

import contextlib
import sqlite3
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from sqlalchemy.engine import Engine

from signoff.ledger import checkpoints, engine, store

_MODULES = (store, checkpoints)  # the modules that import `migrate` by name and call it
_sqlite_template: Path | None = None


def _template_file() -> Path:
    """The worker's migrated SQLite template, made on first use with the real migration."""
    global _sqlite_template
    if _sqlite_template is None:
        path = Path(tempfile.mkdtemp(prefix="signoff-template-")) / "template.db"
        made = engine.make_engine(f"sqlite:///{path}")
        engine.migrate(made)
        made.dispose()
        _sqlite_template = path
    return _sqlite_template


def _has_tables(path: Path) -> bool:
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0] > 0


def _copying(real: Callable[[Engine], None]) -> Callable[[Engine], None]:
    def migrate(target: Engine) -> None:
        database = target.url.database
        if target.url.get_backend_name() == "sqlite" and database and database != ":memory:":
            path = Path(database)
            with engine._migration_lock(target), contextlib.suppress(sqlite3.OperationalError):
                # A file SQLite cannot open (a path over its length limit, a missing folder) is left to
                # the real migration, which reports it the way the code under test expects.
                if not path.exists() or not _has_tables(path):
                    with closing(sqlite3.connect(_template_file())) as src, closing(sqlite3.connect(path)) as dst:
                        src.backup(dst)
        real(target)

    return migrate


@contextmanager
def copied_sqlite_migrations() -> Iterator[None]:
    """While active, fresh SQLite ledgers opened in this process start from the migrated template."""
    saved = [(module, module.migrate) for module in _MODULES]
    for module, real in saved:
        module.migrate = _copying(real)  # type: ignore[assignment]
    try:
        yield
    finally:
        for module, real in saved:
            module.migrate = real  # type: ignore[assignment]


def migrated_pg_template(server_url: str) -> str:
    """Name of a migrated database on `server_url` to use as `CREATE DATABASE ... TEMPLATE`."""
    import psycopg

    name = f"template_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    made = engine.make_engine(server_url.replace("/postgres?", f"/{name}?", 1))
    engine.migrate(made)
    made.dispose()  # a template must have no open connections while it is copied
    return name
