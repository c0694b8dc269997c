"""Real changelog sections, graded against snapshots of their own tag ranges, with planted false
claims and their true twins (issue 38).

Each case in tests/data/notes-real is a maintainer's section of a public project's changelog, a
minimal snapshot of its range (written once from a clone by `bench/notes_eval.py --export`, which
records the repository, the changelog's commit and the range in `case.json`, with the words of the
pull requests' diffs the grader read from the repository), and what the grader said of it when it
was exported or last refreshed (`--refresh`): the false alarms on the maintainer's true claims (tokens), and for
each planted false claim whether it is flagged. A change to the grader that raises a new false alarm,
loses a planted claim or alarms on a true twin fails here; one that flags a claim recorded as missed
fails too, so the record (and docs/notes.md) is brought up to date with the export.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from signoff.notes.grade import grade_with, snapshot_knowledge

DATA = Path(__file__).resolve().parents[2] / "data" / "notes-real"
CASES = sorted(DATA.glob("*/case.json"))


def _apply(section: str, edit: dict[str, Any]) -> str:
    return section[:edit["at"]] + edit["put"] + section[edit["at"] + edit["cut"]:]


def _case(path: Path) -> tuple[dict[str, Any], str, Path]:
    meta = json.loads(path.read_text(encoding="utf-8"))
    section = next(path.parent.glob("section.*")).read_text(encoding="utf-8")
    return meta, section, path.parent / "snapshot.json"


def test_the_sets_are_there() -> None:
    sets = {json.loads(p.read_text(encoding="utf-8"))["set"] for p in CASES}
    assert len(CASES) >= 40
    assert {"blind20", "blind19", "blind19b", "blind18", "blind18b", "blind17", "blind17b", "blind16", "blind15",
            "blind14", "blind13", "blind12", "blind11", "blind10", "blind9", "blind8", "blind7", "blind6", "blind5",
            "blind4", "blind3", "blind2", "blind", "fresh", "held", "dev"} <= sets


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.parent.name)
def test_a_real_section_and_its_plants_grade_as_recorded(path: Path) -> None:
    meta, section, snapshot = _case(path)
    name, knowledge = meta["changelog"]["path"], snapshot_knowledge(snapshot)
    if "diffs" in meta:  # the words of the diffs the grader read from the repository when exported
        diffs = {commit: set(found.split()) for commit, found in meta["diffs"].items()}
        knowledge.diff_of = lambda commit: diffs.get(commit, set())
        # and the subjects naming a number it read from every branch, where a commit of the range contradicted it
        elsewhere = meta.get("elsewhere", {})
        knowledge.subjects_elsewhere = lambda number: elsewhere.get(number, [])
    graded = grade_with(section, name, knowledge)
    assert graded["claims"]["total"] == meta["claims"]
    assert sorted({u["token"] for u in graded["unsupported"]}) == meta["false_alarms"]
    for plant in meta["plants"]:
        bad = grade_with(_apply(section, plant["false"]), name, knowledge)
        flagged = any(plant["token"] in u["token"] or (plant["token"] in u["sentence"] and u["kind"] == plant["kind"])
                      for u in bad["unsupported"])
        assert flagged == plant["flagged"], (plant["kind"], plant["token"], bad["unsupported"])
        if plant["twin"]["put"] or plant["twin"]["cut"]:  # a twin that is the section itself is graded above
            twin = grade_with(_apply(section, plant["twin"]), name, knowledge)
            assert {u["token"] for u in twin["unsupported"]} <= set(meta["false_alarms"]), (plant["kind"], twin)


def test_the_figures_the_issue_asks_for() -> None:
    """At most 2% false alarms on true claims; every planted false version, date, count and hash
    flagged. References, authors and invented features are still missed in places, each pinned
    above and listed in docs/notes.md."""
    claims = alarms = 0
    missed: list[tuple[str, str, str]] = []
    for path in CASES:
        meta = json.loads(path.read_text(encoding="utf-8"))
        claims += meta["claims"]
        alarms += len(meta["false_alarms"])
        missed += [(path.parent.name, p["kind"], p["token"]) for p in meta["plants"] if not p["flagged"]]
    assert alarms <= 0.02 * claims
    assert [m for m in missed if m[1] not in ("ref", "author", "author-undecidable", "feature")] == []
