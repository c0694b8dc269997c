"""JUnit XML reports: parse them and find the cases a test id selects.

Outcomes come only from these reports, never from a runner's console text. The report was written
inside the sandbox, so it is untrusted input: its size is bounded by the sandbox, document type
declarations (entity expansion) are refused, and anything unparsable is treated as no report.

Test ids are relative to the harness folder: `test_fix.py::TestX::test_y` for pytest (a
parametrised test `test_y` selects every `test_y[...]` case) and `cart.test.js::suite::name` for
node's test runner. A file alone selects every case in it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

from signoff.kernel.errors import UsageError

HARNESS_MOUNT = "/harness"
MESSAGE_LIMIT = 2000
_FIXTURE_NOT_FOUND = re.compile(r"^E\s+fixture '([\w.]+)' not found", re.M)
_PYTEST_TRAILER = re.compile(r"^\S.*:\d+: ([A-Za-z_][\w.]*)\s*$")
_NODE_CAUSE = re.compile(r"cause: ([A-Za-z_][\w.]*)(?: \[(\w+)\])?")
# Python's own traceback (`--tb native` in alembic's addopts): the exception's line right after the last frame
# and its source lines, its message perhaps going on over several lines (pytest's explanation of an assert).
_NATIVE_RAISED = re.compile(r'^  File "[^"\n]*", line \d+[^\n]*\n(?:    [^\n]*\n)*([A-Za-z_][\w.]*)(?::|$)', re.M)


class ReportError(Exception):
    """The report is not well-formed JUnit XML."""


@dataclass(frozen=True)
class Case:
    id: str  # test id relative to the harness folder
    outcome: str  # passed | failed | error | skipped
    assertion: bool  # failed because an assertion did not hold
    exception: str | None  # exception type name when known
    message: str  # the failure message, bounded

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "outcome": self.outcome, "assertion": self.assertion,
                "exception": self.exception, "message": self.message}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Case:
        return cls(str(d["id"]), str(d["outcome"]), bool(d["assertion"]),
                   d.get("exception"), str(d.get("message", "")))


def _strip_harness(path: str) -> str:
    if path.startswith(HARNESS_MOUNT + "/"):
        return path[len(HARNESS_MOUNT) + 1:]
    return path[2:] if path.startswith("./") else path


def _root(data: bytes) -> ET.Element:
    head = data[:4096].lower()
    if b"<!doctype" in head or b"<!entity" in data.lower():
        raise ReportError("report declares a document type or entities; refused")
    try:
        return ET.fromstring(data)  # noqa: S314 -- no DTD, so no entity expansion
    except ET.ParseError as exc:
        raise ReportError(f"report is not well-formed XML: {exc}") from exc


def _bounded(text: str | None) -> str:
    text = (text or "").strip()
    return text if len(text) <= MESSAGE_LIMIT else text[:MESSAGE_LIMIT] + " [...]"


def _classify(tc: ET.Element) -> tuple[str, bool, str | None, str]:
    """(outcome, assertion, exception type, message) of one <testcase>."""
    for tag in ("failure", "error"):
        el = tc.find(tag)
        if el is None:
            continue
        message = el.get("message") or ""
        body = el.text or ""
        exc_type = _exception_type(el.get("type"), message, body)
        outcome = "failed" if tag == "failure" else "error"
        assertion = outcome == "failed" and exc_type is not None and (
            exc_type.endswith("AssertionError") or exc_type == "ERR_ASSERTION")
        first_line = body.strip().splitlines()[0] if body.strip() else ""
        missing = _FIXTURE_NOT_FOUND.search(body)
        if missing and outcome == "error":
            # pytest's message is the test's location ("failed on setup with "file ..., line 1269"); the
            # cause is further down: a fixture that nothing of the run provides.
            return outcome, False, "FixtureLookupError", _bounded(
                f"fixture '{missing.group(1)}' not found: no conftest.py of the run nor any installed pytest plugin "
                "provides it")
        return outcome, assertion, exc_type, _bounded(message or first_line)
    if tc.find("skipped") is not None:
        el = tc.find("skipped")
        message = (el.get("message") if el is not None else None) or ""
        if el is not None and (el.get("type") == "pytest.xfail" or message == "expected test failure"):
            # An xfail mark of the harness held: the case ran and failed as the harness declares it
            # should, which pytest counts as a success (inflect's known-bad parameters); pytest 4.6
            # wrote no type but this message.
            return "passed", False, None, _bounded(f"xfailed: {message}")
        return "skipped", False, None, _bounded(message)
    return "passed", False, None, ""


def _exception_type(type_attr: str | None, message: str, body: str) -> str | None:
    # pytest: the last line of the long representation is "path:line: ExceptionType".
    lines = [ln for ln in body.strip().splitlines() if ln.strip()]
    if lines:
        m = _PYTEST_TRAILER.match(lines[-1].strip())
        if m:
            return m.group(1)
    native = _NATIVE_RAISED.findall(body)
    if native:
        return str(native[-1])
    # node's test runner: the failure wraps the thrown error as `cause: AssertionError [ERR_ASSERTION]`.
    m = _NODE_CAUSE.search(body)
    if m:
        return "AssertionError" if m.group(2) == "ERR_ASSERTION" else m.group(1)
    if type_attr and type_attr not in ("testCodeFailure", "failure", "error"):
        return type_attr
    head = message.split(":", 1)[0].strip()
    if re.fullmatch(r"[A-Za-z_][\w.]*(Error|Exception)", head):
        return head
    return None


def parse_pytest(data: bytes) -> list[Case]:
    """Cases of a pytest report (xunit1 gives a `file` attribute; without it the dotted classname is used)."""
    root = _root(data)
    cases: list[Case] = []
    for tc in root.iter("testcase"):
        name = tc.get("name") or ""
        classname = tc.get("classname") or ""
        file_ = tc.get("file")
        if file_ and not classname:
            # A collection error names the file, not a test: it applies to every id in that file.
            parts = [_strip_harness(file_)]
        elif file_:
            file_ = _strip_harness(file_)
            module = re.sub(r"\.py$", "", file_).replace("/", ".")
            if classname == module or classname.startswith(module + "."):
                rest = classname[len(module) + 1:]
                parts = [file_, *[p for p in rest.split(".") if p], name]
            else:
                # `file` is where the function's code is, `classname` where pytest collected it: a test
                # method made by a helper and set on a class at import (mistune's fixture tests, made in
                # tests/__init__.py) names the helper's file. Keep the classname, dotted as xunit2 gives it.
                parts = ["~" + classname, name]
        else:
            # xunit2: only the dotted classname; keep it dotted and match ids in the same form.
            parts = ["~" + classname, name]
        outcome, assertion, exc, message = _classify(tc)
        if file_ and not classname and outcome == "error":
            # "collection failure" says nothing: name what stopped the file from importing.
            el = tc.find("error")
            cause = collection_cause((el.text or "") if el is not None else "")
            if cause:
                message, exc = _bounded(cause), cause.split(":", 1)[0].strip() or exc
        cases.append(Case("::".join(parts), outcome, assertion, exc, message))
    return cases


def collection_cause(text: str) -> str:
    """What stopped pytest from collecting or starting, in one line: the exception its traceback
    ends with (`E   ModuleNotFoundError: No module named 'tornado'`), or its usage error."""
    lines = [ln.rstrip() for ln in text.splitlines()]
    mismatch = re.search(r"import file mismatch:\s*imported module '([\w.]+)' has this __file__ attribute:\s*(\S+)\s*"
                         r"which is not the same as the test file we want to collect:\s*(\S+)", text)
    if mismatch:
        # pytest's own words, no traceback: a module of that name was imported from elsewhere first.
        return (f"import file mismatch: {mismatch.group(1)} was imported from {mismatch.group(2)} before pytest "
                f"collected {mismatch.group(3)}")[:500]
    raised = [ln[1:].strip() for ln in lines if ln.startswith("E ") and ln[1:].strip()]
    found = next((ln for ln in reversed(raised) if re.match(r"[A-Za-z_][\w.]*(Error|Exception|Exit)\b", ln)), None)
    # An exception named otherwise (Django's `ImproperlyConfigured`, `AppRegistryNotReady`): a class name, dotted or
    # not, and its message, as a traceback ends.
    found = found or next((ln for ln in reversed(raised) if re.match(r"(?:[a-z_]\w*\.)*[A-Z]\w*: \S", ln)), None)
    if found:
        return found[:500]
    usage = [ln.split("error:", 1)[1].strip() for ln in lines if "error:" in ln and ln.split("error:", 1)[1].strip()]
    return usage[-1][:500] if usage else ""


def parse_node(data: bytes, file_: str) -> list[Case]:
    """Cases of one file's report from `node --test --test-reporter=junit`.

    Node's report does not name the file, so the runner writes one report per file. A file that
    could not even load is reported as one failing case named after its path: that is an error, not a
    failed assertion.
    """
    root = _root(data)
    cases: list[Case] = []

    def walk(el: ET.Element, trail: list[str]) -> None:
        for child in el:
            if child.tag == "testsuite":
                walk(child, [*trail, child.get("name") or ""])
            elif child.tag == "testcase":
                name = child.get("name") or ""
                outcome, assertion, exc, message = _classify(child)
                message = _node_message(child) or message
                if name.endswith(file_) and name.startswith("/") and not trail:
                    cases.append(Case(file_, "error", False, exc, message or "the test file failed to load"))
                    continue
                cases.append(Case("::".join([file_, *trail, name]), outcome, assertion, exc, message))

    walk(root, [])
    return cases


def _node_message(tc: ET.Element) -> str:
    """The thrown error as node printed it (`cause: AssertionError [ERR_ASSERTION]: msg ... a !== b`),
    without the stack: the junit `message` attribute runs the message and the comparison together."""
    el = tc.find("failure")
    if el is None or not el.text or "cause: " not in el.text:
        return ""
    cause = el.text.split("cause: ", 1)[1]
    lines = []
    for line in cause.splitlines():
        if line.strip().startswith("at ") or line.strip().startswith("{") or line.strip() == "}":
            break
        if line.strip():
            lines.append(line.strip())
    text = " ".join(lines).replace(" [ERR_ASSERTION]", "")
    return _bounded(text.rstrip(" {"))


_VITEST_FRAME = re.compile(r"^\s*❯\s+(?:\S+\s+)?\(?([^\s():]+):\d+:\d+\)?\s*$", re.MULTILINE)


def parse_vitest(data: bytes) -> list[Case]:
    """Cases of a Vitest JUnit report (`--reporter=junit`): `classname` is the file relative to the
    project's root, `name` the describe blocks and the test joined by " > ". A file that could not be
    loaded (a syntax or import error) is one case named after the file itself: an error, never a
    failed assertion. Only a thrown `AssertionError` (expect's, chai's, node:assert's) is an assertion."""
    cases: list[Case] = []
    for tc in _root(data).iter("testcase"):
        file_ = _strip_harness(tc.get("classname") or "")
        name = tc.get("name") or ""
        failure, error = tc.find("failure"), tc.find("error")
        el = failure if failure is not None else error
        if el is not None:
            exc = (el.get("type") or "").strip() or None
            message = _bounded(el.get("message") or (el.text or "").strip().split("\n", 1)[0])
            if name == file_ or not name:
                cases.append(Case(file_, "error", False, exc, message or "the test file failed to load"))
                continue
            outcome = "failed" if failure is not None else "error"
            cases.append(Case("::".join([file_, *name.split(" > ")]), outcome,
                              outcome == "failed" and exc == "AssertionError", exc, message))
        elif tc.find("skipped") is not None:
            cases.append(Case("::".join([file_, *name.split(" > ")]), "skipped", False, None, ""))
        else:
            cases.append(Case("::".join([file_, *name.split(" > ")]), "passed", False, None, ""))
    return cases


def vitest_frames(data: bytes) -> dict[str, str]:
    """Each failed case's innermost frame as Vitest printed it (the file relative to the root): where
    the error was thrown, after Vitest dropped its own frames."""
    out: dict[str, str] = {}
    for tc in _root(data).iter("testcase"):
        el = tc.find("failure") if tc.find("failure") is not None else tc.find("error")
        if el is None:
            continue
        file_ = _strip_harness(tc.get("classname") or "")
        name = tc.get("name") or ""
        m = _VITEST_FRAME.search(el.text or "")
        if m:
            out["::".join([file_, *name.split(" > ")]) if name and name != file_ else file_] = m.group(1)
    return out


_JEST_FRAME = re.compile(r"^\s*at (?:.*? \()?(/[^\s():]+):\d+:\d+\)?\s*$", re.MULTILINE)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _jest_results(data: bytes) -> list[dict[str, Any]]:
    import json

    try:
        parsed = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ReportError(f"report is not JSON: {exc}") from exc
    results = parsed.get("testResults") if isinstance(parsed, dict) else None
    if not isinstance(results, list):
        raise ReportError("report has no testResults")
    return [r for r in results if isinstance(r, dict)]


def _jest_file(result: dict[str, Any], root: str) -> str:
    name = str(result.get("name") or "")
    return name[len(root) + 1:] if name.startswith(root + "/") else name


def parse_jest(data: bytes, root: str) -> list[Case]:
    """Cases of a Jest report (`--json`): one per test, `file::describe::test` with the file relative to
    the project's `root`. A file that could not run (an import, syntax or type error) is one case named
    after the file: an error. A failure is an assertion when Jest's details carry a matcher result
    (expect's) or an `AssertionError` (node:assert's)."""
    cases: list[Case] = []
    for r in _jest_results(data):
        file_ = _jest_file(r, root)
        tests = [a for a in r.get("assertionResults") or [] if isinstance(a, dict)]
        if r.get("testExecError") or (r.get("status") == "failed" and not tests):
            message = _ANSI.sub("", str(r.get("message") or r.get("testExecError") or "")).strip()
            cases.append(Case(file_, "error", False, None, _bounded(message) or "the test file failed to run"))
            continue
        for a in tests:
            case_id = "::".join([file_, *[str(t) for t in a.get("ancestorTitles") or []], str(a.get("title") or "")])
            status = a.get("status")
            if status == "passed":
                cases.append(Case(case_id, "passed", False, None, ""))
            elif status == "failed":
                details = [d for d in a.get("failureDetails") or [] if isinstance(d, dict)]
                assertion = any(d.get("matcherResult") or d.get("name") == "AssertionError"
                                or d.get("code") == "ERR_ASSERTION" for d in details)
                text = _ANSI.sub("", str((a.get("failureMessages") or [""])[0]))
                head = text.strip().split("\n", 1)[0]
                exc = "AssertionError" if assertion else (head.split(":", 1)[0] if ":" in head else None)
                cases.append(Case(case_id, "failed", assertion, exc, _bounded(text.split("\n    at ", 1)[0])))
            else:
                cases.append(Case(case_id, "skipped", False, None, ""))
    return cases


def jest_frames(data: bytes, root: str) -> dict[str, str]:
    """Each failed test's innermost frame (the file relative to `root`), from Jest's failure message."""
    out: dict[str, str] = {}
    for r in _jest_results(data):
        file_ = _jest_file(r, root)
        for a in r.get("assertionResults") or []:
            if not isinstance(a, dict) or a.get("status") != "failed":
                continue
            m = _JEST_FRAME.search(_ANSI.sub("", str((a.get("failureMessages") or [""])[0])))
            if m:
                path = m.group(1)
                titles = [str(t) for t in a.get("ancestorTitles") or []]
                case_id = "::".join([file_, *titles, str(a.get("title") or "")])
                out[case_id] = path[len(root) + 1:] if path.startswith(root + "/") else path
    return out


def parse_generic(data: bytes) -> list[Case]:
    """Cases of any runner's report: a `file` attribute if present, else pytest-style dotted classname."""
    return parse_pytest(data)


def _mangled(test_id: str) -> str:
    """The xunit2 form of a pytest id: dotted module path and classes, then the name."""
    path, bracket, params = test_id.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0]).replace("/", ".")
    if len(names) == 1:
        return "~" + names[0]
    return "~" + ".".join(names[:-1]) + "::" + names[-1] + bracket + params


