"""The worker side of the transactional outbox: claim with a lease, acknowledge with the lease id,
back off on failure, park as dead after too many attempts.

Delivery is at-least-once: a worker that dies holding a lease loses it when the lease lapses, and
the job is claimed again. Effects are made exactly-once by keying them on the job id (for example
`Ledger.append(..., idempotency_key=job.job_id)`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, func, or_, select, update

from signoff.kernel.ids import new_id
from signoff.ledger.engine import is_postgres
from signoff.ledger.schema import outbox
from signoff.ledger.store import SqlLedger

DEFAULT_LEASE = 60.0
BACKOFF_BASE = 2.0
BACKOFF_CAP = 3600.0


@dataclass(frozen=True)
class Job:
    job_id: str
    topic: str
    case_id: str | None
    payload: dict[str, Any]
    attempts: int
    lease_id: str
    lease_expires_at: float


@dataclass(frozen=True)
class JobState:
    job_id: str
    topic: str
    status: str
    attempts: int
    max_attempts: int
    available_at: float
    last_error: str | None


def backoff(attempts: int, base: float = BACKOFF_BASE, cap: float = BACKOFF_CAP) -> float:
    """Delay before the next try after `attempts` failures: base * 2^(attempts-1), capped."""
    return float(min(cap, base * (2 ** max(0, attempts - 1))))


class Outbox:
    def __init__(self, ledger: SqlLedger, lease_seconds: float = DEFAULT_LEASE) -> None:
        self.ledger = ledger
        self.lease_seconds = lease_seconds

    def claim(self, topics: Sequence[str] | None = None) -> Job | None:
        """Lease the oldest due job (optionally of the given topics), or None."""

        def run(conn: Connection) -> Job | None:
            now = self.ledger.clock.now()
            due = and_(
                outbox.c.status == "pending",
                outbox.c.available_at <= now,
                or_(outbox.c.lease_expires_at.is_(None), outbox.c.lease_expires_at <= now),
            )
            query = select(outbox).where(due).order_by(outbox.c.available_at, outbox.c.created_at).limit(1)
            if topics:
                query = query.where(outbox.c.topic.in_(list(topics)))
            if is_postgres(self.ledger.engine):
                query = query.with_for_update(skip_locked=True)
            row = conn.execute(query).first()
            if row is None:
                return None
            if row.attempts >= row.max_attempts:
                # Every earlier claim lapsed without an answer: the worker keeps dying on it.
                conn.execute(
                    update(outbox)
                    .where(outbox.c.job_id == row.job_id)
                    .values(
                        status="dead",
                        lease_id=None,
                        last_error=row.last_error or f"lease lapsed {row.attempts} times without an answer",
                    )
                )
                return None
            lease_id = new_id()
            expires = now + self.lease_seconds
            conn.execute(
                update(outbox)
                .where(outbox.c.job_id == row.job_id)
                .values(lease_id=lease_id, lease_expires_at=expires, attempts=row.attempts + 1)
            )
            return Job(
                job_id=row.job_id,
                topic=row.topic,
                case_id=row.case_id,
                payload=json.loads(row.payload),
                attempts=row.attempts + 1,
                lease_id=lease_id,
                lease_expires_at=expires,
            )

        return self.ledger.transact(run)

    def ack(self, job: Job) -> bool:
        """Mark the job done. False when the lease was lost (someone else holds or finished it)."""
        return self._ack(job.job_id, job.lease_id)

    def ack_lease(self, topic: str, job_id: str, lease_id: str) -> bool:
        """`ack` for a worker in another process, which holds only the job id and its lease id: a
        job of `topic` only (a lease of another queue's job finishes nothing here)."""
        return self._ack(job_id, lease_id, topic)

    def _ack(self, job_id: str, lease_id: str, topic: str | None = None) -> bool:
        def run(conn: Connection) -> bool:
            res = conn.execute(
                update(outbox)
                .where(outbox.c.job_id == job_id, outbox.c.lease_id == lease_id, outbox.c.status == "pending",
                       *([outbox.c.topic == topic] if topic is not None else []))
                .values(status="done", done_at=self.ledger.clock.now(), lease_id=None, lease_expires_at=None)
            )
            return bool(res.rowcount == 1)

        return self.ledger.transact(run)

    def fail(self, job: Job, error: str) -> str:
        """Record a failed attempt: back off, or park as dead after max attempts. Returns the status."""

        def run(conn: Connection) -> str:
            row = conn.execute(select(outbox).where(outbox.c.job_id == job.job_id)).first()
            if row is None or row.lease_id != job.lease_id or row.status != "pending":
                return "lost"
            now = self.ledger.clock.now()
            status = "dead" if row.attempts >= row.max_attempts else "pending"
            conn.execute(
                update(outbox)
                .where(outbox.c.job_id == job.job_id)
                .values(
                    status=status,
                    lease_id=None,
                    lease_expires_at=None,
                    last_error=error[:4000],
                    available_at=now + backoff(row.attempts),
                )
            )
            return status

        return self.ledger.transact(run)

    def jobs(self, status: str | None = None, topic: str | None = None) -> list[JobState]:
        query = select(outbox).order_by(outbox.c.created_at, outbox.c.job_id)
        if status:
            query = query.where(outbox.c.status == status)
        if topic:
            query = query.where(outbox.c.topic == topic)
        with self.ledger.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [
            JobState(r.job_id, r.topic, r.status, r.attempts, r.max_attempts, r.available_at, r.last_error)
            for r in rows
        ]

    def counts(self) -> dict[str, int]:
        """How many jobs are in each status (pending, done, dead)."""
        with self.ledger.engine.connect() as conn:
            rows = conn.execute(select(outbox.c.status, func.count()).group_by(outbox.c.status)).all()
        return {str(status): int(n) for status, n in rows}

    def oldest_wait(self, now: float) -> float:
        """Seconds the longest-waiting claimable job (pending, available, no live lease) has waited for a
        worker: the outbox's lag (0 when none waits)."""
        claimable = and_(outbox.c.status == "pending", outbox.c.available_at <= now,
                         or_(outbox.c.lease_expires_at.is_(None), outbox.c.lease_expires_at <= now))
        with self.ledger.engine.connect() as conn:
            since = conn.execute(select(func.min(outbox.c.available_at)).where(claimable)).scalar()
        return max(0.0, now - float(since)) if since is not None else 0.0

    def payload(self, job_id: str) -> dict[str, Any] | None:
        """The payload a job was written with, or None when there is no such job."""
        with self.ledger.engine.connect() as conn:
            row = conn.execute(select(outbox.c.payload).where(outbox.c.job_id == job_id)).first()
        return dict(json.loads(row.payload)) if row is not None else None

    def retry_dead(self, job_id: str) -> bool:
        """Operator action: give a dead job a fresh set of attempts."""

        def run(conn: Connection) -> bool:
            res = conn.execute(
                update(outbox)
                .where(outbox.c.job_id == job_id, outbox.c.status == "dead")
                .values(status="pending", attempts=0, available_at=self.ledger.clock.now(), lease_id=None)
            )
            return bool(res.rowcount == 1)

        return self.ledger.transact(run)


Handler = Callable[[Job], None]


def describe(exc: Exception) -> str:
    """The error recorded on a failed job: the exception's type and text."""
    return f"{type(exc).__name__}: {exc}"


class Worker:
    """Deliver outbox jobs to handlers by topic: the one claim / handle / acknowledge loop.

    A handler that returns acknowledges its job. One that raises one of `failures` (default: any
    Exception) fails it: the error (`error_text(exc)`) is recorded, the job backs off and is parked
    as dead after max attempts. Anything else (a BaseException such as KeyboardInterrupt, or an
    exception outside a narrower `failures`) propagates with the lease held, as a crash does: the
    lease lapses and the job is delivered again. Handlers must make their effect idempotent on
    `job.job_id`.
    """

    def __init__(self, outbox: Outbox, handlers: dict[str, Handler], idle_sleep: float = 0.05,
                 failures: tuple[type[Exception], ...] = (Exception,),
                 error_text: Callable[[Exception], str] = describe) -> None:
        self.outbox = outbox
        self.handlers = handlers
        self.idle_sleep = idle_sleep
        self.failures = failures
        self.error_text = error_text
        self._stop = threading.Event()

    def run_once(self) -> bool:
        """Deliver at most one job; False when none was due."""
        job = self.outbox.claim(list(self.handlers))
        if job is None:
            return False
        try:
            self.handlers[job.topic](job)
        except self.failures as exc:  # the job's failure, recorded, not fatal to the worker
            self.outbox.fail(job, self.error_text(exc))
        else:
            self.outbox.ack(job)
        return True

    def drain(self, limit: int = 10_000) -> int:
        """Deliver every job that is due now, at most `limit`; returns how many were handled."""
        handled = 0
        while handled < limit and self.run_once():
            handled += 1
        return handled

    def run(self) -> None:
        while not self._stop.is_set():
            if not self.run_once():
                self._stop.wait(self.idle_sleep)

    def stop(self) -> None:
        self._stop.set()
