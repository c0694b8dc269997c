"""Walk the hash-chained audit log and name the first broken entry; check signed checkpoints and
witnesses against it."""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import Row, select

from signoff.kernel.errors import IntegrityError
from signoff.ledger.checkpoints import Checkpoint, Witness, stored
from signoff.ledger.schema import cases, events
from signoff.ledger.store import GENESIS, SqlLedger, event_hash
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
    ledger: SqlLedger,
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


COLUMNS = tuple(column.name for column in events.columns)  # the table's order, as rows come
_INTEGERS = frozenset({"seq", "version"})
SEP = "\x1f"  # between a column's values in a digest; never inside a value that is digested


class ColumnDigest:
    """What a later re-read compares the stored events with: per column, a SHA-256 over its values
    in seq order, joined by SEP. That is what SQLite's `group_concat(column, char(31))` gives, so
    there a re-read is one statement whose work is SQLite's, done without holding Python's GIL (a
    re-read in a background thread then barely slows the requests beside it). The values are
    unambiguous only while each is of its column's type (integer or text) and holds no SEP: a row
    that is not is still digested, but `exact` turns False and such a digest never vouches for a
    row (the monitor walks again from the first event instead)."""

    def __init__(self) -> None:
        self.parts = [hashlib.sha256() for _ in COLUMNS]
        self.rows = 0
        self.exact = True

    def update(self, row: tuple[Any, ...]) -> None:
        lead = SEP if self.rows else ""
        for part, name, value in zip(self.parts, COLUMNS, row, strict=True):
            if name in _INTEGERS:
                ok = type(value) is int
            else:
                ok = type(value) is str and SEP not in value
            self.exact = self.exact and ok
            part.update((lead + (str(value) if ok else "")).encode())
        self.rows += 1

    def copy(self) -> ColumnDigest:
        other = ColumnDigest()
        other.parts = [part.copy() for part in self.parts]
        other.rows, other.exact = self.rows, self.exact
        return other

    def value(self) -> bytes:
        return hashlib.sha256(b"".join(part.digest() for part in self.parts)).digest()


def _mistyped(row: tuple[Any, ...]) -> str | None:
    """The first column whose stored value is not of the type the ledger writes (an integer or
    text): a value the database was made to hold some other way."""
    for name, value in zip(COLUMNS, row, strict=True):
        if type(value) is not (int if name in _INTEGERS else str):
            return name
    return None


def _columns_digest(conn: sqlite3.Connection, upto: int, hashes: dict[int, str]) -> bytes | None:
    """The ColumnDigest of stored events 1..upto, computed in SQLite in one statement (one snapshot);
    None when a value is not of its column's type or the rows are not exactly seq 1..upto. Fills in
    the hashes at the positions `hashes` names."""
    # No SEP-in-value check is needed here: the walked values hold none (else the digest is not
    # exact), so equal strings over the same row count hold the same number of SEPs, all between
    # values. A type check is: an integer and its text, or text and its bytes, join alike.
    bad = " + ".join(f"sum(typeof({c}) != '{'integer' if c in _INTEGERS else 'text'}')" for c in COLUMNS)
    joined = ", ".join(f"group_concat({c}, char(31))" for c in COLUMNS)
    row = conn.execute(f"SELECT count(*), min(seq), max(seq), {bad}, {joined} "  # noqa: S608 (names are ours)
                       "FROM (SELECT * FROM events WHERE seq <= ? ORDER BY seq)", (upto,)).fetchone()
    count, low, high, flawed, values = row[0], row[1], row[2], row[3], row[4:]
    if count != upto or (upto and (low != 1 or high != upto)) or flawed:
        return None
    texts = ["" if v is None else str(v) for v in values]
    if hashes:
        for seq, value in enumerate(texts[COLUMNS.index("hash")].split(SEP), start=1):
            if seq in hashes:
                hashes[seq] = value
    return hashlib.sha256(b"".join(hashlib.sha256(t.encode()).digest() for t in texts)).digest()


@dataclass
class _Walked:
    """Where a walk stopped: the events verified (1..count), the last hash, each case's version, and
    a digest of the stored rows walked, in order (what a later visit compares them with)."""

    count: int = 0
    prev: str = GENESIS
    per_case: dict[str, int] = field(default_factory=dict)
    digest: ColumnDigest = field(default_factory=ColumnDigest)

    def copy(self) -> _Walked:
        return _Walked(self.count, self.prev, dict(self.per_case), self.digest.copy())


def _rows(ledger: SqlLedger, after: int, upto: int | None, batch: int) -> Iterator[Row[Any]]:
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


