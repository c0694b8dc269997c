"""Hash-chained, Ed25519-signed records, kept as a ledger case (one event per record).

Each record is `{seq, prev, body, keyid, sig}`; `prev` is the SHA-256 of the previous record's
canonical JSON and the signature covers DSSE-PAE over `{seq, prev, body}`, so the chain link is part
of what is signed. A chain is one ledger case (`incident-chain/<org>/<name>`, case type `incident.chain`), each record
one `incident.record` event (`model.RecordAppended`); appending runs the pure decision
`decisions.append_record` (which signs, given the key) at the version read, so concurrent appenders
take turns without a lock of ours.

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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from signoff.incident.cases import decide_on, load
from signoff.incident.decisions import GENESIS, RECORD_TYPE, append_record, entry_hash, link_bytes
from signoff.incident.model import CHAIN, RecordAppended, RecordChain, chain_fold
from signoff.ledger import Ledger
from signoff.ledger.aggregate import Decision
from signoff.trust import PublicKey, SigningKey, pae

CASE_PREFIX = CHAIN.prefix
RECORD = RecordAppended.TYPE
FIELDS = frozenset({"seq", "prev", "body", "keyid", "sig"})
VERIFY = "run `signoff incident verify-ledger` to see what was changed"


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
    def __init__(self, ledger: Ledger, case_id: str, key: SigningKey | None = None) -> None:
        if not case_id.startswith(CASE_PREFIX):
            raise ValueError(f"a record chain's case id starts with {CASE_PREFIX}")
        self.ledger = ledger
        self.case_id = case_id
        self.key = key

    def state(self) -> RecordChain:
        """The chain as its case holds it (IntegrityError when a stored record is not one)."""
        return load(self.ledger, chain_fold, self.case_id, RecordChain(CHAIN.key_of(self.case_id)), VERIFY)

    def decide(self, decide: Callable[[RecordChain], Decision]) -> dict[str, Any] | None:
        """Run a decision on the chain (read, fold, decide, append at the version read); the record
        it appended, or None when it decided nothing."""
        _, decision = decide_on(self.ledger, chain_fold, self.case_id, lambda: RecordChain(CHAIN.key_of(self.case_id)),
                                decide, f"nothing appended; {VERIFY}")
        return decision.events[-1].payload() if decision.events else None

    def append(self, body: dict[str, Any]) -> dict[str, Any]:
        """Append one signed record after the last one in the case."""
        key = self.key
        if key is None:
            raise ValueError("this chain was opened without a signing key")
        record = self.decide(lambda chain: append_record(chain, body, key))
        assert record is not None  # append_record always appends
        return record

    def exists(self) -> bool:
        return self.ledger.version(self.case_id) > 0

    def records(self) -> list[dict[str, Any]]:
        """The stored records, unchecked (use verify for anything that matters)."""
        return self.state().records

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


def signed_by(entry: Any, key: PublicKey) -> bool:
    """Whether `entry` is a chain record whose signature over `{seq, prev, body}` verifies under `key`
    (one record alone, e.g. as another process handed it out: its place in its chain is not checked)."""
    if not isinstance(entry, dict) or not FIELDS <= set(entry):
        return False
    try:
        sig = base64.b64decode(str(entry["sig"]), validate=True)
        signed = link_bytes(entry)
    except (binascii.Error, TypeError, ValueError):
        return False
    return key.verify(sig, pae(RECORD_TYPE, signed))


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
        if key is None:
            report.problems.append(f"{at}: signed by a key that is not trusted ({str(entry['keyid'])[:12]})")
        elif not signed_by(entry, key):
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


def trusted_record(record: Any, key: PublicKey, org: str, d_id: str) -> bool:
    """Whether `record`, handed out alone by an approver process, is signed by `key` (the approver key
    `org`'s pinned guard trusts) and is that organisation's record for `d_id`."""
    return (signed_by(record, key) and record["keyid"] == key.keyid and isinstance(record["body"], dict)
            and record["body"].get("d_id") == d_id and record["body"].get("org") == org)
