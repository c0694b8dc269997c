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


__all__ = ["EVENT_ID", "FIXES", "ORG_TITLE", "PUBLISH_TOPIC", "parse_disclosure_post"]
