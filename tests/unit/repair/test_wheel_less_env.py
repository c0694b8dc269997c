"""Preparing the test environment with the wheel-less test dependencies left out (verifier's
_prepare_without_wheel_less): the harness's imports are read only when pip fails, and they still
decide what may be left out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from signoff import sandbox
from signoff.kernel.settings import Settings
from signoff.repair import verifier
from signoff.repair.testenv import Plan
from signoff.repair.verifier import VerifyRequest, _prepare_without_wheel_less

MISSING = "pip could not install requirements.txt: No matching distribution found for mkautodoc==0.2.0"


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failures: list[str], harness_imports: set[str],
         lines: tuple[str, ...] = ("chardet==5.2.0", "mkautodoc==0.2.0", "pytest==7.4.4"),
         pip_runs: list[str] | None = None) -> tuple[Any, list[str], list[str], Plan]:
    asked: list[str] = []
    # What was left out is remembered beside the environments' cache: each test's own, under its home, never
    # the suite's shared cache (where another test's plan of the same lines would be recalled).
    monkeypatch.delenv("SIGNOFF_REPAIR_ENV_CACHE", raising=False)
    monkeypatch.setattr(verifier, "_imported_by", lambda *_a: asked.append("imports") or harness_imports)

    def prepare(*_a: object, **_k: object) -> str:
        if pip_runs is not None:
            pip_runs.append("pip")
        if failures:
            raise sandbox.PipError(failures.pop(0), "fix", "log")
        return "the environment"
    monkeypatch.setattr(sandbox, "prepare_python_env", prepare)
    plan = Plan(lines=list(lines))
    req = VerifyRequest(repo=tmp_path, base="b", candidate="c", harness=tmp_path, expect="test_x.py::test_x")
    env, left_out, _first = _prepare_without_wheel_less(plan, tmp_path, Settings.load(home=tmp_path, env={}), req,
                                                        None, tmp_path)
    return env, left_out, asked, plan


def test_the_harness_is_not_read_when_pip_succeeds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env, left_out, asked, _plan = _run(tmp_path, monkeypatch, [], {"mkautodoc"})
    assert (env, left_out, asked) == ("the environment", [], [])


def test_a_wheel_less_line_the_harness_does_not_import_is_left_out(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    env, left_out, asked, plan = _run(tmp_path, monkeypatch, [MISSING], {"chardet"})
    assert (env, left_out, asked) == ("the environment", ["mkautodoc==0.2.0"], ["imports"])
    assert plan.lines == ["chardet==5.2.0", "pytest==7.4.4"]


def test_one_the_harness_imports_is_pips_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(sandbox.PipError, match="mkautodoc"):
        _run(tmp_path, monkeypatch, [MISSING], {"mkautodoc"})


# ansible's test/lib/ansible_test/_data/requirements/units.txt of 2019 (BugsInPy ansible 16): five direct test
# dependencies published as source only, none of which the test imports.
ANSIBLE_UNITS = ("jinja2", "placebo", "pycrypto", "mock", "pytest-mock", "f5-sdk", "f5-icontrol-rest",
                 "linode-python", "pytest")
SOURCE_ONLY = ["placebo", "pycrypto", "f5-sdk", "f5-icontrol-rest", "linode-python"]


def _missing(names: list[str]) -> list[str]:
    return [f"pip could not install units.txt: No matching distribution found for {n}" for n in names]


def test_every_wheel_less_line_the_harness_does_not_import_is_left_out(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    env, left_out, _asked, plan = _run(tmp_path, monkeypatch, _missing(SOURCE_ONLY), {"ansible", "units"},
                                       ANSIBLE_UNITS)
    assert (env, left_out) == ("the environment", SOURCE_ONLY)
    assert plan.lines == ["jinja2", "mock", "pytest-mock", "pytest"]


def test_the_next_verification_of_the_plan_runs_no_failing_pip_again(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _run(tmp_path, monkeypatch, _missing(SOURCE_ONLY), {"ansible"}, ANSIBLE_UNITS)
    pip_runs: list[str] = []
    env, left_out, _asked, plan = _run(tmp_path, monkeypatch, [], {"ansible"}, ANSIBLE_UNITS, pip_runs)
    assert (env, left_out, pip_runs) == ("the environment", SOURCE_ONLY, ["pip"])
    assert plan.lines == ["jinja2", "mock", "pytest-mock", "pytest"]


def test_what_was_left_out_for_another_harness_is_not_left_out_for_one_that_imports_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _run(tmp_path, monkeypatch, [MISSING], {"chardet"})
    with pytest.raises(sandbox.PipError, match="mkautodoc"):
        _run(tmp_path, monkeypatch, [MISSING], {"mkautodoc"})


# A pytest pinned to a release with no wheel for this Python (nothing the run may go without): pip's final answer.
FINAL = "pip could not install requirements.txt: No matching distribution found for pytest==3.0.0"


def test_pips_final_failure_for_a_plan_is_remembered_and_not_paid_again(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    pip_runs: list[str] = []
    with pytest.raises(sandbox.PipError, match=r"pytest==3\.0\.0"):
        _run(tmp_path, monkeypatch, [MISSING, FINAL], {"chardet"}, pip_runs=pip_runs)
    assert pip_runs == ["pip", "pip"]  # mkautodoc left out, then pip's last word
    with pytest.raises(sandbox.PipError, match=r"pytest==3\.0\.0") as again:
        _run(tmp_path, monkeypatch, [MISSING, FINAL], {"chardet"}, pip_runs=pip_runs)
    assert pip_runs == ["pip", "pip"] and again.value.log.startswith("(recalled: pip failed so for this plan")


def test_a_failure_of_the_network_or_of_a_needed_line_is_not_remembered(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    offline = f"{FINAL} (WARNING: Retrying (Retry(total=4)) after connection broken)"
    for failure, imports in ((offline, {"chardet"}), (MISSING, {"mkautodoc"})):
        pip_runs: list[str] = []
        for _ in range(2):
            with pytest.raises(sandbox.PipError):
                _run(tmp_path, monkeypatch, [failure], imports, pip_runs=pip_runs)
        assert pip_runs == ["pip", "pip"], failure


def test_a_memo_an_older_leaving_out_rule_wrote_is_never_found_again(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """websockets (blind18bz): pip's final failure for a plan naming mitmproxy was remembered before the rule that
    leaves out a direct requirement pip's conflict names; recalled, it would have said the same for good. The memo
    is keyed by the rules too."""
    from signoff.repair import wheel_less

    now = wheel_less.memo_path(tmp_path, ["mitmproxy", "pytest"], [], None)
    monkeypatch.setattr(wheel_less, "RULES", wheel_less.RULES - 1)
    assert wheel_less.memo_path(tmp_path, ["mitmproxy", "pytest"], [], None) != now
