"""The approver's playbook: signs a disclosure only for the organisation's named human, in its
private room, with the exact approve command (`signoff.incident.approvals.Approver` holds the rules
and the key)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from signoff.incident.actors import RoomAgent, strip_mentions
from signoff.incident.approvals import Approver
from signoff.incident.disclosure import Disclosure
from signoff.incident.notary import IssuedSalt, Notary
from signoff.incident.playbooks.posts import FIX_COMMAND, FIXES, fix_approved, fix_request
from signoff.incident.stack import AGENT_OF, HUMANS, MEDIATOR, SHARED
from signoff.incident.workspace import Workspace, private_room
from signoff.kernel.canonical import canonical_text
from signoff.kernel.errors import RefusedError, SignoffError
from signoff.rooms.domain.decisions import Message, recorded_once


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
        return Approver(org, HUMANS[org], private_room(org), key, self.ws.approvals(org, key), notary,
                        lambda: self.ws.guard_file_digest(org), self.ws.pins()[org])

    def handle(self, env: dict[str, Any]) -> None:
        p = env.get("payload", {})
        org = self.event_room(env)
        if env.get("type") != "message" or not p.get("addressed") or org not in HUMANS:
            return
        text = strip_mentions(str(p.get("body", "")))
        fix = FIX_COMMAND.match(text)
        if fix is not None and not self.info.cards:
            self._approve_fix(org, env, text, fix.group(1), fix.group(2))
            return
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

    def _approve_fix(self, org: str, env: dict[str, Any], text: str, request_id: str, incident: str) -> None:
        """A fix approval by addressed command (no approval cards on this server): accepted only for
        the message exactly as the server recorded it (its id, the authenticated sender, the text,
        this room) answering the org agent's own request in the same room."""
        p = env["payload"]
        message_id = str(p.get("message_id"))
        agent_sender = f"agent:{self.info.agents[AGENT_OF[org]]}"
        try:
            stored = (Message(m["message_id"], org, m["sender"], m["body"]) for m in self.messages(org))
            if not recorded_once(stored, Message(message_id, org, str(p.get("sender")), str(p.get("body")))):
                raise RefusedError("the command does not match the message the room server recorded",
                                   "approve in the room, as yourself")
            ask = fix_request(org, incident)
            requests = [m for m in self.messages(org) if m["sender"] == agent_sender and m["body"] == ask]
            if not requests:
                raise RefusedError(f"no fix request {request_id} from {AGENT_OF[org]} in {private_room(org)}",
                                   "approve a fix the agent asked for")
            request_msg = Message(requests[-1]["message_id"], private_room(org), AGENT_OF[org], ask)
            approval = Message(message_id, private_room(org), self.sender_name(env), text)
            record = self.approver(org).approve_fix(request_id, incident, FIXES[org], request_msg, approval)
        except SignoffError as exc:
            if not self.replied(org, message_id):
                self.post(org, f"not signed: {exc.message}", thread_id=message_id)
            return
        self._publish_record(org, record)
        notice = fix_approved(org, incident, str(record["body"]["approver"]), message_id, int(record["seq"]))
        if not any(m["sender"] == self.sender and m["body"].endswith(notice) for m in self.messages(SHARED)):
            self.post(SHARED, notice, targets=[MEDIATOR])

    def _publish_record(self, org: str, record: dict[str, Any]) -> None:
        doc = self.own_document(org, "approvals")
        records = json.loads(doc["content"]) if doc else []
        if any(r["body"]["d_id"] == record["body"]["d_id"] for r in records):
            return
        records.append(record)
        self.write_document(org, "approvals", canonical_text(records), "signed approval records (Ed25519, chained)")
