"""Approvals bound to what was shown: the digest of exactly what a face showed a person, and the
refusal of a decision whose digest names anything else.

Every face that lets a person decide (a page, the CLI, a room command) renders some content
(a sentence and its citations, a set of sentences, a candidate commit and its verdict) and sends
back, with the decision, `shown_digest` of that content. The workflow recomputes the digest from
the state it is about to change, inside the same transaction, and `check_shown` refuses the
decision when they differ: content that changed after the page loaded was never seen, so it is
never approved.

A typed command may name the digest by its first `SHORT` hex digits (what faces print); a form
sends all of it.
"""

from __future__ import annotations

import hmac
import re
from typing import Any

from signoff.kernel.canonical import canonical_digest
from signoff.kernel.errors import ConflictError, UsageError

SHORT = 12
_HEX = re.compile(r"^[0-9a-f]{12,64}$")


def shown_digest(content: Any) -> str:
    """The digest of `content` as a face showed it (canonical JSON, so any change of any field changes it)."""
    return canonical_digest({"shown": content})


def short(digest: str) -> str:
    """How faces print a digest a person may type back."""
    return digest[:SHORT]


def names(given: str, digest: str) -> bool:
    """Whether `given` names `digest`: all of it, or its first `SHORT` or more hex digits (a git
    commit id is a digest too)."""
    given = given.strip().lower()
    return bool(_HEX.match(given)) and len(digest) >= len(given) and hmac.compare_digest(digest[:len(given)], given)


def check_shown(given: str | None, content: Any, what: str, fix: str) -> None:
    """Refuse (ConflictError, nothing recorded) unless `given` is the digest, or its first `SHORT` or
    more hex digits, of `content` as it is now. `what` names the content in the message."""
    if not given:
        raise UsageError(f"the decision does not say which {what} it was made on",
                         f"{fix} (the decision names the digest {short(shown_digest(content))} of what was shown)")
    given = given.strip().lower()
    if not _HEX.match(given):
        raise UsageError(f"{given[:70]!r} is not the digest of a shown {what}", fix)
    now = shown_digest(content)
    if not names(given, now):
        raise ConflictError(f"the {what} changed since it was shown (shown {short(given)}, now {short(now)}); "
                            "nothing was recorded", fix)
