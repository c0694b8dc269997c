"""Approval cards bound to the exact bytes a person approves, and the decision a card records.

This is the rooms half of the one content-bound approval (`signoff.ledger.approval`): whoever asks
a person through a card (`signoff.gate`, `signoff mcp`, a workflow) builds the card here and reads
the answer back here, as an `Approval` made by `approve`, so a "yes" to other content is refused
the same way everywhere.

A rooms approval card carries a request id and a title. A bound card puts the SHA-256 of the
content into both, and the content itself into the title, so the person answering sees the exact
bytes and the card cannot be re-read as approving anything else:

    request id   bound.<sha256 of content>.<nonce>   (cards asked before ids had one grammar: bound/…/…)
    title        <question, one line>
                 content sha256:<digest> (<n> bytes):
                 <content, verbatim>

`bound_content` accepts a card only when this layout holds exactly: the question is one line, the
header names the request id's digest, and the rest of the title is exactly n bytes whose digest it
is; and every option's label starts with its decision's verb ("Approve", "Refuse"), so a label
cannot show a "yes" as a "no". Any other card (hand-made through the agent protocol, or one whose
title was built from other content) binds nothing, and an answer to it approves nothing.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass
from typing import Any

from signoff.kernel.clock import utc_iso
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import ConflictError, UsageError
from signoff.kernel.ids import new_token
from signoff.kernel.shown import shown_digest
from signoff.ledger.approval import Approval, Option, approve
from signoff.rooms.domain.model import DECISION_VERBS, option_label

MAX_CONTENT = 60 * 1024  # bytes; the card lives in the ledger and in every member's stream
MAX_QUESTION = 500
PREFIX = "bound."
_REQUEST_ID = re.compile(r"^bound([./])([0-9a-f]{64})\1[0-9A-Za-z_-]{8,64}$")
_HEADER = "content sha256:{digest} ({size} bytes):"


# What each decision's label must say first, so that no label can dress a "yes" as a "no" (the
# rooms server renders every card's labels so; cards it stored before it did are checked here).
VERBS = DECISION_VERBS


@dataclass(frozen=True)
class BoundContent:
    question: str
    content: str
    digest: str


def content_digest(content: str) -> str:
    return sha256_bytes(content.encode("utf-8"))


def check_question(question: Any) -> str:
    if not isinstance(question, str) or not question.strip():
        raise UsageError("an approval needs a question", "pass the question a person answers, one line")
    if "\n" in question or "\r" in question or len(question) > MAX_QUESTION:
        raise UsageError(f"the question must be one line of at most {MAX_QUESTION} characters",
                         "put details into the content: that is what the person approves")
    return question


def check_content(content: Any) -> str:
    if not isinstance(content, str):
        raise UsageError("the content to approve must be text", "pass the exact text (or canonical JSON) to approve")
    size = len(content.encode("utf-8"))
    if size > MAX_CONTENT:
        raise UsageError(f"the content is {size} bytes (limit {MAX_CONTENT})",
                         "approve a digest-named artefact (a commit, a frozen harness) instead of its bytes")
    return content


def labelled(options: list[dict[str, str]]) -> list[dict[str, str]]:
    """The options with each label led by its decision's verb ("Approve: canary first")."""
    out: list[dict[str, str]] = []
    for o in options:
        if not isinstance(o, dict) or o.get("decision") not in VERBS or not isinstance(o.get("label"), str):
            raise UsageError(f"bad approval option {o!r}", "each option is {id, label, decision: accept|decline}")
        out.append({**o, "label": option_label(o["decision"], o["label"])})
    return out


def honest_label(verb: str, label: str) -> bool:
    return label == verb or label.startswith(f"{verb}: ")


def new_request_id(digest: str) -> str:
    return f"{PREFIX}{digest}.{new_token(12)}"


def card_title(question: str, content: str) -> str:
    check_question(question)
    check_content(content)
    header = _HEADER.format(digest=content_digest(content), size=len(content.encode("utf-8")))
    return f"{question}\n{header}\n{content}"


def request_digest(request_id: str) -> str | None:
    match = _REQUEST_ID.match(request_id)
    return match.group(2) if match else None


