"""The repair case on the aggregate contract: every event type it was ever written with has a
class, the fold covers them all, and stored payloads read back through the classes."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

import signoff
from signoff.kernel.errors import UsageError
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.ledger.aggregate import UnreadableEventError, case_type_of, event_class, read_event
from signoff.ledger.store import Event
from signoff.repair import Contract, RepairService, read_case, read_cases
from signoff.repair.model import FIXER_LOG, REPAIR_CASE, REPAIR_ROOM, VERIFIER_LOG, case_key, fold, initial
from tests.support.paths import DATA

# Every event type repair code has written (the stored strings never change).
WRITTEN = {
    REPAIR_CASE: ["repair.abandoned", "repair.accepted", "repair.approved", "repair.attempt_failed",
                  "repair.blocked", "repair.candidate", "repair.card_requested", "repair.command_refused",
                  "repair.contract_presented", "repair.contract_proposed", "repair.declined",
                  "repair.fix_requested", "repair.proposal", "repair.reported", "repair.reproduced",
                  "repair.resumed", "repair.retry_requested", "repair.review_requested", "repair.verdict",
                  "repair.verification_measured", "repair.verification_progress", "repair.verification_requested"],
    REPAIR_ROOM: ["repair.watch"],
    VERIFIER_LOG: ["repair.noted"],
    FIXER_LOG: ["repair.handoff_refused"],
}


def test_every_repair_event_type_has_a_class_of_its_case_type() -> None:
    for case, types in WRITTEN.items():
        assert sorted(case.events) == types


def test_the_fold_covers_every_event_type_of_the_case() -> None:
    assert fold.missing() == []


def test_case_ids_keep_their_prefix() -> None:
    assert case_key("coupon-01") == "repair.case.coupon-01"
    assert REPAIR_CASE.key_of("repair.case.coupon-01") == "coupon-01"


def _event(version: int, type_: str, payload: dict[str, object]) -> Event:
    return Event(version, "repair.case.coupon-01", version, type_, payload, "2026-12-01T00:00:00Z", "0" * 64, "0" * 64)


# Payloads as 491180a wrote them (a case from its report to its acceptance; one of each shape).
OLD = [
    ("repair.reported", {"case_id": "coupon-01", "room_id": "r1", "message_id": "m1", "reporter": "user:bob",
                         "report": "applied twice", "operator": "user:alice", "operator_name": "alice",
                         "verifier_name": "verifier",
                         "contract": {"name": "coupon", "behaviour": "once", "repo": "/r", "base": "main",
                                      "harness": "/h", "expect": "t.py::t", "regression": [], "allow": [],
                                      "pythonpath": [], "runner": "pytest", "timeout": 60, "fixer_script": "coupon",
                                      "requirements": [], "project_deps": False, "extras": [], "pytest": None,
                                      "python": None, "allow_source_builds": False},
                         "base": "b" * 40, "harness_digest": "d" * 64}),
    ("repair.contract_proposed", {"harness_digest": "d" * 64, "base": "b" * 40}),
    ("repair.contract_presented", {"document_id": "doc1"}),
    ("repair.card_requested", {"request_id": "repair-card:coupon-01:contract", "stage": "contract",
                               "verbs": {"approve": "approve"}, "candidate": ""}),
    ("repair.command_refused", {"message_id": "m2", "verb": "approve", "room_id": "r1", "sender": "user:mallory",
                                "reason": "approve refused: only the linked operator can approve coupon-01."}),
    ("repair.approved", {"message_id": "m3", "by": "user:alice", "harness_digest": "d" * 64}),
    ("repair.reproduced", {"message": "assert 8100 == 9000", "fingerprint": "f" * 64, "evidence": "/e.json"}),
    ("repair.fix_requested", {"attempt": 1, "command_id": "c" * 24, "receipt": {"message_id": "m4", "sender": "v"},
                              "asked_by": "user:alice", "from_message": "m3", "reason": "approved"}),
    ("repair.resumed", {"by": "user:alice", "by_name": "alice", "reason": "lost", "via": "cli", "key": "k",
                        "attempt": 1}),
    ("repair.fix_requested", {"attempt": 1, "command_id": "c" * 24, "receipt": {"message_id": "m5", "sender": "v"},
                              "asked_by": "user:alice", "from_message": "m3", "reason": "approved"}),
    ("repair.attempt_failed", {"attempt": 1, "reason": "touches a test"}),
    ("repair.fix_requested", {"attempt": 2, "command_id": "e" * 24, "receipt": {"message_id": "m6", "sender": "v"},
                              "asked_by": "v", "from_message": "m5", "reason": "attempt 1 refused: touches a test"}),
    ("repair.proposal", {"attempt": 2, "summary": "apply once", "files": [{"path": "cart.py", "content": "x"}],
                         "kind": "simulated", "provider": "scripted", "model": "coupon", "record": {"a": 1}}),
    ("repair.candidate", {"attempt": 2, "commit": "a" * 40}),
    ("repair.verdict", {"attempt": 2, "candidate": "a" * 40, "verdict": "VERIFIED", "reasons": [],
                        "fingerprint": "f" * 64, "evidence": "/v.json", "diff": "+x", "tamper": [], "signals": []}),
    ("repair.review_requested", {}),
    ("repair.command_refused", {"verb": "abandon", "sender": "user:mallory", "via": "room", "reason": "no",
                                "message_id": "repair:msg:m7"}),
    ("repair.accepted", {"message_id": "m8", "by": "user:alice", "candidate": "a" * 40}),
]


def test_payloads_the_old_code_wrote_read_through_the_classes_and_fold() -> None:
    events = [_event(n, t, p) for n, (t, p) in enumerate(OLD, 1)]
    st = fold.over(initial("coupon-01"), events)
    assert st.state == "ACCEPTED" and st.attempt == 2 and st.resumed == 1 and st.presented
    assert st.history == ["REPORTED", "CONTRACT_PROPOSED", "APPROVED", "REPRODUCED", "FIX_REQUESTED",
                          "FIX_REQUESTED", "FIX_REQUESTED", "CANDIDATE", "VERIFIED", "AWAITING_REVIEW", "ACCEPTED"]
    assert st.failures == {1: "touches a test"} and st.candidates == {2: "a" * 40}
    assert st.contract.timeout == 60 and st.approval is not None and st.approval["approval"] is None
    # Its tests ran from an empty folder then: the later "auto" default does not change what was approved.
    assert st.contract.workdir == "empty"
    reported = dict(OLD[0][1], contract={**OLD[0][1]["contract"], "workdir": "auto"})
    assert fold.over(initial("coupon-01"), [_event(1, "repair.reported", reported)]).contract.workdir == "auto"
    # The stored bytes are read, never rewritten.
    assert events[5].payload == {"message_id": "m3", "by": "user:alice", "harness_digest": "d" * 64}


def test_a_payload_outside_its_class_is_refused_by_name() -> None:
    with pytest.raises(UnreadableEventError, match="at attempt"):
        read_event(_event(1, "repair.candidate", {"attempt": "1", "commit": "a" * 40}))
    assert event_class("repair.verdict") is not None


# -- faces import only the facade -----------------------------------------------------------------

FACES = ("cli", "web", "mcp", "bridges")
# What a face may still import past the facade, and why.
ALLOWED = {
    # Importing a workflow's evidence module registers its predicate check (as for notes and incident).
    "signoff.repair.evidence": "registers the evidence check",
}


def test_no_face_imports_an_inner_repair_module() -> None:
    root = Path(signoff.__file__).parent
    found = []
    for face in FACES:
        for path in sorted((root / face).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                modules = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
                found += [f"{path.relative_to(root)}: {m}" for m in modules
                          if m.startswith("signoff.repair.") and m not in ALLOWED]
    assert found == []


OLD_LEDGERS = DATA / "old-ledgers"


def test_every_repair_event_491180a_wrote_reads_through_the_classes_and_folds(tmp_path: Path) -> None:
    """tests/data/old-ledgers/main.db holds the repair demo of 491180a (a case from its report to
    ACCEPTED, a watched room): each event reads through its class, and the case folds as it was."""
    copy = tmp_path / "main.db"
    shutil.copyfile(OLD_LEDGERS / "main.db", copy)  # opening migrates a database in place
    ledger = SqlLedger.from_url(f"sqlite:///{copy}")
    try:
        events = [e for e in ledger.stream(prefix="repair.")]
        assert {e.case_id.split(".")[1] for e in events} >= {"case", "room"}
        for event in events:
            body = read_event(event)
            owner = case_type_of(event.case_id)
            assert (owner is not None and body.CASE is owner) or body.TYPE == "repair.command_refused"
        [case_id] = [c for c in ledger.case_ids(REPAIR_CASE.prefix)]
        st = read_case(ledger, REPAIR_CASE.key_of(case_id))
        assert st.state == "ACCEPTED" and st.approval is not None and st.verdicts
        assert st.history[0] == "REPORTED" and st.history[-1] == "ACCEPTED"
        assert [c.case_id for c in read_cases(ledger)] == [st.case_id]
        watch = RepairService(ledger, Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path))
        [room] = watch.watched_rooms()
        assert watch.watched(room) is not None
    finally:
        ledger.close()


def test_a_contract_whose_name_cannot_name_a_case_is_refused_when_loaded(tmp_path: Path) -> None:
    contract = tmp_path / "contract.toml"
    contract.write_text('name = "the coupon"\nbehaviour = "once"\nrepo = "."\nbase = "main"\nharness = "h"\n'
                        'expect = "t.py::t"\n')
    with pytest.raises(UsageError, match="cannot name a case") as refused:
        Contract.load(contract)
    assert refused.value.fix
    assert Contract.load(_renamed(contract, "coupon")).name == "coupon"


def _renamed(path: Path, name: str) -> Path:
    path.write_text(path.read_text().replace('name = "the coupon"', f'name = "{name}"'))
    return path
