"""What a verification executes and what its environment's cache key is made of (no sandbox here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.repair import testenv, verifier
from signoff.repair.verifier import execution_groups, write_requirements

ALL = ("base", "candidate", "regression")
TESTS = {"base": ["t.py::fix"], "candidate": ["t.py::fix"], "regression": ["t.py::a", "u.py"]}


def test_the_candidates_two_stages_share_one_execution_and_the_base_runs_alone() -> None:
    assert execution_groups(TESTS, ALL) == [(("base",), ["t.py::fix"]),
                                            (("candidate", "regression"), ["t.py::fix", "t.py::a", "u.py"])]


def test_a_test_named_by_both_candidate_stages_runs_once_in_their_execution() -> None:
    tests = TESTS | {"regression": ["t.py::fix", "t.py::a"]}
    assert execution_groups(tests, ALL)[-1] == (("candidate", "regression"), ["t.py::fix", "t.py::a"])


def test_stages_not_asked_for_or_without_tests_are_not_executed() -> None:
    assert execution_groups(TESTS, ("base",)) == [(("base",), ["t.py::fix"])]
    # The desk's reproduction: base and the regression suite, both on the base revision, apart.
    assert execution_groups(TESTS, ("base", "regression")) == [(("base",), ["t.py::fix"]),
                                                               (("regression",), ["t.py::a", "u.py"])]
    assert execution_groups(TESTS | {"regression": []}, ALL) == [(("base",), ["t.py::fix"]),
                                                                 (("candidate",), ["t.py::fix"])]


def test_the_requirements_text_names_no_folder_of_the_run_and_follows_the_constraints(tmp_path: Path) -> None:
    plan = testenv.Plan(lines=["pytest", "requests"], constraints=["urllib3<2"])
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    first, second = write_requirements(plan, one), write_requirements(plan, two)
    assert first is not None and second is not None
    # The environment cache is keyed by this text: the same declarations give the same key...
    assert first.read_text() == second.read_text()
    assert str(one) not in first.read_text()
    constraints = first.read_text().splitlines()[-1].removeprefix("-c ")
    assert (one / constraints).read_text() == "urllib3<2\n"  # pip reads it beside the requirements file
    # ... and different constraints a different key.
    other = write_requirements(testenv.Plan(lines=["pytest", "requests"], constraints=["urllib3<3"]), tmp_path)
    assert other is not None and other.read_text() != first.read_text()


@pytest.mark.parametrize("given, minor", [("3.8", (3, 8)), ("3.12.4", (3, 12)), (" 3.10 ", (3, 10)), (None, None),
                                          ("three", None)])
def test_the_tests_python_is_read_as_major_and_minor_for_tox_factors(given: str | None,
                                                                     minor: tuple[int, int] | None) -> None:
    assert verifier._minor(given) == minor
