"""The incident's pure decisions: `decide(state, command) -> Decision`, no files, no ledger, no clock.

Whatever a decision needs from outside (the notary's current salt, the guard file's digest and its
pin, the time, a fresh random salt, the signing key) is read by the caller first and passed in.
Signing a chain record is part of the decision: given the key it is a pure function; loading the
key is the service's. The outbound guard's decision on a post is `Guard.decide` (guard.py, beside
the content rules it applies).
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, replace
from typing import Any

from signoff.incident.disclosure import Disclosure
from signoff.incident.model import (
    Cursors,
    CursorsSaved,
    Fingerprinted,
    IncidentNamed,
    IncidentNames,
    NotarySalts,
    RecordAppended,
    RecordChain,
    SaltIssued,
    SaltSpent,
    issued_salts,
)
from signoff.incident.notary import IssuedSalt, Notary
from signoff.kernel.canonical import canonical_bytes
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import RefusedError, UsageError
from signoff.kernel.ids import readable_id
from signoff.kernel.shown import short, shown_digest
from signoff.ledger.aggregate import NOTHING, Decision
from signoff.ledger.approval import APPROVE, approve
from signoff.rooms.domain.decisions import Message, admit_answer
from signoff.trust import SigningKey, pae

RECORD_TYPE = "application/vnd.signoff.incident.record+json"
GENESIS = "0" * 64
RECORD_KIND = "signoff.incident.approval/v1"
FIX_KIND = "signoff.incident.fix-approval/v1"
FINGERPRINTS_PER_SALT = 5


class BudgetExhausted(RefusedError):
    """The salt already fingerprinted its limit of distinct events (HTTP 429: too many, for this salt)."""

    http_status = 429


# -- chains -------------------------------------------------------------------------------------


def link_bytes(entry: dict[str, Any]) -> bytes:
    return canonical_bytes({"seq": entry["seq"], "prev": entry["prev"], "body": entry["body"]})


def entry_hash(entry: dict[str, Any]) -> str:
    return sha256_bytes(canonical_bytes(entry))


def append_record(chain: RecordChain, body: dict[str, Any], key: SigningKey) -> Decision:
    """The next record of `chain`: linked to the last one and signed with `key` (DSSE PAE over
    `{seq, prev, body}`, so the link is part of what is signed)."""
    last = chain.last
    entry: dict[str, Any] = {"seq": int(last["seq"]) + 1 if last else 1,
                             "prev": entry_hash(last) if last else GENESIS, "body": body}
    sig = key.sign(pae(RECORD_TYPE, link_bytes(entry)))
    return Decision.of(RecordAppended(seq=entry["seq"], prev=entry["prev"], body=body, keyid=key.keyid,
                                      sig=base64.b64encode(sig).decode("ascii")))


# -- approvals ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ApproverRules:
    """Who approves for an organisation, and where."""

    org: str
    approver: str  # the organisation's named human
    private_room: str


@dataclass(frozen=True)
class Standing:
    """What an approval is checked against, read by the service before deciding."""

    current: IssuedSalt | None  # the notary's current incident and salt
    guard_digest: str  # the guard configuration as it is now
    guard_pin: str  # as it was pinned at setup
    at: str  # now, UTC ISO 8601


class NamesNoDigest(UsageError):
    """A command that names no digest of what was shown: nothing is signed. The message says what it
    would decide on; `command` is the exact command that decides on exactly that."""

    def __init__(self, what: str, would: str, command: str) -> None:
        super().__init__(f"{what}: the command names no digest of what was shown, so nothing was signed. "
                         f"It would approve {would}", f"to approve exactly this, send: {command}")
        self.command = command


# ` #<digest of what was shown>` at the end of a command (group 1: the digest as typed).
SHOWN_SUFFIX = re.compile(r" #(\S*)$")


def bound_command(command: str, content: Any) -> str:
    """`command` naming the short digest of `content`, as a person sends it: `approve D-PAY-1 #3fa9c2d1e0b7`."""
    return f"{command} #{short(shown_digest(content))}"


@dataclass(frozen=True)
class ApproveDisclosure:
    """A person's approval of a drafted disclosure: the draft and the approval as the room server
    recorded them, and `shown`, the digest of the disclosure as a face showed it (`shown_disclosure`
    of the draft message's text), when the face sent it beside the command. A digest the approval
    message names (`approve D-PAY-1 #<digest>`) is the person's own and decides; a decision that
    names none is refused (NamesNoDigest), one that names other content's is refused (ConflictError)."""

    disclosure: Disclosure
    draft_msg: Message
    approval_msg: Message
    shown: str | None


@dataclass(frozen=True)
class ApproveFix:
    """Where the server has no approval cards: the org's human approves its agent's fix request."""

    request_id: str
    incident: str
    fix: str
    request_msg: Message
    approval_msg: Message
    shown: str | None  # the digest of the request as a face showed it (shown_digest of its text), as above


def shown_disclosure(d: Disclosure, text: str) -> dict[str, Any]:
    """A disclosure as a person saw it: its id, incident, organisation and evidence with `text`, the
    draft as the room shows it. `approve` binds the approval to this content's digest."""
    return {"d_id": d.d_id, "incident": d.incident, "org": d.org, "evidence": d.evidence, "text": text}


def disclosure_command(d: Disclosure) -> str:
    """The exact command that approves `d` as it is (its draft text and evidence): what the approver
    prints when it shows a draft for review, and what a person sends."""
    return bound_command(d.approve_command, shown_disclosure(d, d.text))


def fix_command(request_id: str, request_text: str) -> str:
    """The exact command that approves the fix request whose message reads `request_text`."""
    return bound_command(f"approve fix {request_id}", request_text)


def approve_disclosure(chain: RecordChain, cmd: ApproveDisclosure, rules: ApproverRules, standing: Standing,
                       key: SigningKey) -> Decision:
    """Sign and chain the approval of a disclosure, or refuse naming why. Approving again the same
    content decides nothing (the existing record stands); other content under an approved id is refused."""
    d = cmd.disclosure
    d.check()
    if d.org != rules.org:
        raise RefusedError(f"{d.d_id} is {d.org}'s disclosure; this is {rules.org}'s approver",
                           f"ask {d.org}'s approver")
    given = _admit_message(rules, d.d_id, d.approve_command, cmd.draft_msg, cmd.approval_msg, cmd.shown)
    if cmd.draft_msg.text != d.text:
        raise RefusedError(f"the draft message does not carry {d.d_id}'s text",
                           "approve the draft exactly as it was posted")
    current = _admit_standing(rules, standing, d.incident)
    shown = shown_disclosure(d, d.text)
    if given is None:
        raise NamesNoDigest(f"disclosure {d.d_id}", f"{d.d_id} of {d.incident}: the draft message "
                            f"{cmd.draft_msg.msg_id} as posted ({len(d.text)} characters, text sha256 "
                            f"{d.text_sha256[:12]}) with its evidence document (evidence sha256 "
                            f"{d.evidence_sha256[:12]}), digest {short(shown_digest(shown))}",
                            disclosure_command(d))
    # What was shown is checked before anything else stands: a digest of other content is refused
    # even when the id was approved before (nothing is signed, and no earlier record is handed out).
    approval = approve(shown, given, what=f"disclosure {d.d_id}", by=cmd.approval_msg.sender, at=standing.at,
                       via="room", options=(APPROVE,), fix=f"read {d.d_id} as it is now (the draft message and "
                       f"its evidence document); `{d.approve_command}` answers with what would be signed and "
                       "the command for exactly that")
    existing = chain.find(d.d_id, d.incident)
    if existing is not None:
        body = existing["body"]
        if body.get("evidence_sha256") == d.evidence_sha256 and body.get("text_sha256") == d.text_sha256:
            return NOTHING
        raise RefusedError(f"{d.d_id} was already approved with different content",
                           "draft a new disclosure with a new id")
    return append_record(chain, {
        "kind": RECORD_KIND,
        "d_id": d.d_id,
        "incident": d.incident,
        "org": rules.org,
        "salt": current.salt.hex(),
        "evidence_sha256": d.evidence_sha256,
        "text_sha256": d.text_sha256,
        "approver": approval.by,
        "sender": cmd.draft_msg.sender,
        "draft_msg_id": cmd.draft_msg.msg_id,
        "approval_msg_id": cmd.approval_msg.msg_id,
        "time": approval.at,
        "guard_pin": standing.guard_pin,
        "approval": approval.model_dump(),
    }, key)


def approve_fix(chain: RecordChain, cmd: ApproveFix, rules: ApproverRules, standing: Standing,
                key: SigningKey) -> Decision:
    """Sign and chain the approval of a fix asked for by the org's agent in its private room and given
    by the org's named human with the exact command `approve fix <request_id>` there."""
    command = f"approve fix {cmd.request_id}"
    if cmd.request_id != f"{cmd.incident}-fix-{rules.org}":
        raise RefusedError(f"{cmd.request_id} is not {rules.org}'s fix for {cmd.incident}",
                           f"ask {rules.org}'s approver")
    given = _admit_message(rules, cmd.request_id, command, cmd.request_msg, cmd.approval_msg, cmd.shown)
    current = _admit_standing(rules, standing, cmd.incident)
    fix_sha256 = sha256_bytes(cmd.fix.encode("utf-8"))
    # The human saw the agent's request (which names the fix) and answered it.
    if given is None:
        raise NamesNoDigest(f"fix {cmd.request_id}", f"the fix request message {cmd.request_msg.msg_id} as "
                            f"posted ({cmd.fix}), digest {short(shown_digest(cmd.request_msg.text))}",
                            fix_command(cmd.request_id, cmd.request_msg.text))
    approval = approve(cmd.request_msg.text, given, what=f"fix {cmd.request_id}",
                       by=cmd.approval_msg.sender, at=standing.at, via="room", options=(APPROVE,),
                       fix=f"read the fix request as it is now; `{command}` answers with what would be signed "
                       "and the command for exactly that")
    existing = chain.find(cmd.request_id, cmd.incident)
    if existing is not None:
        if existing["body"].get("fix_sha256") == fix_sha256:
            return NOTHING
        raise RefusedError(f"{cmd.request_id} was already approved for another fix", "ask for a new fix approval")
    return append_record(chain, {
        "kind": FIX_KIND, "d_id": cmd.request_id, "incident": cmd.incident, "org": rules.org,
        "salt": current.salt.hex(), "fix_sha256": fix_sha256, "approver": approval.by,
        "sender": cmd.request_msg.sender, "draft_msg_id": cmd.request_msg.msg_id,
        "approval_msg_id": cmd.approval_msg.msg_id, "time": approval.at, "guard_pin": standing.guard_pin,
        "approval": approval.model_dump(),
    }, key)


def _admit_message(rules: ApproverRules, what: str, command: str, asked: Message, approval: Message,
                   shown: str | None) -> str | None:
    """Every approval: the named approver, in the private room, with the exact command, naming the
    digest of what was shown (`<command> #<digest>`). Returns the digest the person named, else the
    one the face sent beside the command (`shown`), else None."""
    hit = SHOWN_SUFFIX.search(approval.text.strip())
    named = hit.group(1) if hit is not None else None
    said = replace(approval, text=approval.text.strip()[:hit.start()]) if hit is not None else approval
    admit_answer(what, command, asked, said, responder=rules.approver, room=rules.private_room,
                 responder_label=f"{rules.org}'s named approver")
    if named is not None and shown is not None and named.lower() != shown.lower()[:len(named)]:
        raise RefusedError(f"the approval of {what} names {named[:70]!r}, not the digest its face sent",
                           "approve from one face, with the command it shows")
    return named if named is not None else shown


def _admit_standing(rules: ApproverRules, standing: Standing, incident: str) -> IssuedSalt:
    """Every approval: for the notary's current incident, under the pinned guard."""
    current = standing.current
    if current is None or current.incident != incident:
        raise RefusedError(f"{incident} is not the notary's current incident",
                           "draft against the incident the notary most recently issued a salt for")
    if standing.guard_digest != standing.guard_pin:
        raise RefusedError(f"{rules.org}'s guard configuration differs from its pin",
                           "restore the pinned guard configuration; nothing is signed until it matches")
    return current


# -- the notary's salts, the evidence servers' budget -------------------------------------------


def notary_of(state: NotarySalts) -> Notary:
    """The notary a case describes (IntegrityError when its salts do not restore)."""
    return Notary.restore(issued_salts(state))


def issue_salt(state: NotarySalts, incident: str, fresh: bytes, at: str) -> Decision:
    """Issue `fresh` (random bytes the caller drew) as `incident`'s salt, unless `incident` is already
    current. An incident that had a salt before is refused: salts are never reissued."""
    notary = notary_of(state)
    if notary.is_current(incident):
        return NOTHING
    if any(s.incident == incident for s in notary.issued):
        raise UsageError(f"incident {incident} already has a salt", "open a new incident; salts are never reused")
    if len(fresh) < 16:
        raise ValueError("a salt has at least 16 random bytes")
    issued = IssuedSalt(incident, fresh, at)
    return Decision.of(SaltIssued(incident=incident, salt=fresh.hex(), salt_id=issued.salt_id, issued_at=at))


def spend_fingerprint(state: SaltSpent, org: str, salt_id: str, event_id: str,
                      limit: int = FINGERPRINTS_PER_SALT) -> Decision:
    """One slot of the salt's budget for `event_id`; nothing when it already took one; refused
    (BudgetExhausted) when `limit` distinct events were fingerprinted."""
    if not 0 < len(event_id) <= 100 or not 0 < len(salt_id) <= 64:
        raise UsageError("event id or salt id is empty or too long", "use an event id the server listed")
    if event_id in state.events:
        return NOTHING
    if len(state.events) >= limit:
        raise BudgetExhausted(f"at most {limit} events are fingerprinted per salt",
                              "open a new incident with the notary for a fresh salt")
    return Decision.of(Fingerprinted(org=org, salt_id=salt_id, event_id=event_id))


# -- services' cursors, incident names ------------------------------------------------------------


def save_cursors(state: Cursors, cursors: dict[str, int]) -> Decision:
    """Record a service's cursors (nothing when they did not move)."""
    if state.cursors == cursors:
        return NOTHING
    return Decision.of(CursorsSaved(cursors=dict(cursors)))


def name_incident(state: IncidentNames) -> Decision:
    """The workspace's next incident name: INC-0001, INC-0002, ..."""
    return Decision.of(IncidentNamed(incident=readable_id("INC", len(state.names) + 1)))


__all__ = [
    "FINGERPRINTS_PER_SALT", "FIX_KIND", "GENESIS", "RECORD_KIND", "RECORD_TYPE", "SHOWN_SUFFIX", "ApproveDisclosure",
    "ApproveFix", "ApproverRules", "BudgetExhausted", "NamesNoDigest", "Standing", "append_record",
    "approve_disclosure", "approve_fix", "bound_command", "disclosure_command", "entry_hash", "fix_command",
    "issue_salt", "link_bytes", "name_incident", "notary_of", "save_cursors", "shown_disclosure", "spend_fingerprint",
]
