"""Walk the hash-chained audit log and name the first broken entry."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from signoff.ledger.schema import cases, events
from signoff.ledger.store import GENESIS, Ledger, event_hash


@dataclass(frozen=True)
class ChainReport:
    ok: bool
    count: int
    head_hash: str
    problem: str | None = None
    broken_seq: int | None = None


def verify_chain(ledger: Ledger, batch: int = 2000) -> ChainReport:
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
