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
    # SQLAlchemy's testing plugin collects only its own test classes (alembic's tests, blind12).
    ran = Case(TEST, "passed", False, None, "")
    body = json.dumps({"finished": True, "exitstatus": 0, "cases": {TEST: {"outcome": "passed", "assertion": False}}})
    files = {PYTEST_RECORD: json.dumps({"body": body, "mac": hmac.new(PLAN.key.encode(), body.encode(),
                                                                        hashlib.sha256).hexdigest()}).encode()}
    findings, _own, _recorded = check_pytest(PLAN, [TEST], [ran], files, 0)
    assert any(f.startswith("neither canary was collected, while the requested tests ran") for f in findings)
    assert not any("did not (missing)" in f for f in findings)
    from signoff.repair.verdict import integrity_fix

    assert "collects only tests of its own kind" in integrity_fix("; ".join(findings))
    # Nothing ran at all: still the two canaries' own findings.
    findings, _own, _recorded = check_pytest(PLAN, [TEST], [], files, 0)
    assert sum("did not (missing)" in f for f in findings) == 2


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
    assert f"class {cls}(TestBase):" in (tmp_path / plan.canary_file).read_text()
    # A base the module defines itself is not in the canary module: plain functions, as without in_class.
    plan = plan_pytest(tmp_path, ["tests/test_command.py::Other::test_y"], in_class=True)
    assert plan.failing.count("::") == 1
