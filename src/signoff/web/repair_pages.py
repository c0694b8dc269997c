"""The repair workspace: the cases and their states, and a case's page (the report, the contract
with "approve this contract" bound to its harness digest, the timeline, the stages, the attempts
and why each retry happened, the diff with the tamper signal and any `harness_integrity` finding,
the evidence with kind badges), with "accept" and "reject" for the linked operator.

What is approved is what the page shows: the contract section shows every harness file (its
digest and text, read from the frozen copy and checked against the harness digest), and the
approve form is offered, and taken, only when they could be shown. The accept form carries the
candidate commit and the digest of the review the page showed (candidate, verdict, reasons,
fingerprint, evidence, diff); a form for anything else is refused (409) and nothing is sent, and
the message it sends names that candidate, which the verifier checks again.

Every form carries the digest of what the page showed (the contract as presented, or the review
of the last verdict). The pages decide nothing: a button sends the person's own message
`@<verifier> <verb> <case> #<digest shown>` to the case room, which the verifier judges as it judges any message
(`signoff repair run`). Before sending, the page asks the repair service (`RepairService.check`:
the workflow's rules and the content-bound approval) so that a refused click is answered at once
and leaves nothing behind, not even a refused message in the room.

"Verify this candidate" starts a new verification of one of the case's candidates with the case's
approved contract (`RepairService.start_verification`, refused with a 4xx before anything is
written): the verifier's outbox job runs it and records each step on the case, which the page shows
live (queued, each step, then the verdict and its signed evidence). It measures; it changes neither
the case's state nor its review.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse

from signoff.kernel.errors import NotFoundError, RefusedError, SignoffError, UnavailableError
from signoff.kernel.ids import new_id
from signoff.ledger import Event
from signoff.repair import EVIDENCE_STAGES, CaseState, HarnessFile, OperatorCommand, RepairService, StartVerification
from signoff.rooms import Principal
from signoff.trust import KeyStore, TrustPolicy, verify_file
from signoff.web.diffs import diff_files, split_asked
from signoff.web.evidence_pages import home_settings, verified
from signoff.web.listing import Lister, Sort, listed
from signoff.web.live_case import case_stream
from signoff.web.render import PageRoute, page
from signoff.web.state import checked_form, kept_notice, signed_in, web_state, with_notice

router = APIRouter(route_class=PageRoute)
VERBS = ("approve", "accept", "reject")


def _service(request: Request) -> RepairService:
    return RepairService(web_state(request).rooms.ledger, home_settings(request))


def _visible(request: Request, user: Principal) -> dict[str, str]:
    """The rooms whose cases `user` may see, by id with their names: the rooms they are in (every
    room for an admin)."""
    return {r["room_id"]: r["name"] for r in web_state(request).rooms.list_rooms(user)}


def cases_in_room(request: Request, room_id: str) -> list[CaseState]:
    """The repair cases of a room (the room page links them), none on a server without a home."""
    if web_state(request).settings is None:
        return []
    return [c for c in _service(request).cases() if c.room_id == room_id]


def _case(request: Request, user: Principal, case_id: str) -> CaseState:
    try:
        st = _service(request).case(case_id)
    except NotFoundError:
        raise NotFoundError(f"no repair case {case_id}", "pick a case from the repair page") from None
    if st.room_id not in _visible(request, user):
        raise RefusedError(f"{user.name} is not in the room of {case_id}", "ask the room's owner to add you")
    return st


def _verdict(c: CaseState) -> str:
    return str(c.last_verdict["verdict"]) if c.last_verdict else "none"


@router.get("/repair")
def cases(request: Request) -> Response:
    """The cases of my rooms: searched, filtered by state and operator, sorted and paged (`listing`)."""
    user = signed_in(request)
    names = _visible(request, user)
    found = [c for c in _service(request).cases() if c.room_id in names]
    opened = {c.case_id: n for n, c in enumerate(found)}  # the service lists cases oldest first
    how = Lister[CaseState](
        text=lambda c: " ".join([c.case_id, c.contract.behaviour, c.state, c.operator_name, names[c.room_id],
                                 _verdict(c)]),
        sorts={"oldest": Sort("oldest first", lambda c: opened[c.case_id]),
               "newest": Sort("newest first", lambda c: opened[c.case_id], reverse=True),
               "case": Sort("case name", lambda c: c.case_id)},
        state=lambda c: c.state.replace("_", " ").lower(), owner=lambda c: c.operator_name or "nobody",
        owner_label="operator")
    return page(request, "repair_cases.html", l=listed(request, found, how), room_names=names)


def _timeline(events: list[Event]) -> list[dict[str, str]]:
    out = []
    for ev in events:
        if ev.type == "repair.verification_progress":
            continue  # a run's steps are shown with the run while it runs

        p = ev.payload
        what = ev.type.removeprefix("repair.").replace("_", " ")
        detail = str(p.get("verdict") or p.get("reason") or p.get("attempt") or p.get("commit") or "")
        out.append({"at": ev.recorded_at, "what": what, "detail": detail[:300]})
    return out


def _outcome(st: CaseState, n: int) -> str:
    if n in st.failures:
        return f"proposal refused: {st.failures[n]}"
    verdict = st.verdicts.get(n)
    if verdict is None:
        return "in progress"
    codes = ", ".join(r["code"] for r in verdict["reasons"])
    return f"{verdict['verdict']}: {codes}" if codes else verdict["verdict"]


def _why_retried(st: CaseState, n: int) -> str:
    if n in st.failures:
        return st.failures[n]
    verdict = st.verdicts.get(n) or {"reasons": []}
    return "; ".join(f"{r['code']}: {r['detail'] or r['text']}" for r in verdict["reasons"])


def _attempts(st: CaseState) -> list[dict[str, Any]]:
    """Each attempt with what came of it and, when another followed, why."""
    return [{"n": n, "receipt": (st.handoffs[n].get("receipt") or {}).get("message_id", ""),
             "summary": (st.proposals.get(n) or {}).get("summary", ""),
             # whose words: a model's opinion (advisory) or a scripted fixer's (simulated)
             "summary_kind": "simulated" if (st.proposals.get(n) or {}).get("kind") == "simulated" else "advisory",
             "candidate": st.candidates.get(n, ""),
             "outcome": _outcome(st, n), "retry": _why_retried(st, n) if n + 1 in st.handoffs else None}
            for n in sorted(st.handoffs)]


def _stages(statement: dict[str, Any] | None) -> list[dict[str, Any]]:
    if statement is None:
        return []
    stages = statement["predicate"].get("stages") or {}
    return [{"name": name, "tests": stages[name].get("tests", []), **stages[name].get("summary", {})}
            for name in EVIDENCE_STAGES if isinstance(stages.get(name), dict)]


def _evidence(request: Request, events: list[Event]) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The case's evidence files (verified), and the statement of its latest verification when that
    file verifies (the stages are shown only from a file that does)."""
    settings = home_settings(request)
    named = [str(e.payload["evidence"]) for e in events if e.payload.get("evidence")]
    files = verified(settings, [Path(p) for p in dict.fromkeys(named)])
    statement = None
    # The latest execution: a verdict, else the reproduction on base, else the run that blocked it.
    runs = [e.payload for e in events if e.type in ("repair.verdict", "repair.reproduced", "repair.blocked")]
    last = runs[-1] if runs else None
    if last is not None and last.get("evidence"):
        trusted = KeyStore(settings.keys_dir).trusted()
        report = verify_file(Path(str(last["evidence"])), trusted,
                             TrustPolicy.from_config(settings.section("trust", "signers")))
        statement = report.statement if report.ok else None
    return files, statement


