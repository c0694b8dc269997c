"""Approval cards bound to the exact bytes a person approves.

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
from dataclasses import dataclass
from typing import Any

from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import UsageError
from signoff.kernel.ids import new_token
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
