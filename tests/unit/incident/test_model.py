"""The incident on the ledger contract: every case type's events read as old code wrote them, every
fold covers its case type, and the decisions are pure (state and command in, events out)."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from signoff.incident.chain import verify_records
from signoff.incident.decisions import (
    GENESIS,
    RECORD_KIND,
    ApproveDisclosure,
    ApproverRules,
    BudgetExhausted,
    Standing,
    append_record,
    approve_disclosure,
    issue_salt,
    name_incident,
    save_cursors,
    shown_disclosure,
    spend_fingerprint,
)
from signoff.incident.disclosure import draft
from signoff.incident.model import (
    CHAIN,
    CURSORS,
    FINGERPRINTS,
    FOLDS,
    NAMES,
    NAMES_CASE,
    NOTARY,
    Cursors,
    IncidentNames,
    NotarySalts,
    RecordChain,
    SaltSpent,
    chain_fold,
    cursors_fold,
    fingerprints_fold,
    names_fold,
    notary_fold,
)
from signoff.incident.notary import IssuedSalt
from signoff.kernel.errors import ConflictError, IntegrityError, RefusedError, UsageError
from signoff.kernel.shown import shown_digest
from signoff.ledger.aggregate import Decision, case_type_of, read_event
from signoff.ledger.store import Event
from signoff.rooms.domain.decisions import Message
from signoff.trust import SigningKey

KEY = SigningKey(Ed25519PrivateKey.from_private_bytes(bytes(range(32))), "incident-approver-payco")
SALT = IssuedSalt("INC-0001", bytes(range(32)), "2026-12-01T00:00:00Z")
RULES = ApproverRules("payco", "priya", "payco-internal")
NOW = "2026-12-01T00:05:00Z"


def _stored(case_id: str, version: int, type_: str, payload: dict[str, object]) -> Event:
    return Event(version, case_id, version, type_, payload, "2026-12-01T00:00:00Z", "0" * 64, "0" * 64)


def _applied(chain: RecordChain, decision: Decision) -> RecordChain:
    """The chain after `decision`, folded as the ledger would store it."""
    events = [_stored(f"incident-chain/{chain.key}", len(chain.records) + i + 1, b.stored_type(), b.payload())
              for i, b in enumerate(decision.events)]
    return chain_fold.over(chain, events)


def test_every_fold_covers_its_case_type() -> None:
    for fold in FOLDS:
        assert fold.missing() == [], fold.case.name
    assert {f.case for f in FOLDS} == {CHAIN, NOTARY, FINGERPRINTS, CURSORS, NAMES}


def test_case_ids_are_the_ones_old_code_wrote() -> None:
    for case_id, case in (("incident-chain/payco/approvals", CHAIN), ("incident-chain/shopco/guard-log", CHAIN),
                          ("incident-notary/0f3a", NOTARY), ("incident-fingerprints/payco/ab12", FINGERPRINTS),
                          ("incident-cursors/payco-agent", CURSORS), ("incident-names", NAMES)):
        assert case_type_of(case_id) is case
    assert NAMES_CASE == "incident-names"


def test_events_as_old_code_wrote_them_read_and_fold() -> None:
    """The payloads below are exactly what 491180a's code appended (chain.py, salts.py, budget.py,
    actors.py, workspace.py); they read through the classes without an upcast."""
    record = {"seq": 1, "prev": GENESIS, "body": {"kind": RECORD_KIND, "d_id": "D-PAY-1"}, "keyid": "k", "sig": "s"}
    chain = chain_fold.over(RecordChain("payco/approvals"),
                            [_stored("incident-chain/payco/approvals", 1, "incident.record", record)])
    assert chain.records == [record] and chain.find("D-PAY-1") == record
    salts = notary_fold.over(NotarySalts("n"), [
        _stored("incident-notary/n", 1, "incident.salt_issued", SALT.as_json()),
        # a row written by hand without salt_id reads too; the notary checks its salts when restored
        _stored("incident-notary/n", 2, "incident.salt_issued",
                {"incident": "INC-0002", "salt": "cd" * 32, "issued_at": NOW})])
    assert [s["incident"] for s in salts.issued] == ["INC-0001", "INC-0002"] and "salt_id" not in salts.issued[1]
    spent = fingerprints_fold.over(SaltSpent("s"), [
        _stored("incident-fingerprints/payco/s", v, "incident.fingerprinted",
                {"org": "payco", "salt_id": "s", "event_id": e}) for v, e in ((1, "evt_0007"), (2, "evt_0014"))])
    assert spent.events == ["evt_0007", "evt_0014"]
    cursors = cursors_fold.over(Cursors("notary"), [
        _stored("incident-cursors/notary", 1, "incident.cursors_saved", {"cursors": {"shared": 3}}),
        _stored("incident-cursors/notary", 2, "incident.cursors_saved", {"cursors": {"shared": 7, "payco": 2}})])
    assert cursors.cursors == {"shared": 7, "payco": 2}
    names = names_fold.over(IncidentNames(), [_stored("incident-names", 1, "incident.named", {"incident": "INC-0001"})])
    assert names.names == ["INC-0001"]


def test_a_record_with_a_field_no_record_has_is_refused_by_name() -> None:
    odd = _stored("incident-chain/payco/approvals", 1, "incident.record",
                  {"seq": 1, "prev": GENESIS, "body": {}, "keyid": "k", "sig": "s", "extra": 1})
    with pytest.raises(Exception, match="at extra"):
        read_event(odd)


def test_append_record_links_and_signs_what_verification_checks() -> None:
    chain = RecordChain("payco/approvals")
    for n in range(3):
        chain = _applied(chain, append_record(chain, {"kind": "test", "n": n}, KEY))
    assert [r["seq"] for r in chain.records] == [1, 2, 3] and chain.records[0]["prev"] == GENESIS
    report = verify_records(((str(i), r) for i, r in enumerate(chain.records)), {KEY.keyid: KEY.public}, "t")
    assert report.ok, report.problems
    forged = dict(chain.records[1], body={"kind": "test", "n": 9})
    report = verify_records(((str(i), r) for i, r in enumerate([chain.records[0], forged])),
                            {KEY.keyid: KEY.public}, "t")
    assert any("signature does not verify" in p for p in report.problems)
    assert base64.b64decode(chain.records[0]["sig"])


def _approval(text: str | None = None, shown: str | bool | None = True) -> tuple[ApproveDisclosure, Standing]:
    d = draft("payco", 1, "INC-0001", {"rows": [{"path": "data.customer.name", "delta": 8}]}, "Finding 1.",
              prefix="PAY")
    draft_msg = Message("m1", "payco-internal", "payco-agent", text if text is not None else d.text)
    approval = Message("m2", "payco-internal", "priya", d.approve_command)
    digest = shown_digest(shown_disclosure(d, draft_msg.text)) if shown is True else shown or None
    return ApproveDisclosure(d, draft_msg, approval, digest), Standing(SALT, "pin", "pin", NOW)


def test_an_approval_records_what_was_shown_who_when_and_what_the_option_meant() -> None:
    cmd, standing = _approval()
    decision = approve_disclosure(RecordChain("payco/approvals"), cmd, RULES, standing, KEY)
    body = decision.events[0].payload()["body"]
    assert body["approval"] == {"what": "disclosure D-PAY-1", "digest": cmd.shown, "by": "priya", "at": NOW,
                                "via": "room", "option": "approve", "meaning": "approve"}
    assert (body["approver"], body["time"], body["text_sha256"]) == ("priya", NOW, cmd.disclosure.text_sha256)
    # approving the same content again decides nothing; the record stands
    chain = _applied(RecordChain("payco/approvals"), decision)
    assert approve_disclosure(chain, cmd, RULES, standing, KEY).empty


@pytest.mark.parametrize(("shown", "error"), [(None, UsageError), ("0" * 64, ConflictError)])
def test_an_approval_without_the_digest_of_what_was_shown_records_nothing(shown: str | None,
                                                                          error: type[Exception]) -> None:
    cmd, standing = _approval(shown=shown)
    with pytest.raises(error):
        approve_disclosure(RecordChain("payco/approvals"), cmd, RULES, standing, KEY)


def test_an_approval_refuses_by_the_standing_it_is_given() -> None:
    cmd, standing = _approval()
    with pytest.raises(RefusedError, match="not the notary's current incident"):
        approve_disclosure(RecordChain("k"), cmd, RULES, Standing(None, "pin", "pin", NOW), KEY)
    with pytest.raises(RefusedError, match="differs from its pin"):
        approve_disclosure(RecordChain("k"), cmd, RULES, Standing(SALT, "edited", "pin", NOW), KEY)
    other, _ = _approval(text="another text\n\nApprove with: approve D-PAY-1")
    with pytest.raises(RefusedError, match="does not carry"):
        approve_disclosure(RecordChain("k"), other, RULES, standing, KEY)


def test_salts_budget_cursors_and_names_are_decided_from_state_alone() -> None:
    issued = issue_salt(NotarySalts("n"), "INC-0001", bytes(range(32)), NOW)
    assert issued.events[0].payload() == {**SALT.as_json(), "issued_at": NOW}
    state = NotarySalts("n", [SALT.as_json(), {**SALT.as_json(), "incident": "INC-0002", "salt": "ef" * 32,
                                                "salt_id": IssuedSalt("x", bytes.fromhex("ef" * 32), NOW).salt_id}])
    assert issue_salt(state, "INC-0002", b"\x01" * 32, NOW).empty  # current: nothing issued
    with pytest.raises(UsageError, match="already has a salt"):
        issue_salt(state, "INC-0001", b"\x01" * 32, NOW)
    with pytest.raises(IntegrityError):
        issue_salt(NotarySalts("n", [SALT.as_json(), SALT.as_json()]), "INC-0003", b"\x01" * 32, NOW)
    five = SaltSpent("s", [f"evt_{i}" for i in range(5)])
    assert spend_fingerprint(five, "payco", "s", "evt_1").empty
    with pytest.raises(BudgetExhausted):
        spend_fingerprint(five, "payco", "s", "evt_9")
    assert spend_fingerprint(SaltSpent("s"), "payco", "s", "evt_9").events[0].payload() == {
        "org": "payco", "salt_id": "s", "event_id": "evt_9"}
    assert save_cursors(Cursors("n", {"shared": 3}), {"shared": 3}).empty
    assert save_cursors(Cursors("n"), {"shared": 3}).events[0].payload() == {"cursors": {"shared": 3}}
    assert name_incident(IncidentNames(names=["INC-0001"])).events[0].payload() == {"incident": "INC-0002"}