def _walk(ledger: SqlLedger, batch: int, hashes: dict[int, str], start: _Walked | None = None
          ) -> tuple[ChainReport, _Walked]:
    """Walk the chain (on from `start`, already verified); fill in the hash at each position
    `hashes` names."""
    walked = start or _Walked()
    expected_seq = walked.count + 1
    prev = walked.prev
    per_case = walked.per_case
    for r in _rows(ledger, walked.count, None, batch):
        mistyped = _mistyped(tuple(r))
        if mistyped is not None:
            problem = f"event seq {expected_seq}: its {mistyped} is not stored as the ledger writes it: altered"
            return ChainReport(False, expected_seq - 1, prev, problem, expected_seq), walked
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
        walked.digest.update(tuple(r))
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


def signing_problem(report: ChainReport, unsigned_tail_limit: int) -> IntegrityError | None:
    """Why a chain that links is still not trustworthy (None: it is): a non-empty ledger with no
    valid signed checkpoint, or more unsigned events after the last one than the limit allows. A
    database writer who recomputes the hashes passes the walk; only signatures stop them."""
    if not report.ok or report.count == 0:
        return None
    if report.last_checkpoint is None:
        return IntegrityError(f"no signed checkpoint: all {report.count} events are unsigned, so a database "
                              "writer could have rewritten any of them and recomputed the chain",
                              "sign the head with `signoff ledger checkpoint` (a running `signoff serve` signs "
                              "it every [ledger] checkpoint_seconds); if history was rewritten, restore a backup")
    tail = report.unsigned_tail or 0
    if tail > unsigned_tail_limit:
        return IntegrityError(f"{tail} events after the last signed checkpoint (seq {report.last_checkpoint}) are "
                              f"unsigned, more than [ledger] unsigned_tail_limit = {unsigned_tail_limit}",
                              "sign the head with `signoff ledger checkpoint`, and keep `signoff serve` or a "
                              "worker running to sign on a schedule; a deleted checkpoint also shows this way")
    return None


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



@dataclass(frozen=True)
class Reread:
    """A background monitor's re-reading of the events it verified: the last re-read that found
    events 1..upto as walked, when (`time.time()`), and whether one is under way."""

    upto: int | None
    at: float | None
    running: bool


