"""Back up and restore a ledger database, and check the copy's chain both times.

A backup is two files: the database itself (SQLite: a copy made with SQLite's online backup, which a
running server's writes cannot tear; PostgreSQL: `pg_dump --format=custom`) and a manifest beside it
(`<file>.json`) naming the copy's SHA-256, the chain's event count and head hash at the moment it was
taken, and the schema heads. On PostgreSQL the count and head are read in the very snapshot pg_dump
dumps (`pg_export_snapshot`), so they name exactly what the dump holds.

Restoring checks the file against the manifest, puts it in place, walks the restored chain with the
trusted keys (hashes and signed checkpoints) and compares its head with the manifest's. Nothing is
lost on the way: a SQLite copy is verified before it replaces anything, and a ledger that already
holds events is only replaced with `force`, after it was itself backed up beside the restored file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from glob import glob
from pathlib import Path
from typing import Literal

from sqlalchemy.engine import make_url

from signoff.kernel.clock import utc_iso
from signoff.kernel.errors import ConflictError, IntegrityError, NotFoundError, UnavailableError, UsageError
from signoff.kernel.replace import replace_text, staging_file
from signoff.ledger.audit import ChainReport, verify_chain
from signoff.ledger.engine import HEADS
from signoff.ledger.store import SqlLedger
from signoff.trust.keys import PublicKey

Format = Literal["sqlite", "pg_dump"]
MANIFEST_TYPE = "signoff/ledger-backup@1"


@dataclass(frozen=True)
class Manifest:
    format: Format
    sha256: str
    count: int
    head: str
    taken_at: str
    schema_heads: list[str]
    type: str = MANIFEST_TYPE

    @staticmethod
    def path_for(backup: Path) -> Path:
        return backup.with_name(backup.name + ".json")

    def write(self, backup: Path) -> None:
        _write_atomic(self.path_for(backup), json.dumps(asdict(self), indent=2, sort_keys=True) + "\n")

    @classmethod
    def read(cls, backup: Path) -> Manifest:
        where = cls.path_for(backup)
        try:
            data = json.loads(where.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise NotFoundError(f"no manifest beside the backup: {where} is missing",
                                "restore a backup `signoff ledger backup` wrote; it writes both files") from exc
        except (OSError, ValueError) as exc:
            raise UsageError(f"the backup manifest {where} cannot be read: {exc}",
                             "use the manifest `signoff ledger backup` wrote beside the backup") from exc
        if not isinstance(data, dict) or data.get("type") != MANIFEST_TYPE or data.get("format") not in (
                "sqlite", "pg_dump"):
            raise UsageError(f"{where} is not a signoff ledger backup manifest",
                             "use the manifest `signoff ledger backup` wrote beside the backup")
        try:
            return cls(format=data["format"], sha256=str(data["sha256"]), count=int(data["count"]),
                       head=str(data["head"]), taken_at=str(data["taken_at"]),
                       schema_heads=[str(h) for h in data["schema_heads"]])
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"the backup manifest {where} lacks a field: {exc}",
                             "use the manifest `signoff ledger backup` wrote beside the backup") from exc


def _unstage(staged: Path) -> None:
    staged.unlink(missing_ok=True)
    Path(f"{staged}.migrate.lock").unlink(missing_ok=True)  # left by opening the copy to verify it


@dataclass(frozen=True)
class Restored:
    manifest: Manifest
    report: ChainReport
    kept: Path | None  # where the ledger that was replaced went (None: there was nothing to keep)


def backup(url: str, dest: Path, trusted: dict[str, PublicKey]) -> tuple[Manifest, ChainReport]:
    """Copy the ledger at `url` to `dest` (and its manifest to `dest`.json), then walk the copy's chain.
    An existing `dest` is refused: a backup never overwrites another."""
    for path in (dest, Manifest.path_for(dest)):
        if path.exists():
            raise ConflictError(f"{path} already exists", "name a new file; a backup never replaces another")
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = staging_file(dest, ".partial")
    try:
        if _is_sqlite(url):
            _sqlite_copy(_sqlite_path(url), partial)
            report = _verify_sqlite(partial, trusted)
            fmt: Format = "sqlite"
            count, head = report.count, report.head_hash
        else:
            count, head = _pg_dump(url, partial)
            fmt = "pg_dump"
            report = ChainReport(ok=True, count=count, head_hash=head)
        manifest = Manifest(format=fmt, sha256=_sha256(partial), count=count, head=head, taken_at=utc_iso(time.time()),
                            schema_heads=sorted(HEADS))
        try:
            os.link(partial, dest)  # unlike a rename, refuses a `dest` that appeared meanwhile
        except FileExistsError as exc:
            raise ConflictError(f"{dest} already exists", "name a new file; a backup never replaces another") from exc
    finally:
        _unstage(partial)
    manifest.write(dest)
    return manifest, report


def restore(src: Path, url: str, trusted: dict[str, PublicKey], force: bool = False) -> Restored:
    """Put the backup `src` in place as the ledger at `url`, and check that the restored chain verifies
    and ends where the manifest says."""
    manifest = Manifest.read(src)
    if not src.is_file():
        raise NotFoundError(f"no backup at {src}", "give the file `signoff ledger backup` wrote")
    if _sha256(src) != manifest.sha256:
        raise IntegrityError(f"{src} is not the file its manifest describes (its SHA-256 differs)",
                             "restore an intact copy of the backup; this one was changed or damaged")
    if _is_sqlite(url) != (manifest.format == "sqlite"):
        kind = "SQLite" if manifest.format == "sqlite" else "PostgreSQL"
        raise UsageError(f"{src} is a {kind} backup, and the ledger at {_shown(url)} is not {kind}",
                         f"restore it into a {kind} database (set SIGNOFF_DB or [database] url)")
    if manifest.format == "sqlite":
        return _restore_sqlite(src, manifest, _sqlite_path(url), trusted, force)
    return _restore_pg(src, manifest, url, trusted, force)


# -- SQLite ----------------------------------------------------------------------------------------

def _is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def _sqlite_path(url: str) -> Path:
    database = make_url(url).database
    if not database or database == ":memory:":
        raise UsageError("an in-memory SQLite ledger has nothing to back up or restore",
                         "point SIGNOFF_DB at a database file")
    return Path(database)


def _sqlite_copy(source: Path, target: Path) -> None:
    if not source.is_file():
        raise NotFoundError(f"no ledger database at {source}", "check SIGNOFF_DB / [database] url")
    # Read-only: a backup must not create, migrate or lock the live file for writing.
    with contextlib.closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=60)) as live, \
            contextlib.closing(sqlite3.connect(target)) as copy:
        live.backup(copy)
        # One self-contained file: no -wal beside it to lose on the way to another machine.
        copy.execute("PRAGMA journal_mode=DELETE")


def _verify_sqlite(path: Path, trusted: dict[str, PublicKey]) -> ChainReport:
    ledger = SqlLedger.from_url(f"sqlite:///{path}")
    try:
        return verify_chain(ledger, trusted=trusted)
    finally:
        ledger.close()


def _holds_events(url: str) -> bool:
    ledger = SqlLedger.from_url(url)
    try:
        return ledger.count_events() > 0
    finally:
        ledger.close()


def _restore_sqlite(src: Path, manifest: Manifest, target: Path, trusted: dict[str, PublicKey],
                    force: bool) -> Restored:
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = staging_file(target, ".restoring")
    try:
        os.chmod(staged, 0o644)  # what the ledger file had when it was copied into place by name
        shutil.copyfile(src, staged)
        report = _verify_sqlite(staged, trusted)
        _check_matches(report, manifest)
        kept: Path | None = None
        if target.exists():
            if _holds_events(f"sqlite:///{target}"):
                if not force:
                    raise ConflictError(f"the ledger at {target} already holds events",
                                        "stop every process using it, then run again with --force: the "
                                        "current ledger is kept beside it first")
                kept = _free_name(target)
                backup(f"sqlite:///{target}", kept, trusted)
            for suffix in ("-wal", "-shm"):
                Path(f"{target}{suffix}").unlink(missing_ok=True)
        os.replace(staged, target)
    finally:
        _unstage(staged)
    return Restored(manifest, report, kept)


# -- PostgreSQL --------------------------------------------------------------------------------------

def _libpq_url(url: str) -> str:
    """The URL as libpq reads it: SQLAlchemy's driver suffix removed."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def _shown(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True).split("?")[0]


