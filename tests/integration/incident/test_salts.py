"""The notary's issued salts live in a ledger case: a restarted notary, or several racing, issue one
salt per incident and never reissue an older incident's."""

from __future__ import annotations

import threading

import pytest

from signoff.incident.salts import CASE_PREFIX, SALT_ISSUED, IssuedSalts
from signoff.kernel.errors import IntegrityError, UsageError
from signoff.ledger import NewEvent, SqlLedger


def test_a_restarted_notary_knows_its_salts_and_only_those(db_url: str) -> None:
    ledger = SqlLedger.from_url(db_url)
    try:
        first = IssuedSalts(ledger, "notary-1").issue("INC-0001")
        assert IssuedSalts(ledger, "notary-1").issue("INC-0001") == first  # asked again: the same salt
        second = IssuedSalts(ledger, "notary-1").issue("INC-0002")
        assert second.salt != first.salt
    finally:
        ledger.close()
    reopened = SqlLedger.from_url(db_url)  # as a restarted process would
    try:
        notary = IssuedSalts(reopened, "notary-1").notary()
        assert notary.issued == (first, second) and notary.current == second
        assert not notary.is_current("INC-0001")
        with pytest.raises(UsageError, match="already has a salt"):
            IssuedSalts(reopened, "notary-1").issue("INC-0001")  # an old incident is never reopened
        assert [e.type for e in reopened.read(f"{CASE_PREFIX}notary-1")] == [SALT_ISSUED, SALT_ISSUED]
        assert IssuedSalts(reopened, "notary-2").notary().issued == ()  # another notary's case is its own
    finally:
        reopened.close()


def test_notaries_racing_on_one_database_issue_one_salt_per_incident(sqlite_url: str) -> None:
    ledgers = [SqlLedger.from_url(sqlite_url) for _ in range(6)]
    start = threading.Barrier(len(ledgers))
    got: list[bytes] = []

    def issue(ledger: SqlLedger) -> None:
        start.wait()
        got.append(IssuedSalts(ledger, "notary-1").issue("INC-0001").salt)

    threads = [threading.Thread(target=issue, args=(ledger,)) for ledger in ledgers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert len(got) == len(ledgers) and len(set(got)) == 1
        assert len(ledgers[0].read(f"{CASE_PREFIX}notary-1")) == 1
    finally:
        for ledger in ledgers:
            ledger.close()


def test_a_salt_written_into_the_case_by_hand_must_be_well_formed(sqlite_url: str) -> None:
    ledger = SqlLedger.from_url(sqlite_url)
    try:
        salts = IssuedSalts(ledger, "notary-1")
        issued = salts.issue("INC-0001")
        # Someone with database access adds a second salt for the same incident.
        forged = {"incident": issued.incident, "salt": "ab" * 32, "issued_at": issued.issued_at}
        ledger.append(salts.case_id, None, [NewEvent(SALT_ISSUED, forged)])
        with pytest.raises(IntegrityError, match="name an incident or a salt twice"):
            salts.notary()
        with pytest.raises(IntegrityError):
            salts.issue("INC-0002")  # nothing is issued from a case that does not restore
    finally:
        ledger.close()
