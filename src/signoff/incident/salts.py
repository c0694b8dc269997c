"""The notary's issued salts, kept in a ledger.

One notary identity is one ledger case, `incident-notary/<notary id>` (case type `incident.notary`);
every salt it issued is one `incident.salt_issued` event (`model.SaltIssued`), oldest first, the last
one current. Issuing runs the pure decision `decisions.issue_salt` at the version read, with a fresh
salt drawn here: a notary restarted, or two notary processes asked at once, rebuild the same notary
from the case and never issue two salts for one incident, nor reissue an older incident's.
"""

from __future__ import annotations

import secrets

from signoff.incident.cases import decide_on, load
from signoff.incident.decisions import issue_salt
from signoff.incident.model import NOTARY, NotarySalts, SaltIssued, issued_salts, notary_fold
from signoff.incident.notary import IssuedSalt, Notary
from signoff.kernel.clock import utc_iso
from signoff.kernel.errors import UsageError
from signoff.ledger import Ledger

CASE_PREFIX = NOTARY.prefix
SALT_ISSUED = SaltIssued.TYPE
RESTORE = "restore the notary's state from an untouched copy"


class IssuedSalts:
    def __init__(self, ledger: Ledger, notary_id: str) -> None:
        if not 0 < len(notary_id) <= 100:
            raise UsageError("the notary id is empty or too long", "use the notary's agent id")
        self.ledger = ledger
        self.key = notary_id
        self.case_id = NOTARY.case_id(notary_id)

    def notary(self) -> Notary:
        """The notary as the ledger says it is: every salt it issued, the last one current."""
        state = load(self.ledger, notary_fold, self.case_id, NotarySalts(self.key), RESTORE)
        return Notary.restore(issued_salts(state), self.ledger.clock)

    def issue(self, incident: str) -> IssuedSalt:
        """The salt of `incident`, issuing it when `incident` is not the current one. Raises
        UsageError for an incident that already had a salt (salts are never reissued)."""
        fresh, at = secrets.token_bytes(32), utc_iso(self.ledger.clock.now())
        decide_on(self.ledger, notary_fold, self.case_id, lambda: NotarySalts(self.key),
                  lambda state: issue_salt(state, incident, fresh, at), RESTORE)
        return self.notary().current
