"""JUnit parsing on reports written by the real pytest and the real node test runner."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from signoff.kernel.errors import UsageError
from signoff.repair.junit import ReportError, check_test_id, parse_generic, parse_node, parse_pytest, select
from signoff.repair.runners import Runner
from signoff.repair.verdict import outcome_of
from tests.support.requires import require_binary

# A harness run by the real pytest so that every outcome the parser must tell apart appears in a real
# report: a pass, an assertion failure, parametrised cases, an import error inside a test, a skip (which
# must never count as a pass), a setup error and a class member.
HARNESS = '''\
import pytest
import shop


def test_ok():
    assert shop.VALUE == 1


def test_assert():
    assert shop.VALUE == 2, "value must be two"


@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert n == 1


@pytest.mark.parametrize("n", [1, pytest.param(2, marks=pytest.mark.xfail(reason="known"))])
def test_known(n):
    assert n == 1


def test_import_inside():
    import no_such_module  # noqa: F401


def test_skip():
    pytest.skip("not today")


@pytest.fixture
def broken():
    raise RuntimeError("setup broke")


def test_setup_error(broken):
    pass


class TestGroup:
    def test_member(self):
        assert True
'''


def _run_pytest(tmp_path: Path, ids: list[str], checkout_files: dict[str, str] | None = None) -> tuple[int, bytes]:
    harness = tmp_path / "harness"
    harness.mkdir(exist_ok=True)
    (harness / "test_h.py").write_text(HARNESS)
    (harness / "sub").mkdir(exist_ok=True)
    (harness / "sub" / "test_deep.py").write_text("def test_deep():\n    assert 1 == 0\n")
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    for name, text in (checkout_files or {"shop.py": "VALUE = 1\n"}).items():
        (src / name).write_text(text)
    runner = tmp_path / "runner"
    runner.mkdir(exist_ok=True)
    for name, text in Runner("pytest").files().items():  # the bootstrap, the guard, an empty pytest.ini
        (runner / name).write_text(text)
    junit = tmp_path / "junit.xml"
    proc = subprocess.run(
        [sys.executable, "-I", "-B", str(runner / "run_pytest.py"), str(src), "-p", "no:cacheprovider",
         f"--rootdir={harness}", "-c", str(runner / "pytest.ini"), "-o", "junit_family=xunit1",
         f"--junitxml={junit}", "-q", *[f"{harness}/{i}" for i in ids]],
        capture_output=True, cwd=tmp_path, timeout=120)
    return proc.returncode, junit.read_bytes()


def test_pytest_report_outcomes_and_ids(tmp_path: Path) -> None:
    rc, data = _run_pytest(tmp_path, ["test_h.py", "sub/test_deep.py"])
    assert rc == 1
    cases = {c.id: c for c in parse_pytest(data)}
    # ids are relative to the harness folder, with classes and parameters.
    assert set(cases) == {
        "test_h.py::test_ok", "test_h.py::test_assert", "test_h.py::test_param[1]", "test_h.py::test_param[2]",
        "test_h.py::test_known[1]", "test_h.py::test_known[2]",
        "test_h.py::test_import_inside", "test_h.py::test_skip", "test_h.py::test_setup_error",
        "test_h.py::TestGroup::test_member", "sub/test_deep.py::test_deep"}
    assert cases["test_h.py::test_ok"].outcome == "passed"
    a = cases["test_h.py::test_assert"]
    assert (a.outcome, a.assertion, a.exception) == ("failed", True, "AssertionError")
    assert "value must be two" in a.message
    # A bare `assert` with no message is still an assertion failure.
    assert cases["test_h.py::test_param[2]"].assertion
    imp = cases["test_h.py::test_import_inside"]
    assert (imp.outcome, imp.assertion, imp.exception) == ("failed", False, "ModuleNotFoundError")
    assert cases["test_h.py::test_skip"].outcome == "skipped"
    # An xfail mark that held is pytest's success (inflect's known-bad parameters), never a skip.
    assert (cases["test_h.py::test_known[2]"].outcome, cases["test_h.py::test_known[2]"].assertion) == ("passed", False)
    assert outcome_of(select(list(cases.values()), "test_h.py::test_known"))[:2] == ("passed", False)
    assert cases["test_h.py::test_setup_error"].outcome == "error"
    assert cases["sub/test_deep.py::test_deep"].assertion


def test_selection_of_parametrised_and_class_ids(tmp_path: Path) -> None:
    _rc, data = _run_pytest(tmp_path, ["test_h.py"])
    cases = parse_pytest(data)
    assert [c.id for c in select(cases, "test_h.py::test_param")] == ["test_h.py::test_param[1]",
                                                                       "test_h.py::test_param[2]"]
    # Any case failing by assertion shows the defect; passing needs every case to pass.
    outcome, assertion, _ = outcome_of(select(cases, "test_h.py::test_param"))
    assert (outcome, assertion) == ("failed", True)
    assert [c.id for c in select(cases, "test_h.py::TestGroup")] == ["test_h.py::TestGroup::test_member"]
    assert len(select(cases, "test_h.py")) == 10
    assert select(cases, "test_h.py::test_o") == []  # a prefix of a name is not the name
    assert outcome_of(select(cases, "test_h.py::nope"))[0] == "missing"


def test_unknown_id_gives_an_empty_report(tmp_path: Path) -> None:
    rc, data = _run_pytest(tmp_path, ["test_h.py::does_not_exist"])
    assert rc == 4
    assert parse_pytest(data) == []


def test_collection_error_is_an_error_not_an_assertion(tmp_path: Path) -> None:
    rc, data = _run_pytest(tmp_path, ["test_h.py::test_ok"], {"shop.py": "def broken(:\n"})
    assert rc == 4
    cases = parse_pytest(data)
    assert [(c.id, c.outcome) for c in cases] == [("test_h.py", "error")]
    selected = select(cases, "test_h.py::test_ok")
    assert outcome_of(selected)[:2] == ("error", False)
    # The message names what stopped the import, not pytest's "collection failure".
    assert selected[0].message == "SyntaxError: invalid syntax" and selected[0].exception == "SyntaxError"


def test_checkout_cannot_shadow_pytest(tmp_path: Path) -> None:
    # A candidate that ships its own `pytest.py` (to forge a passing report) is not imported as pytest:
    # the bootstrap imports pytest before the checkout joins the path, and appends the checkout.
    forged = ("import sys, pathlib\n"
              "pathlib.Path(sys.argv[sys.argv.index('-o') + 2].split('=', 1)[1]).write_text('<testsuites/>')\n"
              "raise SystemExit(0)\n")
    # Nor are pytest's own requirements (pluggy, iniconfig), which the tests may import from the checkout:
    # pytest keeps running on the copies it already holds.
    rc, data = _run_pytest(tmp_path, ["test_h.py::test_assert"], {"shop.py": "VALUE = 1\n", "pytest.py": forged,
                                                                  "_pytest.py": forged, "pluggy.py": forged,
                                                                  "iniconfig.py": forged})
    assert rc == 1
    (case,) = parse_pytest(data)
    assert case.outcome == "failed"


def test_xunit2_reports_match_by_dotted_classname() -> None:
    data = (b'<testsuites><testsuite name="pytest"><testcase classname="pkg.test_m.TestK" name="test_x[1]">'
            b'<failure message="assert 1 == 2">x\n\npkg/test_m.py:3: AssertionError</failure></testcase>'
            b'<testcase classname="pkg.test_m" name="test_y" /></testsuite></testsuites>')
    cases = parse_generic(data)
    assert [c.id for c in select(cases, "pkg/test_m.py::TestK::test_x")] == ["~pkg.test_m.TestK::test_x[1]"]
    assert select(cases, "pkg/test_m.py::TestK::test_x")[0].assertion
    assert len(select(cases, "pkg/test_m.py")) == 2


def test_hostile_reports_are_refused() -> None:
    bomb = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]>'
            b'<testsuites>&lol2;</testsuites>')
    with pytest.raises(ReportError, match="document type"):
        parse_pytest(bomb)
    with pytest.raises(ReportError, match="not well-formed"):
        parse_pytest(b"<testsuites><testcase")


def test_node_report(tmp_path: Path) -> None:
    node = require_binary("node", "apt-get install -y nodejs")
    (tmp_path / "c.test.js").write_text(
        "const test = require('node:test'); const assert = require('node:assert');\n"
        "test('applies once', () => { assert.strictEqual(8100, 9000, 'coupon twice'); });\n"
        "test('ok', () => { assert.ok(true); });\n"
        "test('throws', () => { throw new TypeError('nope'); });\n"
        "test('skipped', { skip: true }, () => {});\n"
        "test.describe('group', () => { test.it('inner', () => { assert.equal(1, 1); }); });\n")
    (tmp_path / "bad.test.js").write_text("syntax(\n")
    for name in ("c", "bad"):
        subprocess.run([node, "--test", "--test-reporter=junit", f"--test-reporter-destination={name}.xml",
                        f"{name}.test.js"], cwd=tmp_path, capture_output=True, timeout=60)
    cases = {c.id: c for c in parse_node((tmp_path / "c.xml").read_bytes(), "c.test.js")}
    assert set(cases) == {"c.test.js::applies once", "c.test.js::ok", "c.test.js::throws", "c.test.js::skipped",
                          "c.test.js::group::inner"}
    once = cases["c.test.js::applies once"]
    assert (once.outcome, once.assertion) == ("failed", True)
    assert "coupon twice" in once.message
    assert (cases["c.test.js::throws"].outcome, cases["c.test.js::throws"].assertion) == ("failed", False)
    assert cases["c.test.js::skipped"].outcome == "skipped"
    assert select(list(cases.values()), "c.test.js::group")[0].outcome == "passed"
    # A file that does not load is an error, never a failed assertion.
    (bad,) = parse_node((tmp_path / "bad.xml").read_bytes(), "bad.test.js")
    assert (bad.id, bad.outcome, bad.assertion) == ("bad.test.js", "error", False)


def test_test_ids_must_name_harness_files() -> None:
    files = ("test_fix.py", "sub/test_b.py")
    check_test_id("test_fix.py::TestX::test_y", files)
    check_test_id("sub", files)
    for bad in ("/etc/passwd", "../test_fix.py", "missing.py::t", ""):
        with pytest.raises(UsageError):
            check_test_id(bad, files)


def test_runner_templates() -> None:
    assert Runner.parse("pytest").kind == "pytest"
    t = Runner.parse("mytool --out {junit} {tests}")
    argv, collect = t.command(["a.py::b"], ("a.py",), "/venv/bin/python", [])
    assert argv[:2] == ["/bin/sh", "-c"] and argv[2] == "mytool --out /work/junit.xml /harness/a.py::b"
    assert collect == ["junit.xml"]
    with pytest.raises(UsageError, match="junit"):
        Runner.parse("mytool {tests}")
    with pytest.raises(UsageError, match="unknown placeholders"):
        Runner.parse("mytool {junit} {secret}")
    assert Runner.parse("pytest").digest() != Runner.parse("node").digest()


def test_a_native_traceback_whose_assertion_message_spans_lines_is_an_assertion() -> None:
    """`--tb native` (alembic's addopts, blind12): no `path:line: Type` trailer, and the report's message
    starts with pytest's explanation, not the type; the type is the line after the last frame."""
    body = ('Traceback (most recent call last):\n  File "/harness/tests/test_command.py", line 997, in test_x\n'
            '    assert "CREATE TABLE v" not in buf.getvalue()\nAssertionError: assert \'CREATE TABLE v\' not in "B"\n'
            "  \n  'CREATE TABLE v' is contained here:\n    BEGIN;\n  \n  ...Full output truncated")
    report = ('<testsuites><testsuite><testcase classname="tests.test_command.T" name="test_x" '
              'file="tests/test_command.py"><failure message="assert \'CREATE TABLE v\' not in &quot;B&quot;">'
              f"{body}</failure></testcase></testsuite></testsuites>").encode()
    [case] = parse_pytest(report)
    assert (case.outcome, case.assertion, case.exception) == ("failed", True, "AssertionError")
