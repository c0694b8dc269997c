"""Running the incident's pure decisions against a ledger: read a case, fold it, decide, append.

`signoff.ledger.aggregate.decide_case` does it (`Cases` wraps it for keyed cases); the incident
calls it directly, as it needs two things more: the `AppendResult` (an evidence server answers
whether a fingerprint took a new slot, which a replayed idempotency key says), and its one key-less
case (`incident-names`). A stored event that
the incident's classes do not read is damage to the incident's records (someone wrote the database
behind the ledger's back), so it is refused as an IntegrityError naming `fix`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from signoff.kernel.errors import IntegrityError
from signoff.ledger import AppendResult, Event, Ledger, SqlLedger
from signoff.ledger.aggregate import Decision, Fold, UnreadableEventError, decide_case

S = TypeVar("S")


def ledger_at(db: Path) -> SqlLedger:
    """The one way the incident opens a ledger of its own: the SQLite database file `db` (made and
    migrated when missing). Each organisation's records, each evidence server's budget and a
    workspace's rooms are such ledgers; a run's room ledger is opened from its URL."""
    return SqlLedger.from_url(f"sqlite:///{db.resolve()}")


def fold_case(fold: Fold[S], state: S, events: list[Event], fix: str) -> S:
    try:
        return fold.over(state, events)
    except UnreadableEventError as exc:
        raise IntegrityError(f"{exc.message}; nothing was decided on it", fix) from exc


def load(ledger: Ledger, fold: Fold[S], case_id: str, initial: S, fix: str) -> S:
    """The state of `case_id` (`initial` with every stored event folded in)."""
    return fold_case(fold, initial, _read(ledger, case_id, fix), fix)


def decide_on(ledger: Ledger, fold: Fold[S], case_id: str, initial: Callable[[], S], decide: Callable[[S], Decision],
              fix: str, idempotency_key: str | None = None) -> tuple[AppendResult, Decision]:
    """`aggregate.decide_case`, with a stored event the incident cannot read refused as damage."""
    try:
        return decide_case(ledger, fold, case_id, initial, decide, idempotency_key)
    except UnreadableEventError as exc:
        raise IntegrityError(f"{exc.message}; nothing was decided on it", fix) from exc
    except json.JSONDecodeError as exc:  # a stored row that is not JSON at all
        raise IntegrityError(f"{case_id} holds an event that is not JSON; nothing was decided", fix) from exc


def _read(ledger: Ledger, case_id: str, fix: str) -> list[Event]:
    try:
        return ledger.read(case_id)
    except json.JSONDecodeError as exc:
        raise IntegrityError(f"{case_id} holds an event that is not JSON", fix) from exc


__all__ = ["decide_on", "fold_case", "ledger_at", "load"]
