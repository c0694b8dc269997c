"""The one content-bound approval: a person approves exactly what was shown, or nothing is made."""

from __future__ import annotations

import pytest

from signoff.kernel.errors import ConflictError, UsageError
from signoff.kernel.shown import short, shown_digest
from signoff.ledger.approval import APPROVE, REFUSE, Approval, Option, approve

SHOWN = {"sentence": "S1", "text": "Fixes the crash on empty input (#12).", "facts": ["F3"]}
WHEN = {"by": "ana", "at": "2026-12-06T07:00:00Z", "via": "web", "fix": "reload the page"}


def test_an_approval_records_what_who_when_how_and_what_the_option_meant() -> None:
    made = approve(SHOWN, shown_digest(SHOWN), what="sentence S1", **WHEN)
    assert made == Approval(what="sentence S1", digest=shown_digest(SHOWN), by="ana", at="2026-12-06T07:00:00Z",
                            via="web", option="approve", meaning="approve")
    assert made.approves and made.binds(SHOWN) and not made.binds({**SHOWN, "text": "Fixes everything."})
    refused = approve(SHOWN, short(shown_digest(SHOWN)), what="sentence S1", option="refuse", **WHEN)
    assert (refused.meaning, refused.approves) == ("refuse", False)
    assert Approval.model_validate(made.model_dump(mode="json")) == made


def test_the_option_means_what_was_offered_not_what_its_label_says() -> None:
    offered = (Option(id="yes", label="Refuse", meaning="approve"), Option(id="no", label="Approve", meaning="refuse"))
    assert approve(SHOWN, shown_digest(SHOWN), what="s", option="no", options=offered, **WHEN).meaning == "refuse"
    with pytest.raises(UsageError, match="not one of the options offered"):
        approve(SHOWN, shown_digest(SHOWN), what="s", option="approve", options=offered, **WHEN)


@pytest.mark.parametrize("given,error", [
    (None, UsageError),  # a face that sent no digest
    ("", UsageError),
    ("not-a-digest", UsageError),
    ("abc", UsageError),  # too short to name anything
    (shown_digest({**SHOWN, "text": "other text"}), ConflictError),  # shown before an edit
    (short(shown_digest({**SHOWN, "facts": []})), ConflictError),
])
def test_a_decision_on_anything_but_what_was_shown_is_refused(given: str | None, error: type[Exception]) -> None:
    with pytest.raises(error) as caught:
        approve(SHOWN, given, what="sentence S1", **WHEN)
    assert "reload the page" in caught.value.fix


@pytest.mark.parametrize("by", ["", "   ", "x" * 201])
def test_a_decision_names_a_person(by: str) -> None:
    with pytest.raises(UsageError, match="person"):
        approve(SHOWN, shown_digest(SHOWN), what="s", **{**WHEN, "by": by})


def test_the_defaults_offer_approve_and_refuse() -> None:
    assert (APPROVE.meaning, REFUSE.meaning) == ("approve", "refuse")
