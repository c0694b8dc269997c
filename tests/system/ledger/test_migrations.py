"""Migration on first use: a database at the newest revisions is recognised without Alembic (whose
import cost each `signoff` process about a second), and anything else is migrated by Alembic.
(An older database being upgraded: tests/integration/rooms/test_durability_cli.py.)"""

from __future__ import annotations

import subprocess
import sys

import pytest
from sqlalchemy import text

from signoff.ledger import SqlLedger
from signoff.ledger.engine import HEADS, make_engine, migrate, script_heads, stored_revisions

# These tests are about the migration path itself: fresh databases here are empty, not template copies.
pytestmark = pytest.mark.real_migrations


def test_the_known_heads_are_the_heads_of_the_migration_scripts() -> None:
    assert script_heads() == HEADS, (
        "fix: set HEADS in signoff/ledger/engine.py to the new head revisions after adding a migration")


def test_a_fresh_database_is_migrated_to_every_head(db_url: str) -> None:
    engine = make_engine(db_url)
    with engine.connect() as conn:
        assert stored_revisions(conn) == frozenset()
    migrate(engine)
    with engine.connect() as conn:
        assert stored_revisions(conn) == HEADS
    engine.dispose()


def test_a_database_missing_one_branch_gets_that_branch(sqlite_url: str) -> None:
    SqlLedger.from_url(sqlite_url).close()
    engine = make_engine(sqlite_url)
    with engine.connect() as conn:  # as if the agents branch had been added after this database was made
        conn.execute(text("DROP TABLE agent_calls"))
        conn.execute(text("DELETE FROM alembic_version WHERE version_num = 'agents_0001'"))
        conn.commit()
    migrate(engine)
    with engine.connect() as conn:
        assert stored_revisions(conn) == HEADS
        assert conn.execute(text("SELECT count(*) FROM agent_calls")).scalar() == 0
    engine.dispose()


def test_opening_a_migrated_database_does_not_import_alembic(db_url: str) -> None:
    SqlLedger.from_url(db_url).close()
    probe = ("import sys; from signoff.ledger import SqlLedger; SqlLedger.from_url(sys.argv[1]).close();"
             " print(sorted(m for m in sys.modules if m.split('.')[0] in ('alembic', 'mako')))")
    done = subprocess.run([sys.executable, "-c", probe, db_url], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_database_a_newer_signoff_migrated_is_refused_and_left_as_it_is(sqlite_url: str) -> None:
    # A rollback that reinstalled older code without restoring the backup (docs/ledger.md): the
    # database is at a revision this build has no script for.
    from signoff.kernel.errors import UnavailableError

    SqlLedger.from_url(sqlite_url).close()
    engine = make_engine(sqlite_url)
    with engine.connect() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '0099' WHERE version_num = '0003'"))
        conn.commit()
    with pytest.raises(UnavailableError) as refused:
        SqlLedger.from_url(sqlite_url)
    assert "migrated by a newer signoff (revision 0099" in refused.value.message
    assert "signoff ledger restore" in (refused.value.fix or "")
    with engine.connect() as conn:
        assert stored_revisions(conn) == (HEADS - {"0003"}) | {"0099"}
    engine.dispose()
