"""The mediator's playbook (role incident-commander): opens the incident, keeps the incident record
as a room document only it can write, routes evidence requests between the companies and refuses any
other cross-company request, asks the notary to compare, proposes the root cause, records both
humans' confirmations and both fix approvals, asks for the end-to-end check and closes.

A confirmation of the root cause names the digest of the cause the commander proposed
(`confirm root cause INC-0001 #<digest>`, printed with the proposal); one naming none is answered
with the cause and the exact command, one naming another cause (proposed before a new comparison)
is refused, and neither is recorded."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from signoff.airlock import redact as airlock_redact
from signoff.airlock import scan as airlock_scan
from signoff.incident.actors import RoomAgent, strip_mentions
from signoff.incident.playbooks.posts import (
    ASKED_EVENT,
    CONFIRM_COMMAND,
    FIX_APPROVED,
    FIXES,
    confirm_command,
    parse_disclosure_post,
    root_cause_shown,
)
from signoff.incident.rootcause import events_to_compare, root_cause
from signoff.incident.stack import APPROVER, MEDIATOR, NOTARY, SHARED
from signoff.kernel.errors import SignoffError
from signoff.ledger.approval import APPROVE, approve

# Requests the commander never routes: code, payloads, customer data, anyone's configuration.
FORBIDDEN_ASK = re.compile(
    r"(?i)\b(code|source|sources|\.py\b|\.js\b|function|payload|payloads|raw bytes|body of|customer|names?|"
    r"e-?mail|config|configuration|signoff\.toml|settings|keys?|tokens?|secrets?|passwords?|prompt|"
    r"instructions|override|ignore (all|previous)|approvals?\.jsonl|guard)\b")
HELP = ("The commander routes only evidence requests between the companies (counts, lengths, salted "
        "fingerprints); code, payloads, customer data and anyone's configuration never cross. Ask, for "
        "example: please ask for a salted fingerprint of evt_0007.")


class Mediator(RoomAgent):
    """The incident commander. Its incident record is a room document only it can write."""

    def __init__(self, *args: Any, issued: Callable[[], int] | None = None, **kwargs: Any) -> None:
        """`issued`: how many incidents the notary issued salts for already (a notary ledger shared
        beyond this run names its incidents after them; by default only this run's records count)."""
        super().__init__(*args, **kwargs)
        self.issued = issued

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
        cast = self.info.cast
        if sender in cast.members(SHARED):  # every organisation's people report and ask
            if p.get("addressed"):
                self._from_human(sender, strip_mentions(body), p)
        elif sender == NOTARY:
            self._from_notary(strip_mentions(body))
        elif sender == APPROVER and p.get("addressed") and not self.info.cards:
            self._from_approver(strip_mentions(body), p)
        elif (org := cast.org_of_agent(sender)) is not None:
            self._from_company(org, body, p)

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
            before = max(len(known), self.issued() if self.issued is not None else 0)
            incident = again[0]["incident"] if again else f"INC-{before + 1:04d}"
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
        confirm = CONFIRM_COMMAND.match(text)
        if confirm is not None and confirm.group(1) == incident:
            if who not in self.info.cast.approvers.values():
                if not self.replied(SHARED, p.get("message_id")):
                    self.post(SHARED, f"Not confirmed: {who} is no organisation's approver; "
                              f"{self._everyone()} confirm the root cause.", thread_id=p.get("message_id"))
                return
            if rec["root_cause"] is None or who in rec["confirmations"] or not self._confirms_shown(
                    who, incident, str(rec["root_cause"]["text"]), confirm.group(2), p):
                return
            rec["confirmations"][who] = p.get("message_id")
            if set(rec["confirmations"]) == set(self.info.cast.approvers.values()):
                rec["root_cause"]["confirmed_at"] = p.get("timestamp")
                rec["status"] = "fixing"
                rec["action_items"] = [{"org": o, "item": self._fix_item(o), "state": "awaiting approval"}
                                       for o in self.info.cast.keys]
            self.save(rec)
            if rec["status"] == "fixing":
                items = "; ".join(i["item"] for i in rec["action_items"])
                self.say(f"Root cause of {incident} confirmed by {self._everyone()}. Action items: {items}. "
                         "Please get your fix approved.", targets=list(self.info.cast.agents.values()))
            return
        asked = ASKED_EVENT.search(text)
        ev = asked.group(1) if asked else None
        if ev and "fingerprint" in text and not FORBIDDEN_ASK.search(text):
            if any(r["msg"] == p.get("message_id") for r in rec["requests"]):
                return
            rec["requests"].append({"by": who, "what": f"fingerprint {ev}", "msg": p.get("message_id")})
            self.save(rec)
            self.say(f"{incident}: {who} asks both sides for a salted fingerprint of {ev}. Please "
                     "fingerprint it under the notary's salt and disclose it.",
                     targets=list(self.info.cast.agents.values()))
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
                     targets=list(self.info.cast.agents.values()))
            return
        m = re.match(rf"^notary comparison {incident} (\S{{1,64}}) \(", text)
        if not m or rec["root_cause"] is not None:
            return
        docs = self.documents(SHARED)
        doc = docs.get("notary-comparisons")
        if doc is None or doc["created_by"] != f"agent:{self.info.agents[NOTARY]}":
            return
        # Every pair's comparison of the event (keyed `<incident>/<event>/<d_a>/<d_b>` by the notary).
        prefix = f"{incident}/{m.group(1)}/"
        comparisons = [c for k, c in sorted(json.loads(doc["content"]).items()) if k.startswith(prefix)]
        found = root_cause(self.info.cast.keys, comparisons)
        if found is None:
            return  # a pair is still being compared
        rec["hypotheses"] = [{"text": f, "source": "notary", "kind": "measured"} for f in found.hypotheses]
        if found.cause is not None:
            cause = found.cause
            rec["root_cause"] = {"text": cause, "proposed_at": None, "confirmed_at": None, "field": found.field}
            rec["status"] = "root cause proposed"
            self.save(rec)
            self.say(f"Proposed root cause for {incident}: {cause}\n{self._everyone(title=True)}, please confirm with: "
                     f"@incident-commander {confirm_command(incident, cause)}")
        else:
            self.save(rec)

    def _confirms_shown(self, who: str, incident: str, cause: str, given: str | None, p: dict[str, Any]) -> bool:
        """Whether `who`'s confirmation names the digest of the root cause as proposed now; if not, say
        so in its thread (with the cause and the exact command when it names none)."""
        command = f"@incident-commander {confirm_command(incident, cause)}"
        try:
            approve(root_cause_shown(incident, cause), given, what=f"root cause of {incident}", by=who,
                    at=str(p.get("timestamp") or ""), via="room", options=(APPROVE,),
                    fix=f"read the proposed root cause and confirm exactly that: {command}")
            return True
        except SignoffError as exc:
            why = (f"the confirmation names no digest of the root cause shown. It would confirm: {cause} "
                   f"To confirm exactly this, send: {command}") if not given else f"{exc.message} ({exc.fix})"
            if not self.replied(SHARED, p.get("message_id")):
                self.post(SHARED, f"not recorded: {why}", thread_id=p.get("message_id"))
            return False

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
            if isinstance(sim, dict) and org == self.info.cast.keys[-1] and self._all_fixed(rec) \
                    and rec["status"] != "closed":
                rec["e2e"] = {"d_id": head["d_id"], **sim}
                if sim.get("rejected") == 0:
                    rec["status"] = "closed"
                    rec["closed_at"] = p.get("timestamp")
                    rec["closed_by"] = MEDIATOR
                    self.save(rec)
                    self.say(f"{incident} closed by the incident commander: root cause confirmed by "
                             f"{self._everyone()}, {self._fixes_word()} approved, end-to-end check "
                             f"{sim['rejected']} of {sim['events']} rejected.")
                else:
                    self.save(rec)
            return
        m = re.match(rf"^{re.escape(self.info.cast.title(org))}'s fix for {incident} is approved by [^(]+\(card "
                     rf"({re.escape(self.info.fix_card(incident, org))})\)",
                     body)
        if m and org not in rec["fixes"] and self.info.cards:
            card = self.op(SHARED, "get_approval", request_id=m.group(1))
            outcome = card.get("outcome") or {}
            if card.get("state") == "accepted" and outcome.get("responder_name") and \
                    card["responders"] == [self.info.users[self.info.cast.approver(org)]]:
                self._fix_approved(rec, org, {"card": m.group(1), "approved_by": self.info.cast.approver(org)},
                                   p.get("timestamp"))

    def _from_approver(self, text: str, p: dict[str, Any]) -> None:
        """A fix approved by addressed command (no approval cards): the approver's own notice, which
        only the approver's authenticated message can be."""
        rec = self.open_record()
        m = FIX_APPROVED.match(text)
        if rec is None or m is None or m.group(2) != rec["incident"]:
            return
        org = self.info.cast.org_of_title(m.group(1))
        if org is None or m.group(3) != self.info.cast.approver(org) or org in rec["fixes"]:
            return
        self._fix_approved(rec, org, {"command": m.group(4), "signed_record": int(m.group(5)),
                                      "approved_by": self.info.cast.approver(org), "notice": p.get("message_id")},
                           p.get("timestamp"))

    def _fix_approved(self, rec: dict[str, Any], org: str, how: dict[str, Any], at: Any = None) -> None:
        rec["fixes"][org] = how
        for item in rec["action_items"]:
            if item["org"] == org:
                item["state"] = "approved"
        if not self._all_fixed(rec):
            self.save(rec)
        elif self.info.rerun:
            self.save(rec)
            self.say(f"Both fixes for {rec['incident']} are approved. Please re-run the end-to-end check and "
                     "disclose the result.", targets=[self.info.cast.agent(self.info.cast.keys[-1])])
        else:
            # Nothing here can send the traffic again: the teams check it end to end themselves.
            rec["status"], rec["closed_at"], rec["closed_by"] = "closed", at, MEDIATOR
            self.save(rec)
            self.say(f"{rec['incident']} closed by the incident commander: root cause confirmed by {self._everyone()}, "
                     f"{self._fixes_word()} approved; the end-to-end check is the teams' own.")

    def _all_fixed(self, rec: dict[str, Any]) -> bool:
        return set(rec["fixes"]) == set(self.info.cast.keys)

    def _fixes_word(self) -> str:
        return "both fixes" if len(self.info.cast.keys) == 2 else "every fix"

    def _everyone(self, title: bool = False) -> str:
        """The approvers, as the commander names them ("priya and sam")."""
        names = [n.title() if title else n for n in self.info.cast.approvers.values()]
        return ", ".join(names[:-1]) + " and " + names[-1]

    def _fix_item(self, org: str) -> str:
        return FIXES.get(org) or f"{self.info.cast.title(org)}'s fix, as its people name it"

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
            org = head["org"]
            if isinstance(fp, dict) and org in self.info.cast.keys and \
                    m["sender"] == f"agent:{self.info.agents[self.info.cast.agent(org)]}":
                by_event.setdefault(str(fp.get("event_id")), {})[org] = head["d_id"]
        if rec["root_cause"] is not None:
            return
        for event_id, pairs in events_to_compare(self.info.cast.keys, by_event):
            for d_a, d_b in pairs:  # the notary compares each pair (once); the cause waits for all of them
                self.say(f"compare {event_id} {d_a} {d_b} for {incident}", targets=[NOTARY])
