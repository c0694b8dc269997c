"""Durable state: append-only events per case, idempotency, outbox, hash-chained audit log."""

from signoff.ledger.audit import ChainMonitor, ChainReport, signing_problem, verify_chain
from signoff.ledger.checkpoints import (
    Checkpoint,
    Checkpointer,
    SigningPolicy,
    Witness,
    checkpointer,
    checkpointing,
    sign_checkpoint,
)
from signoff.ledger.contract import Ledger
from signoff.ledger.memory import MemoryLedger
from signoff.ledger.outbox import Job, JobState, Outbox, Worker, backoff
from signoff.ledger.store import AppendResult, Event, NewEvent, NewJob, SqlLedger, UnitOfWork

__all__ = [
    "AppendResult",
    "ChainMonitor",
    "ChainReport",
    "Checkpoint",
    "Checkpointer",
    "Event",
    "Job",
    "JobState",
    "Ledger",
    "MemoryLedger",
    "NewEvent",
    "NewJob",
    "Outbox",
    "SigningPolicy",
    "SqlLedger",
    "UnitOfWork",
    "Witness",
    "Worker",
    "backoff",
    "checkpointer",
    "checkpointing",
    "sign_checkpoint",
    "signing_problem",
    "verify_chain",
]
