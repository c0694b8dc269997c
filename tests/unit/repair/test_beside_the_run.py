"""The host's work beside a sandbox's run (verifier._Beside): each job once, from whichever run calls
first; a job that failed there, or that no run took, runs at the end, where its error is raised."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.repair.verifier import _Beside, _collision_notes


def test_each_job_runs_once_beside_the_first_run_and_the_rest_at_the_end() -> None:
    done: list[str] = []
    beside = _Beside(signing=False)
    beside.add(lambda: done.append("notes"))
    beside()
    beside()  # a second sandbox (runs apart): nothing again
    beside.finish()
    assert done == ["notes"]
    late = _Beside(signing=False)
    late.add(lambda: done.append("no run"))
    late.finish()  # no sandbox ran (a preflight stopped it): done at the end
    assert done == ["notes", "no run"]


def test_a_job_that_fails_beside_the_run_is_run_again_at_the_end_and_its_error_raised() -> None:
    tries: list[int] = []

    def broken() -> None:
        tries.append(1)
        raise OSError("unreadable RECORD")

    beside = _Beside(signing=False)
    beside.add(broken)
    beside()  # never breaks the sandbox's run
    with pytest.raises(OSError, match="unreadable RECORD"):
        beside.finish()
    assert len(tries) == 2


def test_collision_notes_go_where_the_environment_put_its_own(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    (site / "fork-1.0.dist-info").mkdir(parents=True)
    (site / "fork-1.0.dist-info" / "RECORD").write_text("pricing/__init__.py,,\n")
    tree = tmp_path / "tree"
    (tree / "pricing").mkdir(parents=True)
    (tree / "pricing" / "__init__.py").write_text("")
    notes = ["before", "after"]
    _collision_notes(notes, 1, {"b": tree}, "b", [], site)
    assert notes[0] == "before" and notes[2] == "after"
    assert "collision: the base checkout's" in notes[1] and "fork-1.0" in notes[1] and "`pricing`" in notes[1]
