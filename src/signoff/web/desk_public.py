"""The desk's public pages: the intake form, and the reporter's tracking page.

Reporters never sign in. Their capability is the tracking link (`/track/RPT-0001#cap=...`), whose
secret sits in the fragment, which browsers never send. The page served at the link is the same
for everyone: a form asking for the link. Its small script fills the form from the fragment and
sends it (POST, so the secret stays out of addresses and logs); without JavaScript the reporter
pastes the link. The server then renders the report as the desk lets its reporter see it, in plain
words, with the question to answer as a form carrying the same secret: every step works without
JavaScript, and the desk decides what the reporter may see and answer.

A held report is the reporter's own text: the form comes back to them with it (escaped), naming
the fields that held it and the families; nothing of it is stored. The pages offer the desk's
security contact (`[desk] security_contact`) for a genuine security report.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from signoff.desk.service import FIELDS, REPORT_ID, Desk, Quarantined
from signoff.kernel.errors import ConflictError, NotFoundError, UnavailableError, UsageError
from signoff.kernel.wire import status_of
from signoff.web.desk_access import desk_of
from signoff.web.render import PageRoute, page
from signoff.web.state import checked_form, maybe_signed_in

router = APIRouter(route_class=PageRoute)
LABELS = {"title": "What goes wrong, in one line", "component": "Where (page or feature)",
          "steps": "Steps to see it", "expected": "What you expected", "actual": "What happened instead",
          "environment": "Browser, device, version"}
assert set(LABELS) == set(FIELDS)


def _contact(desk: Desk | None) -> str | None:
    return (desk.config.security_contact or None) if desk is not None else None


def _report_form(request: Request, status: int = 200, values: dict[str, str] | None = None,
                 held: Quarantined | None = None) -> Response:
    held_fields = [] if held is None else [LABELS.get(f, "the fields read together") for f in held.fields]
    return page(request, "report.html", status, fields=LABELS, values=values or {},
                held=None if held is None else {"families": [f.replace("_", " ") for f in held.families],
                                                "fields": held_fields, "names": set(held.fields)},
                contact=_contact(desk_of(request)))


@router.get("/report")
def report_form(request: Request) -> Response:
    maybe_signed_in(request)
    return _report_form(request)


@router.post("/report")
async def report(request: Request) -> Response:
    form = await checked_form(request)
    maybe_signed_in(request)
    desk = desk_of(request)
    if desk is None:
        raise UnavailableError("this server has no bug desk", "run `signoff serve` on a desk's home")
    fields = {k: form[k] for k in FIELDS if form.get(k, "").strip()}
    client = request.client.host if request.client else "unknown"
    try:
        intake = desk.submit_report(fields, client)
    except Quarantined as exc:
        # Nothing of the text is stored; the form comes back to the person who typed it, with it.
        return _report_form(request, 422, {k: form.get(k, "") for k in FIELDS}, exc)
    except UsageError as exc:
        return page(request, "report.html", 400, fields=LABELS, values={k: form.get(k, "") for k in FIELDS},
                    held=None, problem=exc, contact=_contact(desk))
    return page(request, "report_filed.html", 201, intake=intake.as_json(),
                request_base=str(request.base_url).rstrip("/"))


def _report_id(report_id: str) -> str:
    if not REPORT_ID.fullmatch(report_id):  # the page shows the id: never text a link made up
        raise NotFoundError("there is no such report", "open the tracking link the desk gave you")
    return report_id


def _secret(text: str) -> str:
    """The capability in what the reporter gave: the whole tracking link, or its secret alone."""
    text = text.strip()
    return text.split("cap=", 1)[1].strip() if "cap=" in text else text


def _tracking(request: Request, report_id: str, cap: str, status: int = 200, **extra: Any) -> Response:
    desk = desk_of(request)
    if desk is None:
        raise UnavailableError("this server has no bug desk", "run `signoff serve` on a desk's home")
    view = desk.track(desk.reporter(report_id, cap))
    return page(request, "track.html", status, report_id=report_id, view=view, cap=cap,
                state_words=STATE_WORDS.get(view["state"], view["state"].replace("_", " ")),
                question=QUESTIONS.get(view["question"] or ""), contact=_contact(desk),
                **{"answered": None, "problem": None, "reason": "", "answer": "", **extra})


@router.get("/track/{report_id}")
def track(request: Request, report_id: str) -> Response:
    maybe_signed_in(request)
    return page(request, "track.html", report_id=_report_id(report_id), view=None, cap="", problem=None,
                contact=_contact(desk_of(request)))


@router.post("/track/{report_id}")
async def track_view(request: Request, report_id: str) -> Response:
    """The report as its reporter may see it, for the secret the form carries (the link's)."""
    form = await checked_form(request)
    maybe_signed_in(request)
    return _tracking(request, _report_id(report_id), _secret(form.get("cap", "")))


@router.post("/track/{report_id}/answer")
async def answer(request: Request, report_id: str) -> Response:
    """The reporter's answer to the question the page showed. A refused answer comes back to them
    with their reason kept and the field named; nothing is recorded."""
    form = await checked_form(request)
    maybe_signed_in(request)
    desk = desk_of(request)
    if desk is None:
        raise UnavailableError("this server has no bug desk", "run `signoff serve` on a desk's home")
    cap, report_id = _secret(form.get("cap", "")), _report_id(report_id)
    reporter = desk.reporter(report_id, cap)  # a wrong secret is refused before anything else is read
    question, answer_, reason = form.get("question", ""), form.get("answer", ""), form.get("reason", "")
    bug_id = form.get("bug") or None
    try:
        if question == "reproduction":
            desk.confirm(reporter, answer_, reason or None, bug_id, _round(form.get("round", "")))
        elif question == "release":
            desk.verify_release(reporter, answer_, reason or None, bug_id)
        else:
            raise UsageError("the form does not name a question of this report", "answer from the tracking page")
    except Quarantined as exc:
        problem = {"field": "reason", "message": "Your reason could not be accepted: parts of it read as "
                   f"instructions to software ({', '.join(f.replace('_', ' ') for f in exc.families)}).",
                   "fix": "Describe what happens, in your own words."}
        return _tracking(request, report_id, cap, 422, problem=problem, reason=reason, answer=answer_)
    except (UsageError, ConflictError) as exc:
        field = "reason" if "reason" in exc.message else "answer"
        return _tracking(request, report_id, cap, status_of(exc), reason=reason, answer=answer_,
                         problem={"field": field, "message": exc.message[:1].upper() + exc.message[1:] + ".",
                                  "fix": (exc.fix or "")[:1].upper() + (exc.fix or "")[1:] + "."})
    return _tracking(request, report_id, cap, answered="Thank you: your answer was recorded.")


def _round(raw: str) -> int | None:
    return int(raw) if raw.isdigit() and len(raw) < 7 else None


# What each state means to a reporter, in plain words (the tracking page's first line).
STATE_WORDS = {
    "reproducing": "We are checking the bug: we write a small automatic test that must fail on the current code.",
    "awaiting_reporter": "We could make the bug happen. Please tell us whether it is the bug you saw.",
    "fixing": "You confirmed it is your bug; a fix is being prepared.",
    "in_review": "A fix is ready and waiting for a person to review it.",
    "needs_human": "A person needs to look at this bug; we will come back to you.",
    "reopened": "We are looking at the bug again, with what you told us.",
    "merged": "The fix was accepted. It is not released yet.",
    "released": "The fix is released. Please tell us whether it works for you.",
    "verified": "The fix was confirmed to work.",
}
QUESTIONS = {"reproduction": "Is this the bug you saw?", "release": "Does it work for you now?"}
