"""The verdict rules, one case per rule and per INCONCLUSIVE reason (executions reduced to cases)."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.repair.junit import Case
from signoff.repair.verdict import (
    INCONCLUSIVE,
    REJECTED,
    VERIFIED,
    Run,
    _missing_name,
    classify,
    raised_in_checkout,
    reason,
    summarize,
)
from signoff.repair.verifier import Measurements, judge

EXPECT = "test_coupon.py::test_coupon_applies_once"
NEIGHBOURS = ["test_coupon.py::test_zero_coupon_keeps_total", "test_coupon.py::test_empty_cart_costs_nothing"]


def case(test_id: str, outcome: str = "passed", assertion: bool = False, message: str = "") -> Case:
    return Case(test_id, outcome, assertion, "AssertionError" if assertion else None, message)


def fails(test_id: str = EXPECT) -> Case:
    return case(test_id, "failed", True, "AssertionError: 8100 != 9000")


def run(*cases: Case, status: str = "complete", detail: str = "") -> Run:
    return Run(status, detail, list(cases), 1 if any(c.outcome != "passed" for c in cases) else 0)


def decide(base: list[Run], cand: list[Run], regr: list[Run], regression: list[str] | None = None,
           **kw: list[dict[str, str]]) -> tuple[str, list[str]]:
    tests = NEIGHBOURS if regression is None else regression
    verdict, reasons = classify(summarize([EXPECT], base), summarize([EXPECT], cand), summarize(tests, regr), **kw)
    return verdict, [r["code"] for r in reasons]


GOOD_REGR = [run(*(case(t) for t in NEIGHBOURS))]


def test_genuine_fix_is_verified() -> None:
    assert decide([run(fails())], [run(case(EXPECT))], GOOD_REGR) == (VERIFIED, [])


def test_false_fix_is_rejected() -> None:
    verdict, codes = decide([run(fails())], [run(fails())], GOOD_REGR)
    assert (verdict, codes) == (REJECTED, ["candidate_failed"])


def test_regression_failure_is_rejected() -> None:
    regr = [run(case(NEIGHBOURS[0]), fails(NEIGHBOURS[1]))]
    assert decide([run(fails())], [run(case(EXPECT))], regr) == (REJECTED, ["regression_failed"])


def test_no_regression_tests_requested_is_allowed() -> None:
    assert decide([run(fails())], [run(case(EXPECT))], [], regression=[]) == (VERIFIED, [])


def test_policy_violations_reject_without_executions() -> None:
    v = [reason("not_descendant", "x"), reason("path_not_allowed", "tests/test_cart.py")]
    assert decide([], [], [], violations=v) == (REJECTED, ["not_descendant", "path_not_allowed"])


@pytest.mark.parametrize("code", ["harness_changed", "sandbox_unavailable", "environment_unprepared"])
def test_preflight_reasons_are_inconclusive(code: str) -> None:
    assert decide([], [], [], preflight=[reason(code, "")]) == (INCONCLUSIVE, [code])


def test_preflight_beats_violations() -> None:
    # A changed harness means nothing was judged at all, not even the policy.
    verdict, codes = decide([], [], [], preflight=[reason("harness_changed", "")],
                            violations=[reason("not_descendant", "")])
    assert (verdict, codes) == (INCONCLUSIVE, ["harness_changed"])


def test_base_that_passes_did_not_reproduce() -> None:
    verdict, codes = decide([run(case(EXPECT))], [run(case(EXPECT))], GOOD_REGR)
    assert (verdict, codes) == (INCONCLUSIVE, ["base_not_reproduced"])


def test_base_failing_without_assertion_did_not_reproduce() -> None:
    imp = Case(EXPECT, "failed", False, "ModuleNotFoundError", "No module named cart")
    verdict, codes = decide([run(imp)], [run(case(EXPECT))], GOOD_REGR)
    assert (verdict, codes) == (INCONCLUSIVE, ["base_not_reproduced"])
    col = Case("test_coupon.py", "error", False, None, "collection failure")
    assert decide([run(col)], [run(case(EXPECT))], GOOD_REGR)[1] == ["base_not_reproduced"]


def test_base_not_reproduced_is_never_rejected() -> None:
    # Without a reproduced defect the harness has not shown it can judge; a failing candidate
    # is therefore not proof against it.
    verdict, _codes = decide([run(case(EXPECT))], [run(fails())], GOOD_REGR)
    assert verdict == INCONCLUSIVE


def test_parametrised_expected_test() -> None:
    ids = [f"{EXPECT}[{i}]" for i in range(3)]
    base = run(case(ids[0]), fails(ids[1]), case(ids[2], "error"))  # any assertion failure reproduces
    partial = run(case(ids[0]), case(ids[1]), fails(ids[2]))  # passing needs every case
    assert decide([base], [partial], GOOD_REGR)[0] == REJECTED
    assert decide([base], [run(*(case(i) for i in ids))], GOOD_REGR) == (VERIFIED, [])
    skipped = run(case(ids[0]), case(ids[1]), case(ids[2], "skipped"))
    assert decide([base], [skipped], GOOD_REGR) == (INCONCLUSIVE, ["test_skipped"])
    # The guard's record of an xfail mark that held keeps the AssertionError the case expected: no
    # failure, so no assertion of the stage (the JUnit report reads it as a pass without one).
    held = run(case(ids[0]), case(ids[1], "passed", True), case(ids[2]))
    assert summarize([EXPECT], [held]).assertion is False
    assert decide([held], [run(*(case(i) for i in ids))], GOOD_REGR) == (INCONCLUSIVE, ["base_not_reproduced"])


@pytest.mark.parametrize("status", ["timeout", "resource_limit", "no_report", "bad_report", "inconsistent",
                                    "sandbox_unavailable"])
def test_incomplete_executions_are_inconclusive(status: str) -> None:
    broken = [run(status=status, detail="x")]
    assert decide(broken, [run(case(EXPECT))], GOOD_REGR) == (INCONCLUSIVE, [status])
    assert decide([run(fails())], broken, GOOD_REGR) == (INCONCLUSIVE, [status])
    assert decide([run(fails())], [run(case(EXPECT))], broken) == (INCONCLUSIVE, [status])


def test_complete_failure_rejects_even_if_another_stage_is_incomplete() -> None:
    verdict, codes = decide([run(fails())], [run(fails())], [run(status="timeout")])
    assert (verdict, codes) == (REJECTED, ["candidate_failed", "timeout"])


def test_flaky_repeats_are_inconclusive() -> None:
    verdict, codes = decide([run(fails())], [run(case(EXPECT)), run(fails())], GOOD_REGR)
    assert (verdict, codes) == (INCONCLUSIVE, ["flaky"])
    # Repeats that agree are fine, even when the messages differ.
    same = [run(case(EXPECT)), run(case(EXPECT)), run(case(EXPECT))]
    assert decide([run(fails()), run(case(EXPECT, "failed", True, "other text"))], same, GOOD_REGR)[0] == VERIFIED


def test_missing_tests_are_inconclusive() -> None:
    assert decide([run()], [run(case(EXPECT))], GOOD_REGR) == (INCONCLUSIVE,
                                                               ["missing_test", "base_not_reproduced"])
    assert decide([run(fails())], [run()], GOOD_REGR) == (INCONCLUSIVE, ["missing_test"])
    only_one = [run(case(NEIGHBOURS[0]))]
    assert decide([run(fails())], [run(case(EXPECT))], only_one) == (INCONCLUSIVE, ["missing_test"])


def test_errored_or_skipped_candidate_is_not_a_pass() -> None:
    err = run(Case(EXPECT, "error", False, None, "failed on setup"))
    assert decide([run(fails())], [err], GOOD_REGR) == (INCONCLUSIVE, ["test_error"])
    skip = run(case(EXPECT, "skipped"))
    assert decide([run(fails())], [skip], GOOD_REGR) == (INCONCLUSIVE, ["test_skipped"])
    regr_err = [run(case(NEIGHBOURS[0]), Case(NEIGHBOURS[1], "error", False, None, "x"))]
    assert decide([run(fails())], [run(case(EXPECT))], regr_err) == (INCONCLUSIVE, ["test_error"])


def test_not_run_stage_is_inconclusive() -> None:
    assert decide([run(fails())], [], GOOD_REGR)[0] == INCONCLUSIVE


def test_summary_carries_the_assertion_message() -> None:
    s = summarize([EXPECT], [run(fails())])
    assert (s.outcome, s.assertion, s.message) == ("failed", True, "AssertionError: 8100 != 9000")


# -- judge: what a verification's measurements mean, without a sandbox ------------------------------


def _measured(base: list[Run], cand: list[Run], regr: list[Run], **facts: object) -> Measurements:
    return Measurements("b" * 40, "c" * 40, {"base": [EXPECT], "candidate": [EXPECT], "regression": [NEIGHBOURS[0]]},
                        {"base": base, "candidate": cand, "regression": regr}, **facts)  # type: ignore[arg-type]


def test_judge_reads_the_measured_runs_into_the_verdict() -> None:
    judged = judge(_measured([run(fails())], [run(case(EXPECT))], [run(case(NEIGHBOURS[0]))]))
    assert (judged.verdict, judged.reasons) == (VERIFIED, [])
    assert {s: x.outcome for s, x in judged.summaries.items()} == {"base": "failed", "candidate": "passed",
                                                                  "regression": "passed"}
    false_fix = judge(_measured([run(fails())], [run(fails())], [run(case(NEIGHBOURS[0]))]))
    assert false_fix.verdict == REJECTED and false_fix.reasons[0]["code"] == "candidate_failed"


def test_judge_rejects_on_the_policy_git_measured_whatever_ran() -> None:
    judged = judge(_measured([], [], [], descends=False, outside=["setup.py"]))
    assert judged.verdict == REJECTED
    assert [r["code"] for r in judged.reasons] == ["not_descendant", "path_not_allowed"]


def test_judge_is_inconclusive_when_a_step_stopped_the_runs_or_a_run_was_tampered_with() -> None:
    stopped = judge(_measured([], [], [], preflight=[reason("environment_unprepared", "pip failed")]))
    assert stopped.verdict == INCONCLUSIVE and stopped.reasons[0]["code"] == "environment_unprepared"
    tampered = judge(_measured([run(fails())], [run(status="harness_integrity", detail="canary missing")],
                               [run(case(NEIGHBOURS[0]))]))
    assert tampered.verdict == INCONCLUSIVE and tampered.reasons[0]["code"] == "harness_integrity"


def test_every_inconclusive_reason_says_what_to_do() -> None:
    """The CLI ends every INCONCLUSIVE with an `error:` and a `fix:`: each reason that is not a
    rejection carries a fix, and a base that did not show the defect says why in its fix."""
    from signoff.repair.verdict import REASONS, REJECTING, reason

    for code in REASONS:
        if code not in REJECTING:
            assert reason(code, "detail").get("fix"), code
    assert "check --base" in reason("base_not_reproduced", "base: it passed")["fix"]
    assert "--python" in reason("base_not_reproduced", "base: it passed")["fix"]  # a defect of one Python version
    assert "pytest.raises" in reason("base_not_reproduced", "base: it errored (TypeError: x)")["fix"]


def test_an_exception_the_code_under_test_raised_on_base_shows_the_defect() -> None:
    """thefuck's rule indexing past the end on base: the defect, shown as a crash. The guard's
    authenticated record says where it was raised; the report alone never does."""
    crash = Case(EXPECT, "failed", False, "IndexError", "IndexError: list index out of range")

    def guarded(origin: str | None, exception: str = "IndexError", lacks: str | None = None) -> Run:
        r = run(crash)
        r.guard = {"observed": {EXPECT: {"outcome": "failed", "assertion": False, "exception": exception,
                                         "origin": origin, "lacks": lacks}}}
        return r

    assert decide([guarded("checkout")], [run(case(EXPECT))], GOOD_REGR) == (VERIFIED, [])
    assert decide([guarded("checkout")], [run(fails())], GOOD_REGR)[0] == REJECTED
    # The test ran into what the base's code lacks (a name or keyword the fix adds), as the guard named
    # it: shown, as plain pytest counts it (cookiecutter's exceptions.FailedHookException).
    lacking = guarded("harness", "AttributeError", "cookiecutter.exceptions.FailedHookException")
    assert decide([lacking], [run(case(EXPECT))], GOOD_REGR) == (VERIFIED, [])
    assert decide([lacking], [run(fails())], GOOD_REGR)[0] == REJECTED
    # The harness's own kind of failed check (PySnooper's OutputFailure, a class its tests/utils.py defines).
    own_check = guarded("harness", "OutputFailure")
    own_check.guard["observed"][EXPECT]["harness_check"] = True  # type: ignore[index]
    assert decide([own_check], [run(case(EXPECT))], GOOD_REGR) == (VERIFIED, [])
    # An exception of a harness callback the code under test called and let through (sentry-python's
    # before_breadcrumb raising ZeroDivisionError, which the fix contains); never an environment problem.
    let_through = guarded("harness", "ZeroDivisionError")
    let_through.guard["observed"][EXPECT]["let_through"] = True  # type: ignore[index]
    assert decide([let_through], [run(case(EXPECT))], GOOD_REGR) == (VERIFIED, [])
    assert decide([let_through], [run(fails())], GOOD_REGR)[0] == REJECTED
    import_error = guarded("harness", "ModuleNotFoundError")
    import_error.guard["observed"][EXPECT]["let_through"] = True  # type: ignore[index]
    assert decide([import_error], [run(case(EXPECT))], GOOD_REGR)[1] == ["base_not_reproduced"]
    # An exception the harness raised that left its own `with pytest.raises(X)` block, not an X (exceptiongroup's
    # KeyError, which the fixed catch() groups); never an environment problem.
    escaped = guarded("harness", "KeyError")
    escaped.guard["observed"][EXPECT]["escaped_raises"] = True  # type: ignore[index]
    assert decide([escaped], [run(case(EXPECT))], GOOD_REGR) == (VERIFIED, [])
    assert decide([escaped], [run(fails())], GOOD_REGR)[0] == REJECTED
    escaped_import = guarded("harness", "ImportError")
    escaped_import.guard["observed"][EXPECT]["escaped_raises"] = True  # type: ignore[index]
    assert decide([escaped_import], [run(case(EXPECT))], GOOD_REGR)[1] == ["base_not_reproduced"]
    # A syntax error in code the checkout generated and compiled (attrs' __init__ scripts) is its crash;
    # one in a module that does not parse is not.
    generated = guarded("checkout", "SyntaxError")
    generated.guard["observed"][EXPECT]["message"] = "invalid syntax (<attrs generated init a.<locals>.C>, line 2)"  # type: ignore[index]
    assert decide([generated], [run(case(EXPECT))], GOOD_REGR) == (VERIFIED, [])
    unparsed = guarded("checkout", "SyntaxError")
    unparsed.guard["observed"][EXPECT]["message"] = "invalid syntax (cart.py, line 2)"  # type: ignore[index]
    assert decide([unparsed], [run(case(EXPECT))], GOOD_REGR)[1] == ["base_not_reproduced"]
    # Raised by the test itself with nothing of the checkout named, by no code we know, with no guard
    # record, or an environment problem raised from the checkout: not shown.
    for base in (guarded("harness"), guarded("unknown"), run(crash), guarded("checkout", "ModuleNotFoundError"),
                 guarded("unknown", "AttributeError", "x.y"), guarded("harness", "AttributeError", "")):
        assert decide([base], [run(case(EXPECT))], GOOD_REGR) == (INCONCLUSIVE, ["base_not_reproduced"])
    # A setup error is never the defect, wherever it came from.
    setup = run(Case(EXPECT, "error", False, "IndexError", "x"))
    setup.guard = {"observed": {EXPECT: {"outcome": "error", "exception": "IndexError", "origin": "checkout"}}}
    assert decide([setup], [run(case(EXPECT))], GOOD_REGR)[1] == ["base_not_reproduced"]


def test_a_run_stopped_by_a_plugin_importing_the_project_says_so() -> None:
    """sanic's test extra installs pytest-sanic, which imports sanic at start-up, before the checkout
    joins the path: the fix names the plugin as the thing to leave out."""
    fix = reason("no_report", "base: exit 1, no JUnit report; ModuleNotFoundError: No module named 'sanic'")["fix"]
    assert "`sanic`" in fix and "leave that plugin out" in fix
    assert reason("no_report", "base: exit 1, no JUnit report; killed")["fix"].startswith("the runner's output")
    # requests' 2022 test requirements: pytest-httpbin's Flask 1 imports what markupsafe 2.1 removed.
    stale = reason("no_report", "base: exit 1, no JUnit report; ImportError: cannot import name 'soft_unicode' from "
                   "'markupsafe' (/opt/signoff-venv/lib/python3.9/site-packages/markupsafe/__init__.py)")["fix"]
    assert "`markupsafe` no longer has `soft_unicode`" in stale and "--requirements" in stale


def test_a_run_that_reads_files_relative_to_the_project_root_says_so() -> None:
    """scrapy's conftest opens `tests/py3-ignores.txt` from where pytest starts: the line that says so
    (the verifier runs again from a copy of the project), and the fix where that was not chosen."""
    from signoff.repair.verdict import project_files_line

    stopped = run(status="collection_error", detail="pytest could not start: FileNotFoundError: [Errno 2] No such "
                                                    "file or directory: 'tests/py3-ignores.txt'")
    assert project_files_line(stopped).endswith("'tests/py3-ignores.txt'")
    assert "--workdir project" in reason("collection_error", stopped.detail)["fix"]
    failed = run(case(EXPECT, "failed", False, "line 1\nOSError: [Errno 30] Read-only file system: 'out.txt'\nx"))
    assert project_files_line(failed) == "OSError: [Errno 30] Read-only file system: 'out.txt'"
    assert project_files_line(run(fails())) == ""
    assert project_files_line(run(case(EXPECT, "failed", False, "No such file or directory: '/etc/x'"))) == ""
    # configparser skips a settings file it cannot find: a section missing is all that shows (SQLAlchemy's plugin).
    no_section = run(status="no_report",
                     detail="exit 3, no JUnit report; configparser.NoSectionError: No section: 'db'")
    assert project_files_line(no_section).endswith("No section: 'db'")


def test_a_module_the_checkout_does_not_commit_is_named_as_such(tmp_path: Path) -> None:
    """pandas' `_libs` are Cython committed as source; a setuptools_scm project's `_version.py` is
    written at install: `No module named 'pkg._x'` is then the checkout's own gap, not a dependency
    to install, and the fix says signoff builds nothing."""
    from signoff.repair.testenv import unbuilt_module

    (tmp_path / "pkg" / "_libs").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "_libs" / "tslib.pyx").write_text("")
    compiled = unbuilt_module("pytest could not start: No module named 'pkg._libs.tslib'", tmp_path, [])
    assert compiled.startswith("`pkg._libs.tslib` is the checkout's own compiled extension: pkg/_libs/tslib.pyx")
    generated = unbuilt_module("tests/test_x.py: ModuleNotFoundError: No module named 'pkg._version'", tmp_path, [])
    assert "not committed" in generated and "setuptools_scm" in generated
    assert unbuilt_module("No module named 'six.moves'", tmp_path, []) == ""  # a dependency: install it
    assert unbuilt_module("No module named 'pkg'", tmp_path, []) == ""
    assert "builds nothing" in reason("collection_error", f"x: No module named 'pkg._version' ({generated})")["fix"]
    # cleo's test imports a helper module of a package the harness holds only partly: a helper, not a pytest
    # too new (the folder `fixtures` says nothing about pytest); a name that is no module says nothing.
    (tmp_path / "tests" / "fixtures").mkdir(parents=True)
    for rel in ("tests/__init__.py", "tests/fixtures/__init__.py", "tests/fixtures/nested1.py"):
        (tmp_path / rel).write_text("")
    detail = "cannot import name 'nested1' from 'tests.fixtures' (unknown location)"
    helper = unbuilt_module(detail, tmp_path, [])
    assert helper.startswith("`tests.fixtures.nested1` is in the checkout but not in the harness")
    assert "freeze the helper" in reason("collection_error", f"base: x.py: ImportError: {detail} ({helper})")["fix"]
    assert unbuilt_module("cannot import name 'Thing' from 'tests.fixtures'", tmp_path, []) == ""
    assert "older pytest" not in reason("collection_error", f"base: x.py: ImportError: {detail}")["fix"]
    # A namespace package the checkout declares (jaraco.functools' `jaraco`): another distribution's module.
    (tmp_path / "jaraco").mkdir()
    (tmp_path / "jaraco" / "__init__.py").write_text("__import__('pkg_resources').declare_namespace(__name__)\n")
    shared = unbuilt_module("No module named 'jaraco.text'", tmp_path, [])
    assert shared.startswith("`jaraco.text` is not in the checkout's `jaraco`, a namespace package")


def test_an_internal_error_of_pytest_is_named_not_read_as_missing_canaries() -> None:
    """A plugin (or the guard) that fails inside pytest stops the session before the canaries run:
    still no verdict, but the line says what failed, where, and what to pin."""
    from signoff.repair.verifier import internal_error

    out = ("INTERNALERROR> Traceback (most recent call last):\nINTERNALERROR>   File \"/opt/v/site-packages/"
           "pytest_twisted.py\", line 3, in pytest_configure\nINTERNALERROR> AttributeError: module 'pytest' has "
           "no attribute 'x'\n1 failed in 1s\n")
    line = internal_error(out)
    assert line.startswith("AttributeError: module 'pytest' has no attribute 'x' (File \"/opt/v/site-packages/"
                           "pytest_twisted.py\", line 3")
    assert internal_error("1 failed in 1s") == ""
    fix = reason("harness_integrity", f"base: pytest stopped with an internal error before its canaries ran: {line}")
    assert "--pytest" in fix["fix"]
    assert reason("harness_integrity", "base: sys.settrace called from /src/x.py:1")["fix"].startswith("a person")


def test_a_pytest_older_than_the_guard_supports_is_told_apart() -> None:
    # pytest 4.6 (httpie's, on Python 3.8) runs under the guard; anything older is named before a run.
    from signoff.repair.verifier import _pytest_too_old

    def installed(version: str) -> list[dict[str, object]]:
        return [{"name": "six", "version": "1.0"}, {"name": "pytest", "version": version}]

    assert _pytest_too_old(installed("4.6.11")) is None and _pytest_too_old(installed("8.3.3")) is None
    assert _pytest_too_old(installed("4.5.0")) == "4.5.0" and _pytest_too_old(installed("3.10.1")) == "3.10.1"


def test_addopts_that_run_tests_elsewhere_or_measure_coverage_are_left_out() -> None:
    # yarl's pytest.ini: xdist workers run outside the guard's process; pytest-cov traces and can fail a run.
    from signoff.repair.pytest_config import read

    ini = ("[pytest]\naddopts =\n  # `pytest-xdist`:\n  --numprocesses=auto\n  -ra --showlocals\n  -p pytest_cov\n"
           "  --cov\n  --cov-config=.coveragerc\n  --strict-markers -n 4 --dist loadfile --cov src -p no:warnings\n"
           "  --mypy --ruff\n"  # linters' items for every file collected, none of them a test
           "  --failed-first --sw --lfnf none\n")  # pytest's cache, which the run leaves out (coverage.py)
    config = read(lambda name: ini.encode() if name == "pytest.ini" else None, "base revision")
    assert config is not None
    assert "addopts = -ra --showlocals --strict-markers -p no:warnings\n" in config.text
    assert config.as_json()["addopts_left_out"] == ["--numprocesses=auto", "-p", "pytest_cov", "--cov",
                                                    "--cov-config=.coveragerc", "-n", "4", "--dist", "loadfile",
                                                    "--cov", "src", "--mypy", "--ruff", "--failed-first", "--sw",
                                                    "--lfnf", "none"]


def test_an_ini_value_over_several_lines_is_written_back_indented() -> None:
    from signoff.repair.pytest_config import read

    ini = "[pytest]\nmarkers =\n    slow: slow tests\n\n    net: needs the network\nxfail_strict = true\n"
    config = read(lambda name: ini.encode() if name == "pytest.ini" else None, "base revision")
    assert config is not None
    assert config.text == ("[pytest]\nmarkers = \n    slow: slow tests\n    net: needs the network\n"
                           "xfail_strict = true\n")


def test_the_projects_configuration_in_a_hidden_ini_or_pytest_9s_own_table_is_read() -> None:
    # parse keeps its configuration in `.pytest.ini`; bidict in pytest 9's `[tool.pytest]`, TOML values.
    from signoff.repair.pytest_config import read

    hidden = read(lambda name: b"[pytest]\naddopts = --cov=parse --doctest-modules\n" if name == ".pytest.ini"
                  else None, "base revision")
    assert hidden is not None and hidden.text == "[pytest]\naddopts = --doctest-modules\n"
    native = ('[tool.pytest]\naddopts = ["-vv", "--numprocesses=auto", "--hypothesis-profile=less"]\n'
              'doctest_optionflags = ["ELLIPSIS"]\nstrict = true\ntestpaths = ["tests"]\n')
    config = read(lambda name: native.encode() if name == "pyproject.toml" else None, "base revision")
    assert config is not None and config.source == "pyproject.toml [tool.pytest] (base revision)"
    assert config.text == ("[pytest]\naddopts = -vv --hypothesis-profile=less\n"
                           "doctest_optionflags = \n    ELLIPSIS\nstrict = true\n")


def test_a_projects_own_plugin_leaves_the_addopts_for_the_guard_to_load() -> None:
    # anyio's `[tool.pytest]` loads its own plugin by its entry point's name (`-p anyio`), which only installing the
    # project registers: the guard loads it from the checkout once the checkout is on the path.
    from signoff.repair.pytest_config import read

    native = '[tool.pytest]\naddopts = ["-rsfE", "-p", "anyio", "-pother", "-p", "no:anyio", "--strict-config"]\n'
    config = read(lambda name: native.encode() if name == "pyproject.toml" else None, "base revision",
                  {"anyio", "anyio.pytest_plugin", "other"})
    assert config is not None and config.text == "[pytest]\naddopts = -rsfE -p no:anyio --strict-config\n"
    assert config.as_json()["addopts_left_out"] == ["-p", "anyio", "-pother"]
    plain = read(lambda name: native.encode() if name == "pyproject.toml" else None, "base revision")
    assert plain is not None and "-p anyio" in plain.text


def test_a_fixture_nothing_provides_is_named_with_what_to_do() -> None:
    # pytest-mock's tests use its own `mocker`; the junit message names only the test's line.
    from signoff.repair.junit import parse_pytest

    report = (b'<testsuite><testcase classname="tests.test_m" name="test_stop" file="tests/test_m.py">'
              b'<error message="failed on setup with &quot;file /harness/tests/test_m.py, line 12&quot;">'
              b"file /harness/tests/test_m.py, line 12\n  def test_stop(mocker):\nE       fixture 'mocker' not found\n"
              b">       available fixtures: cache, capsys\n</error></testcase></testsuite>")
    (case,) = parse_pytest(report)
    assert case.outcome == "error" and case.message.startswith("fixture 'mocker' not found: no conftest.py")
    why = reason("base_not_reproduced", f"base: it errored ({case.message})")
    assert why["fix"].startswith("install the pytest plugin that provides `mocker`")


def test_a_deprecation_of_a_newer_pytest_made_an_error_names_the_pin() -> None:
    # anyio's plugin imports _pytest.python.CallSpec2 (renamed in pytest 9.2) under its `filterwarnings = error`.
    why = reason("no_report", "base: exit 1, no JUnit report; pytest.PytestRemovedIn10Warning: "
                 "_pytest.python.CallSpec2 has been renamed to CallSpec.")
    assert why["fix"].startswith("pytest warned at start-up (pytest.PytestRemovedIn10Warning:")
    assert "--pytest 'pytest<X.Y'" in why["fix"]


def test_a_regression_id_passed_in_some_cases_and_skipped_by_the_harness_in_the_rest_passes() -> None:
    # anyio's test_send_eof runs once per event loop; its conftest skips a loop that is not installed.
    cases = [Case(i, o, False, None, "") for i, o in (("t.py::test_r[asyncio]", "passed"),
                                                       ("t.py::test_r[rsloop]", "skipped"),
                                                       ("t.py::test_y[a]", "skipped"))]
    run = Run("complete", cases=cases)
    regression = summarize(["t.py::test_r"], [run], skips_pass=True)
    assert regression.outcome == "passed" and regression.partly_skipped
    # Only as a regression id with a pass among its cases; the expected test passes only if every case does.
    assert summarize(["t.py::test_r"], [run]).outcome == "skipped"
    assert summarize(["t.py::test_y"], [run], skips_pass=True).outcome == "skipped"


def test_a_skipped_expected_test_names_its_skipped_cases_and_why() -> None:
    # gunicorn's corpus test: the cases of its optional C parser skip without gunicorn_h1c (left out: no wheel).
    cases = [Case("t.py::test_http_parser[python-/h/a.http]", "passed", False, None, ""),
             Case("t.py::test_http_parser[fast-/h/a.http]", "skipped", False, None, "gunicorn_h1c required")]
    s = summarize(["t.py::test_http_parser"], [Run("complete", cases=cases)])
    assert (s.outcome, s.message) == ("skipped", "1 of 2 cases skipped, e.g. test_http_parser[fast-/h/a.http]: "
                                                 "gunicorn_h1c required")
    one = summarize(["t.py::test_http_parser[fast-/h/a.http]"], [Run("complete", cases=cases)])
    assert one.message == "test_http_parser[fast-/h/a.http]: gunicorn_h1c required"


def test_a_direct_test_dependency_without_a_wheel_is_the_one_left_out() -> None:
    # httpx's requirements.txt names its docs tool, published as source only; the run goes without it.
    from signoff.repair.testenv import Plan, wheel_less_line

    plan = Plan(lines=["chardet==5.2.0", "mkautodoc==0.2.0", "Wcag_Contrast.Ratio; python_version >= '3.8'",
                       "pytest==7.4.4"])
    assert wheel_less_line("pip could not install requirements.txt: No matching distribution found for "
                           "mkautodoc==0.2.0", plan) == "mkautodoc==0.2.0"
    assert wheel_less_line("No matching distribution found for wcag-contrast-ratio", plan) == plan.lines[2]
    # Never the pytest the run needs, a dependency of a dependency, or another error.
    assert wheel_less_line("No matching distribution found for pytest==7.4.4", plan) is None
    assert wheel_less_line("No matching distribution found for forbiddenfruit>=0.1.4", plan) is None
    assert wheel_less_line("conflict: blockbuster depends on forbiddenfruit>=0.1.4", plan) is None
    # A dependency's dependency pip names with the direct requirement that wanted it (astroid's release tool tbump
    # needs docopt, source only; blind14): that direct one is left out. Never pytest, nor a line the plan lacks.
    tools = Plan(lines=["contributors-txt>=1.1.0", "tbump~=6.11", "pytest==9.0.2"])
    assert wheel_less_line("pip could not install tox.ini (base revision): No matching distribution found for "
                           "docopt<0.7.0,>=0.6.2 (from tbump)", tools) == "tbump~=6.11"
    assert wheel_less_line("No matching distribution found for iniconfig (from pytest==9.0.2)", tools) is None
    assert wheel_less_line("No matching distribution found for docopt (from coveralls)", tools) is None
    # Or named by pip's conflict (websockets' tox.ini names mitmproxy, whose pyperclip is source only; blind18bz).
    proxy = Plan(lines=["mitmproxy", "python-socks[asyncio]", "trio", "pytest==9.0.2"])
    conflict = ("No matching distribution found for blinker (nor for pillow, pyperclip), as pip's conflict says: "
                "Cannot install 'mitmproxy' because these package versions have conflicting dependencies.")
    assert wheel_less_line(conflict, proxy) == "mitmproxy"
    assert wheel_less_line(conflict.replace("'mitmproxy'", "pytest==9.0.2 and trio"), proxy) == "trio"
    assert wheel_less_line(conflict.replace("'mitmproxy'", "coveralls"), proxy) is None
    # A URL pip cannot download without a network (kombu's requirements/dev.txt, dev12): left out too; with no such
    # line in the plan, nothing.
    offline = "hint: Are you connected to the Internet? If so, check whether your system can connect to github.com"
    urls = Plan(lines=["amqp>=5.3.1", "https://github.com/celery/py-amqp/zipball/main", "pytest==9.0.2"])
    assert wheel_less_line(offline, urls) == "https://github.com/celery/py-amqp/zipball/main"
    assert wheel_less_line(offline, plan) is None


def test_a_left_out_dependency_the_tests_import_is_found_by_its_module_name() -> None:
    from signoff.repair.verifier import _left_out_needed

    collected = Run("collection_error", "ModuleNotFoundError: No module named 'wcag_contrast_ratio.x'")
    failed = Run("complete", cases=[Case("t.py::test_a", "error", False, "ModuleNotFoundError",
                                         "No module named 'tornado'")])
    assert _left_out_needed(["wcag-contrast-ratio", "mkautodoc==0.2.0"], [collected]) == "wcag_contrast_ratio"
    assert _left_out_needed(["tornado==6.0.4"], [Run("complete"), failed]) == "tornado"
    assert _left_out_needed(["mkautodoc==0.2.0"], [collected, failed]) is None


def test_an_option_of_a_left_out_pytest_plugin_is_named_as_its_cause() -> None:
    """python-semantic-release (blind16x): pytest-clarity, published as source only, was left out, and its option
    `--diff-symbols` in the project's addopts stopped pytest on every stage; the reason said the tests were written
    for an older pytest. The left-out plugin is named instead; without a plugin left out, or another error, nothing."""
    from signoff.repair.verifier import _left_out_option

    stopped = Run("collection_error", "pytest could not start: unrecognized arguments: --diff-symbols")
    why = _left_out_option(["pytest-clarity ~= 1.0", "mkautodoc==0.2.0"], [Run("complete"), stopped])
    assert why is not None and "--diff-symbols" in why and "pytest-clarity" in why and "mkautodoc" not in why
    assert _left_out_option(["mkautodoc==0.2.0"], [stopped]) is None
    assert _left_out_option(["pytest-clarity"], [Run("collection_error", "No module named 'x'")]) is None


def test_a_direct_reference_pip_failed_to_build_is_the_one_left_out() -> None:
    # uvicorn's requirements.txt installs h11 from its repository's master (a clone and a build; no network
    # here); its pyproject declares h11 by version, which the plan installs as a wheel.
    from signoff.repair.testenv import Plan, wheel_less_line

    plan = Plan(lines=["h11 @ git+https://github.com/python-hyper/h11.git@master", "h11>=0.8", "httpx==0.27.0",
                       "git+https://example.org/tool.git#egg=tool"])
    failed = "pip could not install requirements.txt: Failed to build 'h11' when git clone --filter=blob:none ..."
    assert wheel_less_line(failed, plan) == plan.lines[0]
    assert wheel_less_line("Failed to build 'tool' when git clone ...", plan) == plan.lines[3]
    # A released requirement that failed to build is not a direct reference: it stays, and pip's error with it.
    assert wheel_less_line("Failed to build 'httpx' when ...", plan) is None


def test_a_base_that_times_out_where_the_candidate_passes_is_named_as_a_possible_hang() -> None:
    # uvicorn #2408: on base the app waits for a body h11 never delivers; the test never returns.
    from signoff.repair.verdict import Summary, classify

    hung = Summary("incomplete", message="timed out after 300s", status="timeout")
    verdict, reasons = classify(hung, Summary("passed"), Summary("passed"))
    assert verdict == "INCONCLUSIVE" and [r["code"] for r in reasons] == ["timeout"]
    assert reasons[0]["detail"] == "base: timed out after 300s, while the candidate's run of the same test passed"
    assert "a time limit of its own" in reasons[0]["fix"]
    # A candidate that timed out as well: the plain reason, nothing said about the base's code.
    _v, both = classify(hung, Summary("incomplete", message="timed out after 300s", status="timeout"),
                        Summary("passed"))
    assert both[0]["detail"] == "base: timed out after 300s" and "time limit" not in both[0]["fix"]


def test_an_expected_test_that_skips_only_what_base_skipped_passes_where_it_ran() -> None:
    # gunicorn's corpus test runs each request with two parsers; the C parser's cases skip on both sides.
    new, old, fast = (f"{EXPECT}[python-new]", f"{EXPECT}[python-old]", f"{EXPECT}[fast-new]")
    base = [run(case(new, "failed", True, "DID NOT RAISE"), case(old), case(fast, "skipped"))]
    fixed = [run(case(new), case(old), case(fast, "skipped"))]
    judged = judge(_measured(base, fixed, [run(case(NEIGHBOURS[0]))]))
    assert (judged.verdict, judged.reasons) == (VERIFIED, [])
    assert judged.summaries["candidate"].skipped_as_on_base and judged.summaries["candidate"].as_json()[
        "skipped_as_on_base"]
    # A skip the candidate brings, or the defect-showing case skipped, is never a pass.
    for cand in ([run(case(new), case(old, "skipped"), case(fast, "skipped"))],
                 [run(case(new, "skipped"), case(old), case(fast, "skipped"))]):
        got = judge(_measured(base, cand, [run(case(NEIGHBOURS[0]))]))
        assert [r["code"] for r in got.reasons] == ["test_skipped"] and got.verdict == INCONCLUSIVE
    # The fixed commit as its own base: what ran passed, the rest skipped, and the reason says so.
    fixed_base = judge(_measured(fixed, fixed, [run(case(NEIGHBOURS[0]))]))
    skipped_case = fast.split("::")[-1]
    assert fixed_base.reasons[0]["detail"] == (
        f"base: it passed in every case that ran (1 of 3 cases skipped, e.g. {skipped_case})")


# -- a regression failure the base shares (Sphinx #13195: Pygments 2.19 changed the HTML compared) ------------


def _shared(on_base: list[Run], cand: list[Run] | None = None) -> tuple[str, list[dict[str, str]]]:
    regr = [run(case(NEIGHBOURS[0]), fails(NEIGHBOURS[1]))]
    return classify(summarize([EXPECT], [run(fails())]), summarize([EXPECT], cand or [run(case(EXPECT))]),
                    summarize(NEIGHBOURS, regr), regression_on_base=summarize([NEIGHBOURS[1]], on_base, True))


def test_a_regression_failure_the_base_shares_is_inconclusive_naming_the_tests_and_what_to_do() -> None:
    verdict, reasons = _shared([run(fails(NEIGHBOURS[1]))])
    assert verdict == INCONCLUSIVE and [r["code"] for r in reasons] == ["regression_fails_on_base"]
    assert NEIGHBOURS[1] in reasons[0]["detail"] and NEIGHBOURS[0] not in reasons[0]["detail"]
    assert "--requirements" in reasons[0]["fix"] and "--regression" in reasons[0]["fix"]
    errored = [run(case(NEIGHBOURS[1], "error", message="fixture 'app' failed"))]
    assert _shared(errored)[0] == INCONCLUSIVE


def test_a_regression_failure_the_base_does_not_share_or_could_not_show_is_rejected_as_before() -> None:
    assert [r["code"] for r in _shared([run(case(NEIGHBOURS[1]))])[1]] == ["regression_failed"]
    assert _shared([run(case(NEIGHBOURS[1]))])[0] == REJECTED
    for unsure in ([run(status="timeout", detail="60 s")], [run(fails(NEIGHBOURS[1])), run(case(NEIGHBOURS[1]))],
                   [run(case(NEIGHBOURS[1], "skipped"))], []):
        assert _shared(unsure)[0] == REJECTED, unsure
    # A candidate that fails the expected test is rejected whatever the base does with the regression ids
    # (the shared failure still says so, after the rejection).
    verdict, reasons = _shared([run(fails(NEIGHBOURS[1]))], cand=[run(fails())])
    assert verdict == REJECTED and [r["code"] for r in reasons] == ["candidate_failed", "regression_fails_on_base"]


def test_tampering_in_the_base_run_of_regression_ids_is_inconclusive() -> None:
    verdict, reasons = _shared([run(status="harness_integrity", detail="canary missing")])
    assert verdict == INCONCLUSIVE and reasons[0]["code"] == "harness_integrity"
    assert "regression on base" in reasons[0]["detail"]


def test_judge_reads_the_base_run_of_failed_regression_ids_and_only_when_measured() -> None:
    from signoff.repair.verifier import REGRESSION_ON_BASE, _regression_on_base

    failing = [run(fails(NEIGHBOURS[0]))]
    measured = _measured([run(fails())], [run(case(EXPECT))], failing)
    assert judge(measured).verdict == REJECTED  # as evidence written before the base's run existed
    assert _regression_on_base(measured, applies=True) == [NEIGHBOURS[0]]
    assert _regression_on_base(measured, applies=False) == []
    measured.tests[REGRESSION_ON_BASE] = [NEIGHBOURS[0]]
    measured.runs[REGRESSION_ON_BASE] = [run(fails(NEIGHBOURS[0]))]
    judged = judge(measured)
    assert judged.verdict == INCONCLUSIVE and judged.reasons[0]["code"] == "regression_fails_on_base"
    assert judged.summaries[REGRESSION_ON_BASE].outcome == "failed"
    # The common case costs nothing: a regression stage that passed asks for no run on base.
    assert _regression_on_base(_measured([run(fails())], [run(case(EXPECT))], [run(case(NEIGHBOURS[0]))]),
                               applies=True) == []


def test_a_test_method_made_in_another_file_is_found_where_pytest_collected_it() -> None:
    # mistune's tests/__init__.py makes a method per fixture example and sets it on a class of
    # test_plugins.py: pytest's xunit1 `file` names tests/__init__.py, its classname the test's module.
    from signoff.repair.junit import parse_pytest, select

    report = (b'<testsuite><testcase classname="test_plugins.TestPlugin1_table" name="test_row_001" '
              b'file="__init__.py" line="11"/><testcase classname="test_m.TestX" name="test_y" file="test_m.py"/>'
              b'</testsuite>')
    made, plain = parse_pytest(report)
    assert [c.id for c in select([made, plain], "test_plugins.py::TestPlugin1_table::test_row_001")] == [made.id]
    assert made.outcome == "passed"
    assert select([made, plain], "test_m.py::TestX::test_y") == [plain]
    assert select([made, plain], "__init__.py::test_row_001") == []


def test_a_left_out_dependency_is_found_by_the_usual_spellings_of_its_module() -> None:
    # tablib's tests import `odf`, from odfpy (published as source only); PyYAML's is `yaml`.
    from signoff.repair.testenv import may_provide
    from signoff.repair.verifier import _left_out_needed

    failed = Run("collection_error", "tests/test_tablib.py: ModuleNotFoundError: No module named 'odf'")
    assert _left_out_needed(["odfpy"], [failed]) == "odf"
    assert may_provide("PyYAML", "yaml") and may_provide("python-dateutil", "dateutil") and may_provide("odfpy", "odf")
    assert not may_provide("odfpy", "od") and not may_provide("pytest-odf", "odf") and not may_provide("xlwt", "xlrd")


def test_the_same_error_on_both_revisions_in_every_test_is_inconclusive_not_a_rejection() -> None:
    """babel's tests without the locale data built at install (dev12): every test raises the same RuntimeError from
    the checkout, on base and candidate; that says nothing of the fix. A candidate that still has the defect fails
    its expected test alike, but its regression tests pass: rejected as before."""
    error = "RuntimeError: The babel data files are not available."
    crash = Case(EXPECT, "failed", False, "RuntimeError", error)
    base = run(crash)
    base.guard = {"observed": {EXPECT: {"outcome": "failed", "assertion": False, "exception": "RuntimeError",
                                        "origin": "checkout"}}}
    regr = [run(*(Case(t, "failed", False, "RuntimeError", error) for t in NEIGHBOURS))]
    on_base = summarize(NEIGHBOURS, regr, True)
    verdict, reasons = classify(summarize([EXPECT], [base]), summarize([EXPECT], [run(crash)]),
                                summarize(NEIGHBOURS, regr), regression_on_base=on_base)
    assert verdict == INCONCLUSIVE and reasons[0]["code"] == "fails_alike"
    assert "babel data files" in reasons[0]["detail"] and "signoff builds nothing" in reasons[0]["fix"]
    verdict, reasons = classify(summarize([EXPECT], [base]), summarize([EXPECT], [run(crash)]), summarize(
        NEIGHBOURS, GOOD_REGR), regression_on_base=on_base)
    assert verdict == REJECTED and [r["code"] for r in reasons] == ["candidate_failed"]


def test_the_guards_record_of_an_inherited_test_method_is_found_under_its_pytest_id() -> None:
    """webargs' TestBottleParser runs `test_invalid_json` of the package's CommonTestCase: the report names the
    case by pytest's dotted classname, the guard by the pytest id; base's crash is found under either."""
    pytest_id = "tests/test_bottleparser.py::TestBottleParser::test_invalid_json"
    reported = "~tests.test_bottleparser.TestBottleParser::test_invalid_json"
    base = run(Case(reported, "failed", False, "JSONDecodeError", "Expecting value"))
    base.guard = {"observed": {pytest_id: {"outcome": "failed", "assertion": False, "exception": "JSONDecodeError",
                                           "origin": "checkout", "lacks": None}}}
    assert raised_in_checkout(base, base.cases)
    base.guard = {"observed": {"tests/test_other.py::TestBottleParser::test_invalid_json": {
        "outcome": "failed", "exception": "JSONDecodeError", "origin": "checkout"}}}
    assert not raised_in_checkout(base, base.cases)


def test_a_traceback_style_of_the_project_is_left_out() -> None:
    """alembic's addopts say `--tb native`: the report's failures are read in pytest's own style, where the
    exception's name ends the text; a native traceback ends with the assertion's explanation instead."""
    from signoff.repair.pytest_config import split_addopts

    assert split_addopts("--tb native -v -r sfxX -p no:warnings --maxfail=100") == (
        "-v -r sfxX -p no:warnings --maxfail=100", ["--tb", "native"])
    assert split_addopts("--tb=no -q") == ("-q", ["--tb=no"])


def test_the_expected_test_crashing_alike_on_both_sides_with_regressions_failing_on_base_is_inconclusive() -> None:
    """babel's checkout without the CLDR data it builds: every test raises `RuntimeError: The babel data files are
    not available` from the checkout's code, on base and candidate alike, the regression tests too. Nothing can be
    judged: INCONCLUSIVE, never a REJECTED of the real fix. A crash that differs, or regressions that pass on base,
    still reject (thefuck's IndexError left unfixed)."""
    message = "RuntimeError: The babel data files are not available"

    def crash(test_id: str = EXPECT, text: str = message) -> Run:
        r = run(Case(test_id, "failed", False, "RuntimeError", text))
        r.guard = {"observed": {test_id: {"outcome": "failed", "assertion": False, "exception": "RuntimeError",
                                          "origin": "checkout", "lacks": None}}}
        return r

    def decide_alike(cand: Run, on_base: list[Run]) -> tuple[str, list[dict[str, str]]]:
        regr = [run(case(NEIGHBOURS[0]), Case(NEIGHBOURS[1], "failed", False, "RuntimeError", message))]
        return classify(summarize([EXPECT], [crash()]), summarize([EXPECT], [cand]), summarize(NEIGHBOURS, regr),
                        regression_on_base=summarize([NEIGHBOURS[1]], on_base, True))

    shared = [run(Case(NEIGHBOURS[1], "failed", False, "RuntimeError", message))]
    verdict, reasons = decide_alike(crash(), shared)
    assert verdict == INCONCLUSIVE and [r["code"] for r in reasons] == ["fails_alike", "regression_fails_on_base"]
    assert "as on the base revision" in reasons[0]["detail"] and message in reasons[0]["detail"]
    assert decide_alike(crash(), [run(case(NEIGHBOURS[1]))])[0] == REJECTED
    assert decide_alike(crash(text="RuntimeError: another"), shared)[0] == REJECTED
    assert "import_cldr" in reasons[0]["fix"]
    shared_only = reason("regression_fails_on_base", "regression: t fail on the base revision too: x")
    assert "--requirements" in shared_only["fix"]


def test_a_toml_addopts_item_holding_an_option_and_its_value_is_read_as_both() -> None:
    """trio's `addopts = ["--strict-markers", "-p trio._tests.pytest_plugin", "--import-mode=importlib"]`."""
    from signoff.repair.pytest_config import split_addopts

    kept, dropped = split_addopts(["--strict-markers", "-p trio._tests.pytest_plugin", "--import-mode=importlib"],
                                  {"trio._tests.pytest_plugin"})
    assert (kept, dropped) == ("--strict-markers --import-mode=importlib", ["-p", "trio._tests.pytest_plugin"])


def test_every_test_erroring_alike_in_its_setup_on_both_revisions_names_that_error_once() -> None:
    """pip-tools' `pip_conf` fixture runs `pip download setuptools`, and runs have no network: the expected test
    errors in its setup on base and candidate, the regression tests too, with the same error. One reason names it
    (with the network's `fix:`), not `base_not_reproduced` telling the person to rewrite the test; so does it when a
    regression test fails otherwise (the bench's breakage). An error that differs between the revisions keeps the
    usual reasons."""
    setup = ("failed on setup with \"subprocess.CalledProcessError: Command '['/venv/bin/python', '-Im', 'pip', "
             "'download', '--no-deps', 'setuptools']' returned non-zero exit status 1.\"")

    def errs(test_id: str = EXPECT, text: str = setup) -> Case:
        return case(test_id, "error", False, text)

    regr = [run(*(errs(t) for t in NEIGHBOURS))]
    verdict, reasons = classify(summarize([EXPECT], [run(errs())]), summarize([EXPECT], [run(errs())]),
                                summarize(NEIGHBOURS, regr))
    assert verdict == INCONCLUSIVE and [r["code"] for r in reasons] == ["fails_alike"]
    assert reasons[0]["detail"].startswith("the expected test and the regression tests errored alike on both "
                                           "revisions") and "'download'" in reasons[0]["detail"]
    assert "network" in reasons[0]["fix"]
    # Not a network error: the fix is the general one (what the run lacks).
    other = "failed on setup with \"RuntimeError: no display\""
    verdict, reasons = classify(summarize([EXPECT], [run(errs(text=other))]),
                                summarize([EXPECT], [run(errs(text=other))]), summarize(NEIGHBOURS, GOOD_REGR))
    assert [r["code"] for r in reasons] == ["fails_alike"] and "network" not in reasons[0]["fix"]
    # A fixture opening the project's files from its root: the working folder's fix, as for a failed test.
    rooted = "failed on setup with \"FileNotFoundError: [Errno 2] No such file or directory: 'tests/cases/a.json'\""
    verdict, reasons = classify(summarize([EXPECT], [run(errs(text=rooted))]),
                                summarize([EXPECT], [run(errs(text=rooted))]), summarize(NEIGHBOURS, GOOD_REGR))
    assert [r["code"] for r in reasons] == ["fails_alike"] and "--workdir project" in reasons[0]["fix"]
    # A regression test failing otherwise: the shared error still comes first, alone (nothing is judged).
    verdict, reasons = classify(summarize([EXPECT], [run(errs())]), summarize([EXPECT], [run(errs())]),
                                summarize(NEIGHBOURS, [run(errs(NEIGHBOURS[0]), fails(NEIGHBOURS[1]))]))
    assert verdict == INCONCLUSIVE and [r["code"] for r in reasons] == ["fails_alike"]
    assert reasons[0]["detail"].startswith("the expected test errored alike")
    # The candidate errs otherwise: as before.
    assert decide([run(errs())], [run(errs(text=other))], regr)[1] == ["base_not_reproduced", "test_error",
                                                                       "test_error"]


def test_regression_tests_whose_file_the_base_could_not_import_do_not_fail_on_base() -> None:
    # parsimonious #211: the fixed test file imports LeftRecursionError, which the base lacks, so on base every
    # test of the file fails at its import; a candidate that fails a regression test otherwise broke it.
    lacks = "test_coupon.py could not be imported: the revision lacks parsimonious.exceptions.LeftRecursionError"
    unimportable = [run(case(EXPECT, "failed", False, lacks))]
    base = summarize([EXPECT], [run(case(EXPECT, "failed", True, lacks))])
    on_base = summarize([NEIGHBOURS[1]], [run(case(NEIGHBOURS[1], "failed", False, lacks))], True)
    # (as pytest words it, with the path the revision was mounted at, which differs between the two base runs)
    said = "ImportError: cannot import name 'LeftRecursionError' from 'parsimonious.exceptions' ({}/exceptions.py)"
    assert _missing_name(said.format("/base")) == _missing_name(said.format("/src")) != ""
    broken = summarize(NEIGHBOURS, [run(case(NEIGHBOURS[0]), fails(NEIGHBOURS[1]))])
    verdict, reasons = classify(base, summarize([EXPECT], [run(case(EXPECT))]), broken, regression_on_base=on_base)
    assert verdict == REJECTED and [r["code"] for r in reasons] == ["regression_failed"]
    # A candidate failing them with the base's own import error still has the base's code: as before.
    alike = summarize(NEIGHBOURS, [run(case(NEIGHBOURS[0]), case(NEIGHBOURS[1], "failed", False, lacks))])
    assert classify(base, summarize([EXPECT], unimportable), alike, regression_on_base=on_base)[0] != VERIFIED


def test_an_installed_plugin_the_guard_left_out_is_noted_once_by_name() -> None:
    from signoff.repair.verifier import refused_plugin_notes

    line = ("signoff guard: the installed pytest plugin flake8 is left out of this run: this pytest refuses it "
            "(PluginValidationError: Plugin 'flake8' for hook 'pytest_collect_file')\n")
    runs = [Run("complete", "", [], 1, {"stderr": line}), Run("complete", "", [], 1, {"stderr": "x\n" + line}),
            Run("complete", "", [], 0, {"stderr": ""}), Run("timeout")]
    notes = refused_plugin_notes(runs)
    assert len(notes) == 1 and notes[0].startswith("the installed pytest plugin flake8 was left out of the runs")


def test_pytest_itself_shadowed_by_the_environment_is_named_with_a_runner_that_can_test_it() -> None:
    """pytest-dev/pytest (blind15b): the guarded run's pytest is the environment's, so pytest's own tests never
    import the candidate's; the line says the project is the runner and the fix names a command template."""
    from signoff.repair.verdict import reason
    from signoff.repair.verifier import _shadowed_line

    line = _shadowed_line(["_pytest (/opt/signoff-venv/lib/python3.11/site-packages/_pytest/__init__.py)",
                           "pytest (/opt/signoff-venv/lib/python3.11/site-packages/pytest/__init__.py)"])
    assert line.startswith("the project under test is pytest itself")
    assert "--runner '{python} -m pytest" in reason("import_shadowed", line)["fix"]
    other = reason("import_shadowed", _shadowed_line(["attr (/opt/signoff-venv/lib/python3.11/site-packages/attr)"]))
    assert other["detail"].startswith("attr (") and "leave the distribution" in other["fix"]


def test_a_base_that_passed_where_it_ran_and_skipped_the_rest_says_it_passed() -> None:
    """markupsafe (blind17b): the fixed commit as its own base passed with the pure module and skipped the unbuilt
    speedups; "it was skipped" sent a person after the skip, when the base simply did not show the defect."""
    cases = [case(f"{EXPECT}[markupsafe._native]"), case(f"{EXPECT}[None]", "skipped", message="speedups unavailable")]
    base = summarize([EXPECT], [run(*cases)])
    verdict, reasons = classify(base, base, summarize(NEIGHBOURS, GOOD_REGR))
    shown = next(r for r in reasons if r["code"] == "base_not_reproduced")
    assert verdict == INCONCLUSIVE and shown["detail"] == (
        "base: it passed in every case that ran (1 of 2 cases skipped, e.g. test_coupon_applies_once[None]: "
        "speedups unavailable)")
    assert "make them run" in shown["fix"]
    # Every case skipped: still a skip.
    skipped = summarize([EXPECT], [run(case(EXPECT, "skipped", message="needs the C parser"))])
    shown = next(r for r in classify(skipped, skipped, summarize(NEIGHBOURS, GOOD_REGR))[1]
                 if r["code"] == "base_not_reproduced")
    assert shown["detail"] == "base: it was skipped (test_coupon_applies_once: needs the C parser)"


def test_a_collection_error_named_by_an_exception_not_called_error_says_what_it_was() -> None:
    """django-model-utils (blind17bz): Django's `ImproperlyConfigured` stopped the test module's import, and the
    reason said pytest's "collection failure", which names nothing."""
    from signoff.repair.junit import collection_cause

    body = ("tests/test_x.py:5: in <module>\n    from tests.models import Post\n"
            "E   django.core.exceptions.ImproperlyConfigured: Requested setting SPLIT_MARKER, but settings are not "
            "configured.\n")
    assert collection_cause(body) == ("django.core.exceptions.ImproperlyConfigured: Requested setting SPLIT_MARKER, "
                                      "but settings are not configured.")
    assert collection_cause("E   AppRegistryNotReady: Apps aren't loaded yet.") == (
        "AppRegistryNotReady: Apps aren't loaded yet.")
    # An error named so still wins over a later line that only looks like one.
    assert collection_cause("E   ModuleNotFoundError: No module named 'x'\nE   Note: see above") == (
        "ModuleNotFoundError: No module named 'x'")


def test_an_import_file_mismatch_says_which_module_came_from_where() -> None:
    from signoff.repair.junit import collection_cause

    body = ("import file mismatch:\nimported module 'tests.test_x' has this __file__ attribute:\n"
            "  /base/tests/test_x.py\n"
            "which is not the same as the test file we want to collect:\n  /harness/tests/test_x.py\n"
            "HINT: remove __pycache__ / .pyc files and/or use a unique basename for your test file modules\n")
    assert collection_cause(body) == ("import file mismatch: tests.test_x was imported from /base/tests/test_x.py "
                                      "before pytest collected /harness/tests/test_x.py")
