"""The approver service: it signs a disclosure only for that organisation's named approver.

The service holds its Ed25519 key (an agent never does). A signed record binds d_id, incident, salt,
the SHA-256 of the canonical evidence and of the draft text, the approver, the sender, the draft and
approval message ids, the time and (through the chain) the hash of the previous record. It refuses
when the incident is not the notary's current one, or when the guard's configuration no longer
matches its pin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from signoff.incident.chain import Chain
from signoff.incident.disclosure import Disclosure
from signoff.incident.notary import Notary
from signoff.kernel.clock import Clock, SystemClock, utc_iso
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import NotFoundError, RefusedError
from signoff.rooms.domain.decisions import Message, admit_answer
from signoff.trust import PublicKey, SigningKey

RECORD_KIND = "signoff.incident.approval/v1"
FIX_KIND = "signoff.incident.fix-approval/v1"


class Approver:
    def __init__(self, org: str, approver: str, private_room: str, key: SigningKey, chain: Chain,
                 notary: Notary, guard_digest: Callable[[], str], guard_pin: str,
                 clock: Clock | None = None) -> None:
        self.org = org
        self.approver = approver
        self.private_room = private_room
        self.key = key
        self.chain = chain
        self.notary = notary
        self.guard_digest = guard_digest
        self.guard_pin = guard_pin
        self.clock = clock or SystemClock()

    @property
    def public(self) -> PublicKey:
        return self.key.public

    def approve(self, disclosure: Disclosure, draft_msg: Message, approval: Message) -> dict[str, Any]:
        """Sign and chain an approval record, or refuse naming why."""
        d = disclosure
        d.check()
        if d.org != self.org:
            raise RefusedError(f"{d.d_id} is {d.org}'s disclosure; this is {self.org}'s approver",
                               f"ask {d.org}'s approver")
        self._admit_message(d.d_id, d.approve_command, draft_msg, approval)
        if draft_msg.text != d.text:
            raise RefusedError(f"the draft message does not carry {d.d_id}'s text",
                               "approve the draft exactly as it was posted")
        self._admit_state(d.incident)
        existing = self.find(d.d_id)
        if existing is not None:
            body = existing["body"]
            if body["evidence_sha256"] == d.evidence_sha256 and body["text_sha256"] == d.text_sha256:
                return existing
            raise RefusedError(f"{d.d_id} was already approved with different content",
                               "draft a new disclosure with a new id")
        body = {
            "kind": RECORD_KIND,
            "d_id": d.d_id,
            "incident": d.incident,
            "org": self.org,
            "salt": self.notary.current.salt.hex(),
            "evidence_sha256": d.evidence_sha256,
            "text_sha256": d.text_sha256,
            "approver": approval.sender,
            "sender": draft_msg.sender,
            "draft_msg_id": draft_msg.msg_id,
            "approval_msg_id": approval.msg_id,
            "time": utc_iso(self.clock.now()),
            "guard_pin": self.guard_pin,
        }
        return self.chain.append(body)

    def approve_fix(self, request_id: str, incident: str, fix: str, request_msg: Message,
                    approval: Message) -> dict[str, Any]:
        """Where the server has no approval cards: sign and chain the approval of a fix, asked for by
        the org's agent in its private room (`request_msg`) and given by the org's named human with the
        exact command `approve fix <request_id>` there (`approval`), or refuse naming why."""
        command = f"approve fix {request_id}"
        if request_id != f"{incident}-fix-{self.org}":
            raise RefusedError(f"{request_id} is not {self.org}'s fix for {incident}", f"ask {self.org}'s approver")
        self._admit_message(request_id, command, request_msg, approval)
        self._admit_state(incident)
        fix_sha256 = sha256_bytes(fix.encode("utf-8"))
        existing = self.find(request_id)
        if existing is not None:
            if existing["body"].get("fix_sha256") == fix_sha256:
                return existing
            raise RefusedError(f"{request_id} was already approved for another fix", "ask for a new fix approval")
        return self.chain.append({
            "kind": FIX_KIND, "d_id": request_id, "incident": incident, "org": self.org,
            "salt": self.notary.current.salt.hex(), "fix_sha256": fix_sha256, "approver": approval.sender,
            "sender": request_msg.sender, "draft_msg_id": request_msg.msg_id, "approval_msg_id": approval.msg_id,
            "time": utc_iso(self.clock.now()), "guard_pin": self.guard_pin,
        })

    def _admit_message(self, what: str, command: str, asked: Message, approval: Message) -> None:
        """Every approval: the named approver, in the private room, with the exact command."""
        admit_answer(what, command, asked, approval, responder=self.approver, room=self.private_room,
                     responder_label=f"{self.org}'s named approver")

    def _admit_state(self, incident: str) -> None:
        """Every approval: for the notary's current incident, under the pinned guard."""
        if not self.notary.is_current(incident):
            raise RefusedError(f"{incident} is not the notary's current incident",
                               "draft against the incident the notary most recently issued a salt for")
        if self.guard_digest() != self.guard_pin:
            raise RefusedError(f"{self.org}'s guard configuration differs from its pin",
                               "restore the pinned guard configuration; nothing is signed until it matches")

    def find(self, d_id: str) -> dict[str, Any] | None:
        for record in self.chain.records():
            if record.get("body", {}).get("d_id") == d_id:
                return record
        return None

    def record(self, d_id: str) -> dict[str, Any]:
        found = self.find(d_id)
        if found is None:
            raise NotFoundError(f"no approval record for {d_id}", "approve the draft first")
        return found
