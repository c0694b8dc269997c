"""The desk's HTTP API: a FastAPI router mounted into the rooms app (`signoff serve` picks it up).

Faces only authenticate and call the workflow. Credentials: none (public intake, signed webhooks),
`X-Desk-Capability` (a reporter's capability for one report), `Authorization: Bearer` (concierge,
engineering, owner, recorder). Unknown or missing credentials answer 401, a known credential
without the authority 403, the concierge asking for engineering work 401.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from signoff.desk import credentials
from signoff.desk.credentials import DeskCaller, require
from signoff.desk.crew.status import crew_view
from signoff.desk.engineering import EngineeringService
from signoff.desk.notify import Concierge
from signoff.desk.service import AcceptDispute, ApproveChange, MergeChange, execute
from signoff.desk.workflow import Desk, open_desk
from signoff.kernel.settings import Settings
from signoff.kernel.wire import bearer_token
from signoff.rooms.client import RoomsConfig

# Module level: FastAPI resolves the (string) annotations in this module's namespace.
Auth = Annotated[str | None, Header()]
Cap = Annotated[str | None, Header(alias="X-Desk-Capability")]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReportBody(Strict):
    title: str = Field(max_length=500)
    component: str = Field(default="", max_length=200)
    steps: str = Field(default="", max_length=100_000)
    expected: str = Field(default="", max_length=20_000)
    actual: str = Field(default="", max_length=20_000)
    environment: str = Field(default="", max_length=20_000)


class AnswerBody(Strict):
    answer: str
    reason: str | None = Field(default=None, max_length=20_000)
    bug_id: str | None = None
    round: int | None = None


class ReproductionBody(Strict):
    round: int
    test_path: str
    test_source: str


class FixBody(Strict):
    round: int
    attempt: int
    files: dict[str, str]
    summary: str = ""


class NoteBody(Strict):
    kind: str
    note: dict[str, Any]


class LeaseBody(Strict):
    lease_id: str


class ApproveBody(Strict):
    head: str
    note: str = ""


class MergeBody(Strict):
    head: str  # the head the person reviewed: a change whose head moved since is not merged


class DisputeBody(Strict):
    shown: str = Field(max_length=100)  # the digest of the dispute the person was shown


class DeploymentBody(Strict):
    repo: str
    commit: str
    environment: str
    url: str
    also: list[str] = Field(default_factory=list, max_length=10)  # more endpoints that must answer


def routers(settings: Settings) -> list[APIRouter]:
    router = APIRouter(prefix="/desk", tags=["desk"])

    def desk_of(request: Request) -> Desk:
        desk: Desk | None = getattr(request.app.state, "desk", None)
        if desk is None:  # the app's one desk, shared with the pages (signoff.web.desk_access)
            desk = open_desk(settings, request.app.state.rooms.ledger)
            request.app.state.desk = desk
        return desk

    def actor(desk: Desk, authorization: str | None) -> DeskCaller:
        if not authorization:
            return credentials.PUBLIC
        return desk.credentials.authenticate(bearer_token(authorization))

    # -- public ------------------------------------------------------------------------------------

    @router.post("/reports", status_code=201)
    def submit(body: ReportBody, request: Request) -> Any:
        client = request.client.host if request.client else "unknown"
        fields = {k: v for k, v in body.model_dump().items() if v}
        return desk_of(request).submit_report(fields, client).as_json()

    @router.post("/webhooks/github")
    async def webhook(request: Request) -> Any:
        body = await request.body()  # the raw bytes: the signature covers exactly these
        return desk_of(request).receive_webhook(dict(request.headers), body)

    # -- reporter ----------------------------------------------------------------------------------

    @router.get("/track/{report_id}")
    def track(report_id: str, request: Request, x_desk_capability: Cap = None) -> Any:
        desk = desk_of(request)
        return desk.track(desk.reporter(report_id, x_desk_capability))

    @router.post("/reports/{report_id}/confirm")
    def confirm(report_id: str, body: AnswerBody, request: Request, x_desk_capability: Cap = None) -> Any:
        desk = desk_of(request)
        bug = desk.confirm(desk.reporter(report_id, x_desk_capability), body.answer, body.reason, body.bug_id,
                           body.round)
        return {"bug_id": bug.bug_id, "state": bug.state, "round": bug.round}

    @router.post("/reports/{report_id}/verify")
    def verify(report_id: str, body: AnswerBody, request: Request, x_desk_capability: Cap = None) -> Any:
        desk = desk_of(request)
        bug = desk.verify_release(desk.reporter(report_id, x_desk_capability), body.answer, body.reason, body.bug_id)
        return {"bug_id": bug.bug_id, "state": bug.state, "round": bug.round}

    # -- engineering (and owners reading) ------------------------------------------------------------

    @router.get("/bugs")
    def bugs(request: Request, authorization: Auth = None) -> Any:
        desk = desk_of(request)
        require(actor(desk, authorization), "engineering", "owner", what="read engineering work")
        return {"bugs": [b.summary() for b in desk.bugs()]}

    @router.get("/bugs/{bug_id}")
    def bug(bug_id: str, request: Request, authorization: Auth = None) -> Any:
        desk = desk_of(request)
        who = actor(desk, authorization)
        return desk.dossier(who, bug_id) | {"summary": desk.bug(bug_id).summary(), "notes": desk.notes(bug_id)}

    @router.post("/work/claim")
    def claim(request: Request, authorization: Auth = None) -> Any:
        desk = desk_of(request)
        job = EngineeringService(desk, actor(desk, authorization)).claim()
        return Response(status_code=204) if job is None else job

    @router.post("/work/{job_id}/done")
    def work_done(job_id: str, body: LeaseBody, request: Request, authorization: Auth = None) -> Any:
        desk = desk_of(request)
        return {"acknowledged": EngineeringService(desk, actor(desk, authorization)).finish(job_id, body.lease_id)}

    @router.post("/bugs/{bug_id}/reproduction")
    def reproduction(bug_id: str, body: ReproductionBody, request: Request, authorization: Auth = None) -> Any:
        desk = desk_of(request)
        b = desk.submit_reproduction(actor(desk, authorization), bug_id, body.round, body.test_path,
                                     body.test_source, {"kind": "advisory", "provider": "engineering-service"})
        return b.summary()

    @router.post("/bugs/{bug_id}/fix")
    def fix(bug_id: str, body: FixBody, request: Request, authorization: Auth = None) -> Any:
        desk = desk_of(request)
        b = desk.submit_fix(actor(desk, authorization), bug_id, body.round, body.attempt, body.files, body.summary,
                            {"kind": "advisory", "provider": "engineering-service"})
        return b.summary()

    @router.post("/bugs/{bug_id}/notes", status_code=201)
    def note(bug_id: str, body: NoteBody, request: Request, authorization: Auth = None) -> Any:
        desk = desk_of(request)
        desk.add_note(actor(desk, authorization), bug_id, body.kind, body.note, {"kind": "advisory"})
        return {"ok": True}

    @router.get("/crew")
    def crew(request: Request, authorization: Auth = None) -> Any:
        desk = desk_of(request)
        require(actor(desk, authorization), "owner", what="read the crew's status")
        return crew_view(desk.ledger, request.app.state.rooms, keys=RoomsConfig.from_settings(desk.settings))

    # -- concierge ---------------------------------------------------------------------------------

    @router.post("/notifications/claim")
    def notifications(request: Request, authorization: Auth = None) -> Any:
        desk = desk_of(request)
        notice = Concierge(desk, actor(desk, authorization)).claim()
        return Response(status_code=204) if notice is None else notice

    @router.post("/notifications/{job_id}/delivered")
    def delivered(job_id: str, body: LeaseBody, request: Request, authorization: Auth = None) -> Any:
        desk = desk_of(request)
        return {"acknowledged": Concierge(desk, actor(desk, authorization)).delivered(job_id, body.lease_id)}

    # -- owners and the recorder -----------------------------------------------------------------

    @router.post("/bugs/{bug_id}/approve")
    def approve(bug_id: str, body: ApproveBody, request: Request, authorization: Auth = None) -> Any:
        desk = desk_of(request)
        return execute(desk, actor(desk, authorization), ApproveChange(bug_id, body.head, body.note)).summary()

    @router.post("/bugs/{bug_id}/merge")
    def merge(bug_id: str, body: MergeBody, request: Request, authorization: Auth = None) -> Any:
        # The head is required, as for approve: a merge names the head the person reviewed.
        desk = desk_of(request)
        return {"merge_commit": execute(desk, actor(desk, authorization), MergeChange(bug_id, body.head))}

    @router.post("/bugs/{bug_id}/sync")
    def sync(bug_id: str, request: Request, authorization: Auth = None) -> Any:
        desk = desk_of(request)
        return desk.sync_change(actor(desk, authorization), bug_id)

    @router.post("/history")
    def history(request: Request, authorization: Auth = None) -> Any:
        desk = desk_of(request)
        return {"rewritten": desk.observe_history(actor(desk, authorization))}

    @router.post("/bugs/{bug_id}/disputes/{index}/accept")
    def accept_dispute(bug_id: str, index: int, request: Request, authorization: Auth = None,
                       body: DisputeBody | None = None) -> Any:
        desk = desk_of(request)
        shown = body.shown if body is not None else None  # the digest of the dispute as shown; required
        return execute(desk, actor(desk, authorization), AcceptDispute(bug_id, index, shown, via="api")).summary()

    @router.post("/deployments")
    def deployment(body: DeploymentBody, request: Request, authorization: Auth = None) -> Any:
        desk = desk_of(request)
        return desk.record_deployment(actor(desk, authorization), body.repo, body.commit, body.environment, body.url,
                                      also=body.also)

    return [router]
