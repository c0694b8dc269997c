"""Deciding in tests as a face does: through the notes service, bound to the run as it is read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from signoff.ledger import Ledger
from signoff.notes import NotesService, State, bound

DECIDERS = ("alice", "bob", "carol")  # the people the tests' notes service lets decide


def notes_of(ledger: Ledger) -> NotesService:
    return NotesService(ledger, DECIDERS)


def decide(ledger: Ledger, run: Path, command: str, by: str) -> State:
    """`command` by `by`, naming the digest of what it decides on as the run is now (as the CLI does
    after printing it)."""
    notes = notes_of(ledger)
    return notes.decide(run, bound(command, notes.state(run)), by, "cli")


def state_of(ledger: Ledger, run: Path) -> State:
    return notes_of(ledger).state(run)


def decisions(ledger: Ledger, run: Path) -> list[dict[str, Any]]:
    """The run's decisions as stored."""
    return [d.payload() for d in notes_of(ledger).decisions(run)]
