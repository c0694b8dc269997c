"""What every ledger does, whatever keeps it: the protocol the workflows are written against.

`SqlLedger` (store.py) keeps cases in SQLite or PostgreSQL; an in-memory ledger keeps them in a
process, so that decisions and services are tested without a database. Both pass one contract
test suite. Code that needs SQL itself (projections, the outbox, the audit walk) names `SqlLedger`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

from signoff.kernel.clock import Clock
from signoff.ledger.store import AppendResult, Event, NewEvent, NewJob


class Ledger(Protocol):
    clock: Clock

    def append(self, case_id: str, expected_version: int | None, new_events: Sequence[NewEvent],
               jobs: Sequence[NewJob] = (), idempotency_key: str | None = None) -> AppendResult:
        """Append to a case still at `expected_version` (None: wherever it is); ConflictError if not."""
        ...

    def update(self, case_id: str, decide: Callable[[list[Event]], tuple[Sequence[NewEvent], Sequence[NewJob]]],
               idempotency_key: str | None = None, attempts: int = 20) -> AppendResult:
        """Read, decide, append at the version read; on a conflict read and decide again."""
        ...

    def read(self, case_id: str, after_version: int = 0) -> list[Event]: ...

    def version(self, case_id: str) -> int: ...

    def stream(self, after_seq: int = 0, batch: int = 1000, prefix: str | None = None) -> Iterator[Event]: ...

    def case_ids(self, prefix: str = "") -> list[str]: ...

    def head(self) -> tuple[int, str]: ...

    def count_events(self) -> int: ...

    def next_number(self, name: str) -> int: ...

    def enqueue(self, jobs: Iterable[NewJob], case_id: str | None = None) -> None: ...

    def close(self) -> None: ...
