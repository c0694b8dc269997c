"""Durable state: append-only events per case, idempotency, outbox, hash-chained audit log."""

from signoff.ledger.audit import ChainReport, verify_chain
from signoff.ledger.outbox import Job, JobState, Outbox, Worker, backoff
from signoff.ledger.store import AppendResult, Event, Ledger, NewEvent, NewJob, UnitOfWork

__all__ = [
    "AppendResult",
    "ChainReport",
    "Event",
    "Job",
    "JobState",
    "Ledger",
    "NewEvent",
    "NewJob",
    "Outbox",
    "UnitOfWork",
    "Worker",
    "backoff",
    "verify_chain",
]
