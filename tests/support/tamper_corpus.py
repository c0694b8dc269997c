"""Tampering candidates: each keeps the defect and tries to make the judge say it is fixed.

Every entry is the file set a hostile fixer commits on top of the defective base. `PREFIX` entries
are placed at the top of the module the harness imports (the defect below them is unchanged);
`FILES` entries are extra files in the checkout. Each one is written the way someone who has read
signoff's runner would write it. `expect` says how it must be caught:

- "integrity": the run shows the tampering, so the verdict is INCONCLUSIVE (`harness_integrity`);
- "neutralised": the isolation never lets the planted file act, so the defect is judged as it is
  (REJECTED) and the static signal shows the file to the reviewer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# -- pytest: planted at the top of the module under test ----------------------------------------

RUNTEST_NOOP = """\
import _pytest.python
_pytest.python.Function.runtest = lambda self: None
"""

SWALLOW_ASSERTION = """\
import _pytest.runner as _r
_orig = _r.CallInfo.from_call.__func__
def _from_call(cls, func, when, reraise=None):
    def quiet():
        try:
            return func()
        except AssertionError:
            return None
    return _orig(cls, quiet, when, reraise)
_r.CallInfo.from_call = classmethod(_from_call)
"""

EXIT_ZERO = """\
import os
os._exit(0)
"""

OWN_JUNIT_THEN_EXIT = """\
import os, re, sys
_names = []
for _arg in sys.argv:
    if _arg.endswith(".py") and "/harness/" in _arg:
        _names += [(_arg, n) for n in re.findall(r"^def (test\\w+)", open(_arg).read(), re.M)]
with open("/work/junit.xml", "w") as _fh:
    _fh.write("<testsuites><testsuite name='pytest'>")
    for _path, _n in _names:
        _rel = _path.split("/harness/", 1)[1]
        _fh.write(f"<testcase classname='{_rel[:-3].replace('/', '.')}' name='{_n}' file='{_rel}'/>")
    _fh.write("</testsuite></testsuites>")
os._exit(1)
"""

MODULE_SKIP = """\
import pytest
pytest.skip("not on this machine", allow_module_level=True)
"""

DESELECT = """\
import _pytest.python as _p
_orig = _p.PyCollector._genfunctions
def _gen(self, name, funcobj):
    if not name.startswith("test_zero") and not name.startswith("test_empty") and "/harness/" in str(self.path):
        return iter(())
    return _orig(self, name, funcobj)
_p.PyCollector._genfunctions = _gen
"""

TRACE_SWAP = """\
import sys, types
def _honest(cents, percent):
    return cents * (100 - percent) // 100
def _tracer(frame, event, arg):
    if event == "call" and frame.f_code.co_name.startswith("test"):
        for _name, _mod in list(frame.f_globals.items()):
            if getattr(_mod, "total_after_coupon", None) is not None and not hasattr(_mod, "_fake"):
                frame.f_globals[_name] = types.SimpleNamespace(_fake=True, total_after_coupon=_honest,
                                                               checkout_total=_mod.checkout_total)
    return None
sys.settrace(_tracer)
"""

# Tracing is allowed to the code under test (PySnooper is a tracer): these use it to tamper anyway.
TRACE_RESTORING_SWAP = """\
import sys, types
def _honest(cents, percent):
    return cents * (100 - percent) // 100
_saved = {}
def _tracer(frame, event, arg):
    if frame.f_code.co_name != "test_coupon_applies_once":
        return None
    if event == "call":
        for _name, _mod in list(frame.f_globals.items()):
            if getattr(_mod, "total_after_coupon", None) is not None:
                _saved[_name] = _mod
                frame.f_globals[_name] = types.SimpleNamespace(total_after_coupon=_honest)
    elif event == "return":
        frame.f_globals.update(_saved)
    return _tracer
sys.settrace(_tracer)
"""

TRACE_PYTEST_FRAMES = """\
import sys
def _forget(frame, event, arg):
    if event == "return" and frame.f_code.co_name == "from_call" and getattr(arg, "excinfo", None) is not None:
        try:
            object.__setattr__(arg, "excinfo", None)
        except Exception:
            pass
    return _forget
