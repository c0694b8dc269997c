"""Browser sessions, CSRF tokens and notices.

A session is a 256-bit secret in an HttpOnly, SameSite=Strict cookie; the ledger keeps only its
SHA-256 (case `web.session.<digest>`), the user it signs in, when it expires and the stamp of the
person's credentials when it started (`SignIns.session_stamp`). Every request, and every batch of a
live stream, checks the stamp against the person's credentials now: revoking or rotating their
token, or setting their password, ends every session they had. Sign-out appends `session.ended`.
A page's notice ("Posted") is kept in the session's own case, and the address names only its id:
no page text comes from the query string. Every browser also carries a random `signoff_browser`
cookie; a form's CSRF token is an HMAC of it under the server's secret, so a page on another site
can neither read nor forge one, and a token is worthless in another browser.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable
from typing import Any

from signoff.kernel.errors import RefusedError, SignoffError
from signoff.kernel.ids import new_token
from signoff.ledger import NewEvent, SqlLedger
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
    def __init__(self, ledger: SqlLedger, secret: bytes, hours: float, stamp: Callable[[str], str | None]) -> None:
        """`stamp(user_id)`: the person's credentials now (None: they may not sign in)."""
        self.ledger = ledger
        self.secret = secret
        self.seconds = hours * 3600
        self.stamp = stamp

    def may_sign_in(self, user_id: str) -> bool:
        return self.stamp(user_id) is not None

    def start(self, user_id: str, how: str) -> str:
        """A new session for `user_id` (`how`: password | link); the token goes into the cookie only."""
        stamp = self.stamp(user_id)
        if stamp is None:
            raise RefusedError("this person may not sign in", "ask an admin: their token was revoked")
        token = credentials.mint("sos")
        self.ledger.append(_case(token), 0, [NewEvent("session.started", {
            "user_id": user_id, "how": how, "expires_at": self.ledger.clock.now() + self.seconds, "stamp": stamp})])
        return token

    def _live(self, token: str | None) -> tuple[str, list[Any]] | None:
        """The user id and the events of a live session: not unknown, ended or expired, and started
        under the person's credentials as they are now (a session from before a revocation, a
        rotation or a new password, or from before sessions carried a stamp, is over)."""
        if not token or not token.startswith("sos_") or len(token) > 100:
            return None
        events = self.ledger.read(_case(token))
        if not events or events[0].type != "session.started" or any(e.type == "session.ended" for e in events):
            return None
        started = events[0].payload
        if started["expires_at"] <= self.ledger.clock.now():
            return None
        user_id = str(started["user_id"])
        stamp = self.stamp(user_id)
        if stamp is None or not hmac.compare_digest(str(started.get("stamp", "")), stamp):
            return None
        return user_id, events

    def user_id(self, token: str | None) -> str | None:
        """The user a live session cookie signs in (see `_live`); None otherwise."""
        live = self._live(token)
        return None if live is None else live[0]

    def keep_notice(self, token: str | None, notice: dict[str, Any]) -> str:
        """Keep `notice` (what the next page says, e.g. "Posted") in the live session; its id, for
        the address of that page. A notice is read back only in the session that kept it."""
        if self.user_id(token) is None:
            raise RefusedError("sign in first", "sign in with your password or a one-time link")
        assert token is not None
        notice_id = new_token(16)
        self.ledger.append(_case(token), None, [NewEvent("session.notice", {"id": notice_id, "notice": notice})])
        return notice_id

    def notice(self, token: str | None, notice_id: str | None) -> dict[str, Any] | None:
        """The notice `notice_id` names in this live session; None for any other id."""
        live = self._live(token) if notice_id else None
        if live is None:
            return None
        found = [e.payload["notice"] for e in live[1] if e.type == "session.notice" and e.payload["id"] == notice_id]
        return dict(found[0]) if found else None

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
