"""The approver service: it signs a disclosure only for that organisation's named approver.

The service holds its Ed25519 key (an agent never does). A signed record binds d_id, incident, salt,
the SHA-256 of the canonical evidence and of the draft text, the approver, the sender, the draft and
approval message ids, the time, the person's `Approval` (`signoff.ledger.approval`: what was shown,
its digest, who, when, which option meant what) and (through the chain) the hash of the previous
record. It refuses when the incident is not the notary's current one, or when the guard's
configuration no longer matches its pin, and signs only when the person's command names the digest
of what was shown (`approve D-PAY-1 #<digest>`): the disclosure with the draft text as the room
server recorded it and the evidence as the document holds it now; a command naming none is answered
with the exact command for what is there, one naming other content is refused.

The rules are the pure decisions `decisions.approve_disclosure` / `decisions.approve_fix`; this
class reads what they are checked against (the notary's current incident, the guard file's digest,
the time) and runs them on the chain. The digest of what was shown is the person's, never computed
here from what is there now: that would sign whatever an agent changed after the person read it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from signoff.incident.chain import Chain
from signoff.incident.decisions import (
    FIX_KIND,
    RECORD_KIND,
    ApproveDisclosure,
    ApproveFix,
    ApproverRules,
    NamesNoDigest,
    Standing,
    approve_disclosure,
    approve_fix,
    disclosure_command,
    fix_command,
)
from signoff.incident.disclosure import Disclosure
from signoff.incident.model import RecordChain
from signoff.incident.notary import Notary
from signoff.kernel.clock import Clock, SystemClock, utc_iso
from signoff.kernel.errors import NotFoundError, SignoffError
from signoff.ledger.aggregate import Decision
from signoff.rooms.domain.decisions import Message
from signoff.trust import PublicKey, SigningKey

__all__ = ["FIX_KIND", "RECORD_KIND", "Approver", "NamesNoDigest", "disclosure_command", "fix_command"]


class Approver:
    def __init__(self, org: str, approver: str, private_room: str, key: SigningKey, chain: Chain,
                 notary: Notary | Callable[[], Notary], guard_digest: Callable[[], str], guard_pin: str,
                 clock: Clock | None = None) -> None:
        """`notary` is the notary, or how to read it as it is now (an approver process of its own
        reads the notary's salts from its ledger at every approval)."""
        self.org = org
        self.approver = approver
        self.private_room = private_room
        self.rules = ApproverRules(org, approver, private_room)
        self.key = key
        self.chain = chain
        self.notary = notary
        self.guard_digest = guard_digest
        self.guard_pin = guard_pin
        self.clock = clock or SystemClock()

    @property
    def public(self) -> PublicKey:
        return self.key.public

    def _standing(self) -> Standing:
        try:
            current = (self.notary if isinstance(self.notary, Notary) else self.notary()).current
        except SignoffError:
            current = None
        try:
            digest = self.guard_digest()
        except OSError:  # a guard configuration that cannot be read is not the pinned one
            digest = "unreadable"
        return Standing(current, digest, self.guard_pin, utc_iso(self.clock.now()))

    def _decide(self, d_id: str, incident: str, decide: Callable[[RecordChain], Decision]) -> dict[str, Any]:
        """Run an approval decision on the chain: the record it signed, or the one that stands."""
        appended = self.chain.decide(decide)
        return appended if appended is not None else self.record(d_id, incident)

    def approve(self, disclosure: Disclosure, draft_msg: Message, approval: Message,
                shown: str | None = None) -> dict[str, Any]:
        """Sign and chain an approval record, or refuse naming why. The person saw the draft message
        as the room server recorded it and the evidence: the approval binds the digest of exactly
        that, named in the command (`approve D-PAY-1 #<digest>`) or sent by the face as `shown`."""
        cmd = ApproveDisclosure(disclosure, draft_msg, approval, shown)
        standing = self._standing()
        return self._decide(disclosure.d_id, disclosure.incident,
                            lambda chain: approve_disclosure(chain, cmd, self.rules, standing, self.key))

    def approve_fix(self, request_id: str, incident: str, fix: str, request_msg: Message,
                    approval: Message, shown: str | None = None) -> dict[str, Any]:
        """Where the server has no approval cards: sign and chain the approval of a fix, asked for by
        the org's agent in its private room (`request_msg`) and given by the org's named human with the
        exact command `approve fix <request_id> #<digest of the request>` there (`approval`), or refuse
        naming why."""
        cmd = ApproveFix(request_id, incident, fix, request_msg, approval, shown)
        standing = self._standing()
        return self._decide(request_id, incident, lambda chain: approve_fix(chain, cmd, self.rules, standing, self.key))

    def find(self, d_id: str, incident: str | None = None) -> dict[str, Any] | None:
        return self.chain.state().find(d_id, incident)

    def record(self, d_id: str, incident: str | None = None) -> dict[str, Any]:
        found = self.find(d_id, incident)
        if found is None:
            raise NotFoundError(f"no approval record for {d_id}", "approve the draft first")
        return found
