"""What someone with write access to an organisation's records database (and no signing key) can do
to a chain: edit, delete, reorder or add rows, straight in SQLite, behind the ledger's back."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from signoff.incident.chain import CASE_PREFIX


def _case(org: str, chain: str) -> str:
    return f"{CASE_PREFIX}{org}/{chain}"


def _connect(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(db, timeout=30)
    conn.isolation_level = None
    return conn


def edit(db: Path, org: str, chain: str, version: int, old: str, new: str) -> None:
    with _connect(db) as conn:
        cur = conn.execute("UPDATE events SET payload = replace(payload, ?, ?) WHERE case_id = ? AND version = ?",
                           (old, new, _case(org, chain), version))
        assert cur.rowcount == 1
        row = conn.execute("SELECT payload FROM events WHERE case_id = ? AND version = ?",
                           (_case(org, chain), version)).fetchone()
        assert new in row[0]


def delete(db: Path, org: str, chain: str, version: int) -> None:
    with _connect(db) as conn:
        assert conn.execute("DELETE FROM events WHERE case_id = ? AND version = ?",
                            (_case(org, chain), version)).rowcount == 1


def delete_all(db: Path, org: str, chain: str) -> None:
    """Empty the case entirely, so a new chain can be written into it from seq 1."""
    with _connect(db) as conn:
        conn.execute("DELETE FROM events WHERE case_id = ?", (_case(org, chain),))
        conn.execute("DELETE FROM cases WHERE case_id = ?", (_case(org, chain),))


def swap(db: Path, org: str, chain: str, a: int, b: int) -> None:
    with _connect(db) as conn:
        rows = dict(conn.execute("SELECT version, payload FROM events WHERE case_id = ? AND version IN (?, ?)",
                                 (_case(org, chain), a, b)).fetchall())
        for version, other in ((a, b), (b, a)):
            conn.execute("UPDATE events SET payload = ? WHERE case_id = ? AND version = ?",
                         (rows[other], _case(org, chain), version))


def append_row(db: Path, org: str, chain: str, payload: str) -> None:
    """A row added at the end of the case with any payload text, hashes made up."""
    with _connect(db) as conn:
        seq = conn.execute("SELECT max(seq) FROM events").fetchone()[0] or 0
        version = conn.execute("SELECT max(version) FROM events WHERE case_id = ?",
                               (_case(org, chain),)).fetchone()[0] or 0
        conn.execute("INSERT INTO events (seq, case_id, version, type, payload, recorded_at, prev_hash, hash) "
                     "VALUES (?, ?, ?, 'incident.record', ?, '2026-01-01T00:00:00Z', ?, ?)",
                     (seq + 1, _case(org, chain), version + 1, payload, "0" * 64, "f" * 64))
