"""Tests whose code the revision defines (a harness class inheriting its test methods from the package,
webargs' CommonTestCase): where the guard saw them, their syntax trees, and the verdict when the candidate
changes one."""

from __future__ import annotations

from signoff.repair.inherited import defined_in_revision, function_tree
from signoff.repair.junit import Case
from signoff.repair.verdict import REJECTED, Run
from signoff.repair.verifier import Measurements, judge

TESTING = b'''
class CommonTestCase:
    def create_app(self):
        raise NotImplementedError

    def test_invalid_json(self, testapp):
        res = testapp.post("/echo_json", "{", expect_errors=True)
        assert res.status_code == 400
'''
EXPECT = "tests/test_bottleparser.py::TestBottleParser::test_invalid_json"


def test_a_methods_tree_ignores_formatting_and_sees_a_weakened_body() -> None:
    before = function_tree(TESTING, "CommonTestCase.test_invalid_json")
    assert before is not None
    reformatted = TESTING.replace(b'"/echo_json", "{"', b"'/echo_json',   '{'")
    assert function_tree(reformatted, "CommonTestCase.test_invalid_json") == before
    weakened = TESTING.replace(b"== 400", b"in (400, 500)")
    assert function_tree(weakened, "CommonTestCase.test_invalid_json") != before
    assert function_tree(TESTING, "CommonTestCase.test_gone") is None
    assert function_tree(TESTING, "f.<locals>.test_x") is None
    assert function_tree(b"def (", "x") is None and function_tree(None, "x") is None


def test_where_the_guard_saw_a_test_defined_by_the_revision() -> None:
    r = Run("complete", "", [Case(EXPECT, "passed", False, None, "")])
    r.guard = {"observed": {EXPECT: {"outcome": "passed", "defined": "src/webargs/testing.py::CommonTestCase.t"},
                            "tests/test_x.py::test_y": {"outcome": "passed"}}}
    assert defined_in_revision([r, Run("timeout")]) == {"src/webargs/testing.py::CommonTestCase.t"}


def test_a_test_the_candidate_changes_in_its_own_code_rejects() -> None:
    passed = Run("complete", "", [Case(EXPECT, "passed", False, None, "")])
    failed = Run("complete", "", [Case(EXPECT, "failed", True, "AssertionError", "assert 500 == 400")])
    m = Measurements("b", "c", {"base": [EXPECT], "candidate": [EXPECT], "regression": []},
                     {"base": [failed], "candidate": [passed], "regression": []},
                     tests_changed=["src/webargs/testing.py::CommonTestCase.test_invalid_json"])
    judged = judge(m)
    assert judged.verdict == REJECTED
    assert [r["code"] for r in judged.reasons] == ["test_changed"]
    assert "CommonTestCase.test_invalid_json" in judged.reasons[0]["detail"] and judged.reasons[0]["fix"]

