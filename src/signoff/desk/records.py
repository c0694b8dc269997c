"""The desk's records besides bugs, as typed events: cases without a state of their own, read where
they are shown (a filed report's bug, a bug's advisory notes, the smoke's checks, the recorder's
deployments, the intake's rate-limit counts, the airlock's quarantine, the cluster index).

Their type strings and case ids are the ones the desk has always written; events are stored as their
writer gave them (`DeskEvent`). The bug itself is `signoff.desk.model`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from signoff.desk.model import DeskEvent, Payload
from signoff.ledger.aggregate import Fold, Stamp, case_type

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


# -- the desk's own bookkeeping: credentials, the forge, webhooks, notices and cards, the crew ----------

CREDENTIALS = case_type("desk.credentials", "desk/credentials")  # one case: every credential issued or revoked
FORGE = case_type("desk.forge", "desk/forge/")  # the local forge's change requests: desk/forge/<repo>/<number>
# A webhook delivery, once (desk/webhook/<delivery>), and its content, once (desk/webhook-content/<event>/<sha>).
WEBHOOK = case_type("desk.webhook", "desk/webhook")
INBOX = case_type("desk.inbox", "desk/inbox/")  # a reporter's tracking page: the notices delivered to it
CARD = case_type("desk.card", "desk/card/")  # an answered card, applied once (and its needs-reason report)
QUESTION = case_type("desk.question", "desk/question/")  # a card asked as a question in the intake room
CREW = case_type("desk.crew", "desk/crew")  # the crew (desk/crew) and its logs: reporters, refusals, ignored


class CredentialIssued(DeskEvent, type="credential.issued", case=CREDENTIALS):
    """A credential of `role` for `name`: only its token's digest is kept."""

    role: str
    name: str
    token_sha256: str
    human: bool | None = None
    shared: bool | None = None


class CredentialRevoked(DeskEvent, type="credential.revoked", case=CREDENTIALS):
    """A credential revoked by its token (by name: the role and name it was revoked under too)."""

    token_sha256: str
    role: str | None = None
    name: str | None = None


class ChangeRequestOpened(DeskEvent, type="cr.opened", case=FORGE):
    cr: Payload  # the change request as the forge shows it (number, branch, base, head, title, ...)


class ChangeRequestPushed(DeskEvent, type="cr.pushed", case=FORGE):
    head: str
    by: str


class ChangeRequestReviewed(DeskEvent, type="cr.reviewed", case=FORGE):
    review: Payload  # the review as GitHub sends it


class ChangeRequestMerged(DeskEvent, type="cr.merged", case=FORGE):
    merge_commit: str
    merged_by: Payload
    head: str | None = None


class WebhookProcessed(DeskEvent, type="webhook.processed", case=WEBHOOK):
    """A signed webhook handled: on its delivery's case the result, on its content's case the delivery."""

    event: str
    delivery: str | None = None
    result: Payload | None = None


class NoticeDelivered(DeskEvent, type="notice.delivered", case=INBOX):
    """A notice on a reporter's tracking page (and the card it asked, when the reporter is linked)."""

    job_id: str
    kind: str
    bug_id: str
    round: int
    text: str
    card: str | None = None


class CardOutcome(DeskEvent):
    """What an answered card did: applied, stale, expired, a reason held or still needed."""

    report_id: str
    card: str
    kind: str
    round: int
    outcome: str
    answer: str | None = None
    note: str | None = None
    families: list[str] | None = None


class CardApplied(CardOutcome, type="card.applied", case=CARD):
    pass


class CardNeedsReason(CardOutcome, type="card.needs_reason", case=CARD):
    pass


class QuestionAsked(DeskEvent, type="question.asked", case=QUESTION):
    """The concierge's question for a card: the message it sent, and whose answer counts."""

    card: str
    room_id: str
    message_id: str
    sender: str
    body: str
    responder: str
    responder_name: str
    expires_at: float


class QuestionAnswered(DeskEvent, type="question.answered", case=QUESTION):
    card: str
    message_id: str
    sender: str
    answer: str
    reason: str | None


class CrewSetUp(DeskEvent, type="crew.set_up", case=CREW):
    """The crew as set up (`Crew.as_json`): its agents, rooms, policies and the senders bound to them."""

    owner_user_id: str
    owner_name: str
    group_id: str
    intake_room: str
    engineering_room: str
    agents: dict[str, str]
    policies: Payload
    senders: dict[str, str]
    server: str | None = None
    owner_agent: str | None = None
    prefix: str | None = None


class ReporterLinked(DeskEvent, type="crew.reporter_linked", case=CREW):
    report_id: str
    user: str
    sender: str


