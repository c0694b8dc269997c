"""The notary's issued salts, kept in a ledger.

One notary identity is one ledger case, `incident-notary/<notary id>`; every salt it issued is one
`incident.salt_issued` event (`IssuedSalt.as_json()`), oldest first, the last one current. Issuing is
read-decide-append at the version read (`Ledger.update`): a notary restarted, or two notary
processes asked at once, rebuild the same notary from the case and never issue two salts for one
incident, nor reissue an older incident's.
"""

from __future__ import annotations

from collections.abc import Sequence

from signoff.incident.notary import IssuedSalt, Notary
from signoff.kernel.errors import UsageError
from signoff.ledger import Event, NewEvent, NewJob, SqlLedger

CASE_PREFIX = "incident-notary/"
SALT_ISSUED = "incident.salt_issued"


class IssuedSalts:
    def __init__(self, ledger: SqlLedger, notary_id: str) -> None:
        if not 0 < len(notary_id) <= 100:
            raise UsageError("the notary id is empty or too long", "use the notary's agent id")
        self.ledger = ledger
        self.case_id = f"{CASE_PREFIX}{notary_id}"

    def notary(self) -> Notary:
        """The notary as the ledger says it is: every salt it issued, the last one current."""
        return _restore(self.ledger.read(self.case_id), self.ledger)

    def issue(self, incident: str) -> IssuedSalt:
        """The salt of `incident`, issuing it when `incident` is not the current one. Raises
        UsageError for an incident that already had a salt (salts are never reissued)."""

        def decide(history: list[Event]) -> tuple[Sequence[NewEvent], Sequence[NewJob]]:
            notary = _restore(history, self.ledger)
            if notary.is_current(incident):
                return [], []
            return [NewEvent(SALT_ISSUED, notary.open_incident(incident).as_json())], []

        self.ledger.update(self.case_id, decide)
        return self.notary().current


def _restore(history: list[Event], ledger: SqlLedger) -> Notary:
    return Notary.restore((IssuedSalt.from_json(ev.payload) for ev in history if ev.type == SALT_ISSUED),
                          ledger.clock)
