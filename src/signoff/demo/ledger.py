"""The foundation demo: a ledger + evidence round trip that a person can read."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from signoff.cli.context import console
from signoff.kernel.canonical import canonical_digest
from signoff.kernel.ids import new_id
from signoff.kernel.settings import Settings
from signoff.ledger import Job, NewEvent, NewJob, Outbox, SqlLedger, Worker, sign_checkpoint, verify_chain
from signoff.ledger.checkpoints import KEY_NAME
from signoff.trust import KeyStore, statement, subject, verify_file, write_evidence


def run(s: Settings, quiet: bool = False) -> dict[str, Any]:
    def say(text: str) -> None:
        if not quiet:
            console.print(text, highlight=False)

    ledger = SqlLedger.open(s)
    case_id = f"demo-{new_id()[:8]}"
    say(f"ledger: {s.db_url}")
    ledger.append(case_id, 0, [NewEvent("case.opened", {"title": "a demonstration case"})])
    ledger.append(
        case_id,
        1,
        [NewEvent("contract.approved", {"by": "alice", "digest": canonical_digest({"expect": "test_fix"})})],
        jobs=[NewJob(f"{case_id}:notify", "notify", {"to": "alice", "text": "contract approved"})],
    )
    say(f"  appended 2 events to {case_id}; one notification waits in the outbox")

    delivered = 0

    def notify(job: Job) -> None:
        nonlocal delivered
        if job.job_id == f"{case_id}:notify":
            # The effect is keyed on the job id, so a redelivery would change nothing.
            ledger.append(case_id, None, [NewEvent("notified", job.payload)], idempotency_key=job.job_id)
            delivered += 1

    Worker(Outbox(ledger), {"notify": notify}).drain()
    say(f"  outbox worker delivered {delivered} job(s); case now at version {ledger.version(case_id)}")

    checkpoint = sign_checkpoint(ledger, KeyStore(s.keys_dir).ensure(KEY_NAME))
    report = verify_chain(ledger, trusted=KeyStore(s.keys_dir).trusted())
    say(f"  ledger verify: {'ok' if report.ok else 'BROKEN'}, {report.count} events, head {report.head_hash[:16]}, "
        f"signed checkpoint at seq {checkpoint.seq}")

    key = KeyStore(s.keys_dir).ensure("verifier")
    events = ledger.read(case_id)
    st = statement(
        [subject(f"ledger:{case_id}", sha256=events[-1].hash)],
        "https://signoff.dev/ledger-demo/v1",
        {"kind": "simulated", "case": case_id, "events": [e.type for e in events]},
    )
    path = write_evidence(st, key, s.evidence_dir, stem=case_id)
    good = verify_file(path, KeyStore(s.keys_dir).trusted())
    say(f"  evidence written: {path}")
    say(f"  evidence verify: {'ok, signed by ' + ', '.join(good.signers) if good.ok else good.problem}")

    tmp = Path(tempfile.mkdtemp(prefix="signoff-demo-"))
    try:
        tampered = tmp / "tampered.intoto.json"
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0x01
        tampered.write_bytes(bytes(data))
        bad = verify_file(tampered, KeyStore(s.keys_dir).trusted())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    say(f"  one flipped byte in a copy: {'accepted (!)' if bad.ok else 'refused: ' + str(bad.problem)}")
    ok = report.ok and good.ok and not bad.ok and delivered == 1
    ledger.close()
    return {"ok": ok, "case_id": case_id, "events": len(events), "chain_ok": report.ok,
            "evidence": str(path), "tamper_detected": not bad.ok}
