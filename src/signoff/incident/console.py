"""What the incident console shows of one run: the lanes (the first organisation's private room,
the shared room, the other organisations' rooms), the incident record, the notary's byte table,
each approvals ledger with its chain status, and the guards' decisions as counts and rules (a
guard decision holds no text).

A finished run is read from its recording alone, so the same recording always gives the same
console; a run still going is read from its room server and chains as they are now (the same rows
a recording would hold). Viewed as one organisation, the rows are cut down by
`recording.visible` before anything else sees them: the other company's lane and ledgers are not
frosted copies, they are absent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signoff.incident.actors import REFUSAL_TEXT
from signoff.incident.grade import observe
from signoff.incident.parties import Parties
from signoff.incident.recording import load, timeline, visible
from signoff.incident.stack import NOTARY, SHARED, Cast, RunInfo, run_parties, workspace
from signoff.kernel.errors import NotFoundError, UsageError
from signoff.trust import KeyStore

RUN_NAME = re.compile(r"^run-[A-Za-z0-9_-]{1,64}$")


def runs_base(home: Path) -> Path:
    """Where `signoff incident demo` keeps its runs, under a signoff home."""
    return Path(home) / "incident-runs"


def recording_of(run_dir: Path) -> Path:
    return Path(run_dir) / "recording.jsonl"


def list_runs(base: Path) -> list[dict[str, Any]]:
    """The runs under `base`, newest first: name and whether it is recorded (finished)."""
    if not base.is_dir():
        return []
    found = [p for p in base.iterdir() if RUN_NAME.match(p.name) and (p / "run.json").is_file()]
    found.sort(key=lambda p: ((p / "run.json").stat().st_mtime, p.name), reverse=True)
    return [{"name": p.name, "recorded": recording_of(p).is_file()} for p in found]


def find_run(base: Path, name: str) -> Path:
    """The run folder called `name` under `base` (a bare run name: never a path)."""
    path = base / name
    if not RUN_NAME.match(name) or not (path / "run.json").is_file():
        raise NotFoundError(f"no incident run {name!r}", "open one from the list of runs")
    return path


def lanes_of(parties: Parties) -> tuple[str, ...]:
    """Left to right, as the console shows them: the first organisation, the shared room, the others."""
    first, *rest = parties.keys
    return (first, SHARED, *rest)


def check_org(as_org: str | None, parties: Parties) -> str | None:
    if as_org in (None, ""):
        return None
    if as_org not in parties.keys:  # not named back: a page's text never comes from its query string
        raise UsageError("the view asked for is not one of the run's organisations",
                         f"view as one of: {', '.join(parties.keys)}, or as all of them")
    return as_org


@dataclass
class Step:
    """One row of the timeline, as the scrubber and the lanes show it."""

    n: int
    offset_ms: int
    kind: str
    lane: str | None
    who: str
    label: str
    row: dict[str, Any]
    agents: frozenset[str] = frozenset()  # the run's organisations' agents (empty: named `*-agent`)

    @property
    def control(self) -> str:
        """The control that produced or checked this message, as the lane tags it."""
        return control_of(self.who, self.lane, str(self.row.get("text", "")), self.agents or None)

    @property
    def stamp(self) -> str:
        secs = self.offset_ms / 1000
        return f"+{int(secs // 60):02d}:{secs % 60:06.3f}"


@dataclass
class OrgLedger:
    org: str
    approvals: list[Step] = field(default_factory=list)
    chain_ok: bool = False
    chain_detail: str = ""
    decisions: list[Step] = field(default_factory=list)

    def tally(self, upto: int) -> dict[str, Any]:
        """Guard decisions up to step `upto`: passed, blocked, and how often each rule fired."""
        shown = [d.row["data"] for d in self.decisions if d.n < upto]
        rules: dict[str, int] = {}
        for data in shown:
            for rule in data.get("rules", []):
                rules[rule] = rules.get(rule, 0) + 1
        return {"passed": sum(1 for d in shown if d.get("allowed")),
                "blocked": sum(1 for d in shown if not d.get("allowed")), "rules": dict(sorted(rules.items()))}


@dataclass
class Console:
    run: str
    as_org: str | None
    recorded: bool
    steps: list[Step]
    ledgers: dict[str, OrgLedger]
    at: int
    lanes: tuple[str, ...] = ()                          # every lane, left to right
    names: dict[str, str] = field(default_factory=dict)  # organisation key -> its name
    parties: Parties | None = None                       # the run's organisations (approvers, agents)
    links: dict[str, str] = field(default_factory=dict)  # org -> its private room's link to the shared room

    def approver(self, org: str) -> str | None:
        return self.parties.get(org).approver if self.parties is not None and org in self.parties.keys else None

    def agent(self, org: str) -> str | None:
        return self.parties.get(org).agent if self.parties is not None and org in self.parties.keys else None

    @property
    def shown_lanes(self) -> tuple[str, ...]:
        return self.lanes if self.as_org is None else (self.as_org, SHARED)

    def lane(self, key: str) -> list[Step]:
        return [s for s in self.steps if s.kind == "message" and s.lane == key]

    def latest_document(self, suffix: str, who: str) -> Step | None:
        found = [s for s in self.steps if s.kind == "document" and s.row["name"].endswith(suffix) and s.who == who]
        return found[-1] if found else None

    @property
    def record(self) -> tuple[Step, dict[str, Any]] | None:
        step = self.latest_document(" record", "mediator")
        if step is None:
            return None
        try:
            data = json.loads(step.row["text"])
        except ValueError:
            return None
        return (step, data) if isinstance(data, dict) else None

    @property
    def notary_tables(self) -> list[Step]:
        return [s for s in self.lane(SHARED) if s.who == NOTARY and "notary comparison" in s.row["text"]]

    @property
    def last_ms(self) -> int:
        return self.steps[-1].offset_ms if self.steps else 0


def control_of(who: str, lane: str | None, text: str, agents: frozenset[str] | None = None) -> str:
    """Which control produced or checked a message: what the lane's tag names. Every message was
    authenticated by the room server, which also enforced who may address whom; the tag says what
    else stood behind it. `agents`: the organisations' agents (by default, names ending `-agent`)."""
    if who == NOTARY:
        return "notary (salted fingerprints)"
    if who == "mediator":
        return "commander (routes requests)"
    if who == "approver":
        return "approver (signed record)" if " approved by " in text else "approver (review, digest)"
    if who in agents if agents is not None else who.endswith("-agent"):
        if REFUSAL_TEXT in text:
            return "room server (addressing policy)"
        if text.startswith("[disclosure "):
            return "guard passed · approver signed"
        if text.startswith("guard blocked"):
            return "guard blocked"
        if lane == SHARED:
            return "guard passed"
        return "draft, awaits approval" if "Approve with: approve " in text else "agent"
    return "person (authenticated)"


