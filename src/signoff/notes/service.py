"""The notes service: the one way every face (CLI, pages, rooms, the demo) reads and decides a run.

It reads what the pure decisions need from the run folder (the reviewed sentences, the verifier's
errors on their current texts), folds the run's ledger case over them, and runs
`signoff.notes.decisions.decide` on the case through `signoff.ledger.aggregate.Cases`. Who may
decide is configured once, `[notes] deciders` (the person names the faces authenticate: the
signed-in user, the room sender bound to a person, the CLI's `--by` or login), and enforced here for
every face; nobody decides while it is empty. `[web] notes_deciders`, its former name, is still
read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signoff.kernel.clock import Clock, utc_iso
from signoff.kernel.errors import RefusedError, UsageError
from signoff.kernel.settings import Settings
from signoff.kernel.shown import short
from signoff.ledger.aggregate import NOTHING, Cases, Decision
from signoff.ledger.contract import Ledger
from signoff.notes.checks import blockers, errors_of, export_decisions, verifier_errors
from signoff.notes.decisions import Command, Decide, decide, needs_checking, parse, shown_of
from signoff.notes.model import (
    NOTES_ROOM,
    NOTES_RUN,
    Decided,
    RoomCursor,
    RoomHandled,
    RoomLog,
    RoomRef,
    SentenceState,
    State,
    room_fold,
    run_fold,
)
from signoff.notes.run import case_of, current_sentences

VIA = ("cli", "web", "room", "demo", "mcp")


def deciders_of(settings: Settings) -> tuple[str, ...]:
    """`[notes] deciders`, and the names in its former home `[web] notes_deciders`."""
    names: list[str] = []
    for where, value in (("[notes] deciders", settings.section("notes").get("deciders", [])),
                         ("[web] notes_deciders", settings.section("web").get("notes_deciders", []))):
        if not isinstance(value, list) or not all(isinstance(d, str) and d.strip() for d in value):
            raise UsageError(f"{where} must be a list of person names", 'e.g. deciders = ["alice", "bob"]')
        names += [d for d in value if d not in names]
    return tuple(names)


@dataclass(frozen=True)
class Status:
    """A run as the faces show it: the state, what blocks ship, and the digest of each thing a
    person may decide on (`S1`.., `all`, `ship`), full length."""

    state: State
    blockers: list[str]
    shown: dict[str, str]

    def as_json(self) -> dict[str, Any]:
        return {**self.state.as_json(), "blockers": self.blockers,
                "shown": {k: short(v) for k, v in self.shown.items()}}


class NotesService:
    """A run's decisions in `ledger`, decided by the people in `deciders`."""

    def __init__(self, ledger: Ledger, deciders: Iterable[str], clock: Clock | None = None) -> None:
        self.ledger, self.deciders, self.clock = ledger, tuple(deciders), clock or ledger.clock

    @classmethod
    def of(cls, ledger: Ledger, settings: Settings, clock: Clock | None = None) -> NotesService:
        return cls(ledger, deciders_of(settings), clock)

    # -- reading --------------------------------------------------------------------------------

    def _cases(self, folder: Path) -> tuple[Cases[State], str]:
        sentences = current_sentences(folder)
        return Cases(self.ledger, run_fold, lambda _key: State.of(sentences)), NOTES_RUN.key_of(case_of(folder))

    def state(self, folder: Path) -> State:
        """The run's state from its decisions in the ledger."""
        cases, key = self._cases(folder)
        return cases.load(key)

    def decisions(self, folder: Path) -> list[Decided]:
        return self.state(folder).records

    def version(self, folder: Path) -> int:
        return self.ledger.version(case_of(folder))

    def blockers(self, folder: Path, state: State | None = None) -> list[str]:
        state = state or self.state(folder)
        return [] if state.shipped else blockers(folder, state)

    def status(self, folder: Path) -> Status:
        state = self.state(folder)
        shown = {s.id: shown_of(state, "approve", s.id) for s in state.sentences}
        shown |= {"all": shown_of(state, "approve", "all"), "ship": shown_of(state, "ship")}
        return Status(state, self.blockers(folder, state), shown)

    def errors(self, folder: Path, sentences: Iterable[SentenceState]) -> dict[str, list[dict[str, Any]]]:
        """The verifier's errors on each sentence's text (for a page, or text being typed)."""
        return verifier_errors(folder, sentences)

    def may_decide(self, person: str) -> bool:
        return person in self.deciders

    # -- deciding -------------------------------------------------------------------------------

    def decide(self, folder: Path, command: Command | str, by: str, via: str, ref: RoomRef | None = None) -> State:
        """Check and record one decision by `by` through face `via`; returns the state after it.
        The command must name the digest of what `by` was shown (`approve S1 #3fa9c2d1e0b7`)."""
        if via not in VIA:
            raise ValueError(f"unknown face {via!r}")
        if not isinstance(by, str) or not by.strip() or len(by) > 200:
            raise UsageError("a decision needs the name of the person making it", "pass --by NAME")
        if not self.may_decide(by):
            raise RefusedError(f"{by} may not decide on release notes",
                               f"an admin adds them to [notes] deciders: \"{by}\"")
        cases, key = self._cases(folder)
        at = utc_iso(self.clock.now())

        def decision(state: State) -> Decision:
            cmd = command if isinstance(command, Command) else parse(command, [s.id for s in state.sentences])
            # The verifier reads the snapshot and facts: done here, on the texts the decision needs.
            errors = errors_of(folder, needs_checking(state, cmd)) if not state.shipped else {}
            return decide(state, Decide(cmd, by, at, via, errors, ref))

        return cases.execute(key, decision)

    def export(self, folder: Path) -> Path:
        """Write the run's decisions to `decisions.jsonl` beside it (evidence for offline checks)."""
        return export_decisions(self.decisions(folder), folder)

    def publish(self, folder: Path, settings: Settings, commit_url: str | None = None,
                pr_url: str | None = None) -> tuple[str, Path]:
        """Render a shipped run to `final.md`, export its decisions and sign the evidence."""
        from signoff.notes.evidence import publish

        return publish(self.state(folder), folder, settings, commit_url, pr_url)

    # -- a run's room ---------------------------------------------------------------------------

    def room_log(self, case_id: str) -> RoomLog:
        return room_fold.over(RoomLog(NOTES_ROOM.key_of(case_id)), self.ledger.read(case_id))

    def save_cursor(self, case_id: str, room_id: str, agent: str, cursor: int) -> None:
        def advance(log: RoomLog) -> Decision:
            if log.cursor is not None and log.cursor.cursor == cursor:
                return NOTHING
            return Decision.of(RoomCursor(room_id=room_id, agent=agent, cursor=cursor))

        Cases(self.ledger, room_fold, RoomLog).execute(NOTES_ROOM.key_of(case_id), advance)

    def handled(self, case_id: str, message_id: str, sender: str | None = None) -> None:
        """Record a room message as answered (once: keyed on the message id)."""
        self.ledger.append(case_id, None, [RoomHandled(message_id=message_id, sender=sender).new_event()],
                           idempotency_key=f"{case_id}:{message_id}")
