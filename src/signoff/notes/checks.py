"""What the pure decisions need from the run folder: the verifier's errors on sentences' current
texts (facts recomputed from the snapshot first), and the decisions' export, `decisions.jsonl`.

`decisions.jsonl` is an export of the run's ledger case (written when the run is published), so
that the signed evidence can be re-checked offline; it is never read back as the record.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from signoff.kernel.errors import UsageError
from signoff.kernel.replace import replace_text
from signoff.notes.decisions import Errors, blockers_of
from signoff.notes.documents import dumps_line
from signoff.notes.model import ACTIONS, DECISION, Decided, SentenceState, State, replay
from signoff.notes.run import DECISIONS_FILE, FACTS_FILE, SNAPSHOT_FILE, current_sentences
from signoff.notes.verify import Verifier


def verifier_errors(folder: Path, sentences: Iterable[SentenceState]) -> dict[str, list[dict[str, Any]]]:
    """The verifier's errors for each sentence's current text (edits included), facts recomputed first."""
    chosen = list(sentences)
    if not chosen:
        return {}
    verifier = Verifier(folder / SNAPSHOT_FILE, folder / FACTS_FILE, {f for s in chosen for f in s.facts})
    return {s.id: verifier.check({"id": s.id, "text": s.text, "facts": s.facts})["errors"] for s in chosen}


def errors_of(folder: Path, sentences: Iterable[SentenceState]) -> Errors:
    """The verifier's errors keyed as a decision looks them up: by sentence id and the text checked."""
    chosen = list(sentences)
    found = verifier_errors(folder, chosen)
    return {(s.id, s.text): found[s.id] for s in chosen}


def blockers(folder: Path, state: State) -> list[str]:
    """Why this state may not ship (empty when it may)."""
    return blockers_of(state, errors_of(folder, [s for s in state.sentences if s.status != "rejected"]))


def export_decisions(records: Iterable[Decided], folder: Path) -> Path:
    """Write a run's decisions to `decisions.jsonl` beside its other files (for offline checks)."""
    path = folder / DECISIONS_FILE
    replace_text(path, "".join(dumps_line(r.payload()) + "\n" for r in records))
    return path


def read_decisions(folder: Path) -> list[Decided]:
    """The decisions in an exported `decisions.jsonl`, each read through the event class (checked
    line by line: the file may have been edited by anyone who could write the folder)."""
    path = folder / DECISIONS_FILE
    if not path.exists():
        return []
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}:{n} is not valid JSON: {exc.msg}",
                             "decisions are append-only; restore the file from its last good copy") from None
        if not isinstance(rec, dict) or rec.get("schema") != DECISION:
            found = rec.get("schema") if isinstance(rec, dict) else None
            raise UsageError(f"{path}:{n} has schema {found!r}, expected {DECISION!r}",
                             "decisions.jsonl must hold only signoff decisions")
        if rec.get("action") not in ACTIONS:
            raise UsageError(f"{path}:{n} has unknown action {rec.get('action')!r}", "restore the file")
        try:
            out.append(Decided.model_validate(rec))
        except ValidationError as exc:
            where = ".".join(str(p) for p in exc.errors()[0].get("loc", ())) or "the line"
            raise UsageError(f"{path}:{n} is not a decision as signoff records it (at {where})",
                             "restore the file") from None
    return out


def exported_state(folder: Path) -> State:
    """The run's state from the exported `decisions.jsonl` beside it (offline checks)."""
    return replay(current_sentences(folder), read_decisions(folder))
