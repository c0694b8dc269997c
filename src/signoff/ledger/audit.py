"""Walk the hash-chained audit log and name the first broken entry; check signed checkpoints and
witnesses against it."""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlalchemy import select

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
        return _walk(ledger, batch, {})
    own = stored(ledger.engine)
    theirs = witness.read() if witness is not None else None
    hashes = {cp.seq: "" for cp in own + (theirs or [])}
    report = _walk(ledger, batch, hashes)
    if not report.ok:
        return report
    return _check_checkpoints(report, hashes, trusted, own, theirs)


def _walk(ledger: Ledger, batch: int, hashes: dict[int, str]) -> ChainReport:
    """Walk the chain; fill in the hash at each position `hashes` names."""
    expected_seq = 1
    prev = GENESIS
    per_case: dict[str, int] = {}
    last_seq = 0
    while True:
        with ledger.engine.connect() as conn:
            rows = conn.execute(
                select(events).where(events.c.seq > last_seq).order_by(events.c.seq).limit(batch)
            ).all()
        if not rows:
            break
        for r in rows:
            seq = int(r.seq)
            where = f"event seq {seq} (case {r.case_id}, version {r.version})"
            if seq != expected_seq:
                return ChainReport(False, expected_seq - 1, prev,
                                   f"event seq {expected_seq} is missing (next stored is {seq}): deleted", expected_seq)
            if r.prev_hash != prev:
                return ChainReport(False, seq - 1, prev,
                                   f"{where}: does not link to its predecessor: deleted, inserted or reordered", seq)
            recomputed = event_hash(seq, r.case_id, int(r.version), r.type, r.payload, r.recorded_at, r.prev_hash)
            if recomputed != r.hash:
                return ChainReport(False, seq - 1, prev, f"{where}: content does not match its hash: altered", seq)
            want_version = per_case.get(r.case_id, 0) + 1
            if int(r.version) != want_version:
                return ChainReport(False, seq - 1, prev,
                                   f"{where}: expected version {want_version} of the case: reordered", seq)
            per_case[r.case_id] = want_version
            prev = r.hash
            if seq in hashes:
                hashes[seq] = r.hash
            expected_seq += 1
            last_seq = seq
    count = expected_seq - 1
    head_seq, head_hash = ledger.head()
    if head_seq != count or head_hash != prev:
        return ChainReport(False, count, prev,
                           f"chain head says {head_seq} events ending {head_hash[:12]}, the log holds {count} ending "
                           f"{prev[:12]}: events after seq {count} were deleted", count + 1)
    with ledger.engine.connect() as conn:
        for row in conn.execute(select(cases.c.case_id, cases.c.version)):
            if per_case.get(row.case_id, 0) != int(row.version):
                return ChainReport(False, count, prev,
                                   f"case {row.case_id} is at version {row.version} but the log holds "
                                   f"{per_case.get(row.case_id, 0)} of its events: deleted", None)
    return ChainReport(True, count, prev)


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

