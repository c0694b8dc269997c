"""A room message's body as people read it: plain text as it is; a protocol message (a JSON object
or list an agent posted, such as repair's `{"action": "propose_fix", ...}`) as a one-line summary
in words, with the exact JSON kept behind a details element. Every value is escaped; the summary
is text, so the live stream (room.js) shows the same line with textContent."""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from markupsafe import Markup

# The field that says what a protocol message is, in the order they are looked for.
WHAT = ("action", "type", "event", "command", "kind", "op", "verdict", "status", "state")
SHOWN_FIELDS = 4  # fields named in the summary besides what it is
NAMED_IDS = ("case_id", "bug_id", "run_id")  # ids a reader looks for; other *_id values are machinery
SHORT = 60  # longer values (diffs, reports) stay in the raw JSON only, as digests do
DIGEST = re.compile(r"(sha256:)?[0-9a-f]{32,}")


class Body(NamedTuple):
    summary: str | None  # None: the body is plain text
    raw: str  # the body as posted, or its JSON pretty-printed


def words(name: str) -> str:
    return name.replace("_", " ").replace(".", " ").strip()


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str) and value.strip() and len(value) <= SHORT and "\n" not in value \
            and not DIGEST.fullmatch(value):
        return value
    return None


def read_body(body: str) -> Body:
    text = body.strip()
    if not text.startswith(("{", "[")):
        return Body(None, body)
    try:
        data = json.loads(text)
    except ValueError:
        return Body(None, body)
    raw = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)
    if isinstance(data, list):
        return Body(f"Structured message: a list of {len(data)} item{'' if len(data) == 1 else 's'}", raw)
    if not isinstance(data, dict):
        return Body(None, body)
    key = next((k for k in WHAT if _scalar(data.get(k)) is not None), None)
    head = words(str(_scalar(data[key]))).capitalize() if key else f"Structured message ({len(data)} fields)"
    fields = [f"{words(k)}: {v}" for k, value in sorted(data.items())
              if k != key and (not k.endswith("_id") or k in NAMED_IDS) and (v := _scalar(value)) is not None]
    return Body(" · ".join([head, *fields[:SHOWN_FIELDS]]), raw)


def body_html(body: str) -> Markup:
    """The body's paragraph, and for a protocol message the details element holding its JSON."""
    found = read_body(body)
    if found.summary is None:
        return Markup('<p class="body">{}</p>\n').format(found.raw)
    return Markup('<p class="body structured">{}</p>\n<details class="raw"><summary>Raw JSON</summary>'
                  '<pre>{}</pre></details>\n').format(found.summary, found.raw)
