"""The shapes of the posts the incident's agents read from one another: a published disclosure's
header and evidence, the publish job's topic, and the fixture's fixed facts (fixes, titles)."""

from __future__ import annotations

import re

from signoff.incident.disclosure import parse_disclosure_post
from signoff.kernel.shown import short, shown_digest

PUBLISH_TOPIC = "incident.publish"
# An event id as people name it in a request ("a salted fingerprint of txn-1003"): the demo's evt_0007,
# or any id a capture holds (letters, digits, '_', '-', '.', ':', '/', '+': `orders/1001`).
EVENT_ID = re.compile(r"\bevt_[0-9]{4}\b")
ASKED_EVENT = re.compile(r"\bfingerprints? of ([A-Za-z0-9][A-Za-z0-9_.:/+-]{0,63}?)(?=[\s,;!?]|\.(?:\s|$)|$)")
# The demo's fixes; in any other incident each organisation's person names its fix (`FIX_PROPOSAL`).
FIXES = {"payco": "PayCo signs UTF-8 bytes without \\u escapes",
         "shopco": "ShopCo verifies the signature over the raw bytes it received"}
ORG_TITLE = {"payco": "PayCo", "shopco": "ShopCo"}
# Fix approvals by addressed command (where the server has no approval cards).
FIX_COMMAND = re.compile(r"^approve fix ((INC-[0-9]{4})-fix-([a-z][a-z0-9]{1,23}))(?: #\S*)?$")
# A person's fix for their organisation, addressed to its agent in their private room.
FIX_PROPOSAL = re.compile(r"^fix: (\S.{0,400})$", re.S)
# The agent's fix request (see `fix_request`): its title, incident, fix, and request id.
FIX_REQUEST = re.compile(r"^(.+?)'s fix for (INC-[0-9]{4}): (.+)\.\n\nTo approve the fix, address the approver: "
                         r"approve fix (INC-[0-9]{4}-fix-[a-z][a-z0-9]{1,23})$", re.S)
# The approver's review of a draft or fix request: the exact command that signs exactly what it showed.
REVIEW_LINE = re.compile(r"^To approve exactly this, send: @\S+ (approve (?:fix )?(\S+) #[0-9a-f]{12,64})$")
FIX_APPROVED = re.compile(r"^(.+?)'s fix for (INC-[0-9]{4}) is approved by ([a-z][a-z0-9._-]{0,39}) "
                          r"\(command (\S+), signed record ([0-9]+)\)\.$")


def fix_request(org: str, incident: str, title: str | None = None, fix: str | None = None) -> str:
    """The org agent's request, in its private room, for its human to approve its fix (`fix`: what
    its person proposed; the demo's by default)."""
    return (f"{title or ORG_TITLE[org]}'s fix for {incident}: {(fix or FIXES[org]).rstrip('.')}.\n\n"
            f"To approve the fix, address the approver: approve fix {incident}-fix-{org}")


def for_review(what: str, approver: str, command: str) -> str:
    """The approver's review notice: what it would sign, its digest, and the exact command to send."""
    digest = command.rsplit("#", 1)[-1]
    return (f"For review: {what}, digest {digest}. That is what will be signed, and nothing else.\n"
            f"To approve exactly this, send: @{approver} {command}")


# A person's confirmation of the commander's proposed root cause, naming the digest of what was shown.
CONFIRM_COMMAND = re.compile(r"^confirm root cause (INC-[0-9]{4})(?: #(\S*))?$")


def root_cause_shown(incident: str, cause: str) -> dict[str, str]:
    """What the commander shows a person to confirm: the incident and the proposed root cause."""
    return {"incident": incident, "root_cause": cause}


def confirm_command(incident: str, cause: str) -> str:
    """The exact command that confirms exactly `cause` as `incident`'s root cause."""
    return f"confirm root cause {incident} #{short(shown_digest(root_cause_shown(incident, cause)))}"


def fix_approved(title: str, incident: str, human: str, command_id: str, seq: int) -> str:
    """The approver's notice to the commander, in the shared room (`title`: the organisation's name)."""
    return f"{title}'s fix for {incident} is approved by {human} (command {command_id}, signed record {seq})."


__all__ = ["ASKED_EVENT", "CONFIRM_COMMAND", "EVENT_ID", "FIXES", "FIX_APPROVED", "FIX_COMMAND", "FIX_PROPOSAL",
           "FIX_REQUEST", "ORG_TITLE", "PUBLISH_TOPIC",
           "REVIEW_LINE", "confirm_command", "fix_approved", "fix_request", "for_review", "parse_disclosure_post",
           "root_cause_shown"]
