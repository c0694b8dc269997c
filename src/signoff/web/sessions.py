"""Browser sessions and CSRF tokens.

A session is a 256-bit secret in an HttpOnly, SameSite=Strict cookie; the ledger keeps only its
SHA-256 (case `web.session.<digest>`), the user it signs in and when it expires. Sign-out appends
`session.ended`. Every browser also carries a random `signoff_browser` cookie; a form's CSRF token
is an HMAC of it under the server's secret, so a page on another site can neither read nor forge
one, and a token is worthless in another browser.
"""

from __future__ import annotations

import hashlib
import hmac
import re

from signoff.kernel.errors import SignoffError
from signoff.ledger import Ledger, NewEvent
from signoff.trust import credentials

SESSION_COOKIE = "signoff_session"
BROWSER_COOKIE = "signoff_browser"
_BROWSER_RE = re.compile(r"^[A-Za-z0-9_-]{32,64}$")


class SignInNeeded(SignoffError):
    """The page is for signed-in people: the browser is sent to the sign-in page."""


def _case(token: str) -> str:
    return f"web.session.{credentials.digest(token)}"


def valid_browser_id(value: str | None) -> bool:
    return value is not None and bool(_BROWSER_RE.match(value))


class Sessions:
    def __init__(self, ledger: Ledger, secret: bytes, hours: float) -> None:
        self.ledger = ledger
        self.secret = secret
        self.seconds = hours * 3600

    def start(self, user_id: str, how: str) -> str:
        """A new session for `user_id` (`how`: password | link); the token goes into the cookie only."""
        token = credentials.mint("sos")
        self.ledger.append(_case(token), 0, [NewEvent("session.started", {
            "user_id": user_id, "how": how, "expires_at": self.ledger.clock.now() + self.seconds})])
        return token

    def user_id(self, token: str | None) -> str | None:
        """The user a live session cookie signs in; None for unknown, ended or expired sessions."""
        if not token or not token.startswith("sos_") or len(token) > 100:
            return None
        events = self.ledger.read(_case(token))
        if not events or events[0].type != "session.started" or any(e.type == "session.ended" for e in events):
            return None
        if events[0].payload["expires_at"] <= self.ledger.clock.now():
            return None
        return str(events[0].payload["user_id"])

    def end(self, token: str | None) -> None:
        if self.user_id(token) is not None:
            assert token is not None
            self.ledger.append(_case(token), None, [NewEvent("session.ended", {})])

    def csrf_token(self, browser_id: str) -> str:
        return hmac.new(self.secret, f"csrf:{browser_id}".encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, browser_id: str | None, sent: object) -> bool:
        if not valid_browser_id(browser_id) or not isinstance(sent, str):
            return False
        assert browser_id is not None
        return hmac.compare_digest(self.csrf_token(browser_id).encode(), sent.encode())
