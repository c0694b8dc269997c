"""The guard with the project's own pytest plugin and with a rerun plugin of the environment, run for real.

Each case is one pytest process started through the shipped bootstrap, outside any sandbox (the guard's
checks are what is tested; the sandbox is tested elsewhere): a checkout folder, a harness folder and an
"environment" folder named site-packages, which the guard counts as installed because it is on the path
at start. Six pytest processes of about a second of CPU each: the guard's checks of hooks, frames and
reports can only be seen in a pytest run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

RUNNER = resources.files("signoff.repair").joinpath("runner_files")

OWN_PLUGIN = '''import pytest

@pytest.fixture
def helper():
    return 42

def pytest_addoption(parser):
    parser.addini("ownplug_mode", "a setting of the plugin")

@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):  # anyio's runs async tests; honest but for the names below
    if "never_run" in pyfuncitem.name:
        return True
    if "swallowed" in pyfuncitem.name:
        try:
            pyfuncitem.obj(**{a: pyfuncitem.funcargs[a] for a in pyfuncitem._fixtureinfo.argnames})
        except BaseException:
            pass
        return True
    return None

@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_logreport(report):  # pyfakefs pauses its patching around reporting
    yield

@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    pass
'''
# Objects of the checkout that hold a None (unearth's BestMatch is a named tuple).
HOLDERS = '''
from typing import NamedTuple

class BestMatch(NamedTuple):
    best: object

class Lazy:
    @property
    def best(self):
        return None

def find():
    return BestMatch(None)
'''
# The same plugin forging outcomes through the hooks that report them.
FORGING = '''
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if "forged" in item.name:
        report = outcome.get_result()
        report.outcome, report.longrepr = "passed", None

def pytest_runtest_protocol(item, nextitem):
    if "taken_over" not in item.name:
        return None
    from _pytest.reports import TestReport
    for when in ("setup", "call", "teardown"):
        item.ihook.pytest_runtest_logreport(report=TestReport(item.nodeid, item.location, {}, "passed", None, when))
    return True

def pytest_collection_modifyitems(items):
    for item in items:
        if "swapped" in item.name:
            item.obj = item.module.test_harmless
'''

RERUN_PLUGIN = '''from _pytest import runner as _runner


class Rerun:
    """flaky's pattern: its own call_and_report in pytest's place while it runs the protocol itself."""

    def call_and_report(self, item, when, log=True, **kwds):
        return self.original(item, when, log, **kwds)

    def pytest_runtest_protocol(self, item, nextitem):
        self.original = _runner.call_and_report
        try:
            _runner.call_and_report = self.call_and_report
            _runner.pytest_runtest_protocol(item, nextitem)
        finally:
            _runner.call_and_report = self.original
        return True


PLUGIN = Rerun()
pytest_runtest_protocol = PLUGIN.pytest_runtest_protocol
'''

# The checkout's attacks on the rerun plugin's acceptance, run as the harness's test module imports it.
ATTACKS = '''import sys
import rerun

def own_method_left_in_place():  # the plugin's own method, outside its protocol: stays after it returns
    sys.modules["_pytest.runner"].call_and_report = rerun.PLUGIN.call_and_report

def the_plugins_class_rewritten():  # the plugin then swaps in the checkout's function itself
    def call_and_report(self, item, when, log=True, **kwds):
        return self.original(item, when, log, **kwds)
    rerun.Rerun.call_and_report = call_and_report
'''


def _record(tmp_path: Path, plugin: str, tests: str, ini: str = "[pytest]\n", *, rerun: bool = False,
            attack: str = "", own: str = "ownplug=ownplug,optional=ownplug.optional") -> dict[str, Any]:
    (tmp_path / "src" / "ownplug").mkdir(parents=True)
    (tmp_path / "src" / "ownplug" / "__init__.py").write_text(plugin)
    (tmp_path / "src" / "ownplug" / "attacks.py").write_text(ATTACKS)
    # A second plugin the project declares whose own dependency is not installed: left out, the run goes on.
    (tmp_path / "src" / "ownplug" / "optional.py").write_text("import not_installed_anywhere\n")
    env_site = tmp_path / "env" / "site-packages"
    env_site.mkdir(parents=True)
    (env_site / "rerun.py").write_text(RERUN_PLUGIN)
    (tmp_path / "harness").mkdir()
    (tmp_path / "harness" / "test_it.py").write_text(tests)
    (tmp_path / "harness" / "pytest.ini").write_text(ini)
    runner, work = tmp_path / "runner", tmp_path / "work"
    runner.mkdir()
    work.mkdir()
    for name in ("run_pytest.py", "signoff_guard.py"):
        (runner / name).write_bytes(RUNNER.joinpath(name).read_bytes())
    harness = tmp_path / "harness"
    argv = [sys.executable, "-B", str(runner / "run_pytest.py"), str(tmp_path / "src"), "-p", "no:cacheprovider",
            "-p", "no:randomly", *(["-p", "rerun"] if rerun else []), f"--rootdir={harness}", "-c",
            str(harness / "pytest.ini"), f"--confcutdir={harness}", "-q", f"--junitxml={work / 'junit.xml'}",
            str(harness / "test_it.py")]
    (tmp_path / "tmp").mkdir()
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(env_site), "SIGNOFF_GUARD_KEY": "k",
           "TMPDIR": str(tmp_path / "tmp"), "ATTACK": attack, **({"SIGNOFF_OWN_PLUGINS": own} if own else {})}
    subprocess.run(argv, cwd=work, env=env, capture_output=True, timeout=120, check=False)
    body: dict[str, Any] = json.loads(json.loads((work / "signoff-guard.json").read_text())["body"])
    return body


def _run(tmp_path: Path, plugin: str, tests: str, ini: str = "[pytest]\n", *, rerun: bool = False,
         attack: str = "", own: str = "ownplug=ownplug,optional=ownplug.optional") -> tuple[list[str], dict[str, str]]:
    body = _record(tmp_path, plugin, tests, ini, rerun=rerun, attack=attack, own=own)
    return body["findings"], {k.split("::")[-1]: v["outcome"] for k, v in body["cases"].items()}


def test_the_projects_own_plugin_and_a_rerun_plugin_work_without_findings(tmp_path: Path) -> None:
    # The plugin's fixture, its ini option under --strict-config, its pytest_pyfunc_call and reporting hooks; the
    # rerun plugin puts its own call_and_report in pytest's place around each test, as flaky does (coverage.py).
    # And unearth #158: on base `match.best` is None and the test reads `match.best.version` in its own line. A
    # None the test made, a holder of its own, one reached through a call or a property stays the test's own error.
    tests = ("import types\nimport ownplug\n\n"
             "def test_uses(helper):\n    assert helper == 42\n\n"
             "def test_fails(helper):\n    assert helper == 1\n\n"
             "def test_checkouts_none():\n    match = ownplug.find()\n    assert match.best.version == '1'\n\n"
             "def test_own_none():\n    match = types.SimpleNamespace(best=None)\n"
             "    assert match.best.version == '1'\n\n"
             "def test_through_a_call():\n    assert ownplug.find().best.version == '1'\n\n"
             "def test_through_a_property():\n    match = ownplug.Lazy()\n    assert match.best.version == '1'\n")
    body = _record(tmp_path, OWN_PLUGIN + HOLDERS, tests, "[pytest]\nownplug_mode = x\naddopts = --strict-config\n",
                   rerun=True)
    assert body["findings"] == []
    # The processes the tests start see the plugin that loaded, not the one that could not be imported.
    declared = tmp_path / "tmp" / "signoff-own-plugins" / "signoff_own_plugins-0.dist-info" / "entry_points.txt"
    assert declared.read_text() == "[pytest11]\nownplug = ownplug\n"
    cases = {k.split("::")[-1]: v for k, v in body["cases"].items()}
    assert {k: v["outcome"] for k, v in cases.items()} == {
        "test_uses": "passed", "test_fails": "failed", "test_checkouts_none": "failed", "test_own_none": "failed",
        "test_through_a_call": "failed", "test_through_a_property": "failed"}
    assert {k: v["lacks"] for k, v in cases.items() if k not in ("test_uses", "test_fails")} == {
        "test_checkouts_none": "a value: match.best is None (the checkout's BestMatch.best)",
        "test_own_none": None, "test_through_a_call": None, "test_through_a_property": None}


def test_the_projects_own_plugin_cannot_forge_a_pass_through_any_hook(tmp_path: Path) -> None:
    # It may implement any hook (pyfakefs wraps pytest_runtest_logreport, anyio runs tests in pytest_pyfunc_call):
    # the guard watches the test function itself, so none of them can make a failing test pass unseen.
    # The project under test: five tests that fail, each of which the plugin tries to pass off, and
    # `test_harmless`, a real pass that the "swapped" attack runs in a failing test's place (and which,
    # run as itself, must raise no finding: the list below is exact).
    tests = "".join(f"def test_{name}():\n    assert False\n\n" for name in (
        "never_run", "swallowed", "forged", "taken_over", "swapped")) + "def test_harmless():\n    assert True\n"
    findings, _outcomes = _run(tmp_path, OWN_PLUGIN + FORGING, tests)
    assert sorted(findings) == sorted([
        "test_it.py::test_never_run: reported as passed, but the test function never ran",
        "test_it.py::test_swallowed raised AssertionError but was reported as passed",
        "test_it.py::test_forged raised AssertionError but was reported as passed",
        "test_it.py::test_taken_over: reported as passed, but the test function never ran",
        "test_it.py::test_swapped: its function is not the one its module or class defines under its name"])


@pytest.mark.parametrize("attack", ["own_method_left_in_place", "the_plugins_class_rewritten"])
def test_the_checkout_cannot_use_the_rerun_plugins_acceptance(tmp_path: Path, attack: str) -> None:
    # The project's tests pass on their own: what is judged is the attack its test module makes at
    # import, which must be reported however the tests end.
    tests = ("import os\nimport ownplug.attacks\ngetattr(ownplug.attacks, os.environ['ATTACK'])()\n\n"
             "def test_a():\n    assert True\n\ndef test_b():\n    assert True\n")
    findings, _outcomes = _run(tmp_path, "", tests, rerun=True, attack=attack)
    assert [f for f in findings if f.startswith("replaced: _pytest.runner.call_and_report")], findings


# A warning class of the project's own that its pytest configuration names after `error` (pyjwt's
# `ignore::jwt.warnings.InsecureKeyLengthWarning`), and the same module patching pytest as it is imported.
OWN_WARNING = """import os

