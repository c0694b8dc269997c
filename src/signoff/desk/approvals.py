"""A review as the one content-bound approval (`signoff.ledger.approval`): what a review shows a
person, and the `Approval` their decision on it makes. Pure: the desk's decisions (`record_approval`)
and its merge check call it with the bug as the desk holds it now, so a decision naming anything
else is refused, with nothing recorded."""

from __future__ import annotations

from typing import Any

from signoff.desk.model import Bug
from signoff.kernel.errors import ConflictError
from signoff.kernel.shown import shown_digest
from signoff.ledger.approval import APPROVE, Approval, Option, approve


def review_shown(bug_id: str, change: dict[str, Any], head: str) -> dict[str, Any]:
    """What a review shows a person: the bug's change request (repository, number, base) at `head`.

    Faces name it by the head they showed (a commit id is itself the digest of the tree and history
    it shows, so the diff summary follows from base and head); the approval binds the digest of this."""
    return {"bug": bug_id, "repo": change["repo"], "number": change["number"], "base": change["base"], "head": head}


SHIP = Option(id="merge", label="Merge", meaning="ship")  # the merge button: ships what the review showed


def review_approval(bug: Bug, head: str, by: str, at: str, via: str, option: str = APPROVE.id) -> Approval:
    """A person's decision on the review `head` names, made through the one content-bound approval:
    refused (nothing recorded) unless `head` is the change's head now."""
    if bug.state != "in_review" or bug.change is None:
        raise ConflictError(f"{bug.bug_id} has no change under review (state {bug.state})", "nothing to approve")
    if not at:
        raise ValueError("a review approval needs the time it was made (the service reads the clock)")
    change = bug.change
    return approve(review_shown(bug.bug_id, change, change["head"]),
                   shown_digest(review_shown(bug.bug_id, change, head)),
                   what=f"change {change['repo']}#{change['number']} of {bug.bug_id}", by=by, at=at, via=via,
                   option=option, options=(APPROVE, SHIP), fix="review the current head")
