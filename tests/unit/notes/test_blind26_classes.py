"""Claims the grader checks against commits in hand (no git): the classes found on the blind26 set of
2026-12-08 (icalendar, transitions, devise, PHPMailer, javaparser, mojo)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from signoff.notes.knowledge import Knowledge

from .test_knowledge_classes import _commit, _hash, _unsupported

REAL = Path(__file__).resolve().parents[2] / "data" / "notes-real"


def _dated(commit: dict[str, Any], day: str) -> dict[str, Any]:
    for who in ("author", "committer"):
        commit[who]["date"] = f"{day}T10:00:00+01:00"
    return commit


def test_the_blind26_set_is_recorded() -> None:
    sets = {json.loads(p.read_text(encoding="utf-8"))["set"] for p in REAL.glob("*/case.json")}
    assert "blind26" in sets


def test_a_line_of_a_version_and_its_iso_date_is_the_release_heading() -> None:
    # mojo (blind26): a Perl `Changes` file's "9.47  2026-07-05" over its items was read as prose, where any
    # version is a mention and a date no release's: the four planted versions and dates were not checkable
    k = Knowledge("v9.46..v9.47", None, [{"name": "v9.47", "commit": _hash(1), "date": "2026-07-05T13:00:00+00:00"}],
                  [_dated(_commit(1, "Added query method to Mojolicious::Lite"), "2026-07-05")])
    section = "9.{n}  2026-07-{d}\n  - Added query method to Mojolicious::Lite.\n"
    assert _unsupported(k, section.format(n=47, d="05")) == set()
    assert _unsupported(k, section.format(n=54, d="05")) == {"9.54"}
    assert _unsupported(k, section.format(n=47, d="08")) == {"2026-07-08"}
    # a sentence naming a version and a date is no heading
    assert _unsupported(k, "Since 9.54 2026-07-08 was planned, nothing changed.\n") == set()
