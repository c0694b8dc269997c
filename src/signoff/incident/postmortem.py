"""The postmortem of a finished run, built only from what both sides approved and both could see:
the shared room's messages, the disclosures each company approved into it, the commander's record
(root cause confirmed by both humans, fixes approved on each side's card). Nothing of either private
room is read, so the same page can go to both companies.

The measured outcome: time to root cause and time to close (from the record's times), and the
lines of either company's code found in any post of any room (`grade.code_lines_crossed`, measured
against both repositories).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signoff.incident.disclosure import parse_disclosure_post
from signoff.incident.fixture import ORGS
from signoff.incident.grade import View, code_lines_crossed
from signoff.incident.recording import load
from signoff.incident.stack import MEDIATOR, ROOM_NAMES, SHARED, RunInfo
from signoff.kernel.errors import ConflictError


@dataclass(frozen=True)
class Entry:
    offset_ms: int
    who: str
    what: str

    @property
    def stamp(self) -> str:
        secs = max(self.offset_ms, 0) / 1000
        return f"+{int(secs // 60):02d}:{secs % 60:06.3f}"


def _seconds(start: Any, end: Any) -> float | None:
    return round((end - start) / 1000, 3) if isinstance(start, int) and isinstance(end, int) else None


def postmortem(run_dir: Path, fixture: Path | None = None) -> dict[str, Any]:
    path = Path(run_dir) / "recording.jsonl"
    if not path.is_file():
        raise ConflictError("this incident is still going: a postmortem needs its recording",
                            "open the postmortem once the run has finished")
    _head, rows = load(path)
    both = [r for r in rows if set(r.get("visible_to", [])) == set(ORGS)]
    shared_msgs = [r for r in both if r["kind"] == "message" and r["room"] == ROOM_NAMES[SHARED]]
    records = [r for r in both if r["kind"] == "document" and r["name"].endswith(" record") and r["who"] == MEDIATOR]
    record: dict[str, Any] = json.loads(records[-1]["text"]) if records else {}
    opened = record.get("opened_at")
    start = opened if isinstance(opened, int) else min((r["t"] for r in shared_msgs), default=0)
    approved = {(d.get("d_id"), d.get("org")) for d in record.get("disclosures", [])}
    received: dict[str, list[dict[str, Any]]] = {org: [] for org in ORGS}
    for r in shared_msgs:
        parsed = parse_disclosure_post(r["text"])
        if parsed is None or (parsed[0]["d_id"], parsed[0]["org"]) not in approved:
            continue
        head, evidence = parsed
        summary = r["text"].split("\n", 2)[1] if "\n" in r["text"] else ""
        for org in ORGS:
            if org != head["org"]:
                received[org].append({"d_id": head["d_id"], "from": head["org"], "approver": head["approver"],
                                      "summary": summary, "evidence": sorted(evidence)})
    timeline = [Entry(r["t"] - start, r["who"], r["text"].partition("\n")[0][:160]) for r in shared_msgs]
    root = record.get("root_cause") or {}
    all_msgs = [r for r in rows if r["kind"] == "message"]
    view = View(RunInfo.load(run_dir), {key: [{"body": r["text"]} for r in all_msgs if r["room"] == name]
                                        for key, name in ROOM_NAMES.items()})
    return {
        "incident": record.get("incident"),
        "status": record.get("status"),
        "timeline": timeline,
        "received": received,
        "root_cause": {"text": root.get("text"), "field": root.get("field"),
                       "confirmed_by": sorted(record.get("confirmations", {}))},
        "fixes": [{"item": a.get("item"), "org": a.get("org"), "state": a.get("state"),
                   "approved_by": (record.get("fixes", {}).get(a.get("org")) or {}).get("approved_by")}
                  for a in record.get("action_items", [])],
        "e2e": record.get("e2e") or {},
        "outcome": {
            "time_to_root_cause_s": _seconds(opened, root.get("confirmed_at")),
            "time_to_close_s": _seconds(opened, record.get("closed_at")),
            "code_lines_crossed": code_lines_crossed(view, fixture, tuple(ROOM_NAMES)),
        },
    }


__all__ = ["Entry", "postmortem"]
