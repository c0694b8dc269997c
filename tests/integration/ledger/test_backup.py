"""`signoff ledger backup` / `restore` on SQLite and PostgreSQL: the restored ledger is the one backed
up, verified by its chain and signed checkpoints; a damaged or forged backup is refused and the
ledger in place stays as it was; a ledger holding events is replaced only with --force, and kept."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from signoff.kernel.errors import ConflictError
from signoff.ledger import NewEvent, SqlLedger, sign_checkpoint
from signoff.ledger import backup as backup_module
from signoff.ledger.backup import Manifest
from signoff.ledger.checkpoints import KEY_NAME
from signoff.trust import KeyStore
from tests.support.cli import run_cli
from tests.system.ledger.test_checkpoints import _rewrite


def _env(keys_home: Path, url: str) -> dict[str, str]:
    return {"SIGNOFF_HOME": str(keys_home), "SIGNOFF_DB": url, "PATH": "/usr/bin:/bin", "HOME": str(keys_home)}


def _fill(url: str, keys_home: Path, first: int, n: int) -> tuple[int, str]:
    ledger = SqlLedger.from_url(url)
    try:
        for i in range(first, first + n):
            ledger.append(f"BUG-{i % 3}", None, [NewEvent("step", {"i": i})])
        sign_checkpoint(ledger, KeyStore(keys_home / "keys").ensure(KEY_NAME))
        return ledger.head()
    finally:
        ledger.close()


def _head(url: str) -> tuple[int, str]:
    ledger = SqlLedger.from_url(url)
    try:
        return ledger.head()
    finally:
        ledger.close()


@pytest.fixture
def keys_home(tmp_path: Path) -> Path:
    made = tmp_path / "home"
    made.mkdir()
    return made


def test_a_backup_restores_the_ledger_it_was_taken_of(db_url: str, keys_home: Path, tmp_path: Path) -> None:
    backed_up = _fill(db_url, keys_home, 0, 5)
    dest = tmp_path / "backups" / "ledger.bak"
    made = run_cli(["ledger", "backup", str(dest), "--json"], _env(keys_home, db_url))
    assert made.exit_code == 0, made.stderr
    written = json.loads(made.stdout)
    assert (written["count"], written["head"]) == backed_up
    assert json.loads(Manifest.path_for(dest).read_text())["sha256"] == written["sha256"]

    after = _fill(db_url, keys_home, 5, 3)  # the ledger moves on after the backup
    refused = run_cli(["ledger", "restore", str(dest)], _env(keys_home, db_url))
    assert refused.exit_code == 4  # a conflict
    assert "already holds events" in refused.stderr and "fix:" in refused.stderr
    assert _head(db_url) == after  # refusing changed nothing

    done = run_cli(["ledger", "restore", str(dest), "--force", "--json"], _env(keys_home, db_url))
    assert done.exit_code == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["count"], report["head"]) == backed_up
    assert report["last_checkpoint"] == backed_up[0]
    assert _head(db_url) == backed_up
    verified = run_cli(["ledger", "verify", "--json"], _env(keys_home, db_url))
    assert json.loads(verified.stdout)["ok"] is True

    # the ledger it replaced is kept, whole: restoring the kept copy brings the later events back
    kept = Path(report["kept"])
    assert kept.is_file() and Manifest.read(kept).head == after[1]
    back = run_cli(["ledger", "restore", str(kept), "--force"], _env(keys_home, db_url))
    assert back.exit_code == 0, back.stderr
    assert _head(db_url) == after


def test_a_backup_into_a_fresh_database(db_url: str, keys_home: Path, tmp_path: Path,
                                        pg_server_or_none: str | None) -> None:
    """The disaster case: the server is gone, the backup goes into a new, empty database."""
    backed_up = _fill(db_url, keys_home, 0, 4)
    dest = tmp_path / "ledger.bak"
    assert run_cli(["ledger", "backup", str(dest)], _env(keys_home, db_url)).exit_code == 0
    if db_url.startswith("sqlite"):
        fresh = f"sqlite:///{tmp_path / 'new' / 'signoff.db'}"
    else:
        assert pg_server_or_none is not None
        fresh = _empty_pg_database(pg_server_or_none)
    done = run_cli(["ledger", "restore", str(dest)], _env(keys_home, fresh))
    assert done.exit_code == 0, done.stderr
    assert _head(fresh) == backed_up


def _empty_pg_database(server_url: str) -> str:
    import uuid

    import psycopg

    name = f"r_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return server_url.replace("/postgres?", f"/{name}?", 1)


@pytest.fixture
def pg_server_or_none(request: pytest.FixtureRequest, db_url: str) -> str | None:
    return None if db_url.startswith("sqlite") else str(request.getfixturevalue("pg_server"))


def test_a_damaged_backup_is_refused_and_nothing_changes(sqlite_url: str, keys_home: Path, tmp_path: Path) -> None:
    _fill(sqlite_url, keys_home, 0, 4)
    dest = tmp_path / "ledger.bak"
    assert run_cli(["ledger", "backup", str(dest)], _env(keys_home, sqlite_url)).exit_code == 0
    target = f"sqlite:///{tmp_path / 'target.db'}"
    in_place = _fill(target, keys_home, 100, 2)

    damaged = tmp_path / "damaged.bak"
    data = bytearray(dest.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    shutil.copy(Manifest.path_for(dest), Manifest.path_for(damaged))
    out = run_cli(["ledger", "restore", str(damaged), "--force"], _env(keys_home, target))
    assert out.exit_code == 1 and "SHA-256 differs" in out.stderr
    assert _head(target) == in_place

    no_manifest = tmp_path / "alone.bak"
    shutil.copy(dest, no_manifest)
    out = run_cli(["ledger", "restore", str(no_manifest), "--force"], _env(keys_home, target))
    assert out.exit_code == 2 and "no manifest" in out.stderr and "fix:" in out.stderr
    assert "Traceback" not in out.stderr
    assert _head(target) == in_place


def test_a_forged_backup_with_a_matching_manifest_is_refused(sqlite_url: str, keys_home: Path, tmp_path: Path) -> None:
    """Someone who can write the backup store rewrites an event in the copy, recomputes every hash and
    writes a manifest to match: the signed checkpoint (key outside the backup) still refuses it."""
    _fill(sqlite_url, keys_home, 0, 5)
    dest = tmp_path / "ledger.bak"
    assert run_cli(["ledger", "backup", str(dest)], _env(keys_home, sqlite_url)).exit_code == 0
    forged = SqlLedger.from_url(f"sqlite:///{dest}")
    _rewrite(forged, 2, {"i": "forged"})
    seq, head = forged.head()
    forged.close()
    manifest = json.loads(Manifest.path_for(dest).read_text())
    import hashlib

    manifest.update(head=head, count=seq, sha256=hashlib.sha256(dest.read_bytes()).hexdigest())
    Manifest.path_for(dest).write_text(json.dumps(manifest))

    target = f"sqlite:///{tmp_path / 'target.db'}"
    out = run_cli(["ledger", "restore", str(dest)], _env(keys_home, target))
    assert out.exit_code == 1 and "does not verify" in out.stderr
    assert not (tmp_path / "target.db").exists()


def test_a_backup_never_replaces_another(sqlite_url: str, keys_home: Path, tmp_path: Path) -> None:
    _fill(sqlite_url, keys_home, 0, 2)
    dest = tmp_path / "ledger.bak"
    assert run_cli(["ledger", "backup", str(dest)], _env(keys_home, sqlite_url)).exit_code == 0
    before = dest.read_bytes()
    _fill(sqlite_url, keys_home, 2, 2)
    out = run_cli(["ledger", "backup", str(dest)], _env(keys_home, sqlite_url))
    assert out.exit_code == 4 and "already exists" in out.stderr
    assert dest.read_bytes() == before


def test_a_backup_that_appears_meanwhile_is_not_replaced_and_nothing_is_left_behind(
        sqlite_url: str, keys_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(sqlite_url, keys_home, 0, 2)
    dest = tmp_path / "ledger.bak"
    # A link at the name older versions staged under is never written through.
    decoy = tmp_path / "decoy"
    decoy.write_bytes(b"not a ledger")
    (tmp_path / ".ledger.bak.partial").symlink_to(decoy)
    real_copy = backup_module._sqlite_copy

    def copy_while_another_backup_lands(source: Path, target: Path) -> None:
        real_copy(source, target)
        dest.write_bytes(b"another backup, finished first")

    monkeypatch.setattr(backup_module, "_sqlite_copy", copy_while_another_backup_lands)
    with pytest.raises(ConflictError, match="already exists"):
        backup_module.backup(sqlite_url, dest, {})
    assert dest.read_bytes() == b"another backup, finished first"
    assert decoy.read_bytes() == b"not a ledger"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")) == [".ledger.bak.partial"]


def test_a_backup_is_readable_by_its_owner_only(sqlite_url: str, keys_home: Path, tmp_path: Path) -> None:
    _fill(sqlite_url, keys_home, 0, 2)
    dest = tmp_path / "ledger.bak"
    assert run_cli(["ledger", "backup", str(dest)], _env(keys_home, sqlite_url)).exit_code == 0
    assert dest.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".ledger.bak")] == []


def test_a_restore_never_writes_through_a_link_planted_at_its_old_staging_name(
        sqlite_url: str, keys_home: Path, tmp_path: Path) -> None:
    backed_up = _fill(sqlite_url, keys_home, 0, 2)
    dest = tmp_path / "ledger.bak"
    assert run_cli(["ledger", "backup", str(dest)], _env(keys_home, sqlite_url)).exit_code == 0
    target = tmp_path / "restored.db"
    decoy = tmp_path / "decoy"
    decoy.write_bytes(b"not a ledger")
    (tmp_path / ".restored.db.restoring").symlink_to(decoy)
    done = run_cli(["ledger", "restore", str(dest)], _env(keys_home, f"sqlite:///{target}"))
    assert done.exit_code == 0, done.stderr
    assert _head(f"sqlite:///{target}") == backed_up
    assert decoy.read_bytes() == b"not a ledger"
    assert sorted(p.name for p in tmp_path.iterdir() if ".restoring" in p.name) == [".restored.db.restoring"]