class CommandRefused(DeskEvent, type="crew.command_refused", case=CREW):
    message_id: str
    room_id: str
    sender: str
    sender_role: str | None
    text: str
    why: str


class CommandIgnored(DeskEvent, type="crew.command_ignored", case=CREW):
    by: str
    message_id: str | None
    sender: str | None
    sender_role: str | None
    command: str
    why: str


class AnswerIgnored(DeskEvent, type="crew.answer_ignored", case=CREW):
    by: str
    message_id: str
    sender: str
    card: str | None
    answer: str
    why: str


# -- folds of the records whose state is read back ------------------------------------------------------

@dataclass
class CredentialBook:
    """Every credential issued, in order, and the digests revoked since."""

    issued: list[CredentialIssued] = field(default_factory=list)
    revoked: set[str] = field(default_factory=set)


credential_fold = Fold[CredentialBook](CREDENTIALS)


@credential_fold.on(CredentialIssued)
def _issued(book: CredentialBook, ev: CredentialIssued, at: Stamp) -> None:
    book.issued.append(ev)


@credential_fold.on(CredentialRevoked)
def _revoked(book: CredentialBook, ev: CredentialRevoked, at: Stamp) -> None:
    book.revoked.add(ev.token_sha256)


@dataclass
class ChangeRequest:
    """A local change request as the forge shows it (empty: none with that number)."""

    cr: Payload = field(default_factory=dict)


forge_fold = Fold[ChangeRequest](FORGE)


@forge_fold.on(ChangeRequestOpened)
def _opened(change: ChangeRequest, ev: ChangeRequestOpened, at: Stamp) -> None:
    change.cr = dict(ev.cr)


@forge_fold.on(ChangeRequestPushed)
def _pushed(change: ChangeRequest, ev: ChangeRequestPushed, at: Stamp) -> None:
    change.cr["head"] = ev.head


@forge_fold.on(ChangeRequestReviewed)
def _reviewed(change: ChangeRequest, ev: ChangeRequestReviewed, at: Stamp) -> None:
    change.cr.setdefault("reviews", []).append(dict(ev.review))


@forge_fold.on(ChangeRequestMerged)
def _merged(change: ChangeRequest, ev: ChangeRequestMerged, at: Stamp) -> None:
    change.cr.update({"merged": True, "merge_commit": ev.merge_commit, "merged_by": dict(ev.merged_by)})


@dataclass
class Question:
    """A card asked in the intake room: the question, and the first answer that counted."""

    asked: QuestionAsked | None = None
    answer: QuestionAnswered | None = None


question_fold = Fold[Question](QUESTION)


@question_fold.on(QuestionAsked)
def _asked(question: Question, ev: QuestionAsked, at: Stamp) -> None:
    question.asked = question.asked or ev


@question_fold.on(QuestionAnswered)
def _answered(question: Question, ev: QuestionAnswered, at: Stamp) -> None:
    question.answer = question.answer or ev


@dataclass
class Inbox:
    """A reporter's tracking page: the notices delivered to it, in order."""

    notices: list[NoticeDelivered] = field(default_factory=list)


inbox_fold = Fold[Inbox](INBOX)


@inbox_fold.on(NoticeDelivered)
def _delivered(inbox: Inbox, ev: NoticeDelivered, at: Stamp) -> None:
    inbox.notices.append(ev)


@dataclass
class CrewRecords:
    """The crew's cases (desk/crew and its logs): the latest setup, reporter links by report, the
    refused commands and the ignored commands and answers, in order."""

    crew: CrewSetUp | None = None
    links: dict[str, ReporterLinked] = field(default_factory=dict)
    refusals: list[CommandRefused] = field(default_factory=list)
    ignored: list[CommandIgnored | AnswerIgnored] = field(default_factory=list)


crew_fold = Fold[CrewRecords](CREW)


@crew_fold.on(CrewSetUp)
def _set_up(records: CrewRecords, ev: CrewSetUp, at: Stamp) -> None:
    records.crew = ev


@crew_fold.on(ReporterLinked)
def _linked(records: CrewRecords, ev: ReporterLinked, at: Stamp) -> None:
    records.links[ev.report_id] = ev


@crew_fold.on(CommandRefused)
def _refused(records: CrewRecords, ev: CommandRefused, at: Stamp) -> None:
    records.refusals.append(ev)


@crew_fold.on(CommandIgnored)
def _command_ignored(records: CrewRecords, ev: CommandIgnored, at: Stamp) -> None:
    records.ignored.append(ev)


@crew_fold.on(AnswerIgnored)
def _answer_ignored(records: CrewRecords, ev: AnswerIgnored, at: Stamp) -> None:
    records.ignored.append(ev)
