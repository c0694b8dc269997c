"""What every ledger holds and how it links it, whatever keeps it: events, jobs, append results, and
the hash chain. `SqlLedger` (SQLite and PostgreSQL) and `MemoryLedger` all build on this module, so an
event appended to any of them is checked, canonicalised and hashed the same way, and the same appends
under the same clock give the same chain head everywhere."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from signoff.kernel.canonical import canonical_text
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import ConflictError, UsageError

GENESIS = "0" * 64
MAX_CASE_ID = 200  # the width of cases.case_id


@dataclass(frozen=True)
class NewEvent:
    type: str
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NewJob:
    """A job written in the same transaction as the events that cause it.

    `key` is the job's idempotency key: writing the same key twice keeps the first job.
    """

    key: str
    topic: str
    payload: dict[str, Any] = field(default_factory=dict)
    max_attempts: int = 8
    delay: float = 0.0


@dataclass(frozen=True)
class Event:
    seq: int
    case_id: str
    version: int
    type: str
    payload: dict[str, Any]
    recorded_at: str
    prev_hash: str
    hash: str


@dataclass(frozen=True)
class AppendResult:
    case_id: str
    version: int
    seqs: tuple[int, ...]
    replayed: bool = False  # True when an idempotency key matched an earlier append


# One stored event as a row: seq, case_id, version, type, canonical payload, recorded_at, prev, hash.
Row = tuple[int, str, int, str, str, str, str, str]


def event_hash(
    seq: int, case_id: str, version: int, type_: str, payload_text: str, recorded_at: str, prev: str
) -> str:
    body = {
        "seq": seq,
        "case_id": case_id,
        "version": version,
        "type": type_,
        "payload": payload_text,
        "recorded_at": recorded_at,
        "prev": prev,
    }
    return sha256_bytes(canonical_text(body).encode())


def hash_parts(case_id: str, type_: str, payload_text: str) -> tuple[str, str]:
    """The canonical text `event_hash` digests is `a + prev + stamp_part(recorded_at) + str(seq) + c +
    str(version) + "}"` (RFC 8785 orders the keys: case_id, payload, prev, recorded_at, seq, type,
    version). Cut this way, an append canonicalises the payload before it takes the chain head, and
    the PostgreSQL function fills in the values only the server knows."""
    a = f'{{"case_id":{canonical_text(case_id)},"payload":{canonical_text(payload_text)},"prev":"'
    return a, f',"type":{canonical_text(type_)},"version":'


def stamp_part(recorded_at: str) -> str:
    return f'","recorded_at":{canonical_text(recorded_at)},"seq":'


@dataclass(frozen=True)
class Batch:
    """One append, checked and canonicalised before any lock is taken: what is left to do under the
    lock is to number, link and write it."""

    case_id: str
    events: Sequence[NewEvent]
    payloads: list[str]  # each event's canonical payload, as stored and hashed
    parts: list[tuple[str, str]]  # each event's hash text around prev, seq and version (`hash_parts`)
    jobs: Sequence[NewJob]
    job_payloads: list[str]

    @classmethod
    def of(cls, case_id: str, new_events: Sequence[NewEvent], jobs: Sequence[NewJob]) -> Batch:
        """Raises UsageError, before anything is written, for a bad case id, an empty append or a
        payload that is not canonical JSON."""
        if not case_id or len(case_id) > MAX_CASE_ID:
            raise UsageError(f"case id must be 1 to {MAX_CASE_ID} characters", "pass a short case id")
        if not new_events and not jobs:
            raise UsageError("nothing to append", "pass at least one event or job")
        payloads = [canonical_text(e.payload) for e in new_events]
        parts = [hash_parts(case_id, e.type, text_) for e, text_ in zip(new_events, payloads, strict=True)]
        return cls(case_id, new_events, payloads, parts, jobs, [canonical_text(j.payload) for j in jobs])

    def rows(self, seq: int, version: int, prev: str, stamp: str) -> list[Row]:
        """The events as stored after chain position `seq` (hash `prev`) and case version `version`,
        each hashed as `event_hash` does (the text is assembled around the parts cut up front)."""
        between = stamp_part(stamp)
        rows: list[Row] = []
        for ev, text_, (before_prev, before_version) in zip(self.events, self.payloads, self.parts, strict=True):
            seq += 1
            version += 1
            digest = sha256_bytes(f"{before_prev}{prev}{between}{seq}{before_version}{version}}}".encode())
            rows.append((seq, self.case_id, version, ev.type, text_, stamp, prev, digest))
            prev = digest
        return rows


def result_text(result: AppendResult) -> str:
    """An append's result as its idempotency key keeps it (the PostgreSQL function writes the same)."""
    return canonical_text({"case_id": result.case_id, "version": result.version, "seqs": list(result.seqs)})


def replayed(stored_text: str) -> AppendResult:
    stored = json.loads(stored_text)
    return AppendResult(stored["case_id"], stored["version"], tuple(stored["seqs"]), True)


def conflict(case_id: str, current: int, expected: int) -> ConflictError:
    return ConflictError(
        f"case {case_id} is at version {current}, not {expected}",
        "re-read the case and apply the change again",
    )


def stored_event(row: Row) -> Event:
    seq, case_id, version, type_, payload, recorded_at, prev, digest = row
    return Event(int(seq), case_id, int(version), type_, json.loads(payload), recorded_at, prev, digest)
