"""Claim extraction: what the verifier and the grader treat as a checkable claim."""

from __future__ import annotations

from decimal import Decimal

import pytest

from signoff.notes.claims import extract
from signoff.notes.verify import Support, check_claims


def kinds(text: str, dates: list[str] | None = None) -> list[tuple[str, str]]:
    return [(c.kind, c.token) for c in extract(text, dates)]


@pytest.mark.parametrize("text, expected", [
    ("Fixed in abc1234.", [("hash", "abc1234")]),
    ("Build 1234567 passed.", [("number", "1234567")]),  # hex-shaped but no letter a-f: a number
    ("Commit DEADBEEF1 landed.", [("hash", "DEADBEEF1")]),
    ("Six files, 1,234 lines.", [("word", "Six"), ("number", "1,234")]),
    ("Up 35% or 12.5 percent.", [("percent", "35%"), ("percent", "12.5 percent")]),
    ("Python 3.11 and v1.2.3.", [("number", "3.11"), ("number", "1.2"), ("number", "3")]),
    ("twenty-three commits, a dozen files, dozens of lines.",
     [("word", "twenty-three"), ("word", "a dozen"), ("word", "dozens of")]),
    ("It was twice as fast and halved the size.", [("word", "twice"), ("word", "halved")]),
    ("No one objected; someone asked; one another.", []),
    ("Cited [F12] inline.", []),
    ("UTF-8 paths in file2.py", [("number", "8"), ("number", "2")]),
])
def test_extract(text: str, expected: list[tuple[str, str]]) -> None:
    assert kinds(text) == expected


def test_values_and_precision() -> None:
    c = extract("It grew 44.4%.")[0]
    assert (c.kind, c.value, c.places) == ("percent", Decimal("44.4"), 1)
    c = extract("a dozen")[0]
    assert c.value == Decimal(12)
    c = extract("dozens of bugs")[0]
    assert (c.value, c.low, c.high) == (None, 24, 143)


def test_dates_of_cited_commits_are_not_claims() -> None:
    iso = "2026-11-07T16:46:50+00:00"
    for text in ("on 2026-11-07.", "on November 7, 2026.", "on 7 Nov 2026.", f"at {iso}."):
        assert kinds(text, [iso]) == [], text
    assert [k for k, _ in kinds("on 2026-11-08.", [iso])] == ["number", "number", "number"]


def test_support_rules() -> None:
    s = Support()
    s.add_fact({"kind": "count", "metric": "commits", "value": 12, "scope": "range"})
    s.add_fact({"kind": "derived", "op": "pct_change", "of": ["F1", "F2"], "value": -33.33})
    s.add_fact({"kind": "derived", "op": "ratio", "of": ["F1", "F2"], "value": 2.04})
    s.add_fact({"kind": "commit", "hash": "ab" * 20, "subject": "Support Python 3.11 (issue 7)", "author": "Ann",
                "email": "a@x", "date": "2026-01-02T00:00:00+00:00"})
    errors = check_claims("12 commits, a dozen in all, 33% fewer, 33.3% fewer, 2x, twice, 3.11, issue 7.", s)
    assert errors == []
    bad = check_claims("13 commits, 34% fewer, three times, thousands of lines, ababab1.", s)
    assert [e["code"] for e in bad] == ["NUMBER_UNSUPPORTED", "PERCENT_UNSUPPORTED", "NUMBER_WORD_UNSUPPORTED",
                                        "NUMBER_WORD_UNSUPPORTED", "HASH_UNSUPPORTED"]
    assert [e["token"] for e in bad] == ["13", "34%", "three", "thousands of", "ababab1"]