class OwnWarning(UserWarning):
    pass

if os.environ.get("ATTACK") == "patch_while_filters_resolve":
    import _pytest.runner
    _original = _pytest.runner.call_and_report

    def call_and_report(*args, **kwargs):
        return _original(*args, **kwargs)

    _pytest.runner.call_and_report = call_and_report
"""


@pytest.mark.parametrize("attack", ["", "patch_while_filters_resolve"])
def test_a_warning_class_of_the_checkout_in_filterwarnings_waits_for_the_checkout(tmp_path: Path,
                                                                                  attack: str) -> None:
    # pytest 9 applies the filters while loading the environment's plugins, before the checkout is on the path:
    # pyjwt's run ended there ("Failed to import filter module 'jwt'", an error after `error`). The filter is
    # applied from the conftests on; what the import of its module patches is a finding as any import's is.
    tests = "import warnings\nimport ownplug\n\ndef test_warns():\n    warnings.warn(ownplug.OwnWarning('x'))\n"
    findings, outcomes = _run(tmp_path, OWN_WARNING, tests,
                              "[pytest]\nfilterwarnings =\n    error\n    ignore::ownplug.OwnWarning\n",
                              attack=attack, own="")
    assert outcomes == {"test_warns": "passed"}
    if attack:
        assert "replaced during configuration: _pytest.runner.call_and_report" in findings, findings
    else:
        assert findings == []

BOUND_PROBE = """
import json, os, sys
sys.path.insert(0, sys.argv[1])
os.makedirs("checkout/ownplug", exist_ok=True)
import _pytest.config
seen = []
_pytest.config.apply_warning_filters = lambda config, cmdline: seen.append(list(config))
import signoff_guard
signoff_guard._defer_checkout_filters(["checkout"])
bound = _pytest.config.apply_warning_filters  # as pytest 8's warnings plugin binds it at its import
filters = ["error", "ignore::ownplug.OwnWarning", "ignore::DeprecationWarning"]
bound(filters, [])
signoff_guard._restore_filters()
bound(filters, [])
print(json.dumps(seen))
"""


def test_a_deferred_filter_is_applied_again_wherever_pytest_bound_the_function(tmp_path: Path) -> None:
    # pytest 8's warnings plugin imports apply_warning_filters by name: once the checkout is on the path, the
    # guard's stand-in must apply every filter (pyjwt's InsecureKeyLengthWarning was an error in its tests).
    shipped = resources.files("signoff.repair").joinpath("runner_files", "signoff_guard.py")
    with resources.as_file(shipped) as guard:
        proc = subprocess.run([sys.executable, "-B", "-c", BOUND_PROBE, str(guard.parent)], capture_output=True,
                              text=True, cwd=tmp_path, check=True, timeout=60,
                              env={"TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"})
    before, after = json.loads(proc.stdout.splitlines()[-1])
    assert before == ["error", "ignore::DeprecationWarning"]
    assert after == ["error", "ignore::ownplug.OwnWarning", "ignore::DeprecationWarning"]

CHILD_PROBE = """
import json, os, sys
from importlib import metadata
sys.path.insert(0, sys.argv[1])
import signoff_guard
signoff_guard._own_plugins_for_children({"asyncio": "pytest_asyncio.plugin"})
folder = os.environ["PYTHONPATH"].split(os.pathsep)[-1]
dist = next(iter(metadata.distributions(path=[folder])))
print(json.dumps({"pythonpath": os.environ["PYTHONPATH"], "folder": folder, "last_on_path": sys.path[-1],
                  "in_process": [e.value for e in metadata.entry_points(group="pytest11") if e.name == "asyncio"],
                  "entry_points": [(e.group, e.name, e.value) for e in dist.entry_points],
                  "files": [str(f) for f in dist.files or []]}))