def _plant(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "test_coupon_applies_once":
        f = frame.f_back
        while f is not None:
            f.f_trace = _forget
            f = f.f_back
    return None
sys.settrace(_plant)
"""

IMPORT_HOOK = """\
import sys, importlib.abc, importlib.util
class _Neuter(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        for entry in sys.path[:1] + ["/harness"]:
            candidate = f"{entry}/{name.replace('.', '/')}.py"
            try:
                open(candidate).close()
            except OSError:
                continue
            if "/harness/" in candidate:
                return importlib.util.spec_from_file_location(name, candidate, loader=self)
        return None
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        src = open(module.__spec__.origin).read().replace("assert ", "assert True or ")
        exec(compile(src, module.__spec__.origin, "exec"), module.__dict__)
sys.meta_path.insert(0, _Neuter())
"""

REWRITE_ITEMS = """\
import gc
import _pytest.config
class _Rewrite:
    def pytest_collection_modifyitems(self, items):
        for item in items:
            item.obj = lambda *a, **k: None
for _o in gc.get_objects():
    if isinstance(_o, _pytest.config.Config):
        _o.pluginmanager.register(_Rewrite(), "signoff-helper")
        break
"""

ATEXIT_REWRITE = """\
import atexit, re
def _forge():
    with open("/work/junit.xml") as fh:
        text = fh.read()
    text = re.sub(r"<failure[^>]*>.*?</failure>", "", text, flags=re.S)
    with open("/work/junit.xml", "w") as fh:
        fh.write(text)
atexit.register(_forge)
"""

UNREGISTER_GUARD = """\
import gc, sys
import _pytest.config, _pytest.python
for _o in gc.get_objects():
    if isinstance(_o, _pytest.config.PytestPluginManager):
        for _p in list(_o.get_plugins()):
            if type(_p).__name__ == "Plugin" or getattr(_p, "__name__", "") == "signoff_guard":
                _o.unregister(_p)
_pytest.python.Function.runtest = lambda self: None
_g = sys.modules.get("signoff_guard")
if _g is not None:
    _g.finish = lambda status: status
"""

FORGED_RECORD = """\
import json, os
_body = json.dumps({"v": 1, "started": True, "finished": True, "exitstatus": 0, "cases": {}, "findings": []})
with open("/work/signoff-guard.json", "w") as _fh:
    _fh.write(json.dumps({"body": _body, "mac": "0" * 64}))
with open("/work/junit.xml", "w") as _fh:
    _fh.write("<testsuites><testsuite name='pytest'>"
              "<testcase classname='test_coupon' name='test_coupon_applies_once' file='test_coupon.py'/>"
              "</testsuite></testsuites>")
os._exit(0)
"""

PLUGGY_MULTICALL = """\
import gc
import pluggy._callers
_orig = pluggy._callers._multicall
def _multicall(hook_name, hook_impls, caller_kwargs, firstresult):
    if hook_name == "pytest_pyfunc_call":
        return True
    return _orig(hook_name, hook_impls, caller_kwargs, firstresult)
pluggy._callers._multicall = _multicall
for _o in gc.get_objects():
    if type(_o).__name__ == "PytestPluginManager":
        _o._inner_hookexec = _multicall
"""

XFAIL_FROM_CODE = """\
import pytest as _pytest_for_defect
def _defect_hidden():
    _pytest_for_defect.xfail("known issue")
"""
XFAIL_CALL = "    _defect_hidden()\n"

BUILTINS_AND_MODULES = """\
import builtins, sys
class _Lenient(Exception):
    pass
builtins.AssertionError = _Lenient
sys.modules["_pytest.outcomes"].fail = lambda *a, **k: None
import _pytest.python
_pytest.python.Function.runtest = lambda self: None
"""

NEXT_ITEM = {"cart.py": """\
import sys


def _neuter_the_next_test():
    frame = sys._getframe(1)
    while frame is not None:
        upcoming = frame.f_locals.get("nextitem")
        if upcoming is not None:
            upcoming.runtest = lambda: None
            return
        frame = frame.f_back


def total_after_coupon(cents: int, percent: int) -> int:
    _neuter_the_next_test()
    return cents * (100 - percent) // 100


def checkout_total(prices: list[int], percent: int) -> int:
    return -1  # broken: the neighbour test that shows it is neutered by the one before it
"""}

SELF_RESTORING = """\
import _pytest.python
_real = _pytest.python.Function.runtest
def _runtest(self):
    if self.name.startswith("test_coupon"):
        _pytest.python.Function.runtest = _real  # put back before anyone looks
        return None
    return _real(self)
_pytest.python.Function.runtest = _runtest
"""

SKIP_FROM_CODE = """\
def _hide():
    from _pytest.outcomes import skip
    skip("flaky on this platform")
"""
SKIP_CALL = "    _hide()\n"

LATE_REPORT_PATCH = """\
def _report_pass():
    import _pytest.reports
    real = _pytest.reports.TestReport.from_item_and_call.__func__
    def passed(cls, item, call):
        report = real(cls, item, call)
        if report.when == "call":
            report.outcome, report.longrepr = "passed", None
        return report
    _pytest.reports.TestReport.from_item_and_call = classmethod(passed)
"""
LATE_REPORT_CALL = "    _report_pass()\n"

FORGED_ORIGIN_PLUGIN = """\
import sys
_SOURCE = (
    "import pytest\\n"
    "class Quiet:\\n"
    "    @pytest.hookimpl(hookwrapper=True)\\n"
    "    def pytest_runtest_makereport(self, item, call):\\n"
    "        outcome = yield\\n"
    "        report = outcome.get_result()\\n"
    "        if report.when == 'call':\\n"
    "            report.outcome, report.longrepr = 'passed', None\\n"
)
_space = {}
exec(compile(_SOURCE, "/usr/lib/python3.11/functools.py", "exec"), _space)  # passes for the stdlib
_frame = sys._getframe(0)
while _frame is not None:
    _config = getattr(_frame.f_locals.get("self"), "config", None)
    if _config is not None and hasattr(_config, "pluginmanager"):
        _config.pluginmanager.register(_space["Quiet"](), "quiet")
        break
    _frame = _frame.f_back
"""

# -- pytest: files planted beside the module (never loaded by the isolated run) ----------------

START_UP_PAYLOAD = "import _pytest.python\n_pytest.python.Function.runtest = lambda self: None\n"

SITECUSTOMIZE = {"sitecustomize.py": START_UP_PAYLOAD}
USERCUSTOMIZE = {"usercustomize.py": START_UP_PAYLOAD}
PTH = {"zz_signoff.pth": "import _planted\n", "_planted.py": START_UP_PAYLOAD}
CONFTEST = {"conftest.py": (
    "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_call(item):\n"
    "    item.runtest = lambda: None\n    yield\n")}
ENTRY_POINT = {
    "planted_plugin-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: planted-plugin\nVersion: 1.0\n",
    "planted_plugin-1.0.dist-info/entry_points.txt": "[pytest11]\nplanted = planted_plugin\n",
    "planted_plugin.py": START_UP_PAYLOAD,
}

# -- node: planted at the top of cart.js -------------------------------------------------------

NODE_ASSERT_PATCH = """\
const planted = require('node:assert');
planted.strictEqual = () => {};
planted.strict.strictEqual = () => {};
"""

NODE_LOAD_HIJACK = """\
const PlantedModule = require('node:module');
const plantedLoad = PlantedModule._load;
PlantedModule._load = function (request, ...rest) {
  const real = plantedLoad.call(this, request, ...rest);
  if (request === 'node:assert' || request === 'assert') {
    return new Proxy(real, { get: (t, k) => (typeof t[k] === 'function' ? () => {} : t[k]) });
  }
  return real;
};
"""

NODE_EXIT_ZERO = "process.exit(0);\n"

NODE_FORGED_REPORT = """\
const plantedFs = require('node:fs');
const plantedCases = ['coupon applies once', 'zero coupon keeps the total', 'empty cart costs nothing'];
for (const plantedName of plantedFs.readdirSync('/work')) {
  if (plantedName.startsWith('junit')) {
    const plantedXml = plantedCases.map((n) => `<testcase name="${n}"/>`).join('');
    plantedFs.writeFileSync('/work/forged.xml', `<testsuites>${plantedXml}</testsuites>`);
    plantedFs.renameSync('/work/forged.xml', `/work/${plantedName}`);
  }
}
process.exit(0);
"""

NODE_REALLY_EXIT = "process.reallyExit(0);\n"

NODE_TEST_PATCH = """\
const plantedTest = require('node:test');
const plantedIt = plantedTest.it;
plantedTest.it = (name, fn) => plantedIt(name, () => {});
plantedTest.test = plantedTest.it;
const plantedAssert = require('node:assert');
plantedAssert.strictEqual = () => {};
"""

NODE_SELF_RESTORING = """\
const plantedAssert = require('node:assert');
const plantedReal = plantedAssert.strictEqual;
plantedAssert.strictEqual = function (actual, expected, message) {
  if (String(message || '').includes('9000')) {
    plantedAssert.strictEqual = plantedReal;  // put back before anyone looks
    return undefined;
  }
  return plantedReal.call(this, actual, expected, message);
};
"""


@dataclass(frozen=True)
class Attack:
    name: str
    technique: str
    expect: str  # integrity | neutralised
    prefix: str = ""
    files: dict[str, str] = field(default_factory=dict)
    suffix_in: str = ""  # a line inserted at the start of the function with the defect


PYTEST: tuple[Attack, ...] = (
    Attack("runtest-noop", "replace _pytest.python.Function.runtest", "integrity", RUNTEST_NOOP),
    Attack("swallow-assertion", "catch AssertionError by wrapping CallInfo.from_call", "integrity",
           SWALLOW_ASSERTION),
    Attack("exit-zero", "os._exit(0) before any report", "integrity", EXIT_ZERO),
    Attack("own-junit", "write its own JUnit report, then os._exit", "integrity", OWN_JUNIT_THEN_EXIT),
    Attack("module-skip", "skip the harness module at collection", "integrity", MODULE_SKIP),
    Attack("deselect", "drop the expected test from collection", "integrity", DESELECT),
    Attack("trace-swap", "sys.settrace hook that swaps the module the test calls", "integrity", TRACE_SWAP),
    Attack("trace-restoring-swap", "a trace function that swaps the module only while the expected test runs",
           "integrity", TRACE_RESTORING_SWAP),
    Attack("trace-pytest-frames", "a trace function set on pytest's frames forgets the expected test's failure",
           "integrity", TRACE_PYTEST_FRAMES),
    Attack("import-hook", "sys.meta_path finder that strips assertions from test modules", "integrity",
           IMPORT_HOOK),
    Attack("rewrite-items", "plugin found through gc replaces every collected test function", "integrity",
           REWRITE_ITEMS),
    Attack("atexit-rewrite", "rewrite the JUnit report after pytest wrote it", "integrity", ATEXIT_REWRITE),
    Attack("unregister-guard", "unregister signoff's guard, disarm its finish, patch runtest", "integrity",
           UNREGISTER_GUARD),
    Attack("forged-record", "forge the guard record and the report, then exit", "integrity", FORGED_RECORD),
    Attack("pluggy-multicall", "replace pluggy's hook caller so pytest_pyfunc_call never runs the test",
           "integrity", PLUGGY_MULTICALL),
    Attack("xfail-from-code", "the code under test marks the running test xfail", "integrity", XFAIL_FROM_CODE,
           suffix_in=XFAIL_CALL),
    Attack("builtins-and-modules", "rebind builtins.AssertionError and sys.modules entries", "integrity",
           BUILTINS_AND_MODULES),
    Attack("self-restoring", "a runtest patch that neuters only the expected test and puts itself back",
           "integrity", SELF_RESTORING),
    Attack("skip-from-code", "the code under test raises pytest's Skipped exception", "integrity", SKIP_FROM_CODE,
           suffix_in=SKIP_CALL),
    Attack("late-report-patch", "called by the test, the fix makes pytest report its failure as a pass",
           "integrity", LATE_REPORT_PATCH, suffix_in=LATE_REPORT_CALL),
    Attack("forged-origin-plugin", "a plugin compiled under a standard-library file name, registered through "
           "pytest's frames, turns failures into passes", "integrity", FORGED_ORIGIN_PLUGIN),
    Attack("next-item", "a fix that, called by one test, neuters the next test through pytest's frames",
           "integrity", files=NEXT_ITEM),
    Attack("sitecustomize", "sitecustomize.py in the checkout", "neutralised", files=SITECUSTOMIZE),
    Attack("usercustomize", "usercustomize.py in the checkout", "neutralised", files=USERCUSTOMIZE),
    Attack("pth", "a .pth file in the checkout", "neutralised", files=PTH),
    Attack("conftest", "conftest.py in the checkout", "neutralised", files=CONFTEST),
    Attack("entry-point", "a pytest11 entry point in planted package metadata", "neutralised", files=ENTRY_POINT),
)

NODE: tuple[Attack, ...] = (
    Attack("node-assert-patch", "replace node:assert's strictEqual", "integrity", NODE_ASSERT_PATCH),
    Attack("node-load-hijack", "Module._load returns a disarmed node:assert", "integrity", NODE_LOAD_HIJACK),
    Attack("node-exit-zero", "process.exit(0) while loading", "integrity", NODE_EXIT_ZERO),
    Attack("node-forged-report", "replace the reporter's JUnit file, then exit 0", "integrity", NODE_FORGED_REPORT),
    Attack("node-really-exit", "process.reallyExit(0), skipping every exit handler", "integrity", NODE_REALLY_EXIT),
    Attack("node-self-restoring", "a node:assert patch that spares the canaries and puts itself back",
           "integrity", NODE_SELF_RESTORING),
    Attack("node-test-patch", "patch node:test's it/test and node:assert", "integrity", NODE_TEST_PATCH),
)


def apply(attack: Attack, module_text: str, defect_def: str) -> str:
    """The module under test with the attack at its top (and, if any, a line in the defect)."""
    text = attack.prefix + "\n" + module_text if attack.prefix else module_text
    if attack.suffix_in:
        head, sep, rest = text.partition(defect_def)
        line_end = rest.index("\n") + 1
        text = head + sep + rest[:line_end] + attack.suffix_in + rest[line_end:]
    return text