def _harness(request: Request, st: CaseState) -> tuple[list[HarnessFile], SignoffError | None]:
    """The harness files the contract names, or why they cannot be shown (then nobody approves it here)."""
    try:
        return _service(request).harness_files(st.harness_digest), None
    except SignoffError as exc:
        return [], exc


def check_status(st: CaseState, check: dict[str, Any]) -> str:
    """A verification run as the page says it (and updates it live)."""
    if check["state"] == "done":
        codes = ", ".join(r["code"] for r in check["reasons"])
        said = f"{check['verdict']}{f' ({codes})' if codes else ''}"
        if not check["evidence"]:  # it could not run: why
            return f"{said} · {'; '.join(r.get('detail') or r['text'] for r in check['reasons'])}"
        return f"{said} · fingerprint {check['fingerprint'][:12]}"
    if st.state == "ABANDONED":
        return "not run: the case was abandoned"
    if check["state"] == "running":
        return f"running: {check['step']}"
    return "queued: the verifier runs it when it next runs (signoff repair agent verifier, or signoff repair run)"


def _checks(st: CaseState) -> list[dict[str, Any]]:
    return [{**c, "status": check_status(st, c), "evidence_name": Path(str(c.get("evidence") or "")).name}
            for _, c in sorted(st.checks.items())]


