"""A company agent's playbook (provider-/consumer-responder): investigates at home through its
evidence server (counts, lengths, fingerprints only), drafts disclosures in its private room (the
text comes from the `responder` agent role: scripted by default, any configured provider otherwise),
and posts to the shared room only through its guard, from an outbox job."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

from signoff.agents import agent_for
from signoff.airlock import scan as airlock_scan
from signoff.incident.actors import RoomAgent, strip_mentions
from signoff.incident.disclosure import Disclosure, draft, published_text
from signoff.incident.evidence_server import EvidenceClient
from signoff.incident.guard import Post
from signoff.incident.notary import IssuedSalt
from signoff.incident.playbooks.posts import EVENT_ID, FIXES, ORG_TITLE, PUBLISH_TOPIC, fix_request
from signoff.incident.scenario import Scenario
from signoff.incident.stack import APPROVER, HUMANS, MEDIATOR, SHARED
from signoff.incident.workspace import SHARED_ROOM, Workspace
from signoff.kernel.canonical import canonical_text
from signoff.kernel.errors import RefusedError
from signoff.kernel.settings import Settings
from signoff.ledger import NewJob, SqlLedger
from signoff.ledger.outbox import Job

# The scripted responder the demo registers (`signoff.demo.payco_shopco.responder`) under this name;
# with `[agents.responder]` configured, a provider writes the drafts instead.
RESPONDER_SCRIPT = "incident-playbook"


class CompanyAgent(RoomAgent):
    def __init__(self, *args: Any, org: str, ws: Workspace, ledger: SqlLedger, evidence: EvidenceClient,
                 settings: Settings, current: Callable[[], IssuedSalt | None], scenario: Scenario | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.org = org
        self.ws = ws
        self.ledger = ledger
        self.evidence = evidence
        self.settings = settings
        self.current = current
        self.scenario = scenario  # re-runs the traffic with the fixes (the end-to-end check)
        self.responder = agent_for("responder", settings, ledger=ledger, script=RESPONDER_SCRIPT)

    # events

    def handle(self, env: dict[str, Any]) -> None:
        kind = env.get("type")
        p = env.get("payload", {})
        room = self.event_room(env)
        if kind == "approval_outcome":
            self._fix_outcome(p)
            return
        if kind != "message" or not p.get("addressed"):
            return
        sender = self.sender_name(env)
        text = strip_mentions(str(p.get("body", "")))
        if room == self.org and sender == APPROVER:
            m = re.match(r"^(D-[A-Z]{2,8}-[0-9]+) approved by ", text)
            if m:
                self.ledger.enqueue([NewJob(f"{PUBLISH_TOPIC}:{self.info.run_dir.name}:{m.group(1)}", PUBLISH_TOPIC,
                                            {"org": self.org, "d_id": m.group(1)})])
            return
        if room == SHARED and sender == MEDIATOR:
            self._from_commander(text)
            return
        # The agent's own human (the only other identity the server lets address it).
        if self.replied(room or self.org, p.get("message_id")):
            return
        verdict = airlock_scan(text)
        why = f" (airlock: {', '.join(verdict.families)})" if verdict.quarantined else ""
        self.post(room or self.org, f"I act only on requests the incident commander routes, and everything I "
                  f"send out is a draft for {HUMANS[self.org]} to approve; I never post code, payloads, customer "
                  f"data or my own configuration.{why}", thread_id=p.get("message_id"))

    def _from_commander(self, text: str) -> None:
        m = re.search(r"(INC-[0-9]{4})", text)
        incident = m.group(1) if m else None
        cur = self.current()
        if incident is None or cur is None or cur.incident != incident:
            return  # only the notary's current incident counts
        if "Please investigate at home" in text:
            self._draft("summary", incident, self._summary_facts(incident))
        elif "salted fingerprint of" in text:
            ev = EVENT_ID.search(text)
            if ev:
                fp = self.evidence.fingerprint(ev.group(0), cur)
                evidence = {"fingerprint": fp}
                facts = [{"id": "fp", "text": f"{ORG_TITLE[self.org]}'s salted fingerprint of {ev.group(0)} under "
                          f"{incident}: {fp['total_bytes']} bytes, {len(fp['fields'])} fields."}]
                self._draft(f"fingerprint:{ev.group(0)}", incident, (facts, evidence))
        elif "Please get your fix approved" in text and not self.info.cards:
            ask = fix_request(self.org, incident)
            if not any(m["sender"] == self.sender and m["body"] == ask for m in self.messages(self.org)):
                self.post(self.org, ask)
        elif "Please get your fix approved" in text:
            self.op(SHARED, "request_approval", request_id=self.info.fix_card(incident, self.org),
                    title=f"{ORG_TITLE[self.org]} fix for {incident}: {FIXES[self.org]}",
                    options=[{"id": "approve", "label": "Approve the fix", "decision": "accept"},
                             {"id": "decline", "label": "Decline", "decision": "decline"}],
                    expires_at=time.time() + 86_400, responders=[self.info.server_name(HUMANS[self.org])])
        elif "re-run the end-to-end check" in text and self.org == "shopco" and self.scenario is not None:
            result = self.scenario.rerun(self.ws.root / "captures-fixed")
            evidence = {"simulation": {"events": result.events, "accepted": result.accepted,
                                       "rejected": result.rejected, "fixes": sorted(FIXES.values())}}
            sim = evidence["simulation"]
            facts = [{"id": "e2e", "text": f"End-to-end check for {incident} with both fixes: {sim['events']} "
                      f"webhooks sent, {sim['accepted']} accepted, {sim['rejected']} rejected."}]
            self._draft("simulation", incident, (facts, evidence))

    def _summary_facts(self, incident: str) -> tuple[list[dict[str, str]], dict[str, Any]]:
        summary = self.evidence.summary()
        events = self.evidence.events()
        rejected = sorted(e["event_id"] for e in events if e["status"] != 200)
        accepted = len(events) - len(rejected)
        evidence = {"org": self.org, "incident": incident, "events": len(events), "by_status": summary["by_status"],
                    "rejected": rejected}
        if self.org == "payco":
            text = (f"PayCo's delivery log for {incident}: {len(events)} webhooks sent, {accepted} accepted, "
                    f"{len(rejected)} rejected with 401 ({', '.join(rejected)}).")
        else:
            text = (f"ShopCo's verifier log for {incident}: {len(events)} webhooks received, {len(rejected)} failed "
                    f"signature verification ({', '.join(rejected)}). Our worker verifies each signature after "
                    "the body was parsed and queued.")
        return [{"id": "log", "text": text}], evidence

    def _draft(self, purpose: str, incident: str, facts_evidence: tuple[list[dict[str, str]], dict[str, Any]]) -> None:
        """Draft once per purpose: an evidence document plus the draft message ending with its approve command."""
        facts, evidence = facts_evidence
        docs = {n: d for n, d in self.documents(self.org).items()
                if d["created_by"] == self.sender and n.startswith("D-")}
        existing = [d for d in docs.values() if d["description"] == purpose]
        if existing:
            data = json.loads(existing[0]["content"])
            d = Disclosure(existing[0]["name"], data["incident"], self.org, data["evidence"], data["text"])
        else:
            proposal = self.responder.propose({"facts": facts, "org": self.org, "incident": incident},
                                              client=f"incident-{self.org}", case_id=incident)
            d = draft(self.org, len(docs) + 1, incident, evidence, str(proposal.output["message"]),
                      prefix=self.ws.parties.get(self.org).prefix)
            self.op(self.org, "create_room_document", name=d.d_id, description=purpose,
                    content=canonical_text({"incident": incident, "evidence": evidence, "text": d.text,
                                            "kind": proposal.kind}))
        if not any(m["sender"] == self.sender and m["body"] == d.text for m in self.messages(self.org)):
            self.post(self.org, d.text)

    def _fix_outcome(self, p: dict[str, Any]) -> None:
        request_id = str(p.get("request_id", ""))
        ending = self.info.fix_card("", self.org)
        if not request_id.endswith(ending) or p.get("outcome") != "accepted" or not p.get("allowed"):
            return
        incident = request_id.removesuffix(ending)
        responder = self.info.name_of(str(p.get("responder")))
        text = (f"{ORG_TITLE[self.org]}'s fix for {incident} is approved by {responder} "
                f"(card {request_id}): {FIXES[self.org]}.")
        if any(m["sender"] == self.sender and m["body"] == text for m in self.messages(SHARED)):
            return
        self.guarded_post(text)

    # the only way out of the organisation

    def guarded_post(self, text: str, disclosure: Disclosure | None = None) -> dict[str, Any] | None:
        cur = self.current()
        guard = self.ws.guard(self.org, current_incident=lambda: cur.incident if cur else None)
        verdict = guard.check(Post(SHARED_ROOM, text, disclosure))
        if not verdict.allowed:
            what = disclosure.d_id if disclosure else "a post"
            self.post(self.org, f"guard blocked {what} to the shared room: {', '.join(verdict.rules)}")
            return None
        return self.post(SHARED, text)

    def publish(self, job: Job) -> None:
        """Outbox handler: post an approved disclosure exactly once (the room is checked first)."""
        self._cache.clear()
        d_id = str(job.payload["d_id"])
        header = f"[disclosure {d_id} · "
        if any(m["sender"] == self.sender and m["body"].startswith(header) for m in self.messages(SHARED)):
            return
        doc = self.own_document(self.org, d_id)
        if doc is None:
            raise RefusedError(f"no draft document {d_id}", "draft first")
        data = json.loads(doc["content"])
        d = Disclosure(d_id, data["incident"], self.org, data["evidence"], data["text"])
        record = next((r for r in self.ws.approvals(self.org).records() if r["body"]["d_id"] == d_id), None)
        if record is None:
            raise RefusedError(f"no signed approval for {d_id}", "wait for the approver")
        self.guarded_post(published_text(d, str(record["body"]["approver"])), d)
