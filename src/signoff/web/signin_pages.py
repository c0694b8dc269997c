"""Sign-in (password or one-time link) and sign-out pages."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse
from starlette.concurrency import run_in_threadpool

from signoff.kernel.errors import NotFoundError, RefusedError
from signoff.rooms.domain.signin import BAD_LINK, BAD_SIGNIN
from signoff.web.render import PageRoute, page, set_cookie
from signoff.web.sessions import SESSION_COOKIE
from signoff.web.state import checked_form, maybe_signed_in, web_state

router = APIRouter(route_class=PageRoute)


def _client(request: Request) -> str:
    return f"client:{request.client.host if request.client else 'unknown'}"


def _signed_in_response(request: Request, user_id: str, how: str) -> Response:
    web = web_state(request)
    token = web.sessions.start(user_id, how)
    response = RedirectResponse("/", status_code=303)
    set_cookie(request, response, SESSION_COOKIE, token, int(web.sessions.seconds))
    return response


@router.get("/signin")
def signin_form(request: Request) -> Response:
    maybe_signed_in(request)
    return page(request, "signin.html", error=None, name="")


@router.post("/signin")
async def signin(request: Request) -> Response:
    form = await checked_form(request)
    # A worker thread, not the event loop: argon2 and the ledger's reads and appends take a loaded
    # machine seconds, and on the loop they would stall every other request and stream meanwhile.
    return await run_in_threadpool(_password_signin, request, form)


def _password_signin(request: Request, form: dict[str, str]) -> Response:
    web = web_state(request)
    request.state.user = None
    name = form.get("name", "").strip()[:100]
    slots = web.throttle.reserve(_client(request), f"name:{name.lower()}")  # counted before it is checked
    try:
        user_id: str | None = web.rooms.user_by_name(name).id if name else None
    except NotFoundError:
        user_id = None
    # A person whose token was revoked may not sign in: the same answer as a wrong password.
    if not web.signins.check_password(user_id, form.get("password", "")) or user_id is None \
            or not web.sessions.may_sign_in(user_id):
        return page(request, "signin.html", 401, error=BAD_SIGNIN, name=name)
    web.throttle.release(slots)
    return _signed_in_response(request, user_id, "password")


@router.get("/signin/link")
def link_form(request: Request) -> Response:
    maybe_signed_in(request)
    return page(request, "signin_link.html")


@router.post("/signin/link")
async def link_signin(request: Request) -> Response:
    form = await checked_form(request)
    return await run_in_threadpool(_link_signin, request, form)


def _link_signin(request: Request, form: dict[str, str]) -> Response:
    web = web_state(request)
    slots = web.throttle.reserve(_client(request))  # counted before the link is looked at
    user_id = web.signins.redeem_link(form.get("code", "").strip())
    if not web.sessions.may_sign_in(user_id):  # revoked after the link was issued: the link is spent
        raise RefusedError(*BAD_LINK)
    web.throttle.release(slots)
    return _signed_in_response(request, user_id, "link")


@router.post("/signout")
async def signout(request: Request) -> Response:
    await checked_form(request)
    web = web_state(request)
    web.sessions.end(request.cookies.get(SESSION_COOKIE))
    response = RedirectResponse("/signin", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return response
