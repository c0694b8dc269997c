"""The evidence servers' per-salt fingerprint budget, kept in a ledger.

Each (organisation, salt) is one ledger case, `incident-fingerprints/<org>/<salt id>` (case type
`incident.fingerprints`); every event the server fingerprinted under that salt is one
`incident.fingerprinted` event (`model.Fingerprinted`) in it. Spending runs the pure decision
`decisions.spend_fingerprint` at the version read: two servers, threads or processes racing for the
last slot both read version 4, one appends version 5, the other's append conflicts, it re-reads and
is refused. So the budget survives a restart and holds across every process that serves the
organisation from the same database, with no lock of our own.
"""

from __future__ import annotations

from signoff.incident.cases import decide_on, load
from signoff.incident.decisions import FINGERPRINTS_PER_SALT, BudgetExhausted, spend_fingerprint
from signoff.incident.model import FINGERPRINTS, Fingerprinted, SaltSpent, fingerprints_fold
from signoff.kernel.errors import UsageError
from signoff.ledger import Ledger

CASE_PREFIX = FINGERPRINTS.prefix
FINGERPRINTED = Fingerprinted.TYPE
DAMAGED = "the budget ledger was written behind the server's back; restore it from an untouched copy"


class SaltBudget:
    """At most `limit` distinct events fingerprinted per salt for one organisation, durably."""

    def __init__(self, ledger: Ledger, org: str, limit: int = FINGERPRINTS_PER_SALT) -> None:
        if limit < 1:
            raise UsageError(f"fingerprint limit {limit} is below 1", "allow at least one event per salt")
        self.ledger, self.org, self.limit = ledger, org, limit

    def case_id(self, salt_id: str) -> str:
        return FINGERPRINTS.case_id(f"{self.org}/{salt_id}")

    def spent(self, salt_id: str) -> list[str]:
        """The distinct events fingerprinted under this salt, in the order they were first spent."""
        return load(self.ledger, fingerprints_fold, self.case_id(salt_id), SaltSpent(salt_id), DAMAGED).events

    def spend(self, salt_id: str, event_id: str) -> bool:
        """Record `event_id` against the salt before it is fingerprinted. True when it took a new
        slot, False when the event was already spent (asking again costs nothing). Raises
        BudgetExhausted when the salt has no slot left; then nothing is written."""
        if not 0 < len(event_id) <= 100 or not 0 < len(salt_id) <= 64:
            raise UsageError("event id or salt id is empty or too long", "use an event id the server listed")
        case = self.case_id(salt_id)
        # The idempotency key makes a replayed append of the same (salt, event) a no-op even if two
        # requests for one event race; the version check is what bounds the count.
        result, _ = decide_on(self.ledger, fingerprints_fold, case, lambda: SaltSpent(salt_id),
                              lambda state: spend_fingerprint(state, self.org, salt_id, event_id, self.limit),
                              DAMAGED, idempotency_key=f"{case}/{event_id}")
        return bool(result.seqs) and not result.replayed


__all__ = ["CASE_PREFIX", "FINGERPRINTED", "FINGERPRINTS_PER_SALT", "BudgetExhausted", "SaltBudget"]
