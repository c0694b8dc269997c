"""The shapes of the posts the incident's agents read from one another: a published disclosure's
header and evidence, the publish job's topic, and the fixture's fixed facts (fixes, titles)."""

from __future__ import annotations

import json
import re
from typing import Any

PUBLISH_TOPIC = "incident.publish"
HEADER = re.compile(r"^\[disclosure (D-[A-Z]{2,8}-[0-9]+) · ([a-z]+) · (INC-[0-9]{4}) · approved by ([a-z0-9._-]+)\]")
EVIDENCE_SPLIT = re.compile(r"\n\nevidence sha256 [0-9a-f]{16}:\n")
EVENT_ID = re.compile(r"\bevt_[0-9]{4}\b")
FIXES = {"payco": "PayCo signs UTF-8 bytes without \\u escapes",
         "shopco": "ShopCo verifies the signature over the raw bytes it received"}
ORG_TITLE = {"payco": "PayCo", "shopco": "ShopCo"}


def parse_disclosure_post(body: str) -> tuple[dict[str, str], dict[str, Any]] | None:
    """(header fields, evidence) of a published disclosure, or None."""
    m = HEADER.match(body)
    if not m:
        return None
    parts = EVIDENCE_SPLIT.split(body, maxsplit=1)
    if len(parts) != 2:
        return None
    try:
        evidence = json.loads(parts[1])
    except ValueError:
        return None
    if not isinstance(evidence, dict):
        return None
    return {"d_id": m.group(1), "org": m.group(2), "incident": m.group(3), "approver": m.group(4)}, evidence
