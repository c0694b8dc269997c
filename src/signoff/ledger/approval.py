"""The one content-bound approval: what was shown, its digest, who chose, when, through which face,
and which option meant what.

Every workflow that lets a person decide (desk reviews and merges, notes sentences, incident
disclosures, repair harnesses and candidates, gate cards, MCP) records its decisions as `Approval`
values inside its own typed events, made only by `approve`:

1. the face renders some content and sends back, with the person's choice, the digest of exactly
   what it rendered (`signoff.kernel.shown.shown_digest`, printed short by the CLI and rooms);
2. the workflow, inside the transaction that records the decision, rebuilds that content from the
   state it is about to change and calls `approve(...)`, which refuses (nothing recorded) when the
   digest names anything else: content that changed after the page loaded was never seen;
3. the option the person chose is looked up in the options they were offered, so the record says
   what the choice meant (`approve`, `refuse`, …), never what a label might be read to say.

Later, `Approval.binds(content)` says whether a recorded approval is for this content (an edit, a
push or a new harness leaves earlier approvals binding nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from signoff.kernel.errors import UsageError
from signoff.kernel.shown import check_shown, shown_digest

# What an option may mean. A face labels options as it likes; the record keeps the meaning.
MEANINGS = ("approve", "refuse", "edit", "ship", "withdraw")


class Option(BaseModel):
    """One choice a person was offered: its id (what the face sends), label and meaning."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    id: str
    label: str
    meaning: str


APPROVE = Option(id="approve", label="Approve", meaning="approve")
REFUSE = Option(id="refuse", label="Refuse", meaning="refuse")


class Approval(BaseModel):
    """A person's decision on exactly the content whose digest it holds."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    what: str  # the content, named for people ("sentence S1", "harness of CASE-1", "merge of abc123")
    digest: str  # shown_digest of the content as shown (full length)
    by: str  # the person, as the workflow identifies people (a desk person, a rooms user id)
    at: str  # when, UTC ISO 8601, from the workflow's clock
    via: str  # the face it came through: web, cli, room, mcp, github, api
    option: str  # the option's id
    meaning: str  # what that option meant (one of MEANINGS)

    @property
    def approves(self) -> bool:
        return self.meaning == "approve"

    def binds(self, content: Any) -> bool:
        """Whether this decision was made on `content` as it is now."""
        return self.digest == shown_digest(content)


def approve(content: Any, given: str | None, *, what: str, by: str, at: str, via: str,
            option: str = "approve", options: Sequence[Option] = (APPROVE, REFUSE), fix: str) -> Approval:
    """The decision of `by` on `content`, which the face showed with digest `given`.

    Refuses, recording nothing: a missing or malformed digest (UsageError), a digest of other
    content than `content` is now (ConflictError), an option that was not offered, an empty name.
    `fix` tells the person what to do (typically: reload and look again).
    """
    if not isinstance(by, str) or not by.strip() or len(by) > 200:
        raise UsageError("a decision needs the person who made it", "sign in, or pass --by NAME")
    chosen = next((o for o in options if o.id == option), None)
    if chosen is None:
        offered = ", ".join(o.id for o in options)
        raise UsageError(f"{option!r} was not one of the options offered ({offered})", f"choose one of: {offered}")
    if chosen.meaning not in MEANINGS:
        raise ValueError(f"option {chosen.id!r} means {chosen.meaning!r}, not one of {MEANINGS}")
    check_shown(given, content, what, fix)
    return Approval(what=what, digest=shown_digest(content), by=by, at=at, via=via, option=chosen.id,
                    meaning=chosen.meaning)