@router.get("/repair/{case_id}")
def case_page(request: Request, case_id: str) -> Response:
    user = signed_in(request)
    st = _case(request, user, case_id)
    events = _service(request).history(case_id)
    reported = next(e.payload for e in events if e.type == "repair.reported")
    files, statement = _evidence(request, events)
    verdict = st.last_verdict
    integrity = [r for r in (verdict or {}).get("reasons", []) if r["code"] == "harness_integrity"]
    blocked = next((e.payload["reason"] for e in events if e.type == "repair.blocked"), None)
    harness, unshown = _harness(request, st)
    return page(request, "repair_case.html", case=st, room_name=_visible(request, user)[st.room_id],
                report=reported, timeline=_timeline(events),
                harness=harness, harness_unshown=unshown, review_shown=RepairService.review_shown(st),
                contract_shown=RepairService.contract_shown(st),
                stages=_stages(statement), attempts=_attempts(st), verdict=verdict, integrity=integrity,
                diff=diff_files(verdict["diff"]) if verdict else [], files=files, blocked=blocked,
                operator=user.sender == st.operator, sent=_sent(request, st),
                version=events[-1].version, checks=_checks(st), candidates=sorted(st.candidates.items()),
                started=(kept_notice(request) or {}).get("run"), split=split_asked(request))


def _sent(request: Request, st: CaseState) -> str | None:
    """The verb the person just sent, while the case is still in the state they sent it in."""
    notice = kept_notice(request) or {}
    return notice.get("sent") if notice.get("state") == st.state else None


def shown_state(st: CaseState) -> str:
    return st.state.replace("_", " ").lower()


@router.get("/repair/{case_id}/live")
def case_live(request: Request, case_id: str) -> Response:
    """The case's state as it moves (server-sent events), for the open case page."""
    user = signed_in(request)
    _case(request, user, case_id)
    ledger, service = web_state(request).rooms.ledger, _service(request)

    def update() -> dict[str, Any]:
        st = service.case(case_id)
        state = shown_state(st)
        runs = {f"check-{n}": check_status(st, c) for n, c in st.checks.items()}
        # "Your approve was sent" goes once the case moves on: the new state answers it.
        return {"fields": {"case-state": state, "sent-notice": "", **runs},
                "notice": f"The case moved on (now {state}): reload to see its stages, attempts and diff."}

    return case_stream(request, ledger, service.stream(case_id), update)


@router.post("/repair/{case_id}/verifications")
async def start_verification(request: Request, case_id: str) -> Response:
    """Start a verification of one of the case's candidates (the form under "Verify a candidate")."""
    form = await checked_form(request)
    user = signed_in(request)
    _case(request, user, case_id)
    candidate = form.get("candidate", "").strip().lower()
    run = _service(request).start_verification(case_id, StartVerification(candidate, user.sender, user.name, "web",
                                                                           f"web:{new_id()}"))
    return RedirectResponse(with_notice(request, f"/repair/{case_id}", {"run": run}, "verifications"),
                            status_code=303)


@router.post("/repair/{case_id}/{verb}")
async def act(request: Request, case_id: str, verb: str) -> Response:
    form = await checked_form(request)
    user = signed_in(request)
    if verb not in VERBS:
        raise NotFoundError(f"no action {verb!r}", "use the buttons on the case page")
    st = _case(request, user, case_id)
    if not st.verifier_name:
        raise UnavailableError(f"{case_id} does not record its verifier agent",
                               f"send `@<verifier> {verb} {case_id} #<digest>` in the case room, naming the "
                               "digest the verifier printed")
    if verb == "approve":
        _, unshown = _harness(request, st)
        if unshown is not None:
            raise RefusedError(f"the harness of {case_id} cannot be shown here ({unshown.message}), so it "
                               "cannot be approved here", unshown.fix)
    # An acceptance names the candidate the page showed; every decision names the digest of what the
    # page showed (the contract, or the whole review: verdict, reasons, evidence, diff).
    candidate = form.get("candidate", "").strip().lower() if verb == "accept" else ""
    shown = form.get("shown", "").strip().lower()
    _service(request).check(OperatorCommand(verb, case_id, True, "", st.room_id, user.sender, candidate=candidate,
                                            shown=shown), st.verifier_name)
    # The message names what the page showed, so the verifier binds it again when it decides.
    body = " ".join(filter(None, (f"@{st.verifier_name}", verb, case_id, candidate, f"#{shown}")))
    web_state(request).rooms.post_message(user, st.room_id, body)
    # The notice holds the state it was sent in: once the case moves on, the page says the new state
    # instead (a "your approve was sent" under a later state would be stale).
    return RedirectResponse(with_notice(request, f"/repair/{case_id}", {"sent": verb, "state": st.state}, "actions"),
                            status_code=303)