def pg_tool(name: str) -> str:
    """A PostgreSQL client program: on PATH, else the newest in Debian's versioned folders."""
    versioned = glob(f"/usr/lib/postgresql/*/bin/{name}")
    # by major version as a number: "15" is newer than "9" (as text it is not)
    newest = max(versioned, key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else -1,
                 default=None)
    found = shutil.which(name) or newest
    if found is None:
        raise UnavailableError(f"{name} is not installed", "install PostgreSQL's client programs "
                               "(Debian: apt-get install postgresql-client)")
    return found


def _run_pg_tool(args: list[str]) -> None:
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=3600, check=False)
    except OSError as exc:
        raise UnavailableError(f"{args[0]} could not start: {exc}", "check the PostgreSQL client install") from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise UnavailableError(f"{Path(args[0]).name} failed: {last}",
                               "check that the database is reachable and the user may read it")


@contextlib.contextmanager
def _pg(url: str) -> Iterator[object]:
    import psycopg

    try:
        conn = psycopg.connect(_libpq_url(url))
    except psycopg.OperationalError as exc:
        raise UnavailableError(f"cannot reach the database at {_shown(url)}: {str(exc).strip()}",
                               "check SIGNOFF_DB / [database] url and that PostgreSQL runs") from exc
    with conn:
        yield conn


