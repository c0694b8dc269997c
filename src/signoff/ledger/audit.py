"""Walk the hash-chained audit log and name the first broken entry; check signed checkpoints and
witnesses against it."""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import Row, bindparam, select

from signoff.ledger.checkpoints import Checkpoint, Witness, stored
from signoff.ledger.schema import cases, events
from signoff.ledger.store import GENESIS, Ledger, event_hash
from signoff.trust.keys import PublicKey


@dataclass(frozen=True)
class ChainReport:
    ok: bool
    count: int
    head_hash: str
    problem: str | None = None
    broken_seq: int | None = None
    # With keys: the last position a valid signed checkpoint covers (None: there is none), and how
    # many events after it nothing signed yet, which a database writer could still have rewritten.
    last_checkpoint: int | None = None
    unsigned_tail: int | None = None
    witnessed: int | None = None  # how many witnessed checkpoints agreed


def verify_chain(
    ledger: Ledger,
    batch: int = 2000,
    trusted: dict[str, PublicKey] | None = None,
    witness: Witness | None = None,
) -> ChainReport:
    """Walk the chain; with `trusted` keys, also check every stored checkpoint, and with a witness,
    every witnessed one (a witness needs the keys too)."""
    if trusted is None:
        return _walk(ledger, batch, {})[0]
    own = stored(ledger.engine)
    theirs = witness.read() if witness is not None else None
    hashes = {cp.seq: "" for cp in own + (theirs or [])}
    report = _walk(ledger, batch, hashes)[0]
    if not report.ok:
        return report
    return _check_checkpoints(report, hashes, trusted, own, theirs)


@dataclass
class _Walked:
    """Where a walk stopped: the events verified (1..count), the last hash, each case's version, and
    a SHA-256 over the stored rows walked, in order (what a later visit compares them with)."""

    count: int = 0
    prev: str = GENESIS
    per_case: dict[str, int] = field(default_factory=dict)
    digest: Any = field(default_factory=hashlib.sha256)

    def copy(self) -> _Walked:
        return _Walked(self.count, self.prev, dict(self.per_case), self.digest.copy())


def _rows(ledger: Ledger, after: int, upto: int | None, batch: int) -> Iterator[Row[Any]]:
    """The stored events after seq `after` (up to `upto`), in order, `batch` at a time."""
    last_seq = after
    while True:
        query = select(events).where(events.c.seq > last_seq)
        if upto is not None:
            query = query.where(events.c.seq <= upto)
        with ledger.engine.connect() as conn:
            rows = conn.execute(query.order_by(events.c.seq).limit(batch)).all()
        if not rows:
            return
        yield from rows
        last_seq = int(rows[-1].seq)


def _stored(row: Row[Any]) -> bytes:
    """A row's stored columns, unambiguously (repr of a tuple of str and int), for the digest."""
    return repr(tuple(row)).encode()


def _walk(ledger: Ledger, batch: int, hashes: dict[int, str], start: _Walked | None = None
          ) -> tuple[ChainReport, _Walked]:
    """Walk the chain (on from `start`, already verified); fill in the hash at each position
    `hashes` names."""
    walked = start or _Walked()
    expected_seq = walked.count + 1
    prev = walked.prev
    per_case = walked.per_case
    for r in _rows(ledger, walked.count, None, batch):
        seq = int(r.seq)
        where = f"event seq {seq} (case {r.case_id}, version {r.version})"
        if seq != expected_seq:
            return ChainReport(False, expected_seq - 1, prev,
                               f"event seq {expected_seq} is missing (next stored is {seq}): deleted",
                               expected_seq), walked
        if r.prev_hash != prev:
            problem = f"{where}: does not link to its predecessor: deleted, inserted or reordered"
            return ChainReport(False, seq - 1, prev, problem, seq), walked
        recomputed = event_hash(seq, r.case_id, int(r.version), r.type, r.payload, r.recorded_at, r.prev_hash)
        if recomputed != r.hash:
            return ChainReport(False, seq - 1, prev, f"{where}: content does not match its hash: altered", seq), walked
        want_version = per_case.get(r.case_id, 0) + 1
        if int(r.version) != want_version:
            return ChainReport(False, seq - 1, prev,
                               f"{where}: expected version {want_version} of the case: reordered", seq), walked
        per_case[r.case_id] = want_version
        prev = r.hash
        if seq in hashes:
            hashes[seq] = r.hash
        walked.digest.update(_stored(r))
        expected_seq += 1
    count = expected_seq - 1
    walked.count, walked.prev = count, prev
    head_seq, head_hash = ledger.head()
    if head_seq != count or head_hash != prev:
        return ChainReport(False, count, prev,
                           f"chain head says {head_seq} events ending {head_hash[:12]}, the log holds {count} ending "
                           f"{prev[:12]}: events after seq {count} were deleted", count + 1), walked
    with ledger.engine.connect() as conn:
        for row in conn.execute(select(cases.c.case_id, cases.c.version)):
            if per_case.get(row.case_id, 0) != int(row.version):
                return ChainReport(False, count, prev,
                                   f"case {row.case_id} is at version {row.version} but the log holds "
                                   f"{per_case.get(row.case_id, 0)} of its events: deleted", None), walked
    return ChainReport(True, count, prev), walked


