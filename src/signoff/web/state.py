"""What the pages share in one app: the room service, sessions, sign-ins and the throttle, built
once from the app's ledger and settings."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from signoff.kernel.errors import RefusedError
from signoff.kernel.ids import new_token
from signoff.kernel.settings import Settings
from signoff.ledger import ChainMonitor
from signoff.rooms import Principal, RoomService
from signoff.rooms.domain.signin import SignIns, prepare_checks
from signoff.trust.credentials import shared_secret
from signoff.web import notify
from signoff.web.config import WebConfig
from signoff.web.sessions import BROWSER_COOKIE, SESSION_COOKIE, Sessions, SignInNeeded
from signoff.web.throttle import Throttle

_LOCK = threading.Lock()


@dataclass
class WebState:
    rooms: RoomService
    settings: Settings | None
    config: WebConfig
    sessions: Sessions
    signins: SignIns
    throttle: Throttle
    chain: ChainMonitor  # the ledger page's chain status, kept between visits


def web_state(request: Request) -> WebState:
    app_state = request.app.state
    with _LOCK:
        found: WebState | None = getattr(app_state, "web", None)
        if found is None:
            rooms: RoomService = app_state.rooms
            settings: Settings | None = app_state.settings
            config = WebConfig.load(settings)
            # One secret for every process on this home (CSRF tokens stay valid across them);
            # an app built without settings (in-process use) keeps its own.
            secret = shared_secret(settings.home / "web" / "secret") if settings else new_token().encode()
            prepare_checks()
            signins = SignIns(rooms.ledger)

            def stamp(user_id: str) -> str | None:
                return signins.session_stamp(user_id, rooms.credentials.live_user_token(user_id))

            found = WebState(rooms, settings, config, Sessions(rooms.ledger, secret, config.session_hours, stamp),
                             signins,
                             Throttle(rooms.ledger, config.signin_attempts, config.signin_window_minutes * 60),
                             ChainMonitor(rooms.ledger, background=True))
            app_state.web = found
            # Notifications of new waiting items by webhook or e-mail, where `[notify]` configures them.
            notify.start(request.app, settings)
    return found


def signed_in(request: Request) -> Principal:
    """The person this browser's session signs in (SignInNeeded otherwise)."""
    web = web_state(request)
    user_id = web.sessions.user_id(request.cookies.get(SESSION_COOKIE))
    if user_id is None:
        raise SignInNeeded("sign in first", "sign in with your password or a one-time link")
    user = web.rooms.user(user_id)
    request.state.user = user
    return user


def still_signed_in(request: Request, user: Principal) -> Callable[[], Awaitable[bool]]:
    """For a live stream: asked before each of its batches, whether the session that opened it
    still signs in `user` (not signed out, not expired, their credentials unchanged). The stream
    ends at the first no."""
    sessions = web_state(request).sessions
    token = request.cookies.get(SESSION_COOKIE)

    async def check() -> bool:
        return await run_in_threadpool(sessions.user_id, token) == user.id

    return check


def with_notice(request: Request, path: str, notice: dict[str, Any], anchor: str = "") -> str:
    """The address of the page at `path` saying `notice` ("Posted", "sent"): the notice is kept in
    this browser's session, and the address carries only its id."""
    notice_id = web_state(request).sessions.keep_notice(request.cookies.get(SESSION_COOKIE), {**notice, "path": path})
    return f"{path}?{urlencode({'notice': notice_id})}" + (f"#{anchor}" if anchor else "")


def kept_notice(request: Request) -> dict[str, Any] | None:
    """The notice `?notice=ID` names in this browser's own session, for this page: the address
    never carries a notice's text, and a link from anyone else (another session) shows nothing."""
    found = web_state(request).sessions.notice(request.cookies.get(SESSION_COOKIE),
                                                request.query_params.get("notice"))
    return found if found is not None and found.get("path") == request.url.path else None


def maybe_signed_in(request: Request) -> Principal | None:
    try:
        return signed_in(request)
    except SignInNeeded:
        request.state.user = None
        return None


async def checked_form(request: Request) -> dict[str, str]:
    """The posted form's text fields, after its CSRF token is checked (403 without a good one)."""
    form = await request.form()
    web = web_state(request)
    if not web.sessions.csrf_ok(request.cookies.get(BROWSER_COOKIE), form.get("csrf")):
        raise RefusedError("this form has no valid CSRF token", "reload the page and send the form again")
    return {k: v for k, v in form.items() if isinstance(v, str)}
