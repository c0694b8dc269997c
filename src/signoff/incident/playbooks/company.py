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
from signoff.incident.playbooks.posts import ASKED_EVENT, FIX_PROPOSAL, FIXES, PUBLISH_TOPIC, fix_request
from signoff.incident.scenario import Scenario
from signoff.incident.stack import APPROVER, MEDIATOR, SHARED
from signoff.incident.workspace import SHARED_ROOM, Workspace
from signoff.kernel.canonical import canonical_text
from signoff.kernel.errors import RefusedError, SignoffError
from signoff.kernel.settings import Settings
from signoff.ledger import NewJob, SqlLedger
from signoff.ledger.outbox import Job

# The scripted responder the demo registers (`signoff.demo.payco_shopco.responder`) under this name;
# with `[agents.responder]` configured, a provider writes the drafts instead.
RESPONDER_SCRIPT = "incident-playbook"
# A person's own wording for a draft of theirs, naming the digest of the draft they read: the agent
# drafts it again with the same evidence, as a new draft for the approver to review.
REDRAFT = re.compile(r"^redraft (D-[A-Z]{2,8}-[0-9]+) #[0-9a-f]{12,64}: (\S.*)$", re.S)
# A disclosure the person writes with no draft of the agent's before it: drafted exactly as written.
PERSON_DRAFT = re.compile(r"^draft: (\S.*)$", re.S)
ASK_FOR_FIX = "Please get your fix approved"


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
        # A scripted run (a scenario's) drafts with its playbook's script; a live incident with the
        # responder role's own default (it states the facts it is given), or the configured provider.
        self.responder = agent_for("responder", settings, ledger=ledger,
                                   script=RESPONDER_SCRIPT if scenario is not None else "default")

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
        # The organisation's people (the only other identities the server lets address it): each of
        # them drafts; only the approver names the fix. Nobody's words here approve anything: the
        # approver signs, and only its named person's command.
        if self.replied(room or self.org, p.get("message_id")):
            return
        if room == self.org and sender in self.info.cast.members(self.org):
            redraft, fix, own = REDRAFT.match(text), FIX_PROPOSAL.match(text), PERSON_DRAFT.match(text)
            if redraft is not None:
                self._redraft(redraft.group(1), redraft.group(2).strip(), p.get("message_id"))
                return
            if own is not None:
                self._person_draft(sender, own.group(1).strip(), p.get("message_id"))
                return
            if fix is not None and sender == self.human:
                self._ask_for_fix()
                return
        verdict = airlock_scan(text)
        why = f" (airlock: {', '.join(verdict.families)})" if verdict.quarantined else ""
        self.post(room or self.org, f"I act only on requests the incident commander routes, and everything I "
                  f"send out is a draft for {self.human} to approve; I never post code, payloads, customer "
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
            ev = ASKED_EVENT.search(text)
            if ev:
                event_id = ev.group(1)
                fp = self.evidence.fingerprint(event_id, cur)
                evidence = {"fingerprint": fp}
                facts = [{"id": "fp", "text": f"{self.title}'s salted fingerprint of {event_id} under "
                          f"{incident}: {fp['total_bytes']} bytes, {len(fp['fields'])} fields.", "shareable": True}]
                self._draft(f"fingerprint:{event_id}", incident, (facts, evidence))
        elif ASK_FOR_FIX in text and not self.info.cards:
            self._ask_for_fix()
        elif ASK_FOR_FIX in text and (fix := self._fix_text()) is not None:
            self.op(SHARED, "request_approval", request_id=self.info.fix_card(incident, self.org),
                    title=f"{self.title} fix for {incident}: {fix}",
                    options=[{"id": "approve", "label": "Approve the fix", "decision": "accept"},
                             {"id": "decline", "label": "Decline", "decision": "decline"}],
                    expires_at=time.time() + 86_400, responders=[self.info.server_name(self.human)])
        elif "re-run the end-to-end check" in text and self.scenario is not None:
            result = self.scenario.rerun(self.ws.root / "captures-fixed")
            evidence = {"simulation": {"events": result.events, "accepted": result.accepted,
                                       "rejected": result.rejected, "fixes": sorted(FIXES.values())}}
            sim = evidence["simulation"]
            facts = [{"id": "e2e", "text": f"End-to-end check for {incident} with both fixes: {sim['events']} "
                      f"webhooks sent, {sim['accepted']} accepted, {sim['rejected']} rejected."}]
            self._draft("simulation", incident, (facts, evidence))

    def _summary_facts(self, incident: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        summary = self.evidence.summary()
        events = self.evidence.events()
        demo = self.org in FIXES  # the demo's two organisations keep their wording
        # A capture without statuses (a folder of payloads) records none: status 0, not a failure.
        rejected = sorted(e["event_id"] for e in events if (e["status"] != 200 if demo else e["status"] >= 400))
        accepted = len(events) - len(rejected)
        evidence = {"org": self.org, "incident": incident, "events": len(events), "by_status": summary["by_status"],
                    "rejected": rejected}
        if not demo:
            unknown = sum(1 for e in events if e["status"] == 0)
            failed = f"{len(rejected)} failed ({', '.join(rejected)})" if rejected else "no failure recorded"
            text = (f"{self.title}'s log for {incident}: {len(events)} requests captured, {failed}"
                    + (f"; {unknown} without a recorded status." if unknown else "."))
        elif self.org == "payco":
            text = (f"PayCo's delivery log for {incident}: {len(events)} webhooks sent, {accepted} accepted, "
                    f"{len(rejected)} rejected with 401 ({', '.join(rejected)}).")
        else:
            text = (f"ShopCo's verifier log for {incident}: {len(events)} webhooks received, {len(rejected)} failed "
                    f"signature verification ({', '.join(rejected)}). Our worker verifies each signature after "
                    "the body was parsed and queued.")
        return [{"id": "log", "text": text, "shareable": True}], evidence

    def _draft(self, purpose: str, incident: str, facts_evidence: tuple[list[dict[str, Any]], dict[str, Any]]) -> None:
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
        text = (f"{self.title}'s fix for {incident} is approved by {responder} "
                f"(card {request_id}): {self._fix_text()}.")
        if any(m["sender"] == self.sender and m["body"] == text for m in self.messages(SHARED)):
            return
        self.guarded_post(text)

    # people's own words

    @property
    def human(self) -> str:
        """The organisation's approver: the one person whose approval the approver signs."""
        return self.info.cast.approver(self.org)

    @property
    def title(self) -> str:
        return self.info.cast.title(self.org)

    def _open_incident(self) -> str | None:
        cur = self.current()
        return cur.incident if cur is not None else None

    def _fix_text(self) -> str | None:
        """The fix to ask approval for: the latest one the organisation's person named (`fix: ...`
        addressed to this agent in the private room), else the demo's, else none yet."""
        human = f"user:{self.info.users[self.human]}"
        named = [hit.group(1).strip() for m in self.messages(self.org) if m["sender"] == human
                 and (hit := FIX_PROPOSAL.match(strip_mentions(m["body"]))) is not None]
        return named[-1] if named else FIXES.get(self.org)

    def _ask_for_fix(self) -> None:
        """Ask the person, in the private room, to approve the fix, once the commander asked for it
        and the fix is named (by the person, or the demo's)."""
        incident, fix = self._open_incident(), self._fix_text()
        if incident is None or fix is None or self.info.cards:
            return
        asked = any(m["sender"] == f"agent:{self.info.agents[MEDIATOR]}" and ASK_FOR_FIX in m["body"]
                    and incident in m["body"] for m in self.messages(SHARED))
        ask = fix_request(self.org, incident, self.title, fix)
        mine = [m["body"] for m in self.messages(self.org) if m["sender"] == self.sender]
        if asked and ask not in mine:
            self.post(self.org, ask)

    def _redraft(self, d_id: str, text: str, message_id: Any) -> None:
        """Draft `d_id` again in the person's words, with the same evidence (a new draft id): what
        crosses is still only what the person then approves, through the guard."""
        doc = self.own_document(self.org, d_id)
        data = json.loads(doc["content"]) if doc is not None else {}
        if doc is None or self.ws.signed_record(self.org, d_id, str(data.get("incident"))) is not None:
            self.post(self.org, f"not redrafted: {d_id} is no unsigned draft of mine", thread_id=message_id)
            return
        self._in_persons_words(f"{doc['description']} (redraft of {d_id})", str(data["incident"]),
                               dict(data["evidence"]), text, message_id, "not redrafted")

    def _person_draft(self, writer: str, text: str, message_id: Any) -> None:
        """A disclosure in a person's own words (the approver's or a colleague's) with no draft of
        this agent's before it: drafted exactly as written, its evidence naming only who wrote it,
        for the approver to review and approve like any draft."""
        incident = self._open_incident()
        if incident is None:
            self.post(self.org, "not drafted: no incident is open yet", thread_id=message_id)
            return
        self._in_persons_words(f"written by {writer} ({message_id})", incident,
                               {"incident": incident, "org": self.org, "written_by": writer}, text,
                               message_id, "not drafted")

    def _in_persons_words(self, purpose: str, incident: str, evidence: dict[str, Any], text: str, message_id: Any,
                          refusal: str) -> None:
        """Draft once per purpose, with the person's text as it is: a new id, its evidence document
        and the draft message ending with its approve command."""
        docs = {n: d for n, d in self.documents(self.org).items()
                if d["created_by"] == self.sender and n.startswith("D-")}
        if any(d["description"] == purpose for d in docs.values()):
            return
        try:
            d = draft(self.org, len(docs) + 1, incident, evidence, text, prefix=self.ws.parties.get(self.org).prefix)
        except SignoffError as exc:
            self.post(self.org, f"{refusal}: {exc.message}", thread_id=message_id)
            return
        self.op(self.org, "create_room_document", name=d.d_id, description=purpose,
                content=canonical_text({"incident": d.incident, "evidence": d.evidence, "text": d.text,
                                        "kind": "person"}))
        self.post(self.org, d.text)

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
        record = self.ws.signed_record(self.org, d_id, d.incident)
        if record is None:
            raise RefusedError(f"no signed approval for {d_id}", "wait for the approver")
        self.guarded_post(published_text(d, str(record["body"]["approver"])), d)
