"""The desk's records besides bugs, as typed events: cases without a state of their own, read where
they are shown (a filed report's bug, a bug's advisory notes, the smoke's checks, the recorder's
deployments, the intake's rate-limit counts, the airlock's quarantine, the cluster index).

Their type strings and case ids are the ones the desk has always written; events are stored as their
writer gave them (`DeskEvent`). The bug itself is `signoff.desk.model`.
"""

from __future__ import annotations

from signoff.desk.model import DeskEvent, Payload
from signoff.ledger.aggregate import case_type

REPORT = case_type("desk.report", "desk/report/")  # a filed report: the bug it joined
NOTES = case_type("desk.notes", "desk/notes/")  # a bug's advisory notes (never read to decide)
SMOKE = case_type("desk.smoke", "desk/smoke/")  # the crew smoke's checks of a bug's live release
DEPLOY = case_type("desk.deploy", "desk/deploy/")  # the recorder's deployments of a repository
INTAKE = case_type("desk.intake", "desk/intake/")  # reports counted per client, for the rate limit
QUARANTINE = case_type("desk.quarantine", "desk/quarantine")  # one case: reports the airlock held
CLUSTER_INDEX = case_type("desk.clusters", "desk/clusters")  # one case: every accepted report's bug, in order


class ReportFiled(DeskEvent, type="report.filed", case=REPORT):
    bug_id: str


class Note(DeskEvent):
    """An agent's advisory note, through the airlock: its text, or (quarantined) only the families found."""

    kind: str
    quarantined: bool
    raw_sha256: str
    agent: Payload
    evidence_kind: str
    round: int | None
    note: str | None = None
    families: list[str] | None = None


class TriageNote(Note, type="note.triage", case=NOTES):
    pass


class ReviewNote(Note, type="note.review", case=NOTES):
    pass


class SmokeChecked(DeskEvent, type="smoke.checked", case=SMOKE):
    """What the smoke measured (`acceptance_check`): the fields it reported, and whose check it was."""

    round: int
    deployment_id: int | None
    evidence_kind: str
    by: str
    ok: bool | None = None
    why: str | None = None
    urls: list[str] | None = None
    service: str | None = None
    commit: str | None = None
    assets: Payload | None = None
    checked_at: float | None = None
    seconds: float | None = None


class DeploymentRecorded(DeskEvent, type="deployment.recorded", case=DEPLOY):
    deployment_id: int
    commit: str
    environment: str
    url: str
    health: Payload
    recorded_by: str
    evidence_kind: str
    evidence: str | None


class DeploymentRejected(DeskEvent, type="deployment.rejected", case=DEPLOY):
    commit: str
    environment: str
    url: str
    reason: str
    by: str


class IntakeCounted(DeskEvent, type="intake.counted", case=INTAKE):
    at: float


class ReportQuarantined(DeskEvent, type="report.quarantined", case=QUARANTINE):
    families: list[str]
    raw_sha256: str
    client_sha256: str


class ReportClustered(DeskEvent, type="report.clustered", case=CLUSTER_INDEX):
    report_id: str
    component: str
    title: str
    bug_id: str
    opened: bool


NOTE_KINDS: dict[str, type[Note]] = {"triage": TriageNote, "review": ReviewNote}
