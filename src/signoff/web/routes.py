"""The pages' routers, picked up by `signoff serve` beside the rooms, desk and other APIs, and the
reverse proxies whose forwarded headers the server believes (`[web] trusted_proxies`)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.exceptions import HTTPException as StarletteHTTPException

from signoff.kernel.settings import Settings
from signoff.web import (
    assets,
    claims_pages,
    desk_owner,
    desk_public,
    evidence_pages,
    home,
    incident_pages,
    incident_try,
    notes_pages,
    repair_pages,
    repair_verify_page,
    rooms_pages,
    signin_pages,
)
from signoff.web.config import WebConfig
from signoff.web.render import ExceptionHandler, no_such_page


def routers(settings: Settings | None) -> list[APIRouter]:
    # The pages read the settings the app was built with (app.state.settings), like every router.
    del settings
    return [assets.router, signin_pages.router, home.router, rooms_pages.router, desk_public.router,
            desk_owner.router, evidence_pages.router, incident_pages.router, incident_try.router,
            claims_pages.router,
            # /repair/verify before /repair/{case_id}: the first route that matches answers.
            repair_verify_page.router, repair_pages.router, notes_pages.router]


def exception_handlers(settings: Settings | None) -> list[tuple[type[Exception], ExceptionHandler]]:
    """(exception class, handler) pairs `signoff serve` installs: an unknown address as a page."""
    del settings
    return [(StarletteHTTPException, no_such_page)]


def trusted_proxies(settings: Settings | None) -> list[str]:
    """The addresses or networks whose X-Forwarded-For / -Proto `signoff serve` believes: none
    unless `[web] trusted_proxies` names them (the sign-in throttle counts by client address)."""
    return list(WebConfig.load(settings).trusted_proxies)
