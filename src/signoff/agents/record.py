"""Every call leaves a record: an event in the ledger (case `agents/<role>`) and, unless turned off,
a signed evidence file whose predicate says `advisory` (a model answered) or `simulated` (a script or
a replay did). Outputs are stored as data in the event, never interpreted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from signoff.kernel.canonical import canonical_bytes
from signoff.kernel.errors import UsageError
from signoff.kernel.settings import Settings
from signoff.ledger import NewEvent, SqlLedger
from signoff.trust import KeyStore, statement, subject, write_evidence

PREDICATE_TYPE = "https://signoff.dev/agents/call/v1"
EVENT_TYPE = "agents.call"
KEY_NAME = "agents"
MAX_STORED_OUTPUT = 250_000


def case_for(role: str) -> str:
    return f"agents/{role}"


def record_call(
    settings: Settings, ledger: SqlLedger, record: dict[str, Any], output: Any, evidence_files: bool
) -> dict[str, Any]:
    """Write the event (and evidence file); returns the record with `evidence` and `event_seq` added."""
    record = dict(record)
    if evidence_files:
        subjects = [subject(f"prompt:{record['role']}", sha256=record["prompt_digest"])]
        if record.get("output_digest"):
            subjects.append(subject(f"output:{record['role']}", sha256=record["output_digest"]))
        st = statement(subjects, PREDICATE_TYPE, {**record})
        key = KeyStore(settings.keys_dir).ensure(KEY_NAME)
        path = write_evidence(st, key, settings.evidence_dir / "agents", stem=f"agent-{record['role']}")
        record["evidence"] = str(Path(path).relative_to(settings.home)) if _inside(path, settings.home) else str(path)
    payload: dict[str, Any] = {"record": record}
    if output is not None:
        try:
            size = len(canonical_bytes(output))
        except UsageError:
            size = -1  # not plain JSON (e.g. a number out of range): the digest alone is kept
        if 0 <= size <= MAX_STORED_OUTPUT:
            payload["output"] = output
    result = ledger.append(case_for(record["role"]), None, [NewEvent(EVENT_TYPE, payload)])
    record["event_seq"] = result.seqs[0]
    return record


def _inside(path: Path, folder: Path) -> bool:
    try:
        Path(path).resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True
