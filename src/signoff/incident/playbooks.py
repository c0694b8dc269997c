"""What each incident agent does with the events the room server delivers to it.

- `Mediator` (role incident-commander): opens the incident, keeps the incident record as a room
  document only it can write, routes evidence requests between the companies and refuses any
  other cross-company request, asks the notary to compare, proposes the root cause, records both
  humans' confirmations and both fix approvals, asks for the end-to-end check and closes.
- `NotaryService` (role notary): issues the incident's salt and compares two crossed fingerprints.
- `ApproverService`: signs a disclosure only for the organisation's named human, in its private
  room, with the exact approve command (part 1's `Approver` holds the rules and the key).
- `CompanyAgent` (provider-/consumer-responder): investigates at home through its evidence server
  (counts, lengths, fingerprints only), drafts disclosures in its private room (the text comes from
  the `responder` agent role: scripted by default, any configured provider otherwise), and posts
  to the shared room only through its guard, from an outbox job.

Every handler is idempotent: it looks at the room before it acts, so a redelivered event (after a
crash or restart) never posts, signs or discloses twice.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from signoff.agents import agent_for
from signoff.agents.providers.scripted import register_script
from signoff.airlock import redact as airlock_redact
from signoff.airlock import scan as airlock_scan
from signoff.incident.actors import RoomAgent, strip_mentions
from signoff.incident.approvals import Approver, Message
from signoff.incident.chain import Chain
from signoff.incident.disclosure import Disclosure, draft, published_text
from signoff.incident.evidence_server import EvidenceClient
from signoff.incident.guard import Post
from signoff.incident.notary import IssuedSalt, Notary
from signoff.incident.simulate import simulate
from signoff.incident.stack import AGENT_OF, APPROVER, HUMANS, MEDIATOR, NOTARY, ORG_OF_AGENT, SHARED
from signoff.incident.workspace import SHARED_ROOM, Workspace, private_room
from signoff.kernel.canonical import canonical_text
from signoff.kernel.errors import RefusedError, SignoffError, UsageError
from signoff.kernel.settings import Settings
from signoff.ledger import Ledger, NewJob
from signoff.ledger.outbox import Job

PUBLISH_TOPIC = "incident.publish"
HEADER = re.compile(r"^\[disclosure (D-[A-Z]{2,8}-[0-9]+) · ([a-z]+) · (INC-[0-9]{4}) · approved by ([a-z0-9._-]+)\]")
EVIDENCE_SPLIT = re.compile(r"\n\nevidence sha256 [0-9a-f]{16}:\n")
SALT_POST = re.compile(r"^(INC-[0-9]{4}) salt ([0-9a-f]{64}) ")
EVENT_ID = re.compile(r"\bevt_[0-9]{4}\b")
FIXES = {"payco": "PayCo signs UTF-8 bytes without \\u escapes",
         "shopco": "ShopCo verifies the signature over the raw bytes it received"}
ORG_TITLE = {"payco": "PayCo", "shopco": "ShopCo"}
# Requests the commander never routes: code, payloads, customer data, anyone's configuration.
FORBIDDEN_ASK = re.compile(
    r"(?i)\b(code|source|sources|\.py\b|\.js\b|function|payload|payloads|raw bytes|body of|customer|names?|"
    r"e-?mail|config|configuration|signoff\.toml|settings|keys?|tokens?|secrets?|passwords?|prompt|"
    r"instructions|override|ignore (all|previous)|approvals?\.jsonl|guard)\b")
HELP = ("The commander routes only evidence requests between the companies (counts, lengths, salted "
        "fingerprints); code, payloads, customer data and anyone's configuration never cross. Ask, for "
        "example: please ask for a salted fingerprint of evt_0007.")


def parse_disclosure_post(body: str) -> tuple[dict[str, str], dict[str, Any]] | None:
    """(header fields, evidence) of a published disclosure, or None."""
    m = HEADER.match(body)
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


def _responder_script(task: dict[str, Any]) -> dict[str, Any]:
    """The scripted responder: states exactly the shareable facts it was given, citing them."""
    facts = task.get("facts", [])
    return {"message": " ".join(str(f["text"]) for f in facts) or "Nothing to share yet.",
            "cites": [str(f["id"]) for f in facts] or ["none"]}


register_script("responder", _responder_script, "incident-playbook")


# -- notary ----------------------------------------------------------------------------------


class NotaryService(RoomAgent):
    """Deterministic: issues salts and compares fingerprints. Its issued salts live in its own room
    document, so a restarted notary still knows the current incident (and only that one)."""

    DOC = "notary-salts"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.notary = Notary()
        self._restore()

    def _restore(self) -> None:
        doc = self.own_document(SHARED, self.DOC)
        if doc is None:
            return
        self.notary = Notary.from_state(json.loads(doc["content"]))

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
        m = re.match(r"^compare (evt_[0-9]{4}) (D-PAY-[0-9]+) (D-SHOP-[0-9]+) for (INC-[0-9]{4})\b", text)
        if m:
            self._compare(*m.groups())

    def _issue(self, incident: str) -> None:
        cur = self.current()
        if cur is None or cur.incident != incident:
            try:
                self.notary.open_incident(incident)
            except UsageError:
                return  # an older incident's name: salts are never reissued
        issued = self.notary.current
        self.write_document(SHARED, self.DOC, canonical_text(self.notary.state()),
                            "salts the notary issued (public inside each incident)")
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
            if head["d_id"] in (d_a, d_b) and m["sender"] == f"agent:{self.info.agents[AGENT_OF[head['org']]]}":
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
        data[f"{incident}/{event_id}"] = comparison.as_json()
        self.write_document(SHARED, "notary-comparisons", canonical_text(data), "the notary's measured comparisons")
        self.post(SHARED, f"{marker}:\n{comparison.table()}", roles=["incident-commander"])


# -- approver --------------------------------------------------------------------------------


class ApproverService(RoomAgent):
    """Signs a disclosure when the room server delivered the organisation's named human's exact
    approve command to it as addressed. Its policy admits only priya in payco-internal and sam in
    shopco-internal, so an approve from anyone else, anywhere else, never even reaches it."""

    def __init__(self, *args: Any, ws: Workspace, current: Callable[[], IssuedSalt | None], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ws = ws
        self.current = current

    def approver(self, org: str) -> Approver:
        key = self.ws.keys.ensure(f"incident-approver-{org}")
        cur = self.current()
        notary = Notary.restore([cur] if cur else [])  # a read-only view of the notary's current incident
        return Approver(org, HUMANS[org], private_room(org), key, Chain(self.ws.approvals_path(org), key), notary,
                        lambda: self.ws.guard_file_digest(org), self.ws.pins()[org])

    def handle(self, env: dict[str, Any]) -> None:
        p = env.get("payload", {})
        org = self.event_room(env)
        if env.get("type") != "message" or not p.get("addressed") or org not in HUMANS:
            return
        text = strip_mentions(str(p.get("body", "")))
        m = re.search(r"\bapprove (D-[A-Z]{2,8}-[0-9]+)\b", text)
        if m is None:
            if not self.replied(org, p.get("message_id")):
                self.post(org, "not signed: I only sign `approve D-...` for a draft in this room.",
                          thread_id=p.get("message_id"))
            return
        d_id = m.group(1)
        agent = AGENT_OF[org]
        agent_sender = f"agent:{self.info.agents[agent]}"
        doc = self.documents(org).get(d_id)
        try:
            if doc is None or doc["created_by"] != agent_sender:
                raise RefusedError(f"no draft {d_id} from {agent} in {private_room(org)}", "approve a posted draft")
            data = json.loads(doc["content"])
            # The draft is the agent's message carrying exactly the drafted text, not any message of the
            # agent's that happens to end with the command (an agent could post the command itself).
            drafts = [msg for msg in self.messages(org)
                      if msg["sender"] == agent_sender and msg["body"] == data["text"]]
            if not drafts:
                raise RefusedError(f"no draft {d_id} from {agent} in {private_room(org)}", "approve a posted draft")
            d = Disclosure(d_id, data["incident"], org, data["evidence"], drafts[-1]["body"])
            draft_msg = Message(drafts[-1]["message_id"], private_room(org), agent, drafts[-1]["body"])
            approval = Message(str(p.get("message_id")), private_room(org), self.sender_name(env), text)
            record = self.approver(org).approve(d, draft_msg, approval)
        except SignoffError as exc:
            if not self.replied(org, p.get("message_id")):
                self.post(org, f"not signed: {exc.message}", thread_id=p.get("message_id"))
            return
        self._publish_record(org, record)
        notice = f"{d_id} approved by {record['body']['approver']}; signed record {record['seq']}."
        mine = [msg for msg in self.messages(org) if msg["sender"] == self.sender]
        if not any(msg["body"].endswith(notice) for msg in mine):
            self.post(org, notice, targets=[agent])

    def _publish_record(self, org: str, record: dict[str, Any]) -> None:
        doc = self.own_document(org, "approvals")
        records = json.loads(doc["content"]) if doc else []
        if any(r["body"]["d_id"] == record["body"]["d_id"] for r in records):
            return
        records.append(record)
        self.write_document(org, "approvals", canonical_text(records), "signed approval records (Ed25519, chained)")


# -- company agents --------------------------------------------------------------------------


class CompanyAgent(RoomAgent):
    def __init__(self, *args: Any, org: str, ws: Workspace, ledger: Ledger, evidence: EvidenceClient,
                 settings: Settings, current: Callable[[], IssuedSalt | None], fixture: Path | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.org = org
        self.ws = ws
        self.ledger = ledger
        self.evidence = evidence
        self.settings = settings
        self.current = current
        self.fixture = fixture
        self.responder = agent_for("responder", settings, ledger=ledger, script="incident-playbook")

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
        elif "Please get your fix approved" in text:
            self.op(SHARED, "request_approval", request_id=f"{incident}-fix-{self.org}",
                    title=f"{ORG_TITLE[self.org]} fix for {incident}: {FIXES[self.org]}",
                    options=[{"id": "approve", "label": "Approve the fix", "decision": "accept"},
                             {"id": "decline", "label": "Decline", "decision": "decline"}],
                    expires_at=time.time() + 86_400, responders=[HUMANS[self.org]])
        elif "re-run the end-to-end check" in text and self.org == "shopco":
            out = self.ws.root / "captures-fixed"
            result = simulate(out, fixed_payco=True, fixed_shopco=True, fixture=self.fixture)
            evidence = {"simulation": {"events": len(result.accepted) + len(result.rejected),
                                       "accepted": len(result.accepted), "rejected": len(result.rejected),
                                       "fixes": sorted(FIXES.values())}}
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
            d = draft(self.org, len(docs) + 1, incident, evidence, str(proposal.output["message"]))
            self.op(self.org, "create_room_document", name=d.d_id, description=purpose,
                    content=canonical_text({"incident": incident, "evidence": evidence, "text": d.text,
                                            "kind": proposal.kind}))
        if not any(m["sender"] == self.sender and m["body"] == d.text for m in self.messages(self.org)):
            self.post(self.org, d.text)

    def _fix_outcome(self, p: dict[str, Any]) -> None:
        request_id = str(p.get("request_id", ""))
        if not request_id.endswith(f"-fix-{self.org}") or p.get("outcome") != "accepted" or not p.get("allowed"):
            return
        incident = request_id.removesuffix(f"-fix-{self.org}")
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
        record = next((r for r in Chain(self.ws.approvals_path(self.org)).records() if r["body"]["d_id"] == d_id), None)
        if record is None:
            raise RefusedError(f"no signed approval for {d_id}", "wait for the approver")
        self.guarded_post(published_text(d, str(record["body"]["approver"])), d)


# -- mediator --------------------------------------------------------------------------------


class Mediator(RoomAgent):
    """The incident commander. Its incident record is a room document only it can write."""

    def record_name(self, incident: str) -> str:
        return f"{incident} record"

    def records(self) -> dict[str, dict[str, Any]]:
        out = {}
        for name, doc in self.documents(SHARED).items():
            if name.endswith(" record") and doc["created_by"] == self.sender:
                out[name.split(" ")[0]] = json.loads(doc["content"])
        return out

    def open_record(self) -> dict[str, Any] | None:
        recs = [r for r in self.records().values() if r["status"] != "closed"]
        return recs[-1] if recs else None

    def save(self, rec: dict[str, Any]) -> None:
        self.write_document(SHARED, self.record_name(rec["incident"]), json.dumps(rec, indent=1, sort_keys=True,
                                                                                  ensure_ascii=False),
                            "incident record: status, symptoms, hypotheses, action items (commander only)")

    def say(self, text: str, targets: list[str] | None = None, thread_id: str | None = None) -> None:
        """Post once: a redelivered event finds its message already in the room."""
        if any(m["sender"] == self.sender and m["body"].endswith(text) for m in self.messages(SHARED)):
            return
        self.post(SHARED, text, targets=targets, thread_id=thread_id)

    def handle(self, env: dict[str, Any]) -> None:
        if env.get("type") != "message" or self.event_room(env) != SHARED:
            return
        p = env["payload"]
        sender = self.sender_name(env)
        body = str(p.get("body", ""))
        if sender in HUMANS.values():
            if p.get("addressed"):
                self._from_human(sender, strip_mentions(body), p)
        elif sender == NOTARY:
            self._from_notary(strip_mentions(body))
        elif sender in ORG_OF_AGENT:
            self._from_company(ORG_OF_AGENT[sender], body, p)

    def _from_human(self, who: str, text: str, p: dict[str, Any]) -> None:
        rec = self.open_record()
        if rec is not None and rec.get("opened_msg") == p.get("message_id"):
            rec = None  # the opening report delivered again: redo only what is missing
        if rec is None:
            verdict = airlock_scan(text)
            symptom = ("(quarantined report: " + ", ".join(verdict.families) + ")" if verdict.quarantined
                       else airlock_redact(text).text)
            known = self.records()
            again = [r for r in known.values() if r.get("opened_msg") == p.get("message_id")]
            incident = again[0]["incident"] if again else f"INC-{len(known) + 1:04d}"
            rec = again[0] if again else {"incident": incident, "status": "investigating", "commander": MEDIATOR,
                   "opened_at": p.get("timestamp"), "opened_by": who, "symptoms": [{"by": who, "text": symptom,
                                                                                    "kind": "reported"}],
                   "hypotheses": [], "action_items": [], "disclosures": [], "requests": [], "refused_requests": 0,
                   "confirmations": {}, "root_cause": None, "fixes": {}, "e2e": None, "closed_at": None,
                   "closed_by": None, "opened_msg": p.get("message_id")}
            self.save(rec)
            self.say(f"{incident} opened by the incident commander after {who}'s report; record: "
                     f"{self.record_name(incident)}.")
            self.say(f"issue a salt for {incident}", targets=[NOTARY])
            return
        incident = rec["incident"]
        if text == f"confirm root cause {incident}":
            if rec["root_cause"] is None or who in rec["confirmations"]:
                return
            rec["confirmations"][who] = p.get("message_id")
            if set(rec["confirmations"]) == set(HUMANS.values()):
                rec["root_cause"]["confirmed_at"] = p.get("timestamp")
                rec["status"] = "fixing"
                rec["action_items"] = [{"org": o, "item": FIXES[o], "state": "awaiting approval"} for o in FIXES]
            self.save(rec)
            if rec["status"] == "fixing":
                self.say(f"Root cause of {incident} confirmed by priya and sam. Action items: {FIXES['payco']}; "
                         f"{FIXES['shopco']}. Please get your fix approved.", targets=list(AGENT_OF.values()))
            return
        ev = EVENT_ID.search(text)
        if ev and "fingerprint" in text and not FORBIDDEN_ASK.search(text):
            if any(r["msg"] == p.get("message_id") for r in rec["requests"]):
                return
            rec["requests"].append({"by": who, "what": f"fingerprint {ev.group(0)}", "msg": p.get("message_id")})
            self.save(rec)
            self.say(f"{incident}: {who} asks both sides for a salted fingerprint of {ev.group(0)}. Please "
                     "fingerprint it under the notary's salt and disclose it.", targets=list(AGENT_OF.values()))
            return
        if self.replied(SHARED, p.get("message_id")):
            return
        rec["refused_requests"] += 1
        self.save(rec)
        self.post(SHARED, f"Not routed. {HELP}", thread_id=p.get("message_id"))

    def _from_notary(self, text: str) -> None:
        rec = self.open_record()
        if rec is None:
            return
        incident = rec["incident"]
        if text.startswith(f"{incident} salt "):
            self.say(f"{incident} is open. Please investigate at home and disclose what you can share (counts, "
                     "lengths, fingerprints); every disclosure needs your approver's signature.",
                     targets=list(AGENT_OF.values()))
            return
        m = re.match(rf"^notary comparison {incident} (evt_[0-9]{{4}}) ", text)
        if not m or rec["root_cause"] is not None:
            return
        docs = self.documents(SHARED)
        doc = docs.get("notary-comparisons")
        if doc is None or doc["created_by"] != f"agent:{self.info.agents[NOTARY]}":
            return
        comparison = json.loads(doc["content"]).get(f"{incident}/{m.group(1)}")
        if comparison is None:
            return
        rec["hypotheses"] = [{"text": f, "source": "notary", "kind": "measured"} for f in comparison["findings"]]
        rows = [r for r in comparison["rows"] if r["status"] != "match"]
        if len(rows) == 1 and len(rows[0]["escaped_by"]) == 1:
            row = rows[0]
            other = next(o for o in comparison["orgs"] if o not in row["escaped_by"])
            cause = (f"{row['path']} is {abs(row['delta'])} bytes longer as {row['escaped_by'][0]} signed it: "
                     f"{row['escaped_by'][0]} signs JSON with \\u-escaped non-ASCII characters and {other} verifies "
                     "a re-serialised body with raw UTF-8, so the HMACs differ for accented names.")
            rec["root_cause"] = {"text": cause, "proposed_at": None, "confirmed_at": None, "field": row["path"]}
            rec["status"] = "root cause proposed"
            self.save(rec)
            self.say(f"Proposed root cause for {incident}: {cause}\nPriya and Sam, please confirm with: "
                     f"@incident-commander confirm root cause {incident}")
        else:
            self.save(rec)

    def _from_company(self, org: str, body: str, p: dict[str, Any]) -> None:
        rec = self.open_record()
        if rec is None:
            return
        incident = rec["incident"]
        parsed = parse_disclosure_post(body)
        if parsed is not None:
            head, evidence = parsed
            if head["incident"] != incident or head["org"] != org:
                return
            if not any(d["d_id"] == head["d_id"] for d in rec["disclosures"]):
                rec["disclosures"].append({"d_id": head["d_id"], "org": org, "msg": p.get("message_id"),
                                           "approved_by": head["approver"]})
                if "rejected" in evidence and "events" in evidence:
                    rec["symptoms"].append({"by": org, "kind": "reported", "text": f"{len(evidence['rejected'])} of "
                                            f"{evidence['events']} webhooks failed: {', '.join(evidence['rejected'])}"})
                self.save(rec)
            self._maybe_compare(rec)
            sim = evidence.get("simulation")
            if isinstance(sim, dict) and org == "shopco" and len(rec["fixes"]) == 2 and rec["status"] != "closed":
                rec["e2e"] = {"d_id": head["d_id"], **sim}
                if sim.get("rejected") == 0:
                    rec["status"] = "closed"
                    rec["closed_at"] = p.get("timestamp")
                    rec["closed_by"] = MEDIATOR
                    self.save(rec)
                    self.say(f"{incident} closed by the incident commander: root cause confirmed by priya and sam, "
                             f"both fixes approved, end-to-end check {sim['rejected']} of {sim['events']} rejected.")
                else:
                    self.save(rec)
            return
        m = re.match(rf"^{ORG_TITLE[org]}'s fix for {incident} is approved by [^(]+\(card ({incident}-fix-{org})\)",
                     body)
        if m and org not in rec["fixes"]:
            card = self.op(SHARED, "get_approval", request_id=m.group(1))
            outcome = card.get("outcome") or {}
            if card.get("state") == "accepted" and outcome.get("responder_name") and \
                    card["responders"] == [self.info.users[HUMANS[org]]]:
                rec["fixes"][org] = {"card": m.group(1), "approved_by": HUMANS[org]}
                for item in rec["action_items"]:
                    if item["org"] == org:
                        item["state"] = "approved"
                self.save(rec)
                if len(rec["fixes"]) == 2:
                    self.say(f"Both fixes for {incident} are approved. Please re-run the end-to-end check and "
                             "disclose the result.", targets=[AGENT_OF["shopco"]])

    def _maybe_compare(self, rec: dict[str, Any]) -> None:
        incident = rec["incident"]
        msgs = self.messages(SHARED)
        by_event: dict[str, dict[str, str]] = {}
        for m in msgs:
            parsed = parse_disclosure_post(m["body"])
            if parsed is None or parsed[0]["incident"] != incident:
                continue
            head, evidence = parsed
            fp = evidence.get("fingerprint")
            if isinstance(fp, dict) and m["sender"] == f"agent:{self.info.agents[AGENT_OF[head['org']]]}":
                by_event.setdefault(str(fp.get("event_id")), {})[head["org"]] = head["d_id"]
        for event_id, ids in sorted(by_event.items()):
            if set(ids) == {"payco", "shopco"} and rec["root_cause"] is None:
                self.say(f"compare {event_id} {ids['payco']} {ids['shopco']} for {incident}",
                         targets=[NOTARY])
                return


__all__ = ["PUBLISH_TOPIC", "ApproverService", "CompanyAgent", "Mediator", "NotaryService", "parse_disclosure_post"]
