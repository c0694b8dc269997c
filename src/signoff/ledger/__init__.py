"""Durable state: append-only events per case, idempotency, outbox, hash-chained audit log."""

from signoff.ledger.audit import ChainMonitor, ChainReport, verify_chain
from signoff.ledger.checkpoints import Checkpoint, Witness, sign_checkpoint
from signoff.ledger.outbox import Job, JobState, Outbox, Worker, backoff
from signoff.ledger.store import AppendResult, Event, Ledger, NewEvent, NewJob, UnitOfWork

__all__ = [
    "AppendResult",
    "ChainMonitor",
    "ChainReport",
    "Checkpoint",
    "Event",
    "Job",
    "JobState",
    "Ledger",
    "NewEvent",
    "NewJob",
    "Outbox",
    "UnitOfWork",
    "Witness",
    "Worker",
    "backoff",
    "sign_checkpoint",
    "verify_chain",
]
