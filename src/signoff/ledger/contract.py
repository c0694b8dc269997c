"""What every ledger does, whatever keeps it: the protocol the workflows are written against.

`SqlLedger` (store.py) keeps cases in SQLite or PostgreSQL; `MemoryLedger` (memory.py) keeps them in
a process, so that decisions and services are tested without a database. Both pass one contract
test suite (tests/integration/ledger/test_contract.py). Code that needs SQL itself (projections, the outbox, the
audit walk) names `SqlLedger`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

from signoff.kernel.clock import Clock
from signoff.kernel.errors import ConflictError
from signoff.ledger.events import AppendResult, Event, NewEvent, NewJob

Decide = Callable[[list[Event]], tuple[Sequence[NewEvent], Sequence[NewJob]]]


class Ledger(Protocol):
    clock: Clock

    def append(self, case_id: str, expected_version: int | None, new_events: Sequence[NewEvent],
               jobs: Sequence[NewJob] = (), idempotency_key: str | None = None) -> AppendResult:
        """Append to a case still at `expected_version` (None: wherever it is); ConflictError if not.
        Events, jobs and the idempotency record are written together or not at all; a repeated
        idempotency key returns the first append's result (`replayed=True`) and writes nothing."""
        ...

    def update(self, case_id: str, decide: Decide, idempotency_key: str | None = None,
               attempts: int = 20) -> AppendResult:
        """Read, decide, append at the version read; on a conflict read and decide again."""
        ...

    def read(self, case_id: str, after_version: int = 0) -> list[Event]:
        """The case's events after `after_version`, in version order."""
        ...

    def version(self, case_id: str) -> int:
        """The case's version: its number of events (0: no such case)."""
        ...

    def stream(self, after_seq: int = 0, batch: int = 1000, prefix: str | None = None) -> Iterator[Event]:
        """Every event after `after_seq` in chain order; with `prefix`, of the cases whose id starts
        with it (taken literally: `%` and `_` are not wildcards)."""
        ...

    def case_ids(self, prefix: str = "") -> list[str]:
        """The ids of the cases that hold events, in order."""
        ...

    def head(self) -> tuple[int, str]:
        """The last chain position and its hash ((0, GENESIS) for an empty ledger)."""
        ...

    def count_events(self) -> int: ...

    def next_number(self, name: str) -> int:
        """The next value of a named counter, starting at 1."""
        ...

    def enqueue(self, jobs: Iterable[NewJob], case_id: str | None = None) -> None:
        """Write jobs on their own (no events). Same key twice keeps the first."""
        ...

    def close(self) -> None: ...


def decide_and_append(ledger: Ledger, case_id: str, decide: Decide, idempotency_key: str | None,
                      attempts: int) -> AppendResult:
    """`Ledger.update` for every ledger: read the case, let `decide` choose events and jobs from its
    history, append them at the version read; on a conflict read again and decide again. A decision
    to append nothing writes nothing and returns the version read."""
    for _ in range(attempts):
        history = ledger.read(case_id)
        new_events, jobs = decide(history)
        if not new_events and not jobs:
            return AppendResult(case_id, len(history), ())
        try:
            return ledger.append(case_id, len(history), new_events, jobs, idempotency_key)
        except ConflictError:
            continue
    raise ConflictError(
        f"case {case_id} kept changing under {attempts} attempts",
        "retry later; another writer is very busy on this case",
    )
