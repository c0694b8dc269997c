"""Public intake: a report passes the airlock, is rate-limited per client, and joins a bug (the
cluster it belongs to, or a new bug) as a redacted dossier with its own capability."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from signoff import airlock
from signoff.desk.base import DeskBase, bug_case, report_case, sha
from signoff.desk.decisions import ENGINEERING, reproduce_job
from signoff.desk.model import BugOpened, ReportAttached
from signoff.desk.records import QUARANTINE, IntakeCounted, ReportClustered, ReportFiled, ReportQuarantined
from signoff.kernel.errors import RefusedError, UsageError
from signoff.kernel.ids import new_token, readable_id
from signoff.ledger import Event, NewEvent, NewJob
from signoff.trust.credentials import digest as credential_digest

CLUSTERS = "desk/clusters"  # the cluster index: one event per accepted report, in order
FIELDS = ("title", "component", "steps", "expected", "actual", "environment")


class Quarantined(RefusedError):
    """The airlock held a submission; nothing of its text was stored. Over HTTP a 422 that names the
    families it held (never the text)."""

    http_status = 422

    def __init__(self, families: Sequence[str], message: str, fields: Sequence[str] = ()) -> None:
        super().__init__(message, "describe the bug in your own words, without instructions to anyone")
        self.families = list(families)
        self.fields = list(fields)  # the fields that held it (`airlock.JOINED`: only read together)

    def facts(self) -> dict[str, Any]:
        return {"quarantined": True, "families": self.families}


@dataclass
class Intake:
    report_id: str
    bug_id: str
    capability: str  # shown once; only its hash is stored
    tracking_path: str  # the capability travels in the fragment, never to a server log

    def as_json(self) -> dict[str, Any]:
        return {"report_id": self.report_id, "bug_id": self.bug_id, "capability": self.capability,
                "tracking_url": f"{self.tracking_path}#cap={self.capability}"}


class IntakeSteps(DeskBase):
    def _rate_limit(self, client: str) -> None:
        case = f"desk/intake/{sha(client)[:32]}"
        now = self.clock.now()

        def count(history: list[Event]) -> tuple[list[NewEvent], list[NewJob]]:
            recent = [e for e in history if e.payload.get("at", 0) > now - 3600]
            if len(recent) >= self.config.reports_per_hour:
                raise RefusedError(f"too many reports from this client ({len(recent)} in the last hour)",
                                   "wait an hour, or add to your existing report's tracking page")
            return [IntakeCounted(at=now).new_event()], []

        self.ledger.update(case, count)

    def submit_report(self, fields: dict[str, str], client: str) -> Intake:
        """Public intake. Quarantined text raises Quarantined (nothing of it is stored); clean text
        becomes a redacted dossier attached to a bug (a new one, or the cluster it joins)."""
        if not isinstance(fields, dict) or not fields:
            raise UsageError("a report needs fields", f"send some of: {', '.join(FIELDS)}")
        unknown = sorted(set(fields) - set(FIELDS))
        if unknown:
            raise UsageError(f"unknown report field(s): {', '.join(unknown)}", f"use only: {', '.join(FIELDS)}")
        if not all(isinstance(v, str) for v in fields.values()):
            raise UsageError("report fields must be text", "send strings")
        if not fields.get("title", "").strip():
            raise UsageError("a report needs a title", "say in one line what goes wrong")
        self._rate_limit(client)
        verdict = airlock.scan_fields({k: v for k, v in fields.items() if v.strip()})
        if verdict.quarantined:
            self.ledger.append(QUARANTINE.prefix, None, [ReportQuarantined(
                families=list(verdict.families), raw_sha256=verdict.raw_sha256,
                client_sha256=sha(client)).new_event()])
            raise Quarantined(verdict.families, verdict.message, [k for k, found in verdict.by_field.items() if found])
        assert verdict.dossier is not None
        dossier = verdict.dossier
        clean = dict(dossier.fields)
        title, component = clean.get("title", "untitled"), clean.get("component", "general") or "general"
        number = self.ledger.next_number("desk.report")
        report_id = readable_id("RPT", number)
        token = new_token()
        bug_id, opener = self._cluster(report_id, component, title)
        attached = ReportAttached(report_id=report_id, token_sha256=credential_digest(token), dossier=clean,
                                  rendered=dossier.render(), redactions=dict(dossier.redactions),
                                  raw_sha256=verdict.raw_sha256, component=component, title=title)

        def attach(history: list[Event]) -> tuple[list[NewEvent], list[NewJob]]:
            # Whoever reaches an unwritten bug first opens it, from the opener's decision, so the
            # opening is the same whether the opener or a joiner (or a retry) writes it.
            events: list[NewEvent] = []
            jobs: list[NewJob] = []
            if not history:
                events.append(BugOpened(bug_id=bug_id, component=opener["component"],
                                        title=opener["title"]).new_event())
                jobs = [NewJob(f"{bug_id}:triage", ENGINEERING, {"bug_id": bug_id, "step": "triage", "round": 1}),
                        reproduce_job(bug_id, 1)]
            if any(e.type == ReportAttached.TYPE and e.payload["report_id"] == report_id for e in history):
                return [], []
            events.append(attached.new_event())
            return events, jobs

        self.ledger.update(bug_case(bug_id), attach)
        self.ledger.append(report_case(report_id), 0, [ReportFiled(bug_id=bug_id).new_event()])
        return Intake(report_id, bug_id, token, f"/track/{report_id}")  # the tracking page (signoff.web)

    def _cluster(self, report_id: str, component: str, title: str) -> tuple[str, dict[str, Any]]:
        """Find the bug this report belongs to, or a new bug id, as one serialised decision.

        The cluster index (case `desk/clusters`) records every accepted report's bug in order; the
        decision is appended at the version it was read from, so of two intakes racing to open the
        same bug one wins and the other, on its conflict, re-reads and joins the winner's bug.
        Returns the bug id and the decision that opened that bug (its component and title)."""
        decided: dict[str, Any] = {}

        def decide(history: list[Event]) -> tuple[list[NewEvent], list[NewJob]]:
            clusterer = airlock.Clusterer()
            owner: dict[str, str] = {}
            openers: dict[str, dict[str, Any]] = {}
            last = 0
            prefix = f"{self.config.prefix}-"
            for e in history:
                p = e.payload
                c = clusterer.add(airlock.Report(p["report_id"], p["component"], p["title"], p["report_id"], ""))
                owner.setdefault(c.cluster_id, p["bug_id"])
                if p["opened"]:
                    openers[p["bug_id"]] = p
                    if p["bug_id"].startswith(prefix):
                        last = max(last, int(p["bug_id"][len(prefix):]))
            c = clusterer.add(airlock.Report(report_id, component, title, report_id, ""))
            entry: dict[str, Any] = {"report_id": report_id, "component": component, "title": title}
            if c.cluster_id in owner:
                bug_id = owner[c.cluster_id]
                entry |= {"bug_id": bug_id, "opened": False}
                decided.update(bug_id=bug_id, opener=openers.get(bug_id, entry))
            else:
                bug_id = readable_id(self.config.prefix, last + 1)
                entry |= {"bug_id": bug_id, "opened": True}
                decided.update(bug_id=bug_id, opener=entry)
            return [ReportClustered(**entry).new_event()], []

        self.ledger.update(CLUSTERS, decide, attempts=200)
        return decided["bug_id"], decided["opener"]
