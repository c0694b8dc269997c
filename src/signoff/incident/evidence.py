"""Signed disclosures as portable evidence files, and the predicate check `signoff evidence verify` runs.

A disclosure file is an in-toto statement in a DSSE envelope signed by the organisation's approver
key. Its subject is the canonical evidence (by SHA-256); its predicate carries the disclosure and the
approval record from the approver's chain. The check recomputes both digests and checks the chained
record's own signature, so a file whose evidence, text or record was edited does not verify.
"""

from __future__ import annotations

import base64
import binascii
from pathlib import Path
from typing import Any

from signoff.incident.decisions import RECORD_TYPE, link_bytes
from signoff.incident.disclosure import Disclosure
from signoff.kernel.canonical import canonical_bytes
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import IntegrityError, UsageError
from signoff.trust import PublicKey, SigningKey, pae, register_predicate_check, statement, subject, write_evidence

PREDICATE_TYPE = "https://signoff.dev/incident/disclosure/v1"
POSTMORTEM_TYPE = "https://signoff.dev/incident/postmortem/v1"


def disclosure_statement(d: Disclosure, record: dict[str, Any], approver_key: PublicKey, kind: str) -> dict[str, Any]:
    return statement(
        [subject(f"disclosure:{d.d_id}", sha256=d.evidence_sha256)],
        PREDICATE_TYPE,
        {"kind": kind, "disclosure": {"d_id": d.d_id, "incident": d.incident, "org": d.org,
                                      "evidence": d.evidence, "text": d.text},
         "approval": record, "approver_key": approver_key.hex()},
    )


def export_disclosure(d: Disclosure, record: dict[str, Any], key: SigningKey, folder: Path,
                      kind: str = "reported") -> Path:
    """Write the signed disclosure file; `kind` is `simulated` when the approving human was scripted."""
    st = disclosure_statement(d, record, key.public, kind)
    return write_evidence(st, key, folder, path=folder / f"{d.d_id}.intoto.json")


def check_disclosure(st: dict[str, Any], base: Path) -> list[str]:
    pred = st["predicate"]
    try:
        d = Disclosure.from_json(pred["disclosure"])
        record = pred["approval"]
        body = record["body"]
        key = PublicKey.from_hex(str(pred["approver_key"]), "approver")
        sig = base64.b64decode(str(record["sig"]), validate=True)
    except (KeyError, TypeError, UsageError, binascii.Error, ValueError) as exc:
        raise IntegrityError("disclosure predicate is incomplete", "the file was altered") from exc
    if st["subject"][0]["digest"].get("sha256") != d.evidence_sha256:
        raise IntegrityError(f"{d.d_id}: evidence digest does not match the subject", "the evidence was altered")
    if body.get("evidence_sha256") != d.evidence_sha256:
        raise IntegrityError(f"{d.d_id}: evidence differs from what was approved", "the evidence was altered")
    if body.get("text_sha256") != d.text_sha256:
        raise IntegrityError(f"{d.d_id}: text differs from what was approved", "the text was altered")
    if (body.get("d_id"), body.get("incident"), body.get("org")) != (d.d_id, d.incident, d.org):
        raise IntegrityError(f"{d.d_id}: the approval record is for another disclosure", "the file was altered")
    if record.get("keyid") != key.keyid or not key.verify(sig, pae(RECORD_TYPE, link_bytes(record))):
        raise IntegrityError(f"{d.d_id}: the approval record's signature does not verify", "the record was altered")
    return [f"{d.d_id} approved by {body.get('approver')} (record {record.get('seq')} of {d.org}'s chain); "
            "check the record against that chain with `signoff incident verify-ledger`"]


def export_postmortem(report: dict[str, Any], markdown: str, org: str, key: SigningKey, folder: Path) -> Path:
    """The postmortem as signed evidence, by one organisation's approver key: its subject is the
    report's canonical JSON, and the Markdown the people read travels with its digest."""
    incident = str(report.get("incident") or "incident")
    st = statement([subject(f"postmortem:{incident}", sha256=sha256_bytes(canonical_bytes(report)))],
                   POSTMORTEM_TYPE, {"kind": "measured", "org": org, "postmortem": report, "markdown": markdown,
                                     "markdown_sha256": sha256_bytes(markdown.encode("utf-8")),
                                     "signer_key": key.public.hex()})
    return write_evidence(st, key, folder, path=Path(folder) / f"{incident}-postmortem-{org}.intoto.json")


def check_postmortem(st: dict[str, Any], base: Path) -> list[str]:
    pred = st["predicate"]
    try:
        report, markdown = dict(pred["postmortem"]), str(pred["markdown"])
        wanted = st["subject"][0]["digest"]["sha256"]
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise IntegrityError("postmortem predicate is incomplete", "the file was altered") from exc
    if sha256_bytes(canonical_bytes(report)) != wanted:
        raise IntegrityError("the postmortem differs from its subject", "the report was altered")
    if sha256_bytes(markdown.encode("utf-8")) != pred.get("markdown_sha256"):
        raise IntegrityError("the postmortem's Markdown differs from its digest", "the Markdown was altered")
    return [f"postmortem of {report.get('incident')} exported by {pred.get('org')}; the envelope's signature is "
            "that organisation's approver key"]


register_predicate_check(PREDICATE_TYPE, check_disclosure)
register_predicate_check(POSTMORTEM_TYPE, check_postmortem)
