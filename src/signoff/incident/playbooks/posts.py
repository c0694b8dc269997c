"""The shapes of the posts the incident's agents read from one another: a published disclosure's
header and evidence, the publish job's topic, and the fixture's fixed facts (fixes, titles)."""

from __future__ import annotations

import re

from signoff.incident.disclosure import parse_disclosure_post

PUBLISH_TOPIC = "incident.publish"
EVENT_ID = re.compile(r"\bevt_[0-9]{4}\b")
FIXES = {"payco": "PayCo signs UTF-8 bytes without \\u escapes",
         "shopco": "ShopCo verifies the signature over the raw bytes it received"}
ORG_TITLE = {"payco": "PayCo", "shopco": "ShopCo"}
# Fix approvals by addressed command (where the server has no approval cards).
FIX_COMMAND = re.compile(r"^approve fix ((INC-[0-9]{4})-fix-(payco|shopco))$")
FIX_APPROVED = re.compile(r"^(PayCo|ShopCo)'s fix for (INC-[0-9]{4}) is approved by ([a-z]+) "
                          r"\(command (\S+), signed record ([0-9]+)\)\.$")


def fix_request(org: str, incident: str) -> str:
    """The org agent's request, in its private room, for its human to approve its fix."""
    return (f"{ORG_TITLE[org]}'s fix for {incident}: {FIXES[org]}.\n\n"
            f"To approve the fix, address the approver: approve fix {incident}-fix-{org}")


def fix_approved(org: str, incident: str, human: str, command_id: str, seq: int) -> str:
    """The approver's notice to the commander, in the shared room."""
    return f"{ORG_TITLE[org]}'s fix for {incident} is approved by {human} (command {command_id}, signed record {seq})."


__all__ = ["EVENT_ID", "FIXES", "FIX_APPROVED", "FIX_COMMAND", "ORG_TITLE", "PUBLISH_TOPIC", "fix_approved",
           "fix_request", "parse_disclosure_post"]