def _check_checkpoints(report: ChainReport, hashes: dict[int, str], trusted: dict[str, PublicKey],
                       own: list[Checkpoint], theirs: list[Checkpoint] | None) -> ChainReport:
    def broken(problem: str, seq: int | None) -> ChainReport:
        return replace(report, ok=False, problem=problem, broken_seq=seq)

    last: int | None = None
    for cp in own:
        problem = _checkpoint_problem(cp, report.count, hashes, trusted, "stored checkpoint")
        if problem:
            return broken(problem, cp.seq)
        last = cp.seq
    witnessed = None
    if theirs is not None:
        by_seq = {cp.seq: cp for cp in own}
        for cp in theirs:
            problem = _checkpoint_problem(cp, report.count, hashes, trusted, "witnessed checkpoint")
            if problem:
                return broken(problem + " (the witness disagrees with this ledger)", cp.seq)
            if cp.seq not in by_seq:
                return broken(f"witnessed checkpoint at seq {cp.seq} is missing from the database: removed",
                              cp.seq)
            last = max(last or 0, cp.seq)
        witnessed = len(theirs)
    tail = report.count - (last or 0)
    return replace(report, last_checkpoint=last, unsigned_tail=tail, witnessed=witnessed)


def _checkpoint_problem(cp: Checkpoint, count: int, hashes: dict[int, str], trusted: dict[str, PublicKey],
                        what: str) -> str | None:
    if cp.signer(trusted) is None:
        return f"{what} at seq {cp.seq} is not signed by a trusted ledger key: forged or altered"
    if cp.seq > count:
        return f"{what} at seq {cp.seq}, but the log holds {count} events: events were deleted"
    if hashes.get(cp.seq) != cp.head_hash:  # "" for a position the walk never reached
        return (f"{what} at seq {cp.seq} signed head {cp.head_hash[:12]}, the log now has "
                f"{(hashes.get(cp.seq) or '?')[:12]} there: history up to it was rewritten")
    return None



class ChainMonitor:
    """`verify_chain` with stored checkpoints, for a process that asks again and again (the ledger
    page), reporting exactly what `verify_chain` would without walking the whole chain each time.

    It keeps, per process, where its last good walk stopped and a SHA-256 over the stored rows it
    walked. A later call re-reads those rows and compares them with the digest (a cheap read: no
    per-event hashing), walks only the events appended since, and repeats the head, case-version and
    checkpoint checks. Any difference in an old row (altered, deleted, inserted, reordered, its hash
    rewritten) sends it to a full walk from the first event, which names the first broken entry as
    `ledger verify` does. On SQLite, when no connection at all committed anything since the last call
    (`PRAGMA data_version`, on a connection of its own that never writes), nothing can have changed,
    and the last answer is reused after the checkpoints are checked again against the trusted keys."""

    def __init__(self, ledger: Ledger, batch: int = 2000) -> None:
        self.ledger = ledger
        self.batch = batch
        self._lock = threading.Lock()
        self._walked: _Walked | None = None  # the last good walk
        self._seen: tuple[int, ChainReport, dict[int, str]] | None = None  # data_version, report, hashes
        database = ledger.engine.url.database if ledger.engine.dialect.name == "sqlite" else None
        self._watch = (sqlite3.connect(database, check_same_thread=False)
                       if database and database != ":memory:" else None)
        self._upto = str(select(events).where(events.c.seq <= bindparam("upto")).order_by(events.c.seq)
                         .compile(dialect=ledger.engine.dialect))

    def close(self) -> None:
        if self._watch is not None:
            self._watch.close()

    def _data_version(self) -> int | None:
        if self._watch is None:
            return None
        return int(self._watch.execute("PRAGMA data_version").fetchone()[0])

    def verify(self, trusted: dict[str, PublicKey]) -> ChainReport:
        with self._lock:
            version = self._data_version()  # before any read: a commit during them shows next time
            own = stored(self.ledger.engine)
            wanted = {cp.seq for cp in own}
            seen = self._seen
            if version is not None and seen is not None and seen[0] == version and wanted <= seen[2].keys():
                report, hashes = seen[1], seen[2]
            else:
                report, hashes = self._recheck(wanted)
                if version is not None:
                    self._seen = (version, report, hashes)
        if not report.ok:
            return report
        return _check_checkpoints(report, dict(hashes), trusted, own, None)

    def _recheck(self, wanted: set[int]) -> tuple[ChainReport, dict[int, str]]:
        hashes = {seq: "" for seq in wanted}
        start = self._walked.copy() if self._walked is not None else None
        if start is not None and not self._unchanged(start, hashes):
            start, hashes = None, {seq: "" for seq in wanted}  # nothing read from changed rows is kept
        # From a verified, unchanged prefix the walk names the same first broken entry as one from
        # the first event would.
        report, walked = _walk(self.ledger, self.batch, hashes, start)
        self._walked = walked if report.ok else None
        return report, hashes

    def _unchanged(self, walked: _Walked, hashes: dict[int, str]) -> bool:
        """Whether the stored events 1..walked.count are byte for byte those walked; fills in the
        hashes at the positions `hashes` names among them."""
        digest = hashlib.sha256()
        for r in self._stored_rows(walked.count):
            digest.update(repr(r).encode())  # as _stored does for the walk's rows
            if r[0] in hashes:
                hashes[int(r[0])] = str(r[-1])
        return hmac.compare_digest(digest.digest(), walked.digest.digest())

    def _stored_rows(self, upto: int) -> Iterator[tuple[Any, ...]]:
        """Events 1..upto as tuples of their columns in table order. On SQLite, straight from the
        monitor's own connection, in one statement (one snapshot): the driver's tuples, without
        SQLAlchemy's rows around them, make this read a third cheaper; the values, and so their
        repr, are the same."""
        if self._watch is None:
            return (tuple(r) for r in _rows(self.ledger, 0, upto, self.batch))
        return iter(self._watch.execute(self._upto, (upto,)).fetchall())
