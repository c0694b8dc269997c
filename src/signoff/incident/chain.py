"""Hash-chained, Ed25519-signed record files (one JSON line per record).

Each line is the canonical JSON of `{seq, prev, body, keyid, sig}`; `prev` is the SHA-256 of the
previous line's canonical record and the signature covers DSSE-PAE over `{seq, prev, body}`, so the
chain link is part of what is signed. Verification names each problem: an edited record (bad
signature or non-canonical bytes), a deleted one (gap in seq), a reordered one (seq going back) or a
broken link. Deleting records from the end leaves a valid shorter chain: that is caught by
cross-checks (every disclosure that crossed needs its record), not by the chain alone.
"""

from __future__ import annotations

import base64
import binascii
import fcntl
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signoff.kernel.canonical import canonical_bytes
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import IntegrityError
from signoff.trust import PublicKey, SigningKey, pae

RECORD_TYPE = "application/vnd.signoff.incident.record+json"
GENESIS = "0" * 64


def link_bytes(entry: dict[str, Any]) -> bytes:
    return canonical_bytes({"seq": entry["seq"], "prev": entry["prev"], "body": entry["body"]})


def entry_hash(entry: dict[str, Any]) -> str:
    return sha256_bytes(canonical_bytes(entry))


@dataclass
class RecordChainReport:
    name: str
    path: str
    records: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "records": len(self.records), "ok": self.ok,
                "problems": self.problems}


class Chain:
    def __init__(self, path: Path, key: SigningKey | None = None) -> None:
        self.path = Path(path)
        self.key = key

    def append(self, body: dict[str, Any]) -> dict[str, Any]:
        """Append one signed record; the file lock makes concurrent appenders take turns."""
        if self.key is None:
            raise ValueError("this chain was opened without a signing key")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a+b") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            fh.seek(0)
            lines = [ln for ln in fh.read().splitlines() if ln.strip()]
            try:
                last = json.loads(lines[-1]) if lines else None
            except ValueError as exc:
                raise IntegrityError(f"the last record of {self.path.name} is damaged; nothing appended",
                                     "run `signoff incident verify-ledger`") from exc
            entry: dict[str, Any] = {
                "seq": (int(last["seq"]) + 1) if last else 1,
                "prev": entry_hash(last) if last else GENESIS,
                "body": body,
            }
            sig = self.key.sign(pae(RECORD_TYPE, link_bytes(entry)))
            entry["keyid"] = self.key.keyid
            entry["sig"] = base64.b64encode(sig).decode("ascii")
            fh.seek(0, os.SEEK_END)
            fh.write(canonical_bytes(entry) + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
        return entry

    def records(self) -> list[dict[str, Any]]:
        """The parsed records, unchecked (use verify for anything that matters)."""
        if not self.path.exists():
            return []
        out = []
        for n, ln in enumerate(self.path.read_bytes().splitlines(), 1):
            if not ln.strip():
                continue
            try:
                entry = json.loads(ln)
            except ValueError as exc:
                raise IntegrityError(f"{self.path.name} line {n} is not a record",
                                     "run `signoff incident verify-ledger` to see what was changed") from exc
            if not isinstance(entry, dict):
                raise IntegrityError(f"{self.path.name} line {n} is not a record",
                                     "run `signoff incident verify-ledger` to see what was changed")
            out.append(entry)
        return out


def verify_chain_file(path: Path, trusted: dict[str, PublicKey], name: str | None = None) -> RecordChainReport:
    """Check every line's form, signature, sequence number and link."""
    report = RecordChainReport(name or Path(path).name, str(path))
    if not Path(path).exists():
        report.problems.append(f"{report.name}: file is missing")
        return report
    prev_entry: dict[str, Any] | None = None
    expected_seq = 1
    for n, line in enumerate(Path(path).read_bytes().splitlines(), 1):
        if not line.strip():
            continue
        where = f"{report.name} line {n}"
        try:
            entry = json.loads(line)
            if not isinstance(entry, dict) or not {"seq", "prev", "body", "keyid", "sig"} <= set(entry):
                raise ValueError("fields")
        except ValueError:
            report.problems.append(f"{where}: not a chain record (edited)")
            prev_entry = None
            continue
        seq = entry["seq"]
        where = f"{report.name} record {seq} (line {n})"
        if canonical_bytes(entry) != line:
            report.problems.append(f"{where}: bytes are not in the canonical form they were written in (edited)")
        key = trusted.get(str(entry["keyid"]))
        try:
            sig = base64.b64decode(str(entry["sig"]), validate=True)
        except (binascii.Error, ValueError):
            sig = b""
        if key is None:
            report.problems.append(f"{where}: signed by a key that is not trusted ({str(entry['keyid'])[:12]})")
        elif not key.verify(sig, pae(RECORD_TYPE, link_bytes(entry))):
            report.problems.append(f"{where}: signature does not verify (edited)")
        if not isinstance(seq, int):
            report.problems.append(f"{where}: seq is not a number (edited)")
        elif seq < expected_seq:
            report.problems.append(f"{where}: seq {seq} after {expected_seq - 1} (reordered or duplicated)")
        elif seq > expected_seq:
            missing = f"{expected_seq}" if seq == expected_seq + 1 else f"{expected_seq}..{seq - 1}"
            report.problems.append(f"{where}: record(s) {missing} missing (deleted)")
        want_prev = entry_hash(prev_entry) if prev_entry is not None else GENESIS
        if entry["prev"] != want_prev:
            report.problems.append(f"{where}: prev hash does not match the record before it "
                                   "(a record before it was edited, deleted or reordered)")
        prev_entry = entry
        expected_seq = (seq + 1) if isinstance(seq, int) else expected_seq + 1
        report.records.append(entry)
    return report
