"""The approver's playbook: signs a disclosure only for the organisation's named human, in its
private room, with the exact approve command naming the digest of what was shown
(`signoff.incident.approvals.Approver` holds the rules and the key).

A room shows what an agent posted; the approver, which trusts none of it, shows each draft (and each
fix request) for review in its thread: the digest of exactly what it would sign (the draft message
as the room server recorded it and its evidence document) and the exact command,
`@approver approve D-PAY-1 #<digest>`, that signs exactly that. A command that names no digest is
answered with the same; one naming the digest of anything else (a draft replaced since, evidence
edited since) is refused, and nothing is signed."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from signoff.incident.actors import RoomAgent, strip_mentions
from signoff.incident.approvals import Approver, NamesNoDigest, disclosure_command, fix_command
from signoff.incident.disclosure import Disclosure
from signoff.incident.notary import IssuedSalt, Notary
from signoff.incident.playbooks.posts import FIX_COMMAND, FIX_REQUEST, fix_approved, for_review
from signoff.incident.remote_approver import RemoteApprover
from signoff.incident.stack import APPROVER, MEDIATOR, SHARED
from signoff.incident.workspace import Workspace, private_room
from signoff.kernel.canonical import canonical_text
from signoff.kernel.errors import RefusedError, SignoffError
from signoff.rooms.domain.decisions import Message, recorded_once


class ApproverService(RoomAgent):
    """Signs a disclosure when the room server delivered the organisation's named human's exact
    approve command to it as addressed. Its policy admits only each organisation's approver in that
    organisation's private room, so an approve from anyone else, anywhere else, never even reaches it."""

    def __init__(self, *args: Any, ws: Workspace, current: Callable[[], IssuedSalt | None],
                 processes: dict[str, RemoteApprover] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ws = ws
        self.current = current
        # Organisations whose approver is a process of its own: it signs, with its own key and chain.
        self.processes = processes or {}

    def approver(self, org: str) -> Approver | RemoteApprover:
        if org in self.processes:
            return self.processes[org]
        key = self.ws.keys.ensure(f"incident-approver-{org}")
        cur = self.current()
        notary = Notary.restore([cur] if cur else [])  # a read-only view of the notary's current incident
        return Approver(org, self.info.cast.approver(org), private_room(org), key, self.ws.approvals(org, key), notary,
                        lambda: self.ws.guard_file_digest(org), self.ws.pins()[org])

    def handle(self, env: dict[str, Any]) -> None:
        p = env.get("payload", {})
        org = self.event_room(env)
        if env.get("type") != "message" or org is None or org not in self.info.cast.keys:
            return
        if not p.get("addressed"):
            if p.get("sender") == f"agent:{self.info.agents[self.info.cast.agent(org)]}":
                self._show_for_review(org, p)
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
        agent = self.info.cast.agent(org)
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
            self._refuse(org, p.get("message_id"), exc)
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
        agent = self.info.cast.agent(org)
        agent_sender = f"agent:{self.info.agents[agent]}"
        try:
            stored = (Message(m["message_id"], org, m["sender"], m["body"]) for m in self.messages(org))
            if not recorded_once(stored, Message(message_id, org, str(p.get("sender")), str(p.get("body")))):
                raise RefusedError("the command does not match the message the room server recorded",
                                   "approve in the room, as yourself")
            requests = [(m, hit) for m in self.messages(org) if m["sender"] == agent_sender
                        and (hit := FIX_REQUEST.match(m["body"])) is not None and hit.group(2) == incident]
            if not requests:
                raise RefusedError(f"no fix request for {incident} from {agent} in {private_room(org)}",
                                   "approve a fix the agent asked for")
            asked, hit = requests[-1]
            request_msg = Message(asked["message_id"], private_room(org), agent, asked["body"])
            approval = Message(message_id, private_room(org), self.sender_name(env), text)
            record = self.approver(org).approve_fix(request_id, incident, hit.group(3), request_msg, approval)
        except SignoffError as exc:
            self._refuse(org, message_id, exc)
            return
        self._publish_record(org, record)
        notice = fix_approved(self.info.cast.title(org), incident, str(record["body"]["approver"]), message_id,
                              int(record["seq"]))
        if not any(m["sender"] == self.sender and m["body"].endswith(notice) for m in self.messages(SHARED)):
            self.post(SHARED, notice, targets=[MEDIATOR])

    def _refuse(self, org: str, message_id: Any, exc: SignoffError) -> None:
        """`not signed: <why>` in the command's thread, once; for a command naming no digest, with
        the exact command that signs what is there now."""
        if self.replied(org, message_id):
            return
        why = exc.message
        if isinstance(exc, NamesNoDigest):
            why += f". To approve exactly this, send: @{self.info.server_name(APPROVER)} {exc.command}"
        elif exc.fix:
            why += f" (fix: {exc.fix})"
        self.post(org, f"not signed: {why}", thread_id=message_id)

    def _show_for_review(self, org: str, p: dict[str, Any]) -> None:
        """Show an agent's draft (or fix request) for review in its thread, once: the digest of what
        would be signed and the exact command that signs exactly that."""
        message_id, body = p.get("message_id"), str(p.get("body", ""))
        agent_sender = f"agent:{self.info.agents[self.info.cast.agent(org)]}"
        current = [m for m in self.messages(org) if m["message_id"] == message_id]
        if len(current) != 1 or current[0]["sender"] != agent_sender or current[0]["body"] != body:
            return  # only a message as the room server recorded it
        fix = FIX_COMMAND.match(body.rstrip().rsplit(": ", 1)[-1])
        if fix is not None and FIX_REQUEST.match(body) is not None:
            command = fix_command(fix.group(1), body)
            what = f"the fix request {fix.group(1)} above"
        else:
            drafts = [d for name, d in self.documents(org).items()
                      if name.startswith("D-") and d["created_by"] == agent_sender]
            try:  # the agent wrote these documents: one it mangled is shown for review by nobody
                shown = [(doc["name"], data) for doc in drafts if (data := json.loads(doc["content"]))["text"] == body]
                if not shown:
                    return
                d = Disclosure(shown[-1][0], shown[-1][1]["incident"], org, shown[-1][1]["evidence"], body)
                command = disclosure_command(d)
            except (ValueError, KeyError, TypeError):
                return
            what = f"{d.d_id} above and its evidence document {d.d_id}"
        if not self.replied(org, message_id):
            self.post(org, for_review(what, self.info.server_name(APPROVER), command), thread_id=str(message_id))

    def _publish_record(self, org: str, record: dict[str, Any]) -> None:
        doc = self.own_document(org, "approvals")
        records = json.loads(doc["content"]) if doc else []
        if any(r["body"]["d_id"] == record["body"]["d_id"] for r in records):
            return
        records.append(record)
        self.write_document(org, "approvals", canonical_text(records), "signed approval records (Ed25519, chained)")
