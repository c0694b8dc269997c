"""Ledgers written by 491180a (tests/data/old-ledgers) read through today's incident classes and folds,
and their signed chains still verify: stored type strings and case ids never changed."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from signoff.incident.chain import Chain, verify_records
from signoff.incident.guard import GuardConfig
from signoff.incident.model import (
    CHAIN,
    CURSORS,
    FINGERPRINTS,
    FOLDS,
    NAMES,
    NOTARY,
    Cursors,
    IncidentNames,
    NotarySalts,
    RecordChain,
    SaltSpent,
)
from signoff.incident.salts import IssuedSalts
from signoff.ledger import SqlLedger, verify_chain
from signoff.ledger.aggregate import CaseType, Stamp, case_type_of, read_event
from signoff.trust import PublicKey
from tests.support.paths import DATA

OLD = DATA / "old-ledgers"
DATABASES = ("incident-rooms.db", "incident-payco-records.db", "incident-shopco-records.db",
             "incident-payco-fingerprints.db", "incident-shopco-fingerprints.db")
INCIDENT = tuple(f.case for f in FOLDS)
INITIAL: dict[CaseType, Callable[[str], object]] = {
    CHAIN: RecordChain, NOTARY: NotarySalts, FINGERPRINTS: SaltSpent, CURSORS: Cursors, NAMES: IncidentNames}


@pytest.fixture(params=DATABASES)
def old_ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SqlLedger]:
    copy = tmp_path / str(request.param)
    shutil.copyfile(OLD / str(request.param), copy)  # opening migrates in place: never the original
    ledger = SqlLedger.from_url(f"sqlite:///{copy}")
    yield ledger
    ledger.close()


def _trusted() -> dict[str, PublicKey]:
    keys = [PublicKey.from_hex((OLD / "public-keys" / f"incident-{role}-{org}.pub").read_text().strip(), role)
            for role in ("approver", "guard") for org in ("payco", "shopco")]
    return {k.keyid: k for k in keys}


def test_every_incident_event_reads_through_its_class_and_fold(old_ledger: SqlLedger) -> None:
    folds = {f.case: f for f in FOLDS}
    cases = [c for c in old_ledger.case_ids("incident") if case_type_of(c) in INCIDENT]
    assert cases, "the old ledger holds incident cases"
    read = 0
    for case_id in cases:
        case = case_type_of(case_id)
        assert case is not None
        fold = folds[case]
        state = INITIAL[case](case_id if case is NAMES else case.key_of(case_id))
        for ev in old_ledger.read(case_id):
            body = read_event(ev)
            assert body.CASE is case and body.stored_type() == ev.type
            assert {k: body.payload()[k] for k in ev.payload} == ev.payload  # nothing read differently
            fold.apply(state, body, Stamp.of(ev))
            read += 1
    assert read == sum(len(old_ledger.read(c)) for c in cases)
    assert verify_chain(old_ledger).ok


@pytest.mark.parametrize("org", ["payco", "shopco"])
def test_old_record_chains_fold_and_verify_under_the_old_keys(org: str, tmp_path: Path) -> None:
    copy = tmp_path / "records.db"
    shutil.copyfile(OLD / f"incident-{org}-records.db", copy)
    ledger = SqlLedger.from_url(f"sqlite:///{copy}")
    try:
        for chain in ("approvals", "guard-log"):
            stored = Chain(ledger, CHAIN.case_id(f"{org}/{chain}"))
            state = stored.state()
            assert isinstance(state, RecordChain) and state.records
            report = stored.verify(_trusted(), f"{org}/{chain}")
            assert report.ok, report.problems
            assert report.records == state.records
        approvals = Chain(ledger, CHAIN.case_id(f"{org}/approvals")).state()
        assert all(approvals.find(r["body"]["d_id"]) == r for r in approvals.records)
        assert verify_records(((str(i), r) for i, r in enumerate(approvals.records)), _trusted(), org).ok
    finally:
        ledger.close()


def test_the_old_notary_restores_and_the_old_guard_configuration_reads(tmp_path: Path) -> None:
    copy = tmp_path / "rooms.db"
    shutil.copyfile(OLD / "incident-rooms.db", copy)
    ledger = SqlLedger.from_url(f"sqlite:///{copy}")
    try:
        (notary_case,) = ledger.case_ids("incident-notary/")
        notary = IssuedSalts(ledger, notary_case.removeprefix("incident-notary/")).notary()
        assert notary.current.incident == "INC-0001"
    finally:
        ledger.close()
    assert GuardConfig.read(OLD / "incident-shopco-guard.json").org == "shopco"
