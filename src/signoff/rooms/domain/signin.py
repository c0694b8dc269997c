"""How people prove who they are to the pages: a password (argon2id) or a one-time sign-in link.

Room users already hold bearer tokens for the API; a person at a browser signs in with a password
set by `signoff rooms user add --password` / `signoff rooms user password`, or with a link that
`signoff rooms user link` prints. Both live in the ledger beside the rooms' own cases (under
`signin.`, which the rooms projection does not read): a password as its argon2id hash, a link as
the SHA-256 of its secret, spent by the first redemption (a decision appended at the version read,
so two redemptions racing cannot both win).
"""

from __future__ import annotations

import functools

import argon2
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from signoff.kernel.errors import RefusedError, UsageError
from signoff.ledger import Event, NewEvent, NewJob, SqlLedger
from signoff.trust import credentials

MIN_PASSWORD = 10
MAX_PASSWORD = 1024
LINK_SECONDS = 15 * 60
_HASHER = argon2.PasswordHasher()  # argon2id with the library's current recommended cost
BAD_SIGNIN = ("the name or password is not right", "check both, or ask an admin for a sign-in link")
BAD_LINK = ("this sign-in link is not valid (it may be used or expired)",
            "ask for a new link with `signoff rooms user link`")


@functools.cache
def _dummy_hash() -> str:
    """Verified against when the user has no password, so that the time taken does not tell. Made
    once per process by `prepare_checks` rather than at import: hashing costs half a second of CPU,
    which every process that imported this module paid."""
    return _HASHER.hash("no password is set for this user")


def prepare_checks() -> None:
    """Make what `SignIns.check_password` verifies against for a user without a password, before the
    first check: made during one, it would make that check slower and so tell."""
    _dummy_hash()


def _password_case(user_id: str) -> str:
    return f"signin.password.{user_id}"


def _link_case(token: str) -> str:
    return f"signin.link.{credentials.digest(token)}"


def link_url(base_url: str, token: str) -> str:
    """The sign-in page's address carrying `token`. The secret travels in the fragment: browsers
    never send it to a server (or its logs); the page's script posts it."""
    return f"{base_url.rstrip('/')}/signin/link#{token}"


def check_password_rules(password: str) -> None:
    if not isinstance(password, str) or not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise UsageError(f"a password is {MIN_PASSWORD} to {MAX_PASSWORD} characters",
                         "pick a longer passphrase")


class SignIns:
    """Passwords and one-time links of room users (by user id; names are resolved by the caller)."""

    def __init__(self, ledger: SqlLedger) -> None:
        self.ledger = ledger

    def set_password(self, user_id: str, password: str) -> None:
        check_password_rules(password)
        self.ledger.append(_password_case(user_id), None,
                           [NewEvent("password.set", {"user_id": user_id, "hash": _HASHER.hash(password)})])

    def has_password(self, user_id: str) -> bool:
        return self._stored(user_id) is not None

    def _stored(self, user_id: str) -> str | None:
        events = self.ledger.read(_password_case(user_id))
        return str(events[-1].payload["hash"]) if events else None

    def check_password(self, user_id: str | None, password: str) -> bool:
        """True when `password` is the user's. Runs one argon2 verification whether or not the user
        exists or has a password."""
        stored = self._stored(user_id) if user_id else None
        try:
            _HASHER.verify(stored or _dummy_hash(), password if isinstance(password, str) else "")
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False
        return stored is not None

    def session_stamp(self, user_id: str, live_token: str | None) -> str | None:
        """What a web session of `user_id` is bound to: the digest of their current token and the
        version of their password. Revoking or rotating the token, or setting a password, changes
        it, and so ends every session started before; None when the person may not sign in at all
        (their token is revoked: `signoff rooms token revoke user NAME`)."""
        if live_token is None:
            return None
        return credentials.digest(f"{live_token}:{self.ledger.version(_password_case(user_id))}")

    def issue_link(self, user_id: str, seconds: int = LINK_SECONDS) -> str:
        """A one-time sign-in secret for `user_id`, valid for `seconds`; shown once, stored as a digest."""
        if not 60 <= seconds <= 7 * 24 * 3600:
            raise UsageError("a sign-in link lasts 1 minute to 7 days", "pass --minutes between 1 and 10080")
        token = credentials.mint("sol")
        self.ledger.append(_link_case(token), 0, [NewEvent("signin_link.issued", {
            "user_id": user_id, "expires_at": self.ledger.clock.now() + seconds})])
        return token

    def redeem_link(self, token: str) -> str:
        """The user id the link signs in; the link is spent. Unknown, spent and expired links get
        the same refusal."""
        refused = RefusedError(*BAD_LINK)
        if not isinstance(token, str) or not token.startswith("sol_") or len(token) > 200:
            raise refused
        user: list[str] = []
        now = self.ledger.clock.now()

        def spend(history: list[Event]) -> tuple[list[NewEvent], list[NewJob]]:
            user.clear()
            if len(history) != 1 or history[0].payload["expires_at"] <= now:
                return [], []
            user.append(str(history[0].payload["user_id"]))
            return [NewEvent("signin_link.redeemed", {"user_id": user[0]})], []

        self.ledger.update(_link_case(token), spend)
        if not user:
            raise refused
        return user[0]
