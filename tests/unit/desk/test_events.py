"""The bug's events as classes (signoff.desk.model): every type a bug holds is declared, the fold
handles each one, and a stored event that its class does not declare is refused, never guessed at."""

from __future__ import annotations

import pytest

from signoff.desk.model import BUG, ApprovalRecorded, bug_fold, fold
from signoff.ledger import Event
from signoff.ledger.aggregate import UnreadableEventError

# The type strings bugs have been written with since the desk began: hashed into every ledger, never renamed.
STORED = {"bug.opened", "report.attached", "reproduction.failed", "reproduction.recorded", "confirmation.yes",
          "confirmation.no", "verification.yes", "verification.no", "answer.unentitled", "dispute.accepted",
          "fix.failed", "fix.verified", "change.opened", "change.pushed", "approval.recorded",
          "approval.withdrawn", "merge.refused", "merge.recorded", "release.recorded", "history.rewritten",
          "human.resumed"}


def test_a_new_event_is_stored_as_its_writer_gave_it() -> None:
    made = ApprovalRecorded(login="bob", shared=False, head="b" * 40, codeowner=False, via="forge", note="",
                            person="bob", review_id="7")
    assert "identity" not in made.payload() and "approval" not in made.payload()  # not given: not stored


def test_every_stored_bug_event_type_has_a_class_and_the_fold_handles_each() -> None:
    assert set(BUG.events) == STORED
    assert bug_fold.missing() == []
    assert BUG.case_id("BUG-0001") == "desk/bug/BUG-0001"


def test_an_approval_written_before_people_were_recorded_reads_and_counts_for_nobody() -> None:
    old = {"login": "alice", "identity": "alice", "shared": False, "head": "a" * 40, "codeowner": True,
           "via": "desk", "note": ""}
    bug = fold("BUG-0001", [Event(1, "desk/bug/BUG-0001", 1, "approval.recorded", old, "t1", "", "")])
    assert bug.approvals == [old]  # as written: no fields it never had
    assert ApprovalRecorded.model_validate(old).approval is None


@pytest.mark.parametrize("payload", [
    {"bug_id": "BUG-0001", "component": "checkout"},  # a field missing
    {"bug_id": "BUG-0001", "component": "checkout", "title": "t", "severity": "high"},  # a field no class declares
    {"bug_id": "BUG-0001", "component": "checkout", "title": 7},  # a wrong type
])
def test_a_stored_event_its_class_does_not_declare_is_refused(payload: dict[str, object]) -> None:
    with pytest.raises(UnreadableEventError):
        fold("BUG-0001", [Event(1, "desk/bug/BUG-0001", 1, "bug.opened", payload, "t1", "", "")])
