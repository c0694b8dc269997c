"""A ledger in one process's memory: what decisions and service facades are tested against when the
test is about the workflow, not the database.

It behaves as `SqlLedger` does, which tests/integration/ledger/test_contract.py holds both to: per-case versions
with optimistic concurrency, idempotency keys, jobs written with their events (the first job of a
key wins), counters, and the same hash chain (the same appends under the same clock give the same
head). Payloads are kept as canonical JSON text and parsed on every read, so a reader gets what a
database would give back, never the caller's own dict. Nothing survives the process, and there is no
outbox worker: `jobs()` shows what was enqueued.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from signoff.kernel.canonical import canonical_text
from signoff.kernel.clock import Clock, SystemClock, utc_iso
from signoff.ledger.contract import Decide, decide_and_append
from signoff.ledger.events import (
    GENESIS,
    AppendResult,
    Batch,
    Event,
    NewEvent,
    NewJob,
    Row,
    conflict,
    stored_event,
)


@dataclass(frozen=True)
class EnqueuedJob:
    """A job as the ledger keeps it (the outbox row SqlLedger would write, before any worker)."""

    job_id: str
    topic: str
    case_id: str | None
    payload: dict[str, Any]
    max_attempts: int
    available_at: float
    created_at: float


class MemoryLedger:
    def __init__(self, clock: Clock | None = None) -> None:
        self.clock: Clock = clock or SystemClock()
        # one lock for everything: every method reads or changes several of these together
        self._lock = threading.Lock()
        self._rows: list[Row] = []  # the chain: seq n is self._rows[n - 1]
        self._cases: dict[str, list[int]] = {}  # case id -> its events' seqs, in version order
        self._replies: dict[str, AppendResult] = {}  # idempotency key -> the first append's result
        self._jobs: dict[str, tuple[NewJob, str, str | None, float]] = {}  # key -> job, payload, case, when
        self._counters: dict[str, int] = {}

    def close(self) -> None:
        """Nothing to release; the cases stay readable."""

    def append(
        self,
        case_id: str,
        expected_version: int | None,
        new_events: Sequence[NewEvent],
        jobs: Sequence[NewJob] = (),
        idempotency_key: str | None = None,
    ) -> AppendResult:
        batch = Batch.of(case_id, new_events, jobs)
        with self._lock:
            if idempotency_key is not None and idempotency_key in self._replies:
                first = self._replies[idempotency_key]
                return AppendResult(first.case_id, first.version, first.seqs, True)
            seqs = self._cases.get(case_id, [])
            current = len(seqs)
            if expected_version is not None and current != expected_version:
                raise conflict(case_id, current, expected_version)
            now = self.clock.now()
            seq, prev = self._head()
            rows = batch.rows(seq, current, prev, utc_iso(now))
            if rows:
                self._rows.extend(rows)
                self._cases[case_id] = [*seqs, *(r[0] for r in rows)]
            self._add_jobs(batch.jobs, batch.job_payloads, case_id, now)
            result = AppendResult(case_id, current + len(rows), tuple(r[0] for r in rows))
            if idempotency_key is not None:
                self._replies[idempotency_key] = result
            return result

    def update(self, case_id: str, decide: Decide, idempotency_key: str | None = None,
               attempts: int = 20) -> AppendResult:
        return decide_and_append(self, case_id, decide, idempotency_key, attempts)

    def read(self, case_id: str, after_version: int = 0) -> list[Event]:
        with self._lock:
            rows = [self._rows[s - 1] for s in self._cases.get(case_id, [])[max(after_version, 0):]]
        return [stored_event(r) for r in rows]

    def version(self, case_id: str) -> int:
        with self._lock:
            return len(self._cases.get(case_id, ()))

    def stream(self, after_seq: int = 0, batch: int = 1000, prefix: str | None = None) -> Iterator[Event]:
        """In batches, as SqlLedger reads: events appended while the stream is read are seen by the
        batches after them."""
        last = max(after_seq, 0)
        while True:
            with self._lock:
                rows = self._rows[last:last + batch]
            if not rows:
                return
            for r in rows:
                if prefix is None or r[1].startswith(prefix):
                    yield stored_event(r)
            last = rows[-1][0]

    def case_ids(self, prefix: str = "") -> list[str]:
        with self._lock:
            return sorted(c for c in self._cases if c.startswith(prefix))

    def head(self) -> tuple[int, str]:
        with self._lock:
            return self._head()

    def _head(self) -> tuple[int, str]:
        if not self._rows:
            return 0, GENESIS
        last = self._rows[-1]
        return last[0], last[7]

    def count_events(self) -> int:
        with self._lock:
            return len(self._rows)

    def next_number(self, name: str) -> int:
        with self._lock:
            value = self._counters[name] = self._counters.get(name, 0) + 1
            return value

    def enqueue(self, jobs: Iterable[NewJob], case_id: str | None = None) -> None:
        items = list(jobs)
        payloads = [canonical_text(j.payload) for j in items]
        with self._lock:
            self._add_jobs(items, payloads, case_id, self.clock.now())

    def _add_jobs(self, jobs: Sequence[NewJob], payloads: Sequence[str], case_id: str | None, now: float) -> None:
        for job, text_ in zip(jobs, payloads, strict=True):
            self._jobs.setdefault(job.key, (job, text_, case_id, now))

    def jobs(self) -> list[EnqueuedJob]:
        """Every job written, in the order written (for tests: nothing here runs them)."""
        with self._lock:
            kept = list(self._jobs.values())
        return [EnqueuedJob(job.key, job.topic, case_id, json.loads(text_), job.max_attempts, now + job.delay, now)
                for job, text_, case_id, now in kept]


if TYPE_CHECKING:  # mypy holds MemoryLedger to the protocol here
    from signoff.ledger.contract import Ledger

    _IS_A_LEDGER: type[Ledger] = MemoryLedger
