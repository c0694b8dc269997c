"""The repair case page lists every stage the verified statement holds, the base's run of the
regression tests the candidate failed included (made only then)."""

from __future__ import annotations

from signoff.web.repair_pages import _stages


def _stage(outcome: str) -> dict[str, object]:
    return {"tests": ["t.py::test_a"], "summary": {"outcome": outcome}}


def test_the_base_run_of_failed_regression_tests_is_shown_after_the_three_stages() -> None:
    statement = {"predicate": {"stages": {"regression_on_base": _stage("failed"), "regression": _stage("failed"),
                                          "candidate": _stage("passed"), "base": _stage("failed")}}}
    shown = _stages(statement)
    assert [(s["name"], s["outcome"]) for s in shown] == [
        ("base", "failed"), ("candidate", "passed"), ("regression", "failed"), ("regression_on_base", "failed")]


def test_a_statement_without_that_run_shows_the_three_stages_only() -> None:
    statement = {"predicate": {"stages": {s: _stage("passed") for s in ("base", "candidate", "regression")}}}
    assert [s["name"] for s in _stages(statement)] == ["base", "candidate", "regression"]
    assert _stages(None) == []
