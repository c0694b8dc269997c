"""The notary's playbook (role notary): issues the incident's salt and compares two crossed
fingerprints, deterministically (the commander asks once per pair of organisations)."""

from __future__ import annotations

import json
import re
from typing import Any

from signoff.incident.actors import RoomAgent, strip_mentions
from signoff.incident.notary import IssuedSalt, Notary
from signoff.incident.playbooks.posts import parse_disclosure_post
from signoff.incident.salts import IssuedSalts
from signoff.incident.stack import MEDIATOR, SHARED
from signoff.kernel.canonical import canonical_text
from signoff.kernel.errors import SignoffError, UsageError
from signoff.ledger import SqlLedger


class NotaryService(RoomAgent):
    """Deterministic: issues salts and compares fingerprints. Its issued salts are a ledger case
    (`signoff.incident.salts`), so a restarted notary still knows the current incident (and only
    that one)."""

    def __init__(self, *args: Any, ledger: SqlLedger, notary_id: str | None = None, **kwargs: Any) -> None:
        """`ledger` and `notary_id`: where its salts are kept; by default the run's ledger, under the
        notary's agent id (a ledger the approver processes read, `[incident.notary]`, when given)."""
        super().__init__(*args, **kwargs)
        self.salts = IssuedSalts(ledger, notary_id or self.client.agent_id)

    @property
    def notary(self) -> Notary:
        return self.salts.notary()

    def current(self) -> IssuedSalt | None:
        try:
            return self.notary.current
        except SignoffError:
            return None

    def handle(self, env: dict[str, Any]) -> None:
        p = env.get("payload", {})
        if env.get("type") != "message" or not p.get("addressed") or self.event_room(env) != SHARED:
            return
        if self.sender_name(env) != MEDIATOR:
            return
        text = strip_mentions(str(p.get("body", "")))
        m = re.match(r"^issue a salt for (INC-[0-9]{4})\b", text)
        if m:
            self._issue(m.group(1))
            return
        m = re.match(r"^compare (\S{1,64}) (D-[A-Z]{2,8}-[0-9]+) (D-[A-Z]{2,8}-[0-9]+) for (INC-[0-9]{4})\b", text)
        if m:
            self._compare(*m.groups())

    def _issue(self, incident: str) -> None:
        try:
            issued = self.salts.issue(incident)
        except UsageError:
            return  # an older incident's name: salts are never reissued
        text = (f"{issued.incident} salt {issued.salt.hex()} (salt id {issued.salt_id}); fingerprints compare only "
                f"inside {issued.incident}.")
        if not any(m["body"].endswith(text) and m["sender"] == self.sender for m in self.messages(SHARED)):
            self.post(SHARED, text, roles=["incident-commander"])

    def _compare(self, event_id: str, d_a: str, d_b: str, incident: str) -> None:
        marker = f"notary comparison {incident} {event_id} ({d_a} vs {d_b})"
        msgs = self.messages(SHARED)
        if any(marker in m["body"] and m["sender"] == self.sender for m in msgs):
            return
        found: dict[str, dict[str, Any]] = {}
        for m in msgs:
            parsed = parse_disclosure_post(m["body"])
            if parsed is None:
                continue
            head, evidence = parsed
            if head["d_id"] in (d_a, d_b) and head["org"] in self.info.cast.keys \
                    and m["sender"] == f"agent:{self.info.agents[self.info.cast.agent(head['org'])]}":
                found[head["d_id"]] = evidence
        try:
            if set(found) != {d_a, d_b}:
                raise UsageError("both disclosures must be in this room", "disclose both first")
            comparison = self.notary.compare(found[d_a]["fingerprint"], found[d_b]["fingerprint"])
        except (SignoffError, KeyError, TypeError) as exc:
            self.post(SHARED, f"{marker}: refused: {getattr(exc, 'message', str(exc))}", roles=["incident-commander"])
            return
        docs = self.documents(SHARED)
        data = json.loads(docs["notary-comparisons"]["content"]) if "notary-comparisons" in docs else {}
        data[f"{incident}/{event_id}/{d_a}/{d_b}"] = comparison.as_json()  # one per pair of organisations
        self.write_document(SHARED, "notary-comparisons", canonical_text(data), "the notary's measured comparisons")
        self.post(SHARED, f"{marker}:\n{comparison.table()}", roles=["incident-commander"])