def _label(row: dict[str, Any]) -> str:
    kind = row["kind"]
    if kind == "message":
        return str(row["text"]).partition("\n")[0][:120]
    if kind == "approval_record":
        d = row["data"]
        return f"signed {d.get('d_id')} for {d.get('approver')}"
    if kind == "guard_decision":
        d = row["data"]
        verdict = "passed" if d.get("allowed") else "blocked (" + ", ".join(d.get("rules", [])) + ")"
        return f"{verdict} {d.get('d_id', 'a post')} to {d.get('room')}"
    return f"{kind.replace('_', ' ')} {row.get('name')}"


def rows_of(run_dir: Path, keys: KeyStore) -> tuple[bool, list[dict[str, Any]]]:
    """(recorded, rows): the recording's rows, or the rows of a run still going, read now."""
    path = recording_of(run_dir)
    if path.is_file():
        return True, load(path)[1]
    return False, timeline(run_dir, keys, observe(run_dir, over_http=False))


def change_token(run_dir: Path) -> tuple[bool, int, str] | None:
    """What changes whenever the rows of `rows_of` can: whether the run is recorded, and the head of
    its room ledger (every message, document and decision of its rooms is an event of that chain,
    read through projections of it). A live page reads the rows again only when this changed, so an
    open page costs one indexed query a second, not a read of every room. None where the rooms are
    on an external server (only its API is ours): there the rows are read each time."""
    if recording_of(run_dir).is_file():
        return (True, 0, "")
    info = RunInfo.load(Path(run_dir))
    if info.url is not None:
        return None
    from signoff.ledger.store import SqlLedger

    ledger = SqlLedger.from_url(info.db_url)
    try:
        seq, digest = ledger.head()
    finally:
        ledger.close()
    return (False, seq, digest)


def build(run_dir: Path, keys: KeyStore, as_org: str | None = None, at: int | None = None) -> Console:
    """The console of one run, as `as_org` sees it (both companies for None), up to step `at`."""
    parties = run_parties(run_dir)
    as_org = check_org(as_org, parties)
    recorded, all_rows = rows_of(run_dir, keys)
    shown = visible(all_rows, as_org, parties.keys)
    lane_of_room = {name: key for key, name in Cast(parties).room_names.items()}
    agents = frozenset(o.agent for o in parties)
    steps = [Step(n, r["offset_ms"], r["kind"], lane_of_room.get(r["room"]), str(r.get("who", "")), _label(r), r,
                  agents)
             for n, r in enumerate(shown)]
    ledgers: dict[str, OrgLedger] = {}
    orgs = parties.keys if as_org is None else (as_org,)
    trusted = keys.trusted()
    with workspace(run_dir, keys) as ws:
        for org in orgs:
            report = ws.approvals(org).verify(trusted, f"{org} approvals")
            ledger = OrgLedger(org, chain_ok=report.ok,
                            chain_detail="; ".join(report.problems) if report.problems else
                            f"{len(report.records)} signed records, chain intact")
            ledger.approvals = [s for s in steps if s.kind == "approval_record" and s.row["room"] == f"{org} ledger"]
            ledger.decisions = [s for s in steps if s.kind == "guard_decision" and s.row["room"] == f"{org} ledger"]
            ledgers[org] = ledger
    if at is not None and not 0 <= at <= len(steps):
        raise UsageError(f"step {at} is outside this timeline (0-{len(steps)})", "move the scrubber within the run")
    return Console(Path(run_dir).name, as_org, recorded, steps, ledgers, len(steps) if at is None else at,
                   lanes_of(parties), parties.names, parties, RunInfo.load(Path(run_dir)).links)


__all__ = ["Console", "OrgLedger", "Step", "build", "change_token", "check_org", "find_run", "lanes_of", "list_runs",
           "recording_of", "rows_of", "run_parties", "runs_base"]
