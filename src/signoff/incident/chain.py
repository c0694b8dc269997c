"""Hash-chained, Ed25519-signed records, kept as a ledger case (one event per record).

Each record is `{seq, prev, body, keyid, sig}`; `prev` is the SHA-256 of the previous record's
canonical JSON and the signature covers DSSE-PAE over `{seq, prev, body}`, so the chain link is part
of what is signed. A chain is one ledger case (`incident-chain/<org>/<name>`), each record one
`incident.record` event; appending is read-decide-append at the version read (`Ledger.update`), so
concurrent appenders take turns without a lock of ours.

Verification names each problem: an edited record (bad signature), a deleted one (gap in seq), a
reordered one (seq going back) or a broken link. It does not trust the ledger: a database writer
without the signing key can change rows, and every such change is named here. Deleting records from
the end leaves a valid shorter chain: that is caught by cross-checks (every disclosure that crossed
needs its record), not by the chain alone. `verify_records` checks a chain given as a list (as the
approver publishes it in its room document).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from signoff.kernel.canonical import canonical_bytes
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import IntegrityError
from signoff.ledger import Event, NewEvent, NewJob, SqlLedger
from signoff.trust import PublicKey, SigningKey, pae

RECORD_TYPE = "application/vnd.signoff.incident.record+json"
GENESIS = "0" * 64
CASE_PREFIX = "incident-chain/"
RECORD = "incident.record"
FIELDS = frozenset({"seq", "prev", "body", "keyid", "sig"})


def link_bytes(entry: dict[str, Any]) -> bytes:
    return canonical_bytes({"seq": entry["seq"], "prev": entry["prev"], "body": entry["body"]})


def entry_hash(entry: dict[str, Any]) -> str:
    return sha256_bytes(canonical_bytes(entry))


@dataclass
class RecordChainReport:
    name: str
    where: str  # the ledger case (or document) the records were read from
    records: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "case": self.where, "records": len(self.records), "ok": self.ok,
                "problems": self.problems}


class Chain:
    def __init__(self, ledger: SqlLedger, case_id: str, key: SigningKey | None = None) -> None:
        if not case_id.startswith(CASE_PREFIX):
            raise ValueError(f"a record chain's case id starts with {CASE_PREFIX}")
        self.ledger = ledger
        self.case_id = case_id
        self.key = key

    def append(self, body: dict[str, Any]) -> dict[str, Any]:
        """Append one signed record after the last one in the case."""
        key = self.key
        if key is None:
            raise ValueError("this chain was opened without a signing key")
        signed: list[dict[str, Any]] = []

        def decide(history: list[Event]) -> tuple[Sequence[NewEvent], Sequence[NewJob]]:
            last = history[-1].payload if history else None
            if last is not None and not (isinstance(last, dict) and FIELDS <= set(last)):
                raise IntegrityError(f"the last record of {self.case_id} is damaged; nothing appended",
                                     "run `signoff incident verify-ledger`")
            entry: dict[str, Any] = {
                "seq": (int(last["seq"]) + 1) if last else 1,
                "prev": entry_hash(last) if last else GENESIS,
                "body": body,
            }
            sig = key.sign(pae(RECORD_TYPE, link_bytes(entry)))
            entry["keyid"] = key.keyid
            entry["sig"] = base64.b64encode(sig).decode("ascii")
            signed[:] = [entry]
            return [NewEvent(RECORD, entry)], []

        try:
            self.ledger.update(self.case_id, decide)
        except ValueError as exc:  # a stored row that is not JSON at all
            raise IntegrityError(f"{self.case_id} holds a record that is not JSON; nothing appended",
                                 "run `signoff incident verify-ledger`") from exc
        return signed[0]

    def exists(self) -> bool:
        return self.ledger.version(self.case_id) > 0

    def records(self) -> list[dict[str, Any]]:
        """The stored records, unchecked (use verify for anything that matters)."""
        try:
            history = self.ledger.read(self.case_id)
        except ValueError as exc:
            raise IntegrityError(f"{self.case_id} holds a record that is not JSON",
                                 "run `signoff incident verify-ledger` to see what was changed") from exc
        return [ev.payload for ev in history]

    def verify(self, trusted: dict[str, PublicKey], name: str | None = None) -> RecordChainReport:
        """Check every record's form, signature, sequence number and link."""
        name = name or self.case_id
        try:
            history = self.ledger.read(self.case_id)
        except ValueError:
            report = RecordChainReport(name, self.case_id)
            report.problems.append(f"{name}: a stored record is not JSON, so not a chain record (edited)")
            return report
        return verify_records(((f"event {ev.version}", ev.payload if ev.type == RECORD else None)
                               for ev in history), trusted, name, self.case_id)


def verify_records(items: Iterable[tuple[str, Any]], trusted: dict[str, PublicKey], name: str,
                   where: str = "") -> RecordChainReport:
    """Check a chain given as (position, record) pairs in stored order; a record of None or any other
    shape is named as not a chain record."""
    report = RecordChainReport(name, where)
    prev_entry: dict[str, Any] | None = None
    expected_seq = 1
    for position, entry in items:
        if not isinstance(entry, dict) or not FIELDS <= set(entry):
            report.problems.append(f"{name} {position}: not a chain record (edited)")
            prev_entry = None
            continue
        seq = entry["seq"]
        at = f"{name} record {seq} ({position})"
        key = trusted.get(str(entry["keyid"]))
        try:
            sig = base64.b64decode(str(entry["sig"]), validate=True)
        except (binascii.Error, ValueError):
            sig = b""
        try:
            signed = link_bytes(entry)
        except (TypeError, ValueError):
            signed = b""
        if key is None:
            report.problems.append(f"{at}: signed by a key that is not trusted ({str(entry['keyid'])[:12]})")
        elif not signed or not key.verify(sig, pae(RECORD_TYPE, signed)):
            report.problems.append(f"{at}: signature does not verify (edited)")
        if not isinstance(seq, int) or isinstance(seq, bool):
            report.problems.append(f"{at}: seq is not a number (edited)")
        elif seq < expected_seq:
            report.problems.append(f"{at}: seq {seq} after {expected_seq - 1} (reordered or duplicated)")
        elif seq > expected_seq:
            missing = f"{expected_seq}" if seq == expected_seq + 1 else f"{expected_seq}..{seq - 1}"
            report.problems.append(f"{at}: record(s) {missing} missing (deleted)")
        want_prev = entry_hash(prev_entry) if prev_entry is not None else GENESIS
        if entry["prev"] != want_prev:
            report.problems.append(f"{at}: prev hash does not match the record before it "
                                   "(a record before it was edited, deleted or reordered)")
        prev_entry = entry
        expected_seq = (seq + 1) if isinstance(seq, int) else expected_seq + 1
        report.records.append(entry)
    return report