def bound_content(card: dict[str, Any]) -> BoundContent | None:
    """The question and content a card binds, or None when it binds nothing."""
    digest = request_digest(str(card.get("request_id", "")))
    title = card.get("title")
    if digest is None or not isinstance(title, str):
        return None
    question, sep, rest = title.partition("\n")
    header, sep2, content = rest.partition("\n")
    if not sep or not sep2 or not question.strip():
        return None
    raw = content.encode("utf-8")
    if header != _HEADER.format(digest=digest, size=len(raw)) or sha256_bytes(raw) != digest:
        return None
    options = card.get("options")
    if not isinstance(options, list) or not all(
            isinstance(o, dict) and o.get("decision") in VERBS and isinstance(o.get("label"), str)
            and honest_label(VERBS[o["decision"]], o["label"]) for o in options):
        return None  # a label that does not say its decision could show a "yes" as a "no"
    return BoundContent(question, content, digest)


# -- the decision a card records -------------------------------------------------------------------------

OTHER_CONTENT = "the card was for other content (its digest differs); ask again for this content"
# What each decision of a card's options means in the approval record.
MEANING = {"accept": "approve", "decline": "refuse"}


@dataclass(frozen=True)
class CardDecision:
    """What the server's card says, checked against the content the caller holds.

    state: approved | declined | expired | pending | unbound (the card binds no content, or other
    content than the caller's). `approval` is the person's decision as the one approval record
    (`signoff.ledger.approval.Approval`) when a listed person answered a card bound to that content."""

    request_id: str
    room_id: str
    state: str
    content_digest: str | None
    responder: str | None = None
    responder_name: str | None = None
    option_id: str | None = None
    reason: str = ""
    responder_role: str | None = None  # the people's role the responder answered by, if not named
    approval: Approval | None = None

    @property
    def approved(self) -> bool:
        return self.state == "approved" and self.approval is not None and self.approval.approves

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["approval"] = self.approval.model_dump(mode="json") if self.approval else None
        return {**out, "approved": self.approved}


def card_shown(bound: BoundContent) -> dict[str, str]:
    """What a bound card shows a person: its question and its content, verbatim."""
    return {"question": bound.question, "content": bound.content}


def card_approval(card: dict[str, Any], bound: BoundContent, content: str | None, at: str) -> Approval:
    """The answer a listed person gave to `card`, as the one approval record, for `content` (None:
    the content the card binds). Refused (ConflictError, nothing made) when the card showed other
    content than `content`."""
    outcome = card.get("outcome") or {}
    holds = card_shown(bound) if content is None else {"question": bound.question, "content": content}
    options = [Option(id=str(o["id"]), label=str(o["label"]), meaning=MEANING[o["decision"]])
               for o in card.get("options") or []]
    by = outcome.get("responder_name") or outcome.get("responder")
    return approve(holds, shown_digest(card_shown(bound)), what=f"card {card['request_id']}", by=str(by or ""),
                   at=at, via="room", option=str(outcome.get("option_id")), options=options,
                   fix=OTHER_CONTENT)


def read_decision(card: dict[str, Any], content: str | None = None, at: str | None = None) -> CardDecision:
    """The decision a card records, for `content` when given (else for the content it binds).
    The approval's time is when the person answered, as the server recorded it (`answered_at`);
    `at` (now by default) stands in only for a card answered before the server kept that time."""
    request_id, room_id = str(card["request_id"]), str(card["room_id"])
    bound = bound_content(card)
    if bound is None:
        return CardDecision(request_id, room_id, "unbound", None,
                            reason="this card does not bind its content; an answer to it approves nothing")
    outcome = card.get("outcome") or {}
    state = str(card.get("state"))
    if state in ("accepted", "declined") and outcome.get("allowed") is True:
        name, option = outcome.get("responder_name"), outcome.get("option_id")
        try:  # the one content-bound approval decides whether the answer is for `content`
            answered = outcome.get("answered_at")
            when = answered if isinstance(answered, str) and answered else at or utc_iso(time.time())
            made = card_approval(card, bound, content, when)
        except (ConflictError, UsageError):
            return CardDecision(request_id, room_id, "unbound", bound.digest, reason=OTHER_CONTENT)
        return CardDecision(request_id, room_id, "approved" if state == "accepted" else "declined", bound.digest,
                            responder=outcome.get("responder"), responder_name=name, option_id=option,
                            reason="" if state == "accepted" else f"{name or 'the responder'} chose {option!r}",
                            responder_role=outcome.get("responder_role"), approval=made)
    if content is not None and content_digest(content) != bound.digest:
        return CardDecision(request_id, room_id, "unbound", bound.digest, reason=OTHER_CONTENT)
    if state == "expired" or (state == "pending" and float(card.get("expires_at") or 0) <= time.time()):
        return CardDecision(request_id, room_id, "expired", bound.digest,
                            reason="nobody answered before the card expired")
    return CardDecision(request_id, room_id, "pending", bound.digest, reason="waiting for a listed responder")
