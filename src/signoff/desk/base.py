"""What every part of the `Desk` shares: its ledger, forge and configuration, reading bugs, and
appending a decision at the version it was made on.

A bug is ledger case `desk/bug/<id>`; its state is the `Bug` fold (signoff.desk.model) and its rules
are the pure decisions of signoff.desk.decisions. The parts of the desk (intake, reporters,
submissions, review, receiving, release) build on this class; `signoff.desk.workflow.Desk` joins
them into the one facade the faces call.
"""

from __future__ import annotations

import threading
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
from signoff.ledger import Event, NewEvent, NewJob, SqlLedger

BUG_PREFIX = "desk/bug/"


def bug_case(bug_id: str) -> str:
    return BUG_PREFIX + bug_id


def smoke_case(bug_id: str) -> str:
    """The crew smoke's checks of a bug's live release (see ReleaseSteps.record_smoke)."""
    return f"desk/smoke/{bug_id}"


def report_case(report_id: str) -> str:
    """Where a report's filing is kept: the bug it joined."""
    return f"desk/report/{report_id}"


def sha(text: str) -> str:
    return sha256_bytes(text.encode())


def _not_found(bug_id: str) -> NotFoundError:
    return NotFoundError(f"bug {bug_id} not found", "list bugs with `signoff desk bugs`")


class DeskBase:
    def __init__(self, ledger: SqlLedger, settings: Settings, forge: Forge, config: DeskConfig | None = None) -> None:
        self.ledger = ledger
        self.settings = settings
        self.forge = forge
        self.config = config or DeskConfig.load(settings)
        self.credentials = Credentials(ledger)
        self.clock = ledger.clock
        self._bugs: dict[str, Bug] = {}  # bugs() folds, as of event seq _bugs_seq
        self._bugs_seq = 0
        self._bugs_lock = threading.Lock()

    # -- reading --------------------------------------------------------------------------------

    def bug(self, bug_id: str) -> Bug:
        events = self.ledger.read(bug_case(bug_id))
        if not events:
            raise _not_found(bug_id)
        return fold(bug_id, events)

    def bug_ids(self) -> list[str]:
        return sorted(c[len(BUG_PREFIX):] for c in self.ledger.case_ids(BUG_PREFIX))

    def bugs(self) -> list[Bug]:
        """Every bug, folded. The board, the home page and the API list them all on each request, so
        the folds are kept between calls: one query finds the bug events appended since the last
        call (by any process), and only the bugs they touch are folded again."""
        with self._bugs_lock:
            grouped: dict[str, list[Event]] = {}
            for e in self.ledger.stream(after_seq=self._bugs_seq, prefix=BUG_PREFIX):
                grouped.setdefault(e.case_id[len(BUG_PREFIX):], []).append(e)
                self._bugs_seq = e.seq
            folded = dict(self._bugs)
            for bug_id, new in grouped.items():
                # A bug first seen now has all its events here (each after the last call); a known
                # one is read again in full. A fresh object each time: lists handed out never change.
                folded[bug_id] = self.bug(bug_id) if bug_id in folded else fold(bug_id, new)
            self._bugs = folded
            return [folded[b] for b in sorted(folded)]

    def notes(self, bug_id: str) -> list[dict[str, Any]]:
        return [{"type": e.type, **e.payload, "at": e.recorded_at} for e in self.ledger.read(f"desk/notes/{bug_id}")]

    def record(self, bug_id: str) -> dict[str, Any]:
        """Everything kept about a bug: its summary, event log, measured evidence files, advisory
        notes, current reproduction and the smoke's checks of its release (what `signoff desk show` prints)."""
        bug = self.bug(bug_id)
        return {"summary": bug.summary(), "log": bug.log, "evidence": bug.evidence, "notes": self.notes(bug_id),
                "reproduction": bug.reproduction, "rewrites": bug.rewrites, "smoke": self.smoke_checks(bug_id)}

    def smoke_checks(self, bug_id: str) -> list[dict[str, Any]]:
        return [dict(e.payload) for e in self.ledger.read(smoke_case(bug_id)) if e.type == "smoke.checked"]

    def report_bug_id(self, report_id: str) -> str:
        """The bug a filed report joined."""
        return str(self.ledger.read(report_case(report_id))[0].payload["bug_id"])

    # -- deciding -------------------------------------------------------------------------------

    def decide(self, bug_id: str, command: decisions.Command | Callable[[Bug], decisions.Command],
               idempotency_key: str | None = None) -> Bug:
        """Read the bug, decide `command` on it (signoff.desk.decisions), and append at the version
        read, retrying on a conflict. A command that needs facts about the state read (the change's
        paths, say) is given as a function of the bug that gathers them."""
        def run(history: list[Event]) -> tuple[list[NewEvent], list[NewJob]]:
            if not history:
                raise _not_found(bug_id)
            bug = fold(bug_id, history)
            decided = decisions.decide(bug, command(bug) if callable(command) else command, self.config)
            return [e.new_event() for e in decided.events], list(decided.jobs)

        self.ledger.update(bug_case(bug_id), run, idempotency_key)
        return self.bug(bug_id)
