"""Rendering pages: the Jinja2 environment (autoescaped), the security headers every page sends,
and errors as pages (a refusal says what and what to do, never a traceback)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import Request, Response
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.routing import APIRoute
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from signoff.kernel.errors import SignoffError
from signoff.kernel.ids import new_token
from signoff.kernel.wire import status_of
from signoff.rooms.domain.bound import bound_content
from signoff.web.markdown import markdown
from signoff.web.sessions import BROWSER_COOKIE, SignInNeeded, valid_browser_id
from signoff.web.state import web_state

HERE = Path(__file__).parent
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
}

templates = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(["html"]),
                        undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
# A card bound to content (signoff.gate) shows its question, and its content verbatim with its digest.
templates.filters["bound"] = lambda card: bound_content(card.to_dict())


def moment(value: float | str | None) -> datetime | None:
    """A stored time (epoch seconds, or ISO 8601 text as the ledger records it) as an aware UTC datetime."""
    if value is None or value == "":
        return None
    if isinstance(value, int | float):
        return datetime.fromtimestamp(float(value), UTC)
    try:
        found = datetime.fromisoformat(value)
    except ValueError:
        return None
    return (found if found.tzinfo else found.replace(tzinfo=UTC)).astimezone(UTC)


def when(value: float | str | None, seconds: bool = False) -> Markup:
    """A time as every page shows it: readable, in UTC to the minute (or second), never microseconds,
    with the exact UTC value in `datetime` (times.js rewrites the text in the reader's own time zone).
    Text that is not a time is shown as it is, escaped; no time at all is "unknown"."""
    found = moment(value)
    if found is None:
        return Markup("{}").format(value) if value not in (None, "") else Markup("unknown")
    shown = found.strftime("%Y-%m-%d %H:%M:%S UTC" if seconds else "%Y-%m-%d %H:%M UTC")
    exact = found.isoformat().replace("+00:00", "Z")
    return Markup('<time datetime="{}" data-precision="{}">{}</time>').format(
        exact, "second" if seconds else "minute", shown)


templates.filters["when"] = when
templates.filters["markdown"] = markdown


def secure(request: Request) -> bool:
    return request.url.scheme == "https"


def set_cookie(request: Request, response: Response, name: str, value: str, max_age: int | None) -> None:
    response.set_cookie(name, value, max_age=max_age, httponly=True, samesite="strict", secure=secure(request),
                        path="/")


def page(request: Request, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    """Render `template` with the caller's page context (who is signed in, the CSRF token)."""
    web = web_state(request)
    user = getattr(request.state, "user", None)
    html = templates.get_template(template).render(
        user=user, csrf=web.sessions.csrf_token(request.state.browser), path=request.url.path, request=request,
        **context)
    return HTMLResponse(html, status_code=status_code)


# The pages where each area is acted on, and the commands of that area a refusal's fix may name.
PLACES = {"/repair": ("the repair cases", "signoff repair"), "/bugs": ("the bug board", "signoff desk"),
          "/notes": ("the release notes runs", "signoff notes"), "/incident": ("the incidents", "signoff incident"),
          "/rooms": ("your rooms", "signoff rooms"), "/evidence": ("the evidence", "signoff evidence"),
          "/ledger": ("the ledger", "signoff ledger"), "/claims": ("your chat accounts", "signoff claims")}


def places_to_act(path: str, fix: str | None) -> list[tuple[str, str]]:
    """(page, name) of the pages where a refusal can be acted on: the list the refused page belongs
    to, and the page of each area whose command the fix names (a fix that says `signoff repair
    link` also offers the repair cases), never the refused address itself."""
    area = "/" + path.strip("/").split("/", 1)[0]
    found = [p for p in PLACES if p == area or (fix and PLACES[p][1] + " " in fix + " ")]
    return [(p, PLACES[p][0]) for p in found if p != path]


def error_page(request: Request, exc: SignoffError) -> Response:
    if isinstance(exc, SignInNeeded):
        return RedirectResponse("/signin", status_code=303)
    status = status_of(exc)
    return page(request, "error.html", status, status=status, message=exc.message, fix=exc.fix,
                places=places_to_act(request.url.path, exc.fix))


ExceptionHandler = Callable[[Request, Exception], Coroutine[Any, Any, Response]]


async def no_such_page(request: Request, exc: Exception) -> Response:
    """An address no route answers: a page for a browser (it asks for text/html), the API's JSON
    answer for any other client. Every other HTTP error keeps the API's answer."""
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code != 404 or "text/html" not in request.headers.get("accept", ""):
        return await http_exception_handler(request, exc)
    # No route ran, so no session was read: the page is the signed-out one, with no form on it.
    html = templates.get_template("error.html").render(
        user=None, csrf="", path=request.url.path, status=404, message="there is no page at this address",
        fix="pick a page from the menu, or go back to the start page", places=[])
    return HTMLResponse(html, status_code=404, headers={**SECURITY_HEADERS, "Cache-Control": "no-store"})


class PageRoute(APIRoute):
    """A route that renders a page: security headers on every answer, a browser id cookie (the
    CSRF anchor) for every visitor, SignoffError rendered as an error page."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        original = super().get_route_handler()

        async def handler(request: Request) -> Response:
            browser = request.cookies.get(BROWSER_COOKIE)
            fresh = not valid_browser_id(browser)
            request.state.browser = new_token(32) if fresh else browser
            try:
                response = await original(request)
            except SignoffError as exc:
                # Off the event loop, as every page is rendered: the menu's count reads workflows
                # whose readers block or run their own loop (an incident's record).
                response = await run_in_threadpool(error_page, request, exc)
            for name, value in SECURITY_HEADERS.items():
                response.headers[name] = value
            response.headers.setdefault("Cache-Control", "no-store")
            if fresh:
                set_cookie(request, response, BROWSER_COOKIE, request.state.browser, None)
            return response

        return handler
