"""The evidence servers' per-salt fingerprint budget, kept in a ledger.

Each (organisation, salt) is one ledger case, `incident-fingerprints/<org>/<salt id>`; every event
the server fingerprinted under that salt is one `incident.fingerprinted` event in it. Spending is
read-decide-append at the version read (`Ledger.update`): two servers, threads or processes racing
for the last slot both read version 4, one appends version 5, the other's append conflicts, it
re-reads and is refused. So the budget survives a restart and holds across every process that
serves the organisation from the same database, with no lock of our own.
"""

from __future__ import annotations

from collections.abc import Sequence

from signoff.kernel.errors import RefusedError, UsageError
from signoff.ledger import Event, NewEvent, NewJob, SqlLedger

FINGERPRINTS_PER_SALT = 5
CASE_PREFIX = "incident-fingerprints/"
FINGERPRINTED = "incident.fingerprinted"


class BudgetExhausted(RefusedError):
    """The salt already fingerprinted its limit of distinct events (HTTP 429: too many, for this salt)."""

    http_status = 429


class SaltBudget:
    """At most `limit` distinct events fingerprinted per salt for one organisation, durably."""

    def __init__(self, ledger: SqlLedger, org: str, limit: int = FINGERPRINTS_PER_SALT) -> None:
        if limit < 1:
            raise UsageError(f"fingerprint limit {limit} is below 1", "allow at least one event per salt")
        self.ledger, self.org, self.limit = ledger, org, limit

    def case_id(self, salt_id: str) -> str:
        return f"{CASE_PREFIX}{self.org}/{salt_id}"

    def spent(self, salt_id: str) -> list[str]:
        """The distinct events fingerprinted under this salt, in the order they were first spent."""
        return _spent(self.ledger.read(self.case_id(salt_id)))

    def spend(self, salt_id: str, event_id: str) -> bool:
        """Record `event_id` against the salt before it is fingerprinted. True when it took a new
        slot, False when the event was already spent (asking again costs nothing). Raises
        BudgetExhausted when the salt has no slot left; then nothing is written."""
        if not 0 < len(event_id) <= 100 or not 0 < len(salt_id) <= 64:
            raise UsageError("event id or salt id is empty or too long", "use an event id the server listed")
        case = self.case_id(salt_id)

        def decide(history: list[Event]) -> tuple[Sequence[NewEvent], Sequence[NewJob]]:
            spent = _spent(history)
            if event_id in spent:
                return [], []
            if len(spent) >= self.limit:
                raise BudgetExhausted(f"at most {self.limit} events are fingerprinted per salt",
                                      "open a new incident with the notary for a fresh salt")
            return [NewEvent(FINGERPRINTED, {"org": self.org, "salt_id": salt_id, "event_id": event_id})], []

        # The idempotency key makes a replayed append of the same (salt, event) a no-op even if two
        # requests for one event race; the version check is what bounds the count.
        result = self.ledger.update(case, decide, idempotency_key=f"{case}/{event_id}")
        return bool(result.seqs) and not result.replayed


def _spent(history: list[Event]) -> list[str]:
    out: list[str] = []
    for ev in history:
        if ev.type == FINGERPRINTED:
            event_id = str(ev.payload.get("event_id"))
            if event_id not in out:
                out.append(event_id)
    return out