def observed_for(observed: dict[str, Any], case_id: str) -> Any:
    """The guard's record of a reported case: under its id, or, for a case the report names by pytest's dotted
    classname (a test method the class inherits from another module: webargs' TestBottleParser runs
    `test_invalid_json` of the package's `webargs.testing.CommonTestCase`), under the pytest id of that form."""
    if case_id in observed or not case_id.startswith("~"):
        return observed.get(case_id)
    return next((v for k, v in observed.items() if _mangled(k) == case_id), None)


def select(cases: list[Case], test_id: str) -> list[Case]:
    """The cases a test id selects: itself, its parametrisations, or everything below it."""
    wanted = [test_id, _mangled(test_id)]
    file_ = test_id.split("::", 1)[0]
    found: list[Case] = []
    for case in cases:
        if case.id == file_ and case.outcome == "error":
            found.append(case)  # the file itself failed to load or collect
            continue
        for w in wanted:
            if case.id == w or case.id.startswith(w + "[") or case.id.startswith(w + "::") or (
                    w.startswith("~") and "::" not in w and case.id.startswith(w + ".")):
                found.append(case)
                break
    return found


def check_test_id(test_id: str, harness_files: tuple[str, ...]) -> None:
    """UsageError unless the id names a file inside the harness (ids are relative to it)."""
    if not test_id or test_id.startswith("/") or "\0" in test_id:
        raise UsageError(f"test id {test_id!r} must be relative to the harness folder",
                         "write it like test_fix.py::TestX::test_y")
    file_ = test_id.split("::", 1)[0]
    if ".." in file_.split("/"):
        raise UsageError(f"test id {test_id!r} leaves the harness folder", "name a file inside the harness")
    if file_ not in harness_files and not any(f.startswith(file_.rstrip("/") + "/") for f in harness_files):
        raise UsageError(f"test id {test_id!r}: {file_} is not in the harness",
                         f"the harness holds: {', '.join(harness_files[:8])}")
