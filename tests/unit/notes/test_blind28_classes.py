"""Claims the grader checks against commits in hand (no git): the classes found on the blind28 set of
2026-12-08 (semver, capybara, PHP-Parser, tldextract, responses, yamllint)."""

from __future__ import annotations

import json
from pathlib import Path

from signoff.notes.knowledge import Knowledge

from .test_knowledge_classes import _commit, _unsupported

REAL = Path(__file__).resolve().parents[2] / "data" / "notes-real"


def test_the_blind28_set_is_recorded() -> None:
    sets = {json.loads(p.read_text(encoding="utf-8"))["set"] for p in REAL.glob("*/case.json")}
    assert "blind28" in sets


def test_a_merge_of_one_commit_titled_by_its_body_numbers_that_commit() -> None:
    # semver (blind28): GitHub's merge "Merge pull request #253 from mattfarina/fix-bad-versions", whose body is the
    # subject of the one commit it merged, and that commit restate the item alike: one change told twice, not two
    # the item could be, so a number no commit carries, opened after the merge's, was not checkable
    fix = _commit(1, "Fix for allowing some version that were invalid")
    merge = _commit(2, "Merge pull request #253 from mattfarina/fix-bad-versions",
                    "Fix for allowing some version that were invalid", parents=(3, 1))
    base = _commit(3, "Merge pull request #250 from mattfarina/fuzz-cache", "Fuzz testing now supports caching")
    k = Knowledge("v3.3.0..v3.3.1", merge["hash"], [], [merge, fix, base])
    item = "- #{n}: Fix for allowing some version that were invalid\n"
    assert _unsupported(k, item.format(n=253)) == set()
    assert _unsupported(k, item.format(n=254)) == {"#254"}
    # a lower number may be the issue the pull request fixed, opened before it
    assert _unsupported(k, item.format(n=249)) == set()
