"""The rule behind verify_fix, at the repair workflow itself (every face calls it): a candidate is
judged only on a frozen harness a person approved as shown. From the agent's side: an approval of
other content, a card nobody answered, declined or expired, or its own harness swapped in under a
real approval, each runs nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from signoff.gate.approvals import Decision
from signoff.gate.binding import MAX_CONTENT, content_digest
from signoff.kernel.errors import RefusedError, UsageError
from signoff.kernel.settings import Settings
from signoff.repair.fixture import FixtureRepo, examples_root
from signoff.repair.harness import freeze
from signoff.repair.harness_approval import (
    CARD_CONTENT_LIMIT,
    FixCheck,
    frozen,
    harness_content,
    require_approved_harness,
    verify_fix,
)
from signoff.repair.verifier import harness_store

HARNESS = examples_root() / "coupon" / "harness"
CARD = "bound.card"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.load(home=tmp_path / "home")


def _decision(state: str, content: str | None, reason: str = "") -> Decision:
    return Decision(CARD, "room-1", state, content_digest(content) if content is not None else None,
                    responder_name="Alice" if state == "approved" else None, reason=reason)


def test_a_card_shows_what_one_approval_card_may_hold() -> None:
    assert CARD_CONTENT_LIMIT == MAX_CONTENT


def test_only_an_approval_of_this_harness_as_shown_counts(settings: Settings, tmp_path: Path) -> None:
    digest = freeze(HARNESS, harness_store(settings)).digest
    shown = harness_content(settings, frozen(settings, digest))
    assert (HARNESS / "test_coupon.py").read_text() in shown and digest in shown
    require_approved_harness(settings, digest, CARD, _decision("approved", shown))  # counts
    # The agent's own harness (its test made to pass whatever the code does), under that approval.
    own = tmp_path / "own"
    shutil.copytree(HARNESS, own)
    (own / "test_coupon.py").write_text("def test_coupon_applies_once():\n    assert True\n")
    own_digest = freeze(own, harness_store(settings)).digest
    with pytest.raises(RefusedError, match=f"harness {own_digest[:12]} is not approved by 'bound.card': the card "
                                           "was for other content"):
        require_approved_harness(settings, own_digest, CARD, _decision("approved", shown))


@pytest.mark.parametrize(("state", "reason"), [
    ("pending", "waiting for a listed responder"), ("declined", "Alice chose 'no'"),
    ("expired", "nobody answered before the card expired"), ("unbound", "the card was for other content"),
])
def test_an_approval_that_is_not_given_runs_nothing(settings: Settings, coupon: FixtureRepo, state: str,
                                                    reason: str) -> None:
    digest = freeze(HARNESS, harness_store(settings)).digest
    shown = harness_content(settings, frozen(settings, digest))
    check = FixCheck(coupon.path, "main", "genuine-fix", digest, "test_coupon.py::test_coupon_applies_once",
                     allow=["cart.py"])
    with pytest.raises(RefusedError, match=f"is not approved by 'bound.card': {reason}") as refused:
        verify_fix(settings, check, CARD, _decision(state, shown, reason))
    assert "request_harness_approval" in (refused.value.fix or "")
    assert not settings.evidence_dir.exists() or not any(settings.evidence_dir.iterdir())  # nothing ran


def test_a_harness_id_that_is_no_digest_is_a_usage_error(settings: Settings) -> None:
    for bad in ("0" * 63, "../" + "0" * 61, "F" * 64):
        with pytest.raises(UsageError, match="bad harness id"):
            require_approved_harness(settings, bad, CARD, _decision("approved", "x"))
