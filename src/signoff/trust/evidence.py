"""Evidence files: a signed in-toto statement in a DSSE envelope, written as canonical JSON.

Because the file must be exactly the canonical form of its envelope, any changed byte is caught
even where JSON would otherwise tolerate it. Workflows register a predicate check for their
predicate type (e.g. repair recomputes its fingerprint); `verify_file` runs it when present.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signoff.kernel.canonical import canonical_bytes
from signoff.kernel.digests import sha256_file
from signoff.kernel.errors import IntegrityError, NotFoundError, SignoffError
from signoff.kernel.ids import new_id
from signoff.kernel.replace import replace_bytes
from signoff.trust.dsse import ensure_json_object, parse_envelope, sign_envelope, verify_envelope
from signoff.trust.intoto import check_statement
from signoff.trust.keys import PublicKey, SigningKey
from signoff.trust.policy import TrustPolicy

# A predicate check returns notes (things it could not check, said plainly) and raises
# IntegrityError on anything wrong.
PredicateCheck = Callable[[dict[str, Any], Path], list[str]]
_CHECKS: dict[str, PredicateCheck] = {}


def register_predicate_check(predicate_type: str, check: PredicateCheck) -> None:
    _CHECKS[predicate_type] = check


def envelope_bytes(envelope: dict[str, Any]) -> bytes:
    return canonical_bytes(envelope) + b"\n"


def write_evidence(
    st: dict[str, Any], key: SigningKey, folder: Path, path: Path | None = None, stem: str = "evidence"
) -> Path:
    """Sign `st` and write it atomically; returns the file path."""
    check_statement(st)
    envelope = sign_envelope(canonical_bytes(st), key)
    if path is None:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{stem}-{new_id()[:12]}.intoto.json"
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    replace_bytes(path, envelope_bytes(envelope))
    return path


@dataclass
class EvidenceReport:
    path: str
    ok: bool
    problem: str | None = None
    signers: tuple[str, ...] = ()
    predicate_type: str | None = None
    kind: str | None = None
    notes: list[str] = field(default_factory=list)
    statement: dict[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "ok": self.ok,
            "problem": self.problem,
            "signers": list(self.signers),
            "predicate_type": self.predicate_type,
            "kind": self.kind,
            "notes": self.notes,
        }


def verify_bytes(
    data: bytes, trusted: dict[str, PublicKey], base: Path, policy: TrustPolicy | None = None
) -> EvidenceReport:
    """Verify an envelope; subjects that name files are rechecked only inside `base`."""
    env = parse_envelope(data)
    if envelope_bytes(env) != data:
        raise IntegrityError("file is not in the exact form it was signed in: altered",
                             "do not trust this file; obtain the original")
    _check_payload_form(env)
    verified = verify_envelope(env, trusted)
    st = ensure_json_object(verified.payload)
    check_statement(st)
    (policy or TrustPolicy()).check(st["predicateType"], verified.signers)
    notes = _check_subject_files(st, base)
    check = _CHECKS.get(st["predicateType"])
    if check is not None:
        notes.extend(check(st, base))
    return EvidenceReport(
        path="",
        ok=True,
        signers=verified.signers,
        predicate_type=st["predicateType"],
        kind=st["predicate"].get("kind"),
        notes=notes,
        statement=st,
    )


def _check_payload_form(env: dict[str, Any]) -> None:
    """signoff signs the canonical bytes of a statement; a payload in any other form was re-encoded
    after signing, which names the tampering more precisely than the signature failure that follows."""
    try:
        payload = base64.b64decode(env["payload"], validate=True)
        value = json.loads(payload)
    except (binascii.Error, ValueError, TypeError) as exc:
        raise IntegrityError("altered payload: it is not base64-encoded JSON", "do not trust this file") from exc
    try:
        canonical = canonical_bytes(value)
    except SignoffError as exc:
        raise IntegrityError(
            "altered payload: it holds values a signed statement cannot", "do not trust this file"
        ) from exc
    if canonical != payload:
        raise IntegrityError("altered payload: the statement is not in the form it was signed in",
                             "do not trust this file; obtain the original")


def verify_file(
    path: Path, trusted: dict[str, PublicKey], policy: TrustPolicy | None = None, subjects: Path | None = None
) -> EvidenceReport:
    """Verify one evidence file. Subject files are looked up under `subjects`, by default the folder
    that holds the evidence file, and never outside it."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return EvidenceReport(str(path), False, f"file not found: {path}")
    except IsADirectoryError:
        return EvidenceReport(str(path), False, f"is a folder, not an evidence file: {path}")
    try:
        report = verify_bytes(data, trusted, Path(path).parent if subjects is None else Path(subjects), policy)
    except SignoffError as exc:
        return EvidenceReport(str(path), False, exc.message)
    report.path = str(path)
    return report


def _check_subject_files(st: dict[str, Any], base: Path) -> list[str]:
    """Recompute sha256 of subjects that name files under `base`.

    A statement comes from elsewhere, so its subject names are hostile paths: an absolute name, a
    `..` or a link leading out of `base` would make verification read (and report on) host files.
    Such a subject is never opened; it is named in a note instead."""
    notes: list[str] = []
    root = base.resolve()
    for sub in st["subject"]:
        name = sub.get("name", "")
        want = sub["digest"].get("sha256")
        if not name or want is None or ":" in name:  # scheme-named subjects (git+, ledger:) are not files
            continue
        found = _confined(root, name)
        if found is None:
            notes.append(f"subject {name!r}: names a path outside the subjects folder, not read")
            continue
        if not found.is_file():
            notes.append(f"subject {name}: not present here, digest not rechecked")
            continue
        try:
            got = sha256_file(found)
        except NotFoundError:
            continue
        if got != want:
            raise IntegrityError(f"subject {name}: file digest {got[:12]} does not match the signed {want[:12]}",
                                 "the file changed after the evidence was signed")
    return notes


def _confined(root: Path, name: str) -> Path | None:
    """The file `name` names under `root`, or None when it is absolute, climbs with `..`, or
    resolves (through links) to somewhere outside `root`."""
    if "\x00" in name or name.startswith(("/", "\\")):
        return None
    parts = Path(name).parts
    if not parts or ".." in parts:
        return None
    resolved = (root / name).resolve()
    if not resolved.is_relative_to(root):
        return None
    return resolved
