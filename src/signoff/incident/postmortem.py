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
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signoff.incident.disclosure import parse_disclosure_post
from signoff.incident.grade import View, code_lines_crossed
from signoff.incident.recording import load
from signoff.incident.stack import MEDIATOR, SHARED, Cast, RunInfo, run_parties
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


def postmortem(run_dir: Path) -> dict[str, Any]:
    path = Path(run_dir) / "recording.jsonl"
    if not path.is_file():
        raise ConflictError("this incident is still going: a postmortem needs its recording",
                            "open the postmortem once the run has finished")
    _head, rows = load(path)
    parties = run_parties(run_dir)
    orgs = parties.keys
    room_names = Cast(parties).room_names
    both = [r for r in rows if set(r.get("visible_to", [])) == set(orgs)]
    shared_msgs = [r for r in both if r["kind"] == "message" and r["room"] == room_names[SHARED]]
    records = [r for r in both if r["kind"] == "document" and r["name"].endswith(" record") and r["who"] == MEDIATOR]
    record: dict[str, Any] = json.loads(records[-1]["text"]) if records else {}
    opened = record.get("opened_at")
    start = opened if isinstance(opened, int) else min((r["t"] for r in shared_msgs), default=0)
    approved = {(d.get("d_id"), d.get("org")) for d in record.get("disclosures", [])}
    received: dict[str, list[dict[str, Any]]] = {org: [] for org in orgs}
    for r in shared_msgs:
        parsed = parse_disclosure_post(r["text"])
        if parsed is None or (parsed[0]["d_id"], parsed[0]["org"]) not in approved:
            continue
        head, evidence = parsed
        summary = r["text"].split("\n", 2)[1] if "\n" in r["text"] else ""
        for org in orgs:
            if org != head["org"]:
                received[org].append({"d_id": head["d_id"], "from": head["org"], "approver": head["approver"],
                                      "summary": summary, "evidence": sorted(evidence)})
    timeline = [Entry(r["t"] - start, r["who"], r["text"].partition("\n")[0][:160]) for r in shared_msgs]
    root = record.get("root_cause") or {}
    all_msgs = [r for r in rows if r["kind"] == "message"]
    view = View(RunInfo.load(run_dir), {key: [{"body": r["text"]} for r in all_msgs if r["room"] == name]
                                        for key, name in room_names.items()})
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
            "code_lines_crossed": code_lines_crossed(view, parties, tuple(room_names)),
        },
    }


def as_json(report: dict[str, Any]) -> dict[str, Any]:
    """The report as plain JSON (its timeline entries as objects)."""
    return {**report, "timeline": [{"offset_ms": e.offset_ms, "stamp": e.stamp, "who": e.who, "what": e.what}
                                   for e in report["timeline"]]}


def _cell(text: Any) -> str:
    """One line of Markdown text: what a post said stays text (no markup, no line breaks)."""
    return re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", " ".join(str(text).split()))


def as_markdown(report: dict[str, Any], names: dict[str, str]) -> str:
    """The postmortem as Markdown, section by section as the page shows it."""
    out = [f"# Postmortem of {_cell(report.get('incident') or 'the incident')}", "",
           f"Built only from what the organisations approved into the shared room and the commander's record. "
           f"Status: {_cell(report.get('status'))}.", "", "## Measured outcome", ""]
    outcome = report["outcome"]
    out += [f"- Time to root cause: {outcome['time_to_root_cause_s']} s",
            f"- Time to close: {outcome['time_to_close_s']} s",
            f"- Lines of code that crossed: {outcome['code_lines_crossed']}"]
    e2e = report.get("e2e") or {}
    if e2e:
        out.append(f"- End to end after the fixes: {e2e.get('rejected')} of {e2e.get('events')} rejected")
    root = report["root_cause"]
    out += ["", "## Root cause", ""]
    out += ([_cell(root["text"]), "", f"Field `{_cell(root.get('field'))}`; confirmed by "
             f"{' and '.join(_cell(p) for p in root['confirmed_by'])}."] if root.get("text")
            else ["No root cause was confirmed."])
    out += ["", "## Fixes", ""]
    out += [f"- {_cell(names.get(f['org'], f['org']))}: {_cell(f['item'])} ({_cell(f['state'])}"
            f"{', by ' + _cell(f['approved_by']) if f.get('approved_by') else ''})" for f in report["fixes"]] \
        or ["No fixes recorded."]
    out += ["", "## What each side saw of the other"]
    for org, items in report["received"].items():
        out += ["", f"### {_cell(names.get(org, org))} received", ""]
        out += [f"- {_cell(d['d_id'])} from {_cell(names.get(d['from'], d['from']))}, approved by "
                f"{_cell(d['approver'])}: {_cell(d['summary'])} (evidence fields: "
                f"{', '.join(_cell(e) for e in d['evidence'])})" for d in items] or ["Nothing."]
    out += ["", "## Timeline (the shared room)", ""]
    out += [f"{n}. `{e.stamp}` {_cell(e.who)}: {_cell(e.what)}" for n, e in enumerate(report["timeline"], 1)]
    return "\n".join(out) + "\n"


__all__ = ["Entry", "as_json", "as_markdown", "postmortem"]
