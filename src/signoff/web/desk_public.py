"""The desk's public pages: the intake form, and the reporter's tracking page.

Reporters never sign in. Their capability is the tracking link (`/track/RPT-0001#cap=...`): the
page is the same for everyone, and its script reads the capability from the fragment (never sent
to a server) and sends it as `X-Desk-Capability` to the desk's own API, which decides what the
reporter may see and answer. A quarantined report's text is never echoed: the page names the
families the airlock held it for, nothing else.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from signoff.desk.service import FIELDS, REPORT_ID, Quarantined
from signoff.kernel.errors import NotFoundError, UnavailableError
from signoff.web.desk_access import desk_of
from signoff.web.render import PageRoute, page
from signoff.web.state import checked_form, maybe_signed_in

router = APIRouter(route_class=PageRoute)
LABELS = {"title": "What goes wrong, in one line", "component": "Where (page or feature)",
          "steps": "Steps to see it", "expected": "What you expected", "actual": "What happened instead",
          "environment": "Browser, device, version"}
assert set(LABELS) == set(FIELDS)


@router.get("/report")
def report_form(request: Request) -> Response:
    maybe_signed_in(request)
    return page(request, "report.html", fields=LABELS)


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
        # Nothing of the text is stored, and nothing of it is shown back: the families only.
        return page(request, "report_held.html", 422, families=[f.replace("_", " ") for f in exc.families])
    return page(request, "report_filed.html", 201, intake=intake.as_json(),
                request_base=str(request.base_url).rstrip("/"))


@router.get("/track/{report_id}")
def track(request: Request, report_id: str) -> Response:
    maybe_signed_in(request)
    if not REPORT_ID.fullmatch(report_id):  # the page shows the id: never text a link made up
        raise NotFoundError("there is no such report", "open the tracking link the desk gave you")
    return page(request, "track.html", report_id=report_id)