def _pg_dump(url: str, target: Path) -> tuple[int, str]:
    """Dump the database in one snapshot and return the chain's count and head in that snapshot."""
    import psycopg

    with _pg(url) as conn:
        assert isinstance(conn, psycopg.Connection)
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        snapshot = conn.execute("SELECT pg_export_snapshot()").fetchone()
        try:
            head = conn.execute("SELECT seq, hash FROM chain_head WHERE id = 1").fetchone()
        except psycopg.errors.UndefinedTable as exc:
            raise NotFoundError(f"no signoff ledger in the database at {_shown(url)}",
                                "check SIGNOFF_DB / [database] url") from exc
        assert snapshot is not None and head is not None
        # pg_dump reads the snapshot this transaction exported, so it holds exactly this head
        _run_pg_tool([pg_tool("pg_dump"), "--format=custom", "--no-owner", f"--snapshot={snapshot[0]}",
                      f"--file={target}", f"--dbname={_libpq_url(url)}"])
        conn.rollback()
    return int(head[0]), str(head[1])


def _pg_state(url: str) -> tuple[bool, bool]:
    """(the database has signoff's tables, and its chain holds events)."""
    import psycopg

    with _pg(url) as conn:
        assert isinstance(conn, psycopg.Connection)
        row = conn.execute("SELECT to_regclass('chain_head') IS NOT NULL").fetchone()
        if not (row and row[0]):
            return False, False
        seq = conn.execute("SELECT seq FROM chain_head WHERE id = 1").fetchone()
        return True, bool(seq and seq[0] > 0)


def _restore_pg(src: Path, manifest: Manifest, url: str, trusted: dict[str, PublicKey],
                force: bool) -> Restored:
    has_tables, has_events = _pg_state(url)
    kept: Path | None = None
    if has_events:
        if not force:
            raise ConflictError(f"the ledger at {_shown(url)} already holds events",
                                "stop every server and worker using it, then run again with --force: "
                                "the current ledger is dumped beside the backup first")
        kept = _free_name(src)
        backup(url, kept, trusted)
    args = [pg_tool("pg_restore"), "--no-owner", "--single-transaction", f"--dbname={_libpq_url(url)}"]
    if has_tables:
        args[1:1] = ["--clean", "--if-exists"]
    _run_pg_tool([*args, str(src)])
    ledger = SqlLedger.from_url(url)
    try:
        report = verify_chain(ledger, trusted=trusted)
    finally:
        ledger.close()
    _check_matches(report, manifest)
    return Restored(manifest, report, kept)


# -- shared ----------------------------------------------------------------------------------------

def _check_matches(report: ChainReport, manifest: Manifest) -> None:
    if not report.ok:
        raise IntegrityError(f"the restored chain does not verify: {report.problem}",
                             "restore another backup; this one holds a broken chain")
    if (report.count, report.head_hash) != (manifest.count, manifest.head):
        raise IntegrityError(f"the restored chain ends at seq {report.count} ({report.head_hash[:12]}), the manifest "
                             f"says seq {manifest.count} ({manifest.head[:12]})",
                             "restore a backup together with the manifest written with it")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _free_name(beside: Path) -> Path:
    """`<name>.before-restore-<UTC time>`, numbered when a restore in the same second took that name."""
    stem = f"{beside.name}.before-restore-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
    for n in range(1000):
        candidate = beside.with_name(stem if n == 0 else f"{stem}-{n}")
        if not candidate.exists() and not Manifest.path_for(candidate).exists():
            return candidate
    raise ConflictError(f"too many earlier restores beside {beside}", "move old .before-restore files away")


def _write_atomic(path: Path, text: str) -> None:
    replace_text(path, text)
