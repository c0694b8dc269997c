"""in-toto Statement v1 builders and shape checks.

Every signoff predicate carries `kind`, one of the evidence kinds of DESIGN.md: measured (we executed
it), reported (an actor supplied it), simulated (demo or scripted), advisory (model opinion).
"""

from __future__ import annotations

import re
from typing import Any

from signoff.kernel.errors import IntegrityError, UsageError

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
EVIDENCE_KINDS = ("measured", "reported", "simulated", "advisory")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX40 = re.compile(r"^[0-9a-f]{40}$")


def subject(name: str, sha256: str | None = None, **digests: str) -> dict[str, Any]:
    digest = dict(digests)
    if sha256 is not None:
        digest["sha256"] = sha256
    if not digest:
        raise UsageError(f"subject {name!r} needs at least one digest", "pass sha256= or gitCommit=")
    return {"name": name, "digest": digest}


def statement(subjects: list[dict[str, Any]], predicate_type: str, predicate: dict[str, Any]) -> dict[str, Any]:
    if predicate.get("kind") not in EVIDENCE_KINDS:
        raise UsageError(
            f"predicate kind must be one of {', '.join(EVIDENCE_KINDS)}, got {predicate.get('kind')!r}",
            "say whether the evidence was measured, reported, simulated or advisory",
        )
    st = {"_type": STATEMENT_TYPE, "subject": subjects, "predicateType": predicate_type, "predicate": predicate}
    check_statement(st)
    return st


def check_statement(st: dict[str, Any]) -> None:
    """Raise IntegrityError naming the first field that makes this not an in-toto v1 statement."""
    if st.get("_type") != STATEMENT_TYPE:
        raise IntegrityError(f"statement _type is {st.get('_type')!r}, expected {STATEMENT_TYPE}",
                             "this is not an in-toto v1 statement")
    subjects = st.get("subject")
    if not isinstance(subjects, list) or not subjects:
        raise IntegrityError("statement has no subject list", "a statement must name what it is about")
    for i, sub in enumerate(subjects):
        if not isinstance(sub, dict) or not isinstance(sub.get("digest"), dict) or not sub["digest"]:
            raise IntegrityError(f"subject {i} has no digest", "every subject needs a digest")
        if "name" in sub and not isinstance(sub["name"], str):
            raise IntegrityError(f"subject {i} name is not a string", "the statement was altered")
        for algo, value in sub["digest"].items():
            if not isinstance(value, str):
                raise IntegrityError(f"subject {i} digest {algo} is not a string", "the statement was altered")
            if algo == "sha256" and not _HEX64.match(value):
                raise IntegrityError(f"subject {i} sha256 is not 64 hex characters", "the statement was altered")
            if algo == "gitCommit" and not _HEX40.match(value):
                raise IntegrityError(f"subject {i} gitCommit is not 40 hex characters", "the statement was altered")
    if not isinstance(st.get("predicateType"), str) or not st["predicateType"]:
        raise IntegrityError("statement has no predicateType", "the statement was altered")
    if not isinstance(st.get("predicate"), dict):
        raise IntegrityError("statement predicate is missing or not an object", "the statement was altered")
    kind = st["predicate"].get("kind")
    if kind is not None and kind not in EVIDENCE_KINDS:
        raise IntegrityError(f"predicate kind {kind!r} is not an evidence kind", "the statement was altered")
