"""Sign-in throttling: attempts counted in the ledger per client address and per user name, so that
several server processes share one count and a restart forgets nothing.

An attempt is counted before its password is checked: `reserve` appends it at the version of the
count it read (the ledger's optimistic concurrency), so of any number of simultaneous guesses at
most `attempts` get a slot in the window and the rest are refused unchecked. A sign-in that
succeeds gives its slot back (`release`): only failures use up the window.
"""

from __future__ import annotations

from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import ConflictError, RefusedError
from signoff.ledger import Event, NewEvent, NewJob, SqlLedger


class TooManyAttempts(RefusedError):
    http_status = 429


def _case(key: str) -> str:
    return f"web.signin-attempts.{sha256_bytes(key.encode())[:32]}"


class Throttle:
    def __init__(self, ledger: SqlLedger, attempts: int, window_seconds: float) -> None:
        self.ledger = ledger
        self.attempts = attempts
        self.window = window_seconds

    def _refused(self) -> TooManyAttempts:
        minutes = int(self.window // 60)
        return TooManyAttempts("too many failed sign-ins; sign-in is paused for a while",
                               f"wait {minutes} minutes, or ask an admin for a one-time sign-in link")

    def _counted(self, history: list[Event]) -> int:
        """Attempts in the window that were not given back by a success."""
        since = self.ledger.clock.now() - self.window
        released = {e.payload["attempt"] for e in history if e.type == "signin.succeeded"}
        return sum(1 for e in history if e.type == "signin.attempted" and e.payload["at"] > since
                   and e.version not in released)

    def reserve(self, *keys: str) -> dict[str, int]:
        """A slot for one attempt under each key, taken before the attempt runs; TooManyAttempts
        (429) when a key has used up its window. The slots (key -> version), for `release`."""
        now = self.ledger.clock.now()

        def take(history: list[Event]) -> tuple[list[NewEvent], list[NewJob]]:
            if self._counted(history) >= self.attempts:
                return [], []
            return [NewEvent("signin.attempted", {"at": now})], []

        slots: dict[str, int] = {}
        for key in keys:
            try:
                result = self.ledger.update(_case(key), take)
            except ConflictError:  # so many guesses at once that the count kept moving: refuse this one
                result = None
            if result is None or not result.seqs:
                # Refused unchecked, so not counted: the other keys' slots go back (a person whose
                # name someone else's guesses paused does not use up their own address's window).
                self.release(slots)
                raise self._refused()
            slots[key] = result.version
        return slots

    def release(self, slots: dict[str, int]) -> None:
        """A sign-in that succeeded gives back its slots."""
        for key, version in slots.items():
            self.ledger.append(_case(key), None, [NewEvent("signin.succeeded", {"attempt": version})])
