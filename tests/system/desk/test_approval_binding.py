"""Review approvals are the one content-bound approval (signoff.ledger.approval), from the
attacker's side: an approval or a merge naming anything but the change's head now is refused and
records nothing; an accepted one records what the review showed, its digest, who, when, the face
and what the option meant."""

from __future__ import annotations

import pytest

from signoff.desk.approvals import review_shown
from signoff.desk.service import ApproveChange, MergeChange, execute
from signoff.kernel.errors import ConflictError
from signoff.kernel.shown import shown_digest
from tests.support.fixtures.desk import World


class TestDeskReviewApproval:
    def test_an_approval_records_what_the_review_showed(self, review: World) -> None:
        w = review
        change = w.bug().change
        execute(w.desk, w.actor("alice"), ApproveChange(w.bug_id, change["head"], "looks right"))
        recorded = w.bug().approvals[-1]["approval"]
        assert recorded["digest"] == shown_digest(review_shown(w.bug_id, change, change["head"]))
        assert (recorded["by"], recorded["via"], recorded["option"], recorded["meaning"]) == (
            "alice", "desk", "approve", "approve")
        assert recorded["what"] == f"change {change['repo']}#{change['number']} of {w.bug_id}" and recorded["at"]

    @pytest.mark.parametrize("shown", ["other", "", "f" * 40])
    def test_an_approval_of_other_content_is_refused_and_records_nothing(self, review: World, shown: str) -> None:
        w = review
        before = w.ledger.version(f"desk/bug/{w.bug_id}")
        head = w.bug().change["head"]
        named = {"other": head[:-1] + ("0" if head[-1] != "0" else "1"), "": ""}.get(shown, shown)
        with pytest.raises(ConflictError, match="review the current head"):
            execute(w.desk, w.actor("alice"), ApproveChange(w.bug_id, named))
        assert w.ledger.version(f"desk/bug/{w.bug_id}") == before and w.bug().approvals == []

    def test_a_merge_of_a_head_other_than_shown_merges_and_records_nothing(self, review: World) -> None:
        w = review
        head = w.bug().change["head"]
        w.desk.approve(w.actor("alice"), w.bug_id, head)
        before = w.ledger.version(f"desk/bug/{w.bug_id}")
        with pytest.raises(ConflictError, match="nothing was merged"):
            execute(w.desk, w.actor("alice"), MergeChange(w.bug_id, "0" * 40))
        assert w.ledger.version(f"desk/bug/{w.bug_id}") == before
        assert not w.desk.forge.change(w.bug().change["repo"], w.bug().change["number"]).get("merged")
