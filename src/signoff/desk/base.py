"""What every part of the `Desk` shares: its ledger, forge and configuration, reading bugs, and
appending a decision at the version it was made on.

A bug is ledger case `desk/bug/<id>`; its state is the `Bug` fold (signoff.desk.model) and its rules
are the pure decisions of signoff.desk.decisions. The parts of the desk (intake, reporters,
submissions, review, receiving, release) build on this class; `signoff.desk.workflow.Desk` joins
them into the one facade the faces call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from signoff.desk import decisions
from signoff.desk.config import DeskConfig
from signoff.desk.credentials import Credentials
from signoff.desk.forge import Forge
from signoff.desk.model import Bug, fold
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import NotFoundError
from signoff.kernel.settings import Settings
from signoff.ledger import Event, Ledger

BUG_PREFIX = "desk/bug/"


def bug_case(bug_id: str) -> str:
    return BUG_PREFIX + bug_id


def report_case(report_id: str) -> str:
    """Where a report's filing is kept: the bug it joined."""
    return f"desk/report/{report_id}"


def sha(text: str) -> str:
    return sha256_bytes(text.encode())


def _not_found(bug_id: str) -> NotFoundError:
    return NotFoundError(f"bug {bug_id} not found", "list bugs with `signoff desk bugs`")


class DeskBase:
    def __init__(self, ledger: Ledger, settings: Settings, forge: Forge, config: DeskConfig | None = None) -> None:
        self.ledger = ledger
        self.settings = settings
        self.forge = forge
        self.config = config or DeskConfig.load(settings)
        self.credentials = Credentials(ledger)
        self.clock = ledger.clock

    # -- reading --------------------------------------------------------------------------------

    def bug(self, bug_id: str) -> Bug:
        events = self.ledger.read(bug_case(bug_id))
        if not events:
            raise _not_found(bug_id)
        return fold(bug_id, events)

    def bug_ids(self) -> list[str]:
        return sorted(c[len(BUG_PREFIX):] for c in self.ledger.case_ids(BUG_PREFIX))

    def bugs(self) -> list[Bug]:
        return [self.bug(b) for b in self.bug_ids()]

    def notes(self, bug_id: str) -> list[dict[str, Any]]:
        return [{"type": e.type, **e.payload, "at": e.recorded_at} for e in self.ledger.read(f"desk/notes/{bug_id}")]

    def record(self, bug_id: str) -> dict[str, Any]:
        """Everything kept about a bug: its summary, event log, measured evidence files, advisory
        notes and current reproduction (what `signoff desk show` prints)."""
        bug = self.bug(bug_id)
        return {"summary": bug.summary(), "log": bug.log, "evidence": bug.evidence, "notes": self.notes(bug_id),
                "reproduction": bug.reproduction, "rewrites": bug.rewrites}

    def report_bug_id(self, report_id: str) -> str:
        """The bug a filed report joined."""
        return str(self.ledger.read(report_case(report_id))[0].payload["bug_id"])

    # -- deciding -------------------------------------------------------------------------------

    def decide(self, bug_id: str, command: decisions.Command | Callable[[Bug], decisions.Command],
               idempotency_key: str | None = None) -> Bug:
        """Read the bug, decide `command` on it (signoff.desk.decisions), and append at the version
        read, retrying on a conflict. A command that needs facts about the state read (the change's
        paths, say) is given as a function of the bug that gathers them."""
        def run(history: list[Event]) -> decisions.Decision:
            if not history:
                raise _not_found(bug_id)
            bug = fold(bug_id, history)
            return decisions.decide(bug, command(bug) if callable(command) else command, self.config)

        self.ledger.update(bug_case(bug_id), run, idempotency_key)
        return self.bug(bug_id)
