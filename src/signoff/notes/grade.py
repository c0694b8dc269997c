"""Grade any Markdown (ours, or a baseline written by hand or by a model) against a snapshot.

The grader has no citations to go on, so it checks every claim against every fact of the snapshot:
a hash must prefix some commit; a number must equal some count or derived value, or appear in some
commit subject, path, author name or the range; a percentage must equal some derived fact; commit
dates are not claims. A sentence is checkable when it holds at least one claim, and supported when
all of its claims are. `[F1]` tags and the facts appendix labels are stripped first, so our notes and
a baseline are graded the same way.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from signoff.kernel.errors import NotFoundError, UsageError
from signoff.notes.claims import extract, numbers_in
from signoff.notes.documents import GRADE
from signoff.notes.facts import Aggregate, generate_facts
from signoff.notes.snapshot import Snapshot
from signoff.notes.verify import Support

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_TAGS = re.compile(r"\[F[0-9]+\]|<[^>]+>|\bF[0-9]+\b")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MARKER = re.compile(r"^\s{0,3}(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s?)")
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`])")


def sentences_of(markdown: str) -> list[str]:
    """Sentences of a Markdown text: paragraphs and list items, split at sentence ends, with markup,
    link targets and citation tags removed."""
    text = _FENCE.sub("", markdown)
    units: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        lines: list[str] = []
        for line in block.splitlines():
            if re.match(r"^\s*(?:[-*_]\s*){3,}$", line):
                continue
            if _MARKER.match(line) and lines:
                units.append(" ".join(lines))
                lines = []
            lines.append(_MARKER.sub("", line))
        units.append(" ".join(lines))
    out: list[str] = []
    for unit in units:
        clean = _TAGS.sub("", _LINK.sub(r"\1", unit)).replace("`", "").replace("**", "").replace("__", "")
        out += [s.strip() for s in _SPLIT.split(" ".join(clean.split())) if s.strip()]
    return out


def snapshot_support(snapshot_path: Path) -> Support:
    snap = Snapshot(snapshot_path)
    support = Support()
    agg = Aggregate()
    for fact in generate_facts(snap.commits(), agg):
        support.add_fact(fact)
    support.exact |= numbers_in(snap.range)
    return support


def grade(markdown_path: Path, snapshot_path: Path) -> dict[str, Any]:
    if not markdown_path.is_file():
        raise NotFoundError(f"Markdown file not found: {markdown_path}", "pass the notes file to grade")
    try:
        markdown = markdown_path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{markdown_path} is not UTF-8 text", "pass a Markdown file") from None
    return grade_text(markdown, markdown_path.name, snapshot_path)


def grade_text(markdown: str, name: str, snapshot_path: Path) -> dict[str, Any]:
    """`grade` of Markdown already in hand (a preview that is not a file yet)."""
    support = snapshot_support(snapshot_path)
    total = supported = checkable = good = 0
    unsupported: list[dict[str, Any]] = []
    for sentence in sentences_of(markdown):
        claims = extract(sentence, support.dates)
        if not claims:
            continue
        checkable += 1
        ok_all = True
        for c in claims:
            total += 1
            if support.claim_ok(c):
                supported += 1
            else:
                ok_all = False
                unsupported.append({"sentence": sentence, "kind": c.kind, "token": c.token})
        good += ok_all
    return {
        "schema": GRADE, "file": name, "ok": not unsupported,
        "claims": {"total": total, "supported": supported, "pct": _pct(supported, total)},
        "sentences": {"checkable": checkable, "supported": good, "pct": _pct(good, checkable)},
        "unsupported": unsupported,
    }


def _pct(a: int, b: int) -> float:
    return round(100.0 * a / b, 1) if b else 100.0
