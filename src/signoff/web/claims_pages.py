"""My chat accounts (identity claims, docs/bridges.md): mint a one-time code for a Matrix account,
see my claims, revoke one. The rooms server decides everything; the page only asks it."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse

from signoff.web.render import PageRoute, page
from signoff.web.state import checked_form, signed_in, web_state

router = APIRouter(route_class=PageRoute)
DEFAULT_BRIDGE = "matrix-bridge"


def _claims_page(request: Request, code: dict[str, str] | None = None) -> Response:
    user = signed_in(request)
    return page(request, "claims.html", claims=web_state(request).rooms.claims.claims(user), code=code,
                default_bridge=DEFAULT_BRIDGE)


@router.get("/claims")
def claims(request: Request) -> Response:
    return _claims_page(request)


@router.post("/claims/codes")
async def mint(request: Request) -> Response:
    form = await checked_form(request)
    made = web_state(request).rooms.claims.issue_code(signed_in(request), form.get("bridge") or DEFAULT_BRIDGE,
                                                      form.get("external_id", "").strip())
    return _claims_page(request, code=made)


@router.post("/claims/revoke")
async def revoke(request: Request) -> Response:
    form = await checked_form(request)
    web_state(request).rooms.claims.revoke(signed_in(request), form.get("claim_id", ""))
    return RedirectResponse("/claims", status_code=303)
