"""The run guard: layers that keep a run's result from resting only on the process the candidate controls.

The code under test runs in the same process as the test framework, so it can patch that framework,
exit early, write its own report, or skip tests. Each execution therefore gets, besides its JUnit
report, checks the candidate would have to defeat all at once:

- **canaries**: a test file with random names placed beside the expected test, importing what that
  test imports, run through the same collection and run path. One must fail by an assertion whose
  message carries a fresh nonce, one must pass. A framework that cannot fail, or cannot pass, shows.
- **an authenticated record**: the guard in the sandbox (`runner_files/`) records outcomes from the
  framework's own reports, integrity findings (snapshot of the framework taken before the checkout
  is importable, an audit hook, hooks and importers from the checkout) and the JUnit report's
  SHA-256, and signs it with HMAC under a per-run key given only to the guard. No record, a bad MAC,
  a report that changed after it was written, or outcomes that differ are all tampering.
- **static collection** here on the host, from the frozen harness's syntax tree (never importing
  anything): a test that exists in the harness but is absent from a complete run, or skipped when the
  harness never skips, was removed by something else.

Any finding makes the run `harness_integrity` (INCONCLUSIVE), never a pass.
"""

from __future__ import annotations

import ast
import configparser
import dataclasses
import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signoff.repair.junit import Case, observed_for, select
from signoff.repair.verdict import outcome_of

PYTEST_RECORD = "signoff-guard.json"
PYTEST_JUNIT = "junit.xml"
PYTEST_USAGE_ERROR = 4
# A finding of this form is not tampering: the environment's copy of a package the checkout provides
# was already imported (by a plugin) when the checkout joined the path.
PRELOADED = "imported from the environment before the checkout: "
NODE_CANARY_REPORT = "junit-canary.xml"
_SKIP_WORDS = re.compile(r"skip|xfail|todo", re.IGNORECASE)
_JS_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")
# Vitest: the wrapper's record (how the runner ended, its report's digest) and the canaries' prefix.
RUNNER_RECORD = "signoff-runner.json"
VITEST_CANARY_PREFIX = "signoff_canary_"
# Canary files of every run share the mounted harness copy; a folder id may collect other runs' ones.
CANARY_PREFIX = "test_signoff_canary_"
_CANARY_FILE = re.compile(r"(?:^|/)" + CANARY_PREFIX + r"[0-9a-f]{16}\.py(?:::|$)")


def is_canary(case_id: str) -> bool:
    return bool(_CANARY_FILE.search(case_id))


def node_record(index: int, runner: bool = False) -> str:
    return f"signoff-guard-{index}-runner.json" if runner else f"signoff-guard-{index}.json"


@dataclass(frozen=True)
class Plan:
    """One execution's secrets and canaries (made fresh for every run, never reused)."""

    key: str
    canary_file: str  # relative to the harness
    failing: str  # test id of the canary that must fail by an assertion
    passing: str  # test id of the canary that must pass
    nonce: str  # must appear in the failing canary's message

    def as_json(self) -> dict[str, Any]:
        # What the evidence records: the canaries and the nonce (harmless once the run is over), never
        # the key, so a copy of the evidence cannot be used to authenticate anything.
        return {"canary_file": self.canary_file, "failing": self.failing, "passing": self.passing,
                "nonce": self.nonce}


def _parse(source: str) -> ast.Module:
    """`ast.parse`, retried on CPython 3.11's spurious "AST constructor recursion depth mismatch"
    SystemError under threads (python/cpython#106905); parsing is deterministic, so a retry gives
    the true answer (a SyntaxError, or the tree)."""
    for attempt in range(3):
        try:
            return ast.parse(source)
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc) or attempt == 2:
                raise
    raise AssertionError("unreachable")


