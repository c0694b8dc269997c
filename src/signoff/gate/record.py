"""Every gate decision, signed and in the ledger.

The statement says what was asked (the action and the digest of its canonical arguments), which
card carried it, and what the rooms server recorded as the answer. Its kind is `reported`: a person
answered through the rooms server; the gate measured nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from signoff.kernel.settings import Settings
from signoff.ledger import NewEvent, SqlLedger
from signoff.rooms.domain.bound import CardDecision
from signoff.trust import KeyStore, statement, subject, write_evidence

PREDICATE_TYPE = "https://signoff.dev/gate/decision/v1"
KEY_NAME = "gate"
EVENT_TYPE = "gate.decided"


def case_for(action: str) -> str:
    return f"gate/{action}"[:200]


def record_decision(settings: Settings, action: str, digest: str, decision: CardDecision | dict[str, Any],
                    outcome: str, rooms_url: str) -> dict[str, Any]:
    """Sign the decision, write the evidence file and append the ledger event; returns the record.

    `outcome` is what the gate did: approved (the call went ahead), refused, timed_out, or
    arguments_changed (approved, but the arguments changed before the call, so it did not run)."""
    shown = decision.to_dict() if isinstance(decision, CardDecision) else dict(decision)
    record = {"kind": "reported", "action": action, "arguments_sha256": digest, "outcome": outcome,
              "decision": shown, "rooms": rooms_url}
    st = statement([subject(f"call:{action}", sha256=digest)], PREDICATE_TYPE, record)
    key = KeyStore(settings.keys_dir).ensure(KEY_NAME)
    path = write_evidence(st, key, settings.evidence_dir / "gate", stem="gate")
    ledger = SqlLedger.open(settings)
    try:
        result = ledger.append(case_for(action), None, [NewEvent(EVENT_TYPE, {**record, "evidence": str(path)})],
                               idempotency_key=f"gate:{shown['request_id']}:{outcome}")
    finally:
        ledger.close()
    return {**record, "evidence": Path(path), "event_seq": result.seqs[0]}
