"""The guard's authenticated record against the JUnit report (guard.check_pytest): where they differ
the run is read as tampering, except where the report cannot know what the guard does."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

from signoff.repair.guard import PYTEST_RECORD, Plan, check_pytest
from signoff.repair.junit import Case

PLAN = Plan("k" * 64, "test_signoff_canary_0123456789abcdef.py", "test_signoff_canary_0123456789abcdef.py::test_fail",
            "test_signoff_canary_0123456789abcdef.py::test_ok", "nonce123")
TEST = "test_builder.py::TestParse::test_orphan_all_digits"


def _check(case: Case, seen: dict[str, Any]) -> tuple[list[str], list[Case] | None]:
    canaries = [Case(PLAN.failing, "failed", True, "AssertionError", "AssertionError: nonce123"),
                Case(PLAN.passing, "passed", False, None, "")]
    recorded = {PLAN.failing: {"outcome": "failed", "assertion": True, "exception": "AssertionError",
                               "origin": "harness", "message": "nonce123"},
                PLAN.passing: {"outcome": "passed", "assertion": False}, TEST: seen}
    body = json.dumps({"finished": True, "exitstatus": 1, "cases": recorded})
    mac = hmac.new(PLAN.key.encode(), body.encode(), hashlib.sha256).hexdigest()
    files = {PYTEST_RECORD: json.dumps({"body": body, "mac": mac}).encode()}
    findings, own, _recorded = check_pytest(PLAN, [TEST], [*canaries, case], files, 1)
    return findings, own


def test_an_assertion_error_subclass_of_its_own_name_is_an_assertion_not_a_contradiction() -> None:
    # twisted trial's assertEqual raises FailTest(AssertionError): the report names the class, the
    # guard saw isinstance(AssertionError) in the test's own process.
    report = Case(TEST, "failed", False, "twisted.trial.unittest.FailTest", "FailTest: Tuples differ")
    findings, own = _check(report, {"outcome": "failed", "assertion": True, "exception": "FailTest",
                                    "origin": "harness"})
    assert findings == []
    assert own is not None and [c.assertion for c in own] == [True]


def test_a_report_that_claims_an_assertion_the_guard_did_not_see_is_still_a_contradiction() -> None:
    report = Case(TEST, "failed", True, "AssertionError", "AssertionError: x")
    findings, _own = _check(report, {"outcome": "failed", "assertion": False, "exception": "ValueError",
                                     "origin": "checkout"})
    assert findings == [f"{TEST}: the JUnit report says failed by an assertion, the framework's own reports say failed"]


def test_another_exception_than_the_guard_saw_keeps_the_reports_flag_and_the_finding() -> None:
    report = Case(TEST, "failed", False, "ValueError", "ValueError: x")
    findings, own = _check(report, {"outcome": "failed", "assertion": True, "exception": "FailTest",
                                    "origin": "harness"})
    assert len(findings) == 1 and "framework's own reports say failed by an assertion" in findings[0]
    assert own is not None and [c.assertion for c in own] == [False]


def test_canaries_a_plugin_left_uncollected_while_the_tests_ran_are_named_so() -> None:
    """SQLAlchemy's testing plugin collects only its own test classes (alembic's tests, blind12): canaries it left
    out while the requested test ran are both named missing, which the verifier reads as canaries that could
    not run (every stage again with canaries in a class)."""
    from signoff.repair.verifier import CANARIES_NOT_RUN

    ran = Case(TEST, "passed", False, None, "")
    body = json.dumps({"finished": True, "exitstatus": 0, "cases": {TEST: {"outcome": "passed", "assertion": False}}})
    files = {PYTEST_RECORD: json.dumps({"body": body, "mac": hmac.new(PLAN.key.encode(), body.encode(),
                                                                        hashlib.sha256).hexdigest()}).encode()}
    missing = [f"{who}the canary that must {what} did not (missing)" for who in ("", "guard: ")
               for what in ("fail by an assertion", "pass")]
    findings, _own, _recorded = check_pytest(PLAN, [TEST], [ran], files, 0)
    assert [f for f in findings if "did not (missing)" in f] == missing  # the report's and the guard's record
    assert CANARIES_NOT_RUN.search("; ".join(findings))
    # Nothing ran at all: still the two canaries' own findings.
    findings, _own, _recorded = check_pytest(PLAN, [TEST], [], files, 0)
    assert [f for f in findings if "did not (missing)" in f] == missing


def test_canaries_in_a_class_take_the_bases_of_the_first_tests_class_when_the_module_imports_them(
        tmp_path: Path) -> None:
    from signoff.repair.guard import plan_pytest

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_command.py").write_text(
        "from alembic.testing.fixtures import TestBase\nclass Local: pass\n"
        "class StampTest(TestBase):\n    def test_x(self): pass\nclass Other(Local):\n    def test_y(self): pass\n")
    plan = plan_pytest(tmp_path, ["tests/test_command.py::StampTest::test_x"], in_class=True)
    cls = plan.failing.split("::")[1]
    assert cls.startswith("TestSignoffCanary") and plan.passing.split("::")[1] == cls
    source = (tmp_path / plan.canary_file).read_text()
    assert "getattr(_signoff_module, 'StampTest').__bases__" in source and f"class {cls}(*_signoff_bases):" in source
    # A base the module defines itself is taken too (from the class at run time, not as written).
    plan = plan_pytest(tmp_path, ["tests/test_command.py::Other::test_y"], in_class=True)
    assert plan.failing.count("::") == 2
    assert "getattr(_signoff_module, 'Other').__bases__" in (tmp_path / plan.canary_file).read_text()


def test_a_canary_that_errored_says_what_it_ran_into_and_the_fix_names_the_cause() -> None:
    """alembic's conftest starts SQLAlchemy's testing plugin, whose setup of every test reads its class: the
    canaries (plain functions) error there. The finding quotes the error; its fix names the kind of plugin."""
    from signoff.repair.guard import _canary_findings
    from signoff.repair.verdict import reason

    erred = [Case(PLAN.failing, "error", False, "AttributeError",
                  "failed on setup with \"AttributeError: 'NoneType' object has no attribute '__unsupported_on__'\""),
             Case(PLAN.passing, "error", False, None, "")]
    findings = _canary_findings(PLAN, erred)
    assert findings == ["the canary that must fail by an assertion did not (error: failed on setup with "
                        "\"AttributeError: 'NoneType' object has no attribute '__unsupported_on__'\")",
                        "the canary that must pass did not (error)"]
    assert "--runner" in reason("harness_integrity", "; ".join(findings))["fix"]
    assert _canary_findings(PLAN, []) == ["the canary that must fail by an assertion did not (missing)",
                                          "the canary that must pass did not (missing)"]


def test_a_run_stopped_by_an_internal_error_is_named_by_its_cause() -> None:
    """No report, pytest's INTERNALERROR: its own last exception line, not a fragment of the output's tail."""
    from signoff.repair.verifier import internal_error

    out = ("INTERNALERROR> Traceback (most recent call last):\n"
           'INTERNALERROR>   File "/x/sqlalchemy/testing/plugin/plugin_base.py", line 449, in _engine_uri\n'
           'INTERNALERROR>     db_urls.append(file_config.get("db", "default"))\n'
           "INTERNALERROR> configparser.NoSectionError: No section: 'db'\n")
    assert internal_error(out).startswith("configparser.NoSectionError: No section: 'db' (File ")


def test_canaries_in_a_class_take_the_bases_of_the_first_tests_class(tmp_path: Any) -> None:
    """Asked for when plain canaries could not run under a plugin that runs only its own test classes
    (SQLAlchemy's, started by alembic's conftest): methods of a class with the first test's class's bases."""
    import ast

    from signoff.repair.guard import canary_class_of, plan_pytest

    tests = ["tests/test_command.py::UpgradeDowngradeStampTest::test_sql", "tests/test_other.py::T::x"]
    assert canary_class_of(tests) == "UpgradeDowngradeStampTest"
    assert canary_class_of(["tests/test_x.py::test_plain", "tests/test_x.py::TestY::test_z"]) == "TestY"
    assert canary_class_of(["tests/test_x.py::test_plain"]) is None
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_command.py").write_text("from alembic.testing.fixtures import TestBase\n")
    plan = plan_pytest(tmp_path, tests, in_class=True)
    klass = plan.failing.split("::")[1]
    assert klass.startswith("TestSignoffCanary") and plan.passing.split("::")[1] == klass
    source = (tmp_path / plan.canary_file).read_text()
    ast.parse(source)
    assert "getattr(_signoff_module, 'UpgradeDowngradeStampTest').__bases__" in source
    assert f"class {klass}(*_signoff_bases):" in source and plan.nonce in source
    plain = plan_pytest(tmp_path, tests)
    assert plain.failing.count("::") == 1  # plain functions unless asked


def test_canaries_an_autouse_fixture_with_params_parametrises_are_still_the_canaries() -> None:
    """pypa/build's conftest has `@pytest.fixture(autouse=True, params=[False]) def has_virtualenv`: every test,
    the canaries too, runs as `name[False]`; they must be read as the canaries, not as missing."""
    from signoff.repair.guard import _canary_findings

    cases = [Case(f"{PLAN.failing}[False]", "failed", True, "AssertionError", "AssertionError: nonce123"),
             Case(f"{PLAN.passing}[False]", "passed", False, None, "")]
    assert _canary_findings(PLAN, cases) == []
    assert _canary_findings(PLAN, [*cases, Case(f"{PLAN.passing}[True]", "failed", True, "AssertionError", "x")]) \
        == ["the canary that must pass did not (failed)"]


def test_a_canary_case_skipped_by_the_harnesss_own_parameter_as_its_tests_were_is_no_finding() -> None:
    """markupsafe (repairenv): its conftest parametrizes every test, the canaries too, over the pure module and the
    speedups, skipped by a mark when they are not built. The canaries' `[None]` case is skipped as the harness's
    tests' `[None]` cases are; the cases that ran did what they must. A skip no harness test shares, or a canary
    with no case that ran, is still a finding."""
    from signoff.repair.guard import _canary_findings

    ran = [Case(f"{PLAN.failing}[_native]", "failed", True, "AssertionError", "AssertionError: nonce123"),
           Case(f"{PLAN.passing}[_native]", "passed", False, None, "")]
    skipped = [Case(f"{PLAN.failing}[None]", "skipped", False, None, "speedups unavailable"),
               Case(f"{PLAN.passing}[None]", "skipped", False, None, "speedups unavailable")]
    harness = [Case("tests/test_escape.py::test_subclass[_native]", "passed", False, None, ""),
               Case("tests/test_escape.py::test_subclass[None]", "skipped", False, None, "speedups unavailable")]
    assert _canary_findings(PLAN, [*ran, *skipped, *harness]) == []
    assert _canary_findings(PLAN, [*ran, *skipped, harness[0]]) == [
        "the canary that must fail by an assertion did not (skipped)", "the canary that must pass did not (skipped)"]
    assert _canary_findings(PLAN, [*skipped, *harness]) == [
        "the canary that must fail by an assertion did not (skipped)", "the canary that must pass did not (skipped)"]
