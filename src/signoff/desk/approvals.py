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


def dispute_shown(bug_id: str, dispute: dict[str, Any]) -> dict[str, Any]:
    """What a dispute shows a person: the late reporter's answer, its question, round and reason as the
    bug holds them (an agreement binds the digest of this text, not a position in a list)."""
    return {"bug": bug_id, "dispute": dispute["index"], "report": dispute.get("report_id"),
            "question": dispute.get("question"), "answer": dispute.get("answer"), "round": dispute.get("round"),
            "reason": dispute.get("reason")}


def dispute_digest(bug_id: str, dispute: dict[str, Any]) -> str:
    """The digest a face sends back with an agreement to `dispute`, shown as the bug holds it."""
    return shown_digest(dispute_shown(bug_id, dispute))


def dispute_approval(bug: Bug, index: int, given: str | None, by: str, at: str, via: str) -> Approval:
    """A person's agreement with dispute `index`, made through the one content-bound approval:
    refused (nothing recorded) unless `given` is the digest of that dispute's text as it is now."""
    if not at:
        raise ValueError("a dispute's agreement needs the time it was made (the service reads the clock)")
    return approve(dispute_shown(bug.bug_id, bug.disputes[index]), given,
                   what=f"dispute {index} of {bug.bug_id}", by=by, at=at, via=via,
                   fix="reload the bug and read the dispute as it is now")


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