class ChainMonitor:
    """`verify_chain` with stored checkpoints, for a process that asks again and again (the ledger
    page), without walking the whole chain each time.

    It keeps, per process, where its last good walk stopped and a digest (`ColumnDigest`) of the
    stored rows it walked. A later call walks only the events appended since, repeats the head,
    case-version and checkpoint checks, and re-reads the rows walked before against the digest (a
    read with no per-event hashing). Any difference in an old row (altered, deleted, inserted,
    reordered, its hash rewritten) sends it to a full walk from the first event, which names the
    first broken entry as `ledger verify` does. On SQLite, when no connection at all committed
    anything since the last call (`PRAGMA data_version`, on a connection of its own that never
    writes), nothing can have changed, and the last answer is reused after the checkpoints are
    checked again against the trusted keys.

    The re-read is the one cost that grows with the ledger (every stored row, each time something
    was written). By default a call makes it and answers exactly what `verify_chain` would. With
    `background=True` (the ledger page) a call answers from the new events and the checks above at
    once, and the re-read runs in a thread of its own, one at a time, spaced so that it takes at
    most a third of a core: an old row changed in the database is then found by the first call
    after the re-read that follows the change, and `reread()` says how far and how recently the
    old rows were last found unchanged."""

    def __init__(self, ledger: SqlLedger, batch: int = 2000, background: bool = False) -> None:
        self.ledger = ledger
        self.batch = batch
        self.background = background
        self._lock = threading.Lock()
        self._walked: _Walked | None = None  # the last good walk
        self._seen: tuple[int, ChainReport, dict[int, str]] | None = None  # data_version, report, hashes
        self._marks: dict[int, str] = {}  # the chain's hash at each checkpoint position met so far
        self._database = ledger.engine.url.database if ledger.engine.dialect.name == "sqlite" else None
        if self._database == ":memory:":
            self._database = None
        self._watch = self._connect()
        self._reader: threading.Thread | None = None
        self._reread_version: int | None = None  # data_version when the last re-read started
        self._next_reread = 0.0  # time.monotonic() before which no re-read starts
        self._changed = False  # a re-read found a verified row changed: walk from the first event
        self._confirmed: tuple[int, float] | None = None  # events 1..n found as walked, at (time.time())

    def _connect(self) -> sqlite3.Connection | None:
        return sqlite3.connect(self._database, check_same_thread=False) if self._database else None

    def close(self) -> None:
        self.settle()
        if self._watch is not None:
            self._watch.close()

    def settle(self, timeout: float | None = None) -> None:
        """Wait for a re-read under way (background mode) to finish."""
        reader = self._reader
        if reader is not None:
            reader.join(timeout)

    def reread(self) -> Reread:
        with self._lock:
            running = self._reader is not None and self._reader.is_alive()
            upto, at = self._confirmed if self._confirmed is not None else (None, None)
            return Reread(upto, at, running)

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
                in_full = self._walked is None or self._changed
                report, hashes = self._recheck(wanted)
                if version is not None:
                    self._seen = (version, report, hashes)
                if in_full:
                    self._reread_version = version  # a walk from the first event read every row
            if self.background and report.ok:
                self._start_reread(version)
        if not report.ok:
            return report
        return _check_checkpoints(report, dict(hashes), trusted, own, None)

    def _recheck(self, wanted: set[int]) -> tuple[ChainReport, dict[int, str]]:
        hashes = {seq: "" for seq in wanted}
        start = self._walked.copy() if self._walked is not None and not self._changed else None
        if start is not None:
            if self.background:
                self._known_hashes(start, hashes)  # the rows themselves: the re-read's to vouch for
            elif not self._unchanged(start, hashes):
                start, hashes = None, {seq: "" for seq in wanted}  # nothing read from changed rows is kept
        # From a verified, unchanged prefix the walk names the same first broken entry as one from
        # the first event would.
        report, walked = _walk(self.ledger, self.batch, hashes, start)
        if not report.ok and start is not None and self.background:
            # The prefix was not read back first, so only a walk from the first event names the
            # first broken entry as `ledger verify` would.
            start, hashes = None, {seq: "" for seq in wanted}
            report, walked = _walk(self.ledger, self.batch, hashes)
        self._walked = walked if report.ok else None
        if start is None:
            self._changed, self._marks = False, {}
            if report.ok:
                self._confirmed = (walked.count, time.time())  # a walk from the first event read every row
        self._marks.update((seq, h) for seq, h in hashes.items() if h)
        return report, hashes

    def _known_hashes(self, walked: _Walked, hashes: dict[int, str]) -> None:
        """The chain's hash at the positions `hashes` names among events 1..walked.count: as met by
        an earlier walk, else as stored (a checkpoint signed at a position walked before it existed)."""
        missing = []
        for seq in hashes:
            if seq == walked.count:
                hashes[seq] = walked.prev
            elif seq < walked.count:
                if seq in self._marks:
                    hashes[seq] = self._marks[seq]
                else:
                    missing.append(seq)
        if missing:
            with self.ledger.engine.connect() as conn:
                for row in conn.execute(select(events.c.seq, events.c.hash).where(events.c.seq.in_(missing))):
                    hashes[int(row.seq)] = str(row.hash)

    def _unchanged(self, walked: _Walked, hashes: dict[int, str], conn: sqlite3.Connection | None = None) -> bool:
        """Whether the stored events 1..walked.count are those walked (the same digest); fills in
        the hashes at the positions `hashes` names among them."""
        if not walked.digest.exact:
            return False
        conn = conn or self._watch
        if conn is not None:
            now = _columns_digest(conn, walked.count, hashes)
        else:
            digest = ColumnDigest()
            for r in _rows(self.ledger, 0, walked.count, self.batch):
                digest.update(tuple(r))
                if r.seq in hashes:
                    hashes[int(r.seq)] = str(r.hash)
            now = digest.value() if digest.exact and digest.rows == walked.count else None
        return now is not None and hmac.compare_digest(now, walked.digest.value())

    def _start_reread(self, version: int | None) -> None:
        """Start a re-read of the walked rows in a thread, unless one runs, nothing was committed
        since the last one started, or the last one ended too recently (called under the lock)."""
        if self._walked is None or (self._reader is not None and self._reader.is_alive()):
            return
        if version is not None and version == self._reread_version:
            return
        if time.monotonic() < self._next_reread:
            return
        self._reread_version = version
        walked = self._walked.copy()
        self._reader = threading.Thread(target=self._reread, args=(walked,), name="ledger-reread", daemon=True)
        self._reader.start()

    def _reread(self, walked: _Walked) -> None:
        began = time.monotonic()
        conn = self._connect()
        try:
            same = self._unchanged(walked, {}, conn)
        except Exception:  # unreadable counts as changed: the next call walks in full and says why
            same = False
        finally:
            if conn is not None:
                conn.close()
        with self._lock:
            self._next_reread = time.monotonic() + 2 * (time.monotonic() - began)
            if same:
                if self._confirmed is None or self._confirmed[0] <= walked.count:
                    self._confirmed = (walked.count, time.time())
            elif self._walked is not None and self._walked.count >= walked.count:
                self._changed, self._seen = True, None
