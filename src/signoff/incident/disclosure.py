"""Disclosures: what an organisation proposes to tell the other side.

A draft is `{d_id, incident, org, evidence, text}` whose text ends with its exact approve command
(`approve D-PAY-3`). Once approved, what crosses to the shared room is `published_text(d)`: the text
without the approve line, followed by the evidence as canonical JSON. The approval record binds the
SHA-256 of both the canonical evidence and the draft text, so neither can change afterwards.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from signoff.kernel.canonical import canonical_bytes, canonical_text
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import UsageError

D_ID = re.compile(r"^D-[A-Z]{2,8}-[1-9][0-9]{0,5}$")
APPROVE_LINE = re.compile(r"\bapprove\s+D-[A-Z]{2,8}-[0-9]+\b", re.IGNORECASE)
PUBLISHED_HEADER = re.compile(r"^\[disclosure (D-[A-Z]{2,8}-[0-9]+) · ", re.MULTILINE)


def d_id_for(prefix: str, number: int) -> str:
    """`D-<prefix>-<number>`: the prefix is the organisation's (`Organisation.prefix`)."""
    if number < 1:
        raise UsageError("disclosure numbers start at 1", "number drafts 1, 2, 3, ...")
    return f"D-{prefix}-{number}"


def belongs_to(d_id: str, org: str) -> bool:
    """An id names its organisation: its prefix begins the organisation's key (D-PAY-3 is payco's;
    `Parties` refuses prefixes that begin another organisation's key)."""
    parts = d_id.split("-")
    return len(parts) == 3 and org.upper().startswith(parts[1])


@dataclass(frozen=True)
class Disclosure:
    d_id: str
    incident: str
    org: str
    evidence: dict[str, Any]
    text: str

    @property
    def approve_command(self) -> str:
        return f"approve {self.d_id}"

    @property
    def evidence_sha256(self) -> str:
        return sha256_bytes(canonical_bytes(self.evidence))

    @property
    def text_sha256(self) -> str:
        return sha256_bytes(self.text.encode("utf-8"))

    @property
    def prose(self) -> str:
        """The text without its closing approve line."""
        body, _, _ = self.text.rstrip().rpartition("\n")
        return body.rstrip()

    def check(self) -> None:
        if not D_ID.match(self.d_id):
            raise UsageError(f"bad disclosure id {self.d_id!r}", "ids look like D-PAY-3")
        if not belongs_to(self.d_id, self.org):
            raise UsageError(f"{self.d_id} does not belong to {self.org}",
                             f"{self.org}'s ids start D-<the capital letters its key begins with>-")
        last = self.text.rstrip().rsplit("\n", 1)[-1]
        if not last.rstrip().endswith(self.approve_command):
            raise UsageError(f"draft {self.d_id} does not end with its approve command",
                             f"end the text with the line: Approve with: {self.approve_command}")

    def as_json(self) -> dict[str, Any]:
        return {"d_id": self.d_id, "incident": self.incident, "org": self.org, "evidence": self.evidence,
                "text": self.text, "evidence_sha256": self.evidence_sha256, "text_sha256": self.text_sha256}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Disclosure:
        try:
            d = cls(str(data["d_id"]), str(data["incident"]), str(data["org"]), dict(data["evidence"]),
                    str(data["text"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError("a disclosure needs d_id, incident, org, evidence (object) and text",
                             "build it with signoff.incident.disclosure.draft") from exc
        d.check()
        return d


def draft(org: str, number: int, incident: str, evidence: dict[str, Any], summary: str,
          prefix: str | None = None) -> Disclosure:
    """A draft disclosure whose text ends with its exact approve command (`prefix`: the
    organisation's, by default its key's letters in capitals)."""
    from signoff.incident.parties import default_prefix

    d_id = d_id_for(prefix or default_prefix(org), number)
    if APPROVE_LINE.search(summary):
        raise UsageError("the summary already contains an approve command", "write only the summary")
    text = f"{summary.rstrip()}\n\nApprove with: approve {d_id}"
    d = Disclosure(d_id, incident, org, evidence, text)
    d.check()
    return d


def published_text(d: Disclosure, approver: str) -> str:
    """Exactly what may be posted to the shared room for an approved disclosure."""
    return (f"[disclosure {d.d_id} · {d.org} · {d.incident} · approved by {approver}]\n{d.prose}\n\n"
            f"evidence sha256 {d.evidence_sha256[:16]}:\n{canonical_text(d.evidence)}")


# The inverse of published_text: what a reader of the shared room takes a disclosure post to say.
DISCLOSURE_POST = re.compile(
    r"^\[disclosure (D-[A-Z]{2,8}-[0-9]+) · ([a-z][a-z0-9]*) · (INC-[0-9]{4}) · approved by ([a-z0-9._-]+)\]")
EVIDENCE_SPLIT = re.compile(r"\n\nevidence sha256 [0-9a-f]{16}:\n")


def parse_disclosure_post(body: str) -> tuple[dict[str, str], dict[str, Any]] | None:
    """(header fields, evidence) of a published disclosure, or None."""
    m = DISCLOSURE_POST.match(body)
    if not m:
        return None
    parts = EVIDENCE_SPLIT.split(body, maxsplit=1)
    if len(parts) != 2:
        return None
    try:
        evidence = json.loads(parts[1])
    except ValueError:
        return None
    if not isinstance(evidence, dict):
        return None
    return {"d_id": m.group(1), "org": m.group(2), "incident": m.group(3), "approver": m.group(4)}, evidence