def _imports_py(source: str) -> list[str]:
    try:
        tree = _parse(source)
    except SyntaxError:
        return []
    lines = source.splitlines()
    out = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not (
                isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            out.append("\n".join(lines[node.lineno - 1:node.end_lineno]).strip())
    return out


def _function_prefix(harness: Path) -> str:
    ini = harness / "pytest.ini"
    if ini.is_file():
        cp = configparser.ConfigParser()
        try:
            cp.read_string(ini.read_text(errors="replace"))
            first = (cp.get("pytest", "python_functions", fallback="") or "").split()
        except configparser.Error:
            first = []
        if first and re.fullmatch(r"[A-Za-z_]\w*\*", first[0]):
            return first[0][:-1]
    return "test_"


def canary_class_of(tests: list[str]) -> str | None:
    """The class of the first test id (`file.py::Class::name`) in the first test's file, whose bases canaries of a
    class take (`plan_pytest(in_class=True)`); None when that file's ids name no class."""
    first = tests[0].split("::", 1)[0] if tests else ""
    for t in tests:
        parts = t.split("::")
        if parts[0] == first and len(parts) >= 3 and re.fullmatch(r"[A-Za-z_]\w*", parts[1]):
            return parts[1]
    return None


def plan_pytest(harness: Path, tests: list[str], in_class: bool = False) -> Plan:
    """Write a canary module beside the first test file and return the run's plan. With `in_class`, the canaries
    are methods of a class with the bases of the first test's class (canary_class_of), for a project plugin that
    runs only its own kind of test class (SQLAlchemy's testing plugin, which alembic's conftest starts, sets up
    every test from its class and drops plain functions): asked for only when plain canaries could not run."""
    first = tests[0].split("::", 1)[0]
    folder = str(Path(first).parent) if first.endswith(".py") else first.rstrip("/")
    folder = "" if folder in (".", "") else folder
    plain = first.endswith(".py") and (harness / first).is_file()
    source = (harness / first).read_text(errors="replace") if plain else ""
    prefix = _function_prefix(harness)
    tag = secrets.token_hex(8)
    fail, ok = f"{prefix}{secrets.token_hex(6)}", f"{prefix}{secrets.token_hex(6)}"
    nonce, other = secrets.token_hex(12), secrets.token_hex(12)
    name = f"{CANARY_PREFIX}{tag}.py"
    rel = f"{folder}/{name}" if folder else name
    body = ["# signoff canary: must fail and pass exactly as written, whatever the code under test does."]
    for stmt in _imports_py(source):
        body.append("try:\n" + "\n".join("    " + ln for ln in stmt.splitlines()) + "\nexcept Exception:\n    pass")
    klass = canary_class_of(tests) if in_class and plain else None
    if klass is None:
        body.append(f"\n\ndef {fail}():\n    assert {nonce!r} == {other!r}, {nonce!r}\n")
        body.append(f"\ndef {ok}():\n    assert {nonce!r} == {nonce!r}\n")
        failing, passing = f"{rel}::{fail}", f"{rel}::{ok}"
    else:
        # The test module beside it, by the name pytest gave it (its package's, or its own on the path).
        body.append(f"\nimport importlib as _signoff_importlib\n_signoff_module = _signoff_importlib.import_module("
                    f"(__package__ + '.' if __package__ else '') + {Path(first).stem!r})\n"
                    f"_signoff_bases = getattr(_signoff_module, {klass!r}).__bases__\n"
                    "del _signoff_module, _signoff_importlib\n")
        cls = f"TestSignoffCanary{tag}"
        body.append(f"\nclass {cls}(*_signoff_bases):\n"
                    f"    def {fail}(self):\n        assert {nonce!r} == {other!r}, {nonce!r}\n\n"
                    f"    def {ok}(self):\n        assert {nonce!r} == {nonce!r}\n")
        failing, passing = f"{rel}::{cls}::{fail}", f"{rel}::{cls}::{ok}"
    path = harness / rel
    path.write_text("\n".join(body) + "\n")
    path.chmod(0o444)
    return Plan(secrets.token_hex(32), rel, failing, passing, nonce)


_JS_REQUIRE = re.compile(r"^[^\n]*\brequire\([^\n]*$", re.MULTILINE)
_JS_BINDING = re.compile(r"^(?:const|let)\b")
_JS_IMPORT = re.compile(r"^\s*import\s+(?:[^'\"\n]*?\s+from\s+)?(['\"])([^'\"\n]+)\1", re.MULTILINE)


def plan_node(harness: Path, tests: list[str]) -> Plan:
    first = tests[0].split("::", 1)[0]
    source = (harness / first).read_text(errors="replace") if (harness / first).is_file() else ""
    folder = str(Path(first).parent)
    folder = "" if folder == "." else folder
    fail, ok = secrets.token_hex(6), secrets.token_hex(6)
    nonce, other = secrets.token_hex(12), secrets.token_hex(12)
    esm = first.endswith(".mjs") or bool(_JS_IMPORT.search(source))
    name = f"{secrets.token_hex(8)}.test.{'mjs' if esm else 'js'}"
    rel = f"{folder}/{name}" if folder else name
    if esm:
        head = ["import test from 'node:test';", "import assert from 'node:assert';"]
        head += [f"try {{ await import({json.dumps(m.group(2))}); }} catch {{}}" for m in _JS_IMPORT.finditer(source)]
    else:
        # `var` so that a name one line binds (path) is still there for the next (the module under test).
        head = ["try { " + _JS_BINDING.sub("var", m.group(0).strip(), count=1) + " } catch {}"
                for m in _JS_REQUIRE.finditer(source)]
        head += ["const signoffCanaryTest = require('node:test');",
                 "const signoffCanaryAssert = require('node:assert');"]
    t, a = ("test", "assert") if esm else ("signoffCanaryTest", "signoffCanaryAssert")
    head.append(f"{t}({json.dumps(fail)}, () => {{ {a}.strictEqual({json.dumps(nonce)}, {json.dumps(other)}, "
                f"{json.dumps(nonce)}); }});")
    head.append(f"{t}({json.dumps(ok)}, () => {{ {a}.strictEqual({json.dumps(nonce)}, {json.dumps(nonce)}); }});")
    path = harness / rel
    path.write_text("\n".join(head) + "\n")
    path.chmod(0o444)
    return Plan(secrets.token_hex(32), rel, f"{rel}::{fail}", f"{rel}::{ok}", nonce)


def _packaged_canary(harness: Path, tests: list[str], head: list[str], imported: str,
                     test: str, expect: str) -> Plan:
    """A canary file beside the first test file, with its suffix (so the project's pattern collects it):
    `head`, then `imported` (a format with {spec}) for each module the test imports, then the two
    canaries written with the `test` and `expect` names the head binds."""
    first = tests[0].split("::", 1)[0]
    source = (harness / first).read_text(errors="replace") if (harness / first).is_file() else ""
    folder = str(Path(first).parent)
    folder = "" if folder == "." else folder
    base = Path(first).name
    suffix = base[base.index("."):] if "." in base else ".test.ts"
    fail, ok = secrets.token_hex(6), secrets.token_hex(6)
    nonce, other = secrets.token_hex(12), secrets.token_hex(12)
    rel = f"{folder}/" * bool(folder) + f"{VITEST_CANARY_PREFIX}{secrets.token_hex(8)}{suffix}"
    body = [*head, *[imported.format(spec=json.dumps(m.group(2))) for m in _JS_IMPORT.finditer(source)
                     if m.group(2) != "vitest" and not m.group(2).startswith("@jest/")]]
    body.append(f"{test}({json.dumps(fail)}, () => {{ {expect}({json.dumps(nonce)}).toBe({json.dumps(other)}); }});")
    body.append(f"{test}({json.dumps(ok)}, () => {{ {expect}({json.dumps(nonce)}).toBe({json.dumps(nonce)}); }});")
    path = harness / rel
    path.write_text("\n".join(body) + "\n")
    path.chmod(0o444)
    return Plan(secrets.token_hex(32), rel, f"{rel}::{fail}", f"{rel}::{ok}", nonce)


def plan_vitest(harness: Path, tests: list[str]) -> Plan:
    """A Vitest canary: imports `test` and `expect` from vitest, loads what the test imports."""
    return _packaged_canary(
        harness, tests, ['import { test as signoffCanaryTest, expect as signoffCanaryExpect } from "vitest";'],
        "try {{ await import({spec}); }} catch {{}}", "signoffCanaryTest", "signoffCanaryExpect")


def plan_jest(harness: Path, tests: list[str]) -> Plan:
    """A Jest canary: Jest's globals (or `@jest/globals` where a project turns them off), loading what
    the test imports with `require` (Jest's transform makes a module of it)."""
    head = ["// @ts-nocheck", "/* eslint-disable */",
            "const signoffCanary = globalThis.expect ? { test: globalThis.test, expect: globalThis.expect } : "
            'require("@jest/globals");']
    return _packaged_canary(harness, tests, head, "try {{ require({spec}); }} catch {{}}", "signoffCanary.test",
                            "signoffCanary.expect")


def check_wrapped(plan: Plan, cases: list[Case] | None, files: dict[str, bytes], report: str,
                  exit_code: int | None, frames: dict[str, str]) -> tuple[list[str], list[Case] | None, dict[str, Any]]:
    """(findings, the cases without the canaries, where each failure was raised: `frames`, each failed
    case's innermost frame as the runner reported it) for one Vitest or Jest run.

    The wrapper (`run_tests.mjs`) records, after it stopped every process the run left behind, how
    the runner ended and its report's SHA-256: a report written by anything else, a runner that was
    killed or ended otherwise than the sandbox saw, and canaries that do not fail and pass as written
    are all tampering."""
    findings: list[str] = []
    if exit_code == 0:
        findings.append("the test runner exited 0 although the canary must fail")
    body = _read_record(files.get(RUNNER_RECORD), plan.key, "runner", findings)
    data = files.get(report)
    if body is not None:
        if body.get("signal"):
            findings.append(f"the test runner was killed by {body.get('signal')}")
        if body.get("exit_code") != exit_code:
            findings.append(f"the test runner exited {body.get('exit_code')}, but the run ended with {exit_code}")
        if data is not None and body.get("report_sha256") != hashlib.sha256(data).hexdigest():
            findings.append("the JUnit report is not the one the test runner wrote")
    if cases is None:
        return findings, None, {}
    findings += _canary_findings(plan, cases)
    own = [c for c in cases if c.id != plan.canary_file and not c.id.startswith(plan.canary_file + "::")]
    observed: dict[str, Any] = {}
    for c in own:
        if c.outcome in ("failed", "error"):
            where = frames.get(c.id)
            origin = None if where is None else "harness" if where == c.id.split("::", 1)[0] else \
                "framework" if "node_modules/" in where else "checkout"
            observed[c.id] = {"outcome": c.outcome, "assertion": c.assertion, "exception": c.exception,
                              "origin": origin}
    return findings, own, observed


def _read_record(data: bytes | None, key: str, what: str, findings: list[str]) -> dict[str, Any] | None:
    if data is None:
        findings.append(f"{what}: no guard record (the process ended, or the guard was disabled, before it finished)")
        return None
    try:
        outer = json.loads(data)
        body_text = outer["body"]
        mac = outer["mac"]
        if not isinstance(body_text, str) or not isinstance(mac, str):
            raise TypeError("body and mac must be strings")
    except (ValueError, KeyError, TypeError) as exc:
        findings.append(f"{what}: the guard record is malformed ({exc})")
        return None
    want = hmac.new(key.encode(), body_text.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(want, mac):
        findings.append(f"{what}: the guard record is not authenticated by this run's key (forged)")
        return None
    body = json.loads(body_text)
    if not isinstance(body, dict):
        findings.append(f"{what}: the guard record is malformed")
        return None
    for f in body.get("findings") or []:
        findings.append(f"{what}: {f}")
    return body


def _canary_findings(plan: Plan, cases: list[Case]) -> list[str]:
    out = []
    # (a canary parametrised by an autouse fixture with params, as pypa/build's `has_virtualenv`: `...[False]`)
    failing = _canary_cases(plan.failing, cases)
    passing = _canary_cases(plan.passing, cases)
    if not failing or not all(c.outcome == "failed" and c.assertion and plan.nonce in c.message for c in failing):
        wrong = [c for c in failing if not (c.outcome == "failed" and c.assertion and plan.nonce in c.message)]
        out.append(f"the canary that must fail by an assertion did not ({_shown(wrong or failing)})")
    if not passing or not all(c.outcome == "passed" for c in passing):
        out.append(f"the canary that must pass did not ({_shown([c for c in passing if c.outcome != 'passed'])})")
    return out


def _canary_cases(name: str, cases: list[Case]) -> list[Case]:
    """The cases of the canary `name`, but for a parameter's case skipped as the harness's own tests' case of the
    same parameter was, when another case of it ran: markupsafe's conftest parametrizes every test, the canaries
    too, over its pure module and its speedups, with `skipif(_speedups is None)` when they are not built. Such a
    skip is the harness's own parameter's, as its tests' cases show; the case that ran still proves the framework
    can fail and pass (and a skip raised by the code under test is the in-process guard's finding)."""
    mine = [c for c in cases if c.id == name or c.id.startswith(name + "[")]
    skipped_params = {c.id[c.id.index("["):] for c in cases if "[" in c.id and c.outcome == "skipped"
                      and not is_canary(c.id)}
    ran = [c for c in mine if not (c.outcome == "skipped" and "[" in c.id and c.id[c.id.index("["):] in skipped_params)]
    return ran if ran else mine


def _shown(canary: list[Case]) -> str:
    """What a canary did; for an error, what it ran into (alembic's conftest starts SQLAlchemy's testing plugin,
    whose setup of every test reads its class: `'NoneType' object has no attribute '__unsupported_on__'`)."""
    return shown(canary[0]) if canary else "missing"


def shown(c: Case) -> str:
    """What a test did, as a canary's finding says it: its outcome; for an error, what it ran into."""
    message = c.message.strip().splitlines()[-1][:200] if c.outcome == "error" and c.message.strip() else ""
    return f"{c.outcome}: {message}" if message else c.outcome


def check_pytest(plan: Plan, tests: list[str], cases: list[Case] | None, files: dict[str, bytes],
                 exit_code: int | None) -> tuple[list[str], list[Case] | None, dict[str, Any]]:
    """(findings, the report's cases without the canaries, what the guard recorded per case)."""
    findings: list[str] = []
    if exit_code == 0:
        findings.append("pytest exited 0 although the canary must fail")
    body = _read_record(files.get(PYTEST_RECORD), plan.key, "guard", findings)
    recorded: dict[str, Any] = {}
    if body is not None:
        if not body.get("finished"):
            findings.append("the guard did not finish")
        if body.get("exitstatus") is None or body.get("exitstatus") != exit_code:
            findings.append(f"pytest finished with status {body.get('exitstatus')}, but the process exited {exit_code}")
        junit = files.get(PYTEST_JUNIT)
        if junit is not None and body.get("junit_sha256") != hashlib.sha256(junit).hexdigest():
            findings.append("the JUnit report is not the one pytest wrote (changed after the session finished)")
        recorded = {k: v for k, v in (body.get("cases") or {}).items() if isinstance(v, dict)}
        for name in body.get("preloaded") or []:
            findings.append(f"{PRELOADED}{name}")
    if cases is None:
        return findings, None, recorded
    guard_cases = [Case(k, str(v.get("outcome")), bool(v.get("assertion")), v.get("exception"),
                        str(v.get("message") or "")) for k, v in recorded.items()]
    if body is not None and not findings and not cases and not recorded and exit_code == PYTEST_USAGE_ERROR:
        # pytest refused the command line before running anything (a test id the harness does not
        # hold), as the authenticated record confirms: nothing ran, which is `missing_test`, not a pass.
        return findings, cases, recorded
    findings += _canary_findings(plan, cases)
    if body is not None:
        cases = _assertions_from_guard(cases, recorded)
        for c in _canary_findings(plan, guard_cases):
            findings.append(f"guard: {c}")
        fail: dict[str, Any] = next((v for k, v in recorded.items()
                                     if k == plan.failing or k.startswith(plan.failing + "[")), {})
        if fail.get("origin") not in ("harness", None):
            findings.append(f"the canary's assertion was raised from {fail.get('origin')}, not from the test")
        for t in tests:
            a, b = outcome_of(select(cases, t)), outcome_of(select(guard_cases, t))
            if a[:2] != b[:2]:
                said = [f"{o}{' by an assertion' if o == 'failed' and asserted else ''}" for o, asserted, _m in (a, b)]
                findings.append(f"{t}: the JUnit report says {said[0]}, the framework's own reports say {said[1]}")
    own = [c for c in cases if not is_canary(c.id)]
    return findings, own, {k: v for k, v in recorded.items() if not is_canary(k)}


def _assertions_from_guard(cases: list[Case], recorded: dict[str, Any]) -> list[Case]:
    """The JUnit cases, with the assertion flag the guard's authenticated record gives where the report
    can only name the exception: a subclass of AssertionError with a name of its own (twisted trial's
    `FailTest`, which towncrier's `assertEqual` raises) is an assertion, which the guard tests with
    isinstance. Only that direction, and only for the very exception the guard saw: a report that
    claims an assertion the guard did not see still contradicts it."""
    out = []
    for c in cases:
        seen = observed_for(recorded, c.id)
        if (isinstance(seen, dict) and seen.get("assertion") is True and not c.assertion
                and c.outcome == "failed" == seen.get("outcome") and c.exception
                and c.exception.rsplit(".", 1)[-1] == seen.get("exception")):
            c = dataclasses.replace(c, assertion=True)
        out.append(c)
    return out


def check_node(plan: Plan, files_run: list[str], reports: list[str], files: dict[str, bytes],
               canary_cases: list[Case] | None, exit_code: int | None) -> list[str]:
    findings: list[str] = []
    if exit_code == 0:
        findings.append("node exited 0 although the canary must fail")
    for i, (f, report) in enumerate(zip([*files_run, plan.canary_file], reports, strict=True)):
        body = _read_record(files.get(node_record(i)), plan.key, f, findings)
        if body is not None and body.get("how") != "exit":
            findings.append(f"{f}: the guard did not see the process end normally")
        runner = _read_record(files.get(node_record(i, runner=True)), plan.key, f"{f} (runner)", findings)
        data = files.get(report)
        if runner is not None and data is not None and runner.get("report_sha256") != hashlib.sha256(data).hexdigest():
            findings.append(f"{f}: the report is not the one node's test runner wrote")
    if canary_cases is None:
        findings.append("the canary file wrote no report")
    else:
        findings += _canary_findings(plan, canary_cases)
    return findings


def assertion_origins(runs: list[Any], test_id: str) -> set[str | None]:
    """Where the failing assertions of `test_id` were raised, as the guard saw them in each run:
    "harness" (the test), "checkout" (the code under test), or another place."""
    out: set[str | None] = set()
    for run in runs:
        observed = (run.guard or {}).get("observed") or {}
        cases = [Case(k, str(v.get("outcome")), bool(v.get("assertion")), None, "") for k, v in observed.items()]
        for c in select(cases, test_id):
            if c.outcome == "failed" and c.assertion:
                out.add(observed[c.id].get("origin"))
    return out


# -- static collection: what the frozen harness defines, read from its syntax tree ----------------

def static_tests(harness: Path, file_: str, config: str = "") -> set[str] | None:
    """Ids (file::name, file::Class::name) a pytest module defines plainly, or None when it is not
    plain enough to say (custom collection, `__test__`, unparsable). `config` is the pytest
    configuration the run got from elsewhere (the base revision's)."""
    path = harness / file_
    if not file_.endswith(".py") or not path.is_file():
        return None
    ini = harness / "pytest.ini"
    text = (ini.read_text(errors="replace") if ini.is_file() else "") + "\n" + config
    if re.search(r"python_(functions|classes)|--deselect|(^|\s)-[km]\b|--ignore", text):
        return None
    source = path.read_text(errors="replace")
    if "__test__" in source or _collection_customised(harness):
        return None
    try:
        tree = _parse(source)
    except SyntaxError:
        return None
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            out.add(f"{file_}::{node.name}")
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test") and not node.bases:
            methods = [n for n in node.body if isinstance(n, ast.FunctionDef)]
            if any(m.name == "__init__" for m in methods):
                continue
            out.update(f"{file_}::{node.name}::{m.name}" for m in methods if m.name.startswith("test"))
    return out


def _collection_customised(harness: Path) -> bool:
    """Whether the harness's own conftest files change what is collected (then absence is theirs)."""
    for p in harness.rglob("conftest.py"):
        if re.search(r"collect|deselect|pytest_plugins", p.read_text(errors="replace")):
            return True
    return False


def harness_skips(harness: Path) -> bool:
    """Whether anything in the harness could skip or xfail a test (then a skip is the harness's own)."""
    for p in harness.rglob("*"):
        if p.is_file() and p.suffix in (".py", ".ini", ".cfg", ".toml", ".js", ".mjs", ".cjs"):
            if _SKIP_WORDS.search(p.read_text(errors="replace")):
                return True
    return False


def static_findings(harness: Path, tests: list[str], cases: list[Case], skips: bool,
                    config: str = "") -> list[str]:
    """Tests the harness plainly defines but a complete run did not report, or skipped without cause."""
    findings: list[str] = []
    skips = skips or bool(_SKIP_WORDS.search(config))
    for t in tests:
        file_ = t.split("::", 1)[0]
        defined = static_tests(harness, file_, config)
        if defined is None:
            if file_.endswith(_JS_SUFFIXES) and not skips:
                # node: a skip or todo the harness never asked for came from the code under test.
                skipped = [c.id for c in select(cases, t) if c.outcome == "skipped"]
                if skipped:
                    findings.append(f"{skipped[0]} was skipped, but nothing in the harness skips a test")
            continue
        errored = any(c.id == file_ and c.outcome == "error" for c in cases)
        wanted = [d for d in defined if d == t or d.startswith(t + "::")] if "::" in t else sorted(defined)
        if not errored:
            for d in wanted:
                if not select(cases, d):
                    findings.append(f"{d} is defined in the harness but the run did not report it (deselected?)")
        if not skips:
            # Only plain test functions: an async one without its plugin is skipped by pytest itself.
            skipped = [c.id for c in select(cases, t) if c.outcome == "skipped" and c.id.split("[", 1)[0] in defined]
            if skipped:
                findings.append(f"{skipped[0]} was skipped, but nothing in the harness skips a test")
    return findings[:20]
