"""The "try to break it" page: a visitor's text through the real disclosure guards and the real airlock, and
the red team's attacks with their exact text. Anyone may try (no sign-in): the page is rate-limited
per client address in this process's memory, stores nothing and logs nothing of the text (the
request log holds the path only; the text travels in the form body)."""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

from fastapi import APIRouter, Request, Response

from signoff.incident import service
from signoff.kernel.errors import RefusedError, SignoffError
from signoff.trust import KeyStore
from signoff.web.incident_pages import demo_scenario, incident_settings
from signoff.web.render import PageRoute, page
from signoff.web.state import checked_form, maybe_signed_in, web_state

router = APIRouter(route_class=PageRoute)
_LOCK = threading.Lock()


class TooManyTries(RefusedError):
    http_status = 429


class Window:
    """At most `limit` tries per client in any `seconds`: kept in memory, so nothing is written."""

    def __init__(self, limit: int, seconds: float) -> None:
        self.limit = limit
        self.seconds = seconds
        self.lock = threading.Lock()
        self.tries: dict[str, deque[float]] = {}

    def take(self, client: str) -> None:
        now = time.monotonic()
        with self.lock:
            recent = self.tries.setdefault(client, deque())
            while recent and recent[0] <= now - self.seconds:
                recent.popleft()
            if len(recent) >= self.limit:
                raise TooManyTries(f"at most {self.limit} tries a minute from one address",
                                   "wait a minute, then try again")
            recent.append(now)
            for key in [k for k, v in self.tries.items() if not v]:
                del self.tries[key]


def window(request: Request) -> Window:
    """This app's window, sized by `[web] incident_tries_per_minute`."""
    with _LOCK:
        found: Window | None = getattr(request.app.state, "incident_tries", None)
        if found is None:
            found = request.app.state.incident_tries = Window(web_state(request).config.incident_tries_per_minute, 60.0)
    return found


def tried_attacks(request: Request) -> list[dict[str, object]]:
    """Every red team attack with what the text controls say of its text: the same guards and airlock
    for every visitor, so worked out once a process (the first visit), never per request."""
    with _LOCK:
        found: list[dict[str, object]] | None = getattr(request.app.state, "incident_tried", None)
        if found is None:
            settings = incident_settings(request)
            found = request.app.state.incident_tried = service.tried_attacks(
                settings.home, KeyStore(settings.keys_dir), demo_scenario(request).parties)
    return found


def warm(app: Any) -> None:
    """Work the attacks' results out in the background (once a process), so that the first visit of
    the page rarely waits for the try workspace's set-up (a visit meanwhile waits for it, under the
    same lock). Nothing to do without a home or a scenario, or once they are worked out."""
    if getattr(app.state, "incident_scenario", None) is None or getattr(app.state, "settings", None) is None \
            or getattr(app.state, "incident_tried", None) is not None or getattr(app.state, "incident_warming", False):
        return
    app.state.incident_warming = True
    request = Request({"type": "http", "app": app, "method": "GET", "path": "/incident/try", "headers": [],
                       "query_string": b""})

    def work() -> None:
        try:
            tried_attacks(request)
        except SignoffError:
            return  # the page says what is wrong when it is visited

    threading.Thread(target=work, name="signoff-try-warm", daemon=True).start()


def _page(request: Request, status: int = 200, **context: object) -> Response:
    tried = tried_attacks(request)
    text = context.get("text") or ""
    # A visitor's text that is one of the attacks: the page says what stops it in a live incident.
    matched = next((t["attack"] for t in tried if text and getattr(t["attack"], "text", None) == text), None)
    return page(request, "incident_try.html", status, tried=tried, max_chars=service.try_max_chars(),
                tries_per_minute=window(request).limit, matched=matched, **{"text": "", "result": None, **context})


@router.get("/incident/try")
def try_page(request: Request) -> Response:
    maybe_signed_in(request)
    return _page(request)


@router.post("/incident/try")
async def try_post(request: Request) -> Response:
    form = await checked_form(request)
    maybe_signed_in(request)
    window(request).take(request.client.host if request.client else "unknown")
    settings = incident_settings(request)
    text = form.get("text", "")
    result = service.try_text(settings.home, KeyStore(settings.keys_dir), text, demo_scenario(request).parties)
    return _page(request, text=text, result=result)