"""


def test_the_projects_own_plugins_are_declared_to_the_sessions_the_tests_start(tmp_path: Path) -> None:
    # pytest-asyncio's tests run pytest in a child (pytester), which finds the plugin by its entry point.
    shipped = resources.files("signoff.repair").joinpath("runner_files", "signoff_guard.py")
    with resources.as_file(shipped) as guard:
        proc = subprocess.run([sys.executable, "-B", "-c", CHILD_PROBE, str(guard.parent)], capture_output=True,
                              text=True, cwd=tmp_path, check=True, timeout=60,
                              env={"TMPDIR": str(tmp_path), "PYTHONPATH": "/src", "PATH": "/usr/bin:/bin"})
    out = json.loads(proc.stdout.splitlines()[-1])
    # After the checkout, never instead of it; in the run's own temporary folder.
    assert out["pythonpath"] == f"/src:{tmp_path}/signoff-own-plugins" and out["folder"].startswith(str(tmp_path))
    assert out["entry_points"] == [["pytest11", "asyncio", "pytest_asyncio.plugin"]]
    # And to the sessions pytester starts in this process (pytest-xdist's parseconfigure("-n 2")): the
    # folder is last on this process's path, so a new config finds the entry point.
    assert out["last_on_path"] == out["folder"] and "pytest_asyncio.plugin" in out["in_process"]
    # Its files, so that pytest marks the plugin's modules for assertion rewriting as an install would.
    assert set(out["files"]) == {"pytest_asyncio/__init__.py", "pytest_asyncio.py"}


# pytest-flake8 of 2021: a hook argument pytest 9 removed (`path`), so pytest refuses the plugin at start-up.
REFUSED_PLUGIN = '''import pytest

def pytest_collect_file(path, parent, not_an_argument_of_this_hook):
    return None
'''


def test_an_installed_plugin_this_pytest_refuses_is_left_out_and_the_run_goes_on(tmp_path: Path) -> None:
    # schedule's tox.ini installs pytest-flake8, tldextract's pytest-gitignore: every run ended at its start.
    env_site = tmp_path / "env" / "site-packages"
    info = env_site / "oldplug-1.0.dist-info"
    info.mkdir(parents=True)
    (env_site / "oldplug.py").write_text(REFUSED_PLUGIN)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: oldplug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytest11]\nold = oldplug\n")
    (tmp_path / "src").mkdir()
    harness, runner, work = tmp_path / "harness", tmp_path / "runner", tmp_path / "work"
    for folder in (harness, runner, work, tmp_path / "tmp"):
        folder.mkdir()
    # the project's one test passes whatever a plugin does: what is checked is that the run gets to it
    (harness / "test_it.py").write_text("def test_a():\n    assert True\n")
    (harness / "pytest.ini").write_text("[pytest]\n")
    for name in ("run_pytest.py", "signoff_guard.py"):
        (runner / name).write_bytes(RUNNER.joinpath(name).read_bytes())
    argv = [sys.executable, "-B", str(runner / "run_pytest.py"), str(tmp_path / "src"), "-p", "no:cacheprovider",
            "-p", "no:randomly", f"--rootdir={harness}", "-c", str(harness / "pytest.ini"), f"--confcutdir={harness}",
            "-q", f"--junitxml={work / 'junit.xml'}", str(harness / "test_it.py")]
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(env_site), "SIGNOFF_GUARD_KEY": "k",
           "TMPDIR": str(tmp_path / "tmp")}
    proc = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "the installed pytest plugin old is left out of this run" in proc.stderr
    body = json.loads(json.loads((work / "signoff-guard.json").read_text())["body"])
    assert body["findings"] == [] and [c["outcome"] for c in body["cases"].values()] == ["passed"]
    assert len(body["refused"]) == 1 and body["refused"][0].startswith("old (")
