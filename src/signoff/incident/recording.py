"""Record a run to one file and replay its timeline.

`record_run(run_dir, keys)` writes `recording.jsonl`: every room message (read through the room
server as the observer), the final room documents, the fix approval cards, and both organisations'
signed ledger records (approvals) and guard decisions (rules and counts only, never text). Each line
says who could see it (`visible_to`). `replay(path, as_org=None)` turns the file into the timeline;
it depends on the file alone, so two replays are identical, and `as_org="payco"` keeps only what
PayCo could see (its private room, the shared room, its own ledgers).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from signoff.incident.grade import View, observe
from signoff.incident.stack import SHARED, Cast, run_parties, workspace
from signoff.kernel.canonical import canonical_text
from signoff.kernel.errors import UsageError
from signoff.trust import KeyStore

VERSION = "signoff.incident.recording/v1"


def _ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def timeline(run_dir: Path, keys: KeyStore, view: View | None = None) -> list[dict[str, Any]]:
    """Every row a recording holds, in order, read now from the run (the room server through the
    observer's view, and both organisations' chains): a recording of a finished run, or the state
    of one still going."""
    view = view or observe(run_dir)
    info = view.info
    parties = run_parties(run_dir)
    orgs = list(parties.keys)
    room_names = Cast(parties).room_names

    def _visible(room: str) -> list[str]:
        return orgs if room == SHARED else [room]

    rows: list[dict[str, Any]] = []
    for room, msgs in view.messages.items():
        for n, m in enumerate(msgs):
            rows.append({"t": int(m["timestamp"]), "n": n, "kind": "message", "room": room_names[room],
                         "visible_to": _visible(room), "who": info.name_of(m["sender"]), "id": m["id"],
                         "thread": m["thread"] if m["thread"] != m["id"] else None, "text": m["body"]})
    end = max((r["t"] for r in rows), default=0)
    for room, docs in view.documents.items():
        for name, doc in sorted(docs.items()):
            rows.append({"t": end, "kind": "document", "room": room_names[room], "visible_to": _visible(room),
                         "who": info.name_of(doc["created_by"]), "name": name, "version": doc["version"],
                         "text": doc["content"]})
    for org, card in sorted(view.cards.items()):
        if card:
            rows.append({"t": end, "kind": "approval_card", "room": room_names[SHARED], "visible_to": orgs,
                         "who": org, "name": card.get("request_id"), "text": canonical_text(card)})
    trusted = keys.trusted()
    with workspace(run_dir, keys) as ws:
        for org in orgs:
            chains = (("approval_record", ws.approvals(org)), ("guard_decision", ws.guard_log(org)))
            for kind, chain in chains:
                for rec in chain.verify(trusted).records:
                    body = rec["body"]
                    who = "approver" if kind == "approval_record" else f"{org} guard"
                    rows.append({"t": _ms(body["time"]), "kind": kind, "room": f"{org} ledger", "visible_to": [org],
                                 "who": who, "seq": rec["seq"], "data": body})
    order = {"message": 0, "approval_record": 1, "guard_decision": 1, "document": 2, "approval_card": 3}
    rows.sort(key=lambda r: (r["t"], order[r["kind"]], r["room"], r.get("seq", r.get("n", 0)), r.get("name", "")))
    return rows


def record_run(run_dir: Path, keys: KeyStore, path: Path | None = None, view: View | None = None) -> Path:
    rows = timeline(run_dir, keys, view)
    path = path or Path(run_dir) / "recording.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        head = {"version": VERSION, "run": Path(run_dir).name, "rooms": Cast(run_parties(run_dir)).room_names}
        fh.write(json.dumps(head, sort_keys=True) + "\n")
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
    return path


def load(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise UsageError(f"no recording at {path}", "pass the recording.jsonl of a run") from exc
    try:
        head = json.loads(lines[0]) if lines else {}
        rows = [json.loads(ln) for ln in lines[1:] if ln.strip()]
    except ValueError as exc:
        raise UsageError(f"{path} is not a recording (a line is not JSON)",
                         "pass an untouched recording.jsonl") from exc
    if not isinstance(head, dict) or head.get("version") != VERSION:
        raise UsageError(f"{path} is not a {VERSION} recording", "pass the recording.jsonl a run wrote")
    return head, rows


def replay(path: Path, as_org: str | None = None) -> list[dict[str, Any]]:
    """The recorded timeline in order, optionally only what one organisation could see."""
    _head, rows = load(path)
    return visible(rows, as_org)


def visible(rows: list[dict[str, Any]], as_org: str | None = None,
            orgs: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """The rows `as_org` could see (all of them for None), each with its offset from the first.
    `orgs`: the run's organisations (by default those the rows name, for a recording read alone)."""
    if orgs is None:
        orgs = tuple(sorted({o for r in rows for o in r.get("visible_to", [])}))
    if as_org is not None and as_org not in orgs:
        raise UsageError(f"unknown organisation {as_org!r}", f"use --as with one of: {', '.join(orgs)}")
    if as_org is not None:
        rows = [r for r in rows if as_org in r.get("visible_to", [])]
    start = min((r["t"] for r in rows), default=0)
    return [{**r, "offset_ms": r["t"] - start} for r in rows]


def render(rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for r in rows:
        secs = r["offset_ms"] / 1000
        stamp = f"+{int(secs // 60):02d}:{secs % 60:06.3f}"
        if r["kind"] == "message":
            first, _, rest = r["text"].partition("\n")
            more = f"  (+{len(rest.splitlines())} lines)" if rest else ""
            out.append(f"{stamp}  {r['room']:<20} {r['who']:>13}: {first[:140]}{more}")
        elif r["kind"] == "approval_record":
            d = r["data"]
            # A disclosure's record names its evidence; a fix approval's (by command) names the fix.
            what = f"evidence {d['evidence_sha256'][:12]}" if "evidence_sha256" in d else \
                f"fix {str(d.get('fix_sha256', ''))[:12]}"
            out.append(f"{stamp}  {r['room']:<20} {'approver':>13}: signed {d['d_id']} for {d['approver']} "
                       f"({what}, record {r['seq']})")
        elif r["kind"] == "guard_decision":
            d = r["data"]
            verdict = "pass" if d.get("allowed") else "BLOCK " + ",".join(d.get("rules", []))
            out.append(f"{stamp}  {r['room']:<20} {r['who']:>13}: {verdict} {d.get('d_id', 'post')} -> {d.get('room')} "
                       f"({d.get('lines')} lines)")
        else:
            out.append(f"{stamp}  {r['room']:<20} {r['who']:>13}: {r['kind']} {r.get('name')}")
    return out


__all__ = ["load", "record_run", "render", "replay", "timeline", "visible"]
