"""An organisation's evidence server as a process of its own (`signoff incident evidence`).

It serves the organisation's captures (its configuration's `captures`: JSON-lines files or folders
of payloads) through `make_app`: counts, lengths and salted fingerprints only, to the holder of its
token, under the notary's current salt (read from the notary's ledger at every request), at most
five events per salt (the budget ledger beside the workspace's captures).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fastapi import FastAPI

from signoff.incident.captures import load_captures
from signoff.incident.evidence_server import EvidenceStore, make_app
from signoff.incident.notary import IssuedSalt
from signoff.incident.salts import IssuedSalts
from signoff.incident.workspace import Workspace
from signoff.kernel.errors import NotFoundError, UsageError
from signoff.ledger import SqlLedger

MIN_TOKEN = 16


@dataclass
class EvidenceProcess:
    org: str
    events: int
    app: FastAPI
    ledgers: list[SqlLedger] = field(default_factory=list)

    def describe(self) -> str:
        return f"evidence of {self.org}: {self.events} captured requests"

    def close(self) -> None:
        for ledger in self.ledgers:
            ledger.close()
        self.ledgers = []


def start(ws: Workspace, org: str, token: str, notary_db: str, notary_id: str) -> EvidenceProcess:
    if len(token) < MIN_TOKEN:
        raise UsageError(f"the evidence token is shorter than {MIN_TOKEN} characters",
                         "give a token of 16 or more characters (the one your agent holds)")
    if not ws.is_set_up():
        raise UsageError(f"no incident set up at {ws.root}", "run `signoff incident setup` there first")
    captures = ws.parties.get(org).captures
    if not captures:
        raise UsageError(f"{org}'s configuration names no captures", f"add captures = [\"...\"] to [org.{org}]")
    captured = load_captures(captures)
    notary = SqlLedger.from_url(notary_db)
    budget = ws.evidence_ledger(org)
    salts = IssuedSalts(notary, notary_id)

    def current() -> IssuedSalt | None:
        try:
            return salts.notary().current
        except NotFoundError:
            return None  # no incident opened yet: every fingerprint is refused

    return EvidenceProcess(org, len(captured), make_app(EvidenceStore.of(org, captured, budget), token, current),
                           [notary, budget])


__all__ = ["EvidenceProcess", "start"]
