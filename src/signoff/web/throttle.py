"""Sign-in throttling: failed attempts counted in the ledger per client address and per user name,
so that several server processes share one count and a restart forgets nothing."""

from __future__ import annotations

from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import RefusedError
from signoff.ledger import Ledger, NewEvent


class TooManyAttempts(RefusedError):
    http_status = 429


def _case(key: str) -> str:
    return f"web.signin-failures.{sha256_bytes(key.encode())[:32]}"


class Throttle:
    def __init__(self, ledger: Ledger, attempts: int, window_seconds: float) -> None:
        self.ledger = ledger
        self.attempts = attempts
        self.window = window_seconds

    def _recent(self, key: str) -> int:
        since = self.ledger.clock.now() - self.window
        return sum(1 for e in self.ledger.read(_case(key)) if e.payload["at"] > since)

    def check(self, *keys: str) -> None:
        """TooManyAttempts (429) when any key has used up its failures in the window."""
        if any(self._recent(k) >= self.attempts for k in keys):
            minutes = int(self.window // 60)
            raise TooManyAttempts("too many failed sign-ins; sign-in is paused for a while",
                                  f"wait {minutes} minutes, or ask an admin for a one-time sign-in link")

    def failed(self, *keys: str) -> None:
        now = self.ledger.clock.now()
        for k in keys:
            self.ledger.append(_case(k), None, [NewEvent("signin.failed", {"at": now})])
