"""The in-sandbox guard ships as real source files (package data), and those are the bytes placed in /runner."""

from __future__ import annotations

import ast
import fnmatch
import hashlib
import importlib.util
import marshal
import os
import sys
import tomllib
import types
from importlib import resources
from pathlib import Path

import pytest

import signoff
from signoff.repair.runners import EMPTY_INI, Runner

SHIPPED = resources.files("signoff.repair").joinpath("runner_files")
GUARDED = ("pytest", "node", "vitest", "jest")


def _shipped_names() -> set[str]:
    return {entry.name for entry in SHIPPED.iterdir() if entry.is_file()}


def test_the_runner_files_are_found_through_importlib_resources() -> None:
    assert _shipped_names() == {"run_pytest.py", "signoff_guard.py", "signoff_guard.cjs", "run_tests.mjs"}
    for name in _shipped_names():
        assert SHIPPED.joinpath(name).read_bytes()


def test_without_the_folder_on_disk_the_runner_files_come_through_importlib_resources(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from signoff.repair import guard_sources

    monkeypatch.setattr(guard_sources, "RUNNER_FOLDER", tmp_path / "not-unpacked")
    assert guard_sources.runner_file("run_pytest.py").encode() == SHIPPED.joinpath("run_pytest.py").read_bytes()


@pytest.mark.parametrize("kind", GUARDED)
def test_the_runner_places_the_shipped_bytes_in_its_folder(tmp_path: Path, kind: str) -> None:
    folder = Runner(kind).write_files(tmp_path / kind)
    placed = {p.name: p.read_bytes() for p in folder.iterdir()}
    generated = {"pytest.ini": EMPTY_INI.encode()} if kind == "pytest" else {}
    shipped = {name: SHIPPED.joinpath(name).read_bytes() for name in set(placed) - set(generated)}
    assert placed == {**shipped, **generated}
    # The runner's digest, recorded in every piece of evidence, covers exactly those bytes.
    assert Runner(kind).spec()["files"] == {name: hashlib.sha256(data).hexdigest() for name, data in placed.items()}


def test_every_shipped_file_is_placed_by_a_runner() -> None:
    placed = {name for kind in GUARDED for name in Runner(kind).files()}
    assert _shipped_names() <= placed


def test_the_guard_imports_nothing_from_signoff() -> None:
    # It runs with the project's Python and pytest, where signoff is not installed.
    for name in {n for n in _shipped_names() if n.endswith(".py")}:
        tree = ast.parse(SHIPPED.joinpath(name).read_text(encoding="utf-8"))
        modules = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
        modules += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
        assert not [m for m in modules if m.split(".")[0] == "signoff"], name


def test_the_wheel_configuration_ships_every_runner_file() -> None:
    root = Path(signoff.__file__).parent
    pyproject = root.parents[1] / "pyproject.toml"
    globs = tomllib.loads(pyproject.read_text())["tool"]["setuptools"]["package-data"]["signoff"]
    folder = root / "repair" / "runner_files"
    for path in folder.iterdir():
        rel = path.relative_to(root).as_posix()
        assert any(fnmatch.fnmatch(rel, g) for g in globs), f"{rel} is not package data, so no wheel ships it"


def test_the_guard_bytecode_is_its_source_compiled_and_checked_against_it(tmp_path: Path) -> None:
    runner = Runner("pytest")
    folder = runner.write_files(tmp_path / "runner")
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    runner.write_bytecode(folder, version, tmp_path / "cache")
    pyc = Path(importlib.util.cache_from_source(str(folder / "signoff_guard.py")))
    data = pyc.read_bytes()
    # A checked hash-based pyc (PEP 552): Python compares it with the source's hash when loading, and
    # compiles the source instead when they differ.
    assert data[:4] == importlib.util.MAGIC_NUMBER and int.from_bytes(data[4:8], "little") == 0b11
    assert data[8:16] == importlib.util.source_hash((folder / "signoff_guard.py").read_bytes())
    code = marshal.loads(data[16:])
    assert code.co_filename == "/runner/signoff_guard.py"
    assert code.co_code == compile((folder / "signoff_guard.py").read_bytes(), "/runner/signoff_guard.py",
                                   "exec", dont_inherit=True).co_code
    # Another Python version's run compiles the source itself: nothing is placed for it.
    other = runner.write_files(tmp_path / "other")
    runner.write_bytecode(other, "3.99", tmp_path / "cache")
    assert not (other / "__pycache__").exists()


def test_pytest_enabler_never_puts_left_out_options_back() -> None:
    # The jaraco skeleton's pytest-enabler adds --cov, -n auto and --mypy at start-up (inflect): its
    # mypy items cannot even name the canary, and pytest stopped with an INTERNALERROR.
    argv, _reports = Runner("pytest").command(["test_x.py::test_a"], (), "/python", [])
    assert argv[argv.index("no:enabler") - 1] == "-p"


def test_a_replacement_of_pytests_internals_names_whose_code_it_is() -> None:
    # coverage.py's test requirements install flaky, which patches _pytest.runner.call_and_report as tests
    # run: the finding names the installed plugin's file and what to do, not only what was replaced.
    spec = importlib.util.spec_from_file_location("signoff_guard_names", str(SHIPPED.joinpath("signoff_guard.py")))
    assert spec is not None and spec.loader is not None
    guard = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(guard)
    import pluggy

    by = guard._by(pluggy.PluginManager.register)
    assert by.startswith(" (by pluggy/_manager.py, installed in the test environment: leave that plugin out")
    assert guard._by(lambda: 1) == f" (by {__file__})" and guard._by(1) == ""
    from signoff.repair.verdict import reason

    finding = "base: guard: replaced: _pytest.runner.call_and_report" + guard._by(pluggy.PluginManager.register)
    assert reason("harness_integrity", finding)["fix"].startswith("`pluggy`, a package the test requirements install")
    assert "a person must look" in reason("harness_integrity", "base: guard: replaced: x (by /src/evil.py)")["fix"]


def _fresh_guard() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("signoff_guard_checks", str(SHIPPED.joinpath("signoff_guard.py")))
    assert spec is not None and spec.loader is not None
    guard = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(guard)
    return guard


def test_a_checkout_conftest_imported_by_any_package_name_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    guard = _fresh_guard()
    for name, file_ in (("conftest", "/src/conftest.py"), ("pkg.tests.conftest", "/src/pkg/tests/conftest.py"),
                        ("pkg.notconftest", "/src/pkg/notconftest.py"), ("tests.conftest", "/harness/conftest.py"),
                        ("pkg.conftest_helpers", "/src/pkg/conftest_helpers.py")):
        module = types.ModuleType(name)
        module.__file__ = file_
        monkeypatch.setitem(sys.modules, name, module)
    guard._check_hooks_of_interpreter()
    assert [f for f in guard.findings if f.endswith("was imported")] == [
        "the checkout's /src/conftest.py was imported", "the checkout's /src/pkg/tests/conftest.py was imported"]


def test_a_replaced_function_or_its_code_is_found_and_an_untouched_one_is_not() -> None:
    guard = _fresh_guard()
    space = {"kept": _fresh_guard, "swapped": _fresh_guard, "recoded": lambda: 1, "method": staticmethod(len)}
    guard.state["snapshot"] = [[True, ("m", name), space, name, value, guard._code(value), []]
                               for name, value in space.items()]
    space["swapped"] = test_the_runner_files_are_found_through_importlib_resources
    space["recoded"].__code__ = (lambda: 2).__code__
    guard._compare()
    assert [f.split(" (by")[0] for f in guard.findings] == ["replaced: m.swapped", "code replaced: m.recoded"]


def test_the_display_hook_the_project_sets_is_no_finding() -> None:
    """sympy (blind15b): its root conftest.py sets `sys.__displayhook__` to the pretty printer sympy installed; a
    display hook prints, and judges nothing. A replaced sys function still is a finding."""
    guard = _fresh_guard()
    watched = {".".join(e[1]) for e in guard._entries()}
    assert "sys.__displayhook__" not in watched and "sys.displayhook" not in watched
    assert "sys.getrecursionlimit" in watched


def test_a_thread_start_or_run_the_code_under_test_wraps_is_no_finding() -> None:
    """sentry-python (blind16): its threading integration wraps `threading.Thread.start` to carry its scope into
    new threads (OpenTelemetry's and other tracing SDKs wrap `Thread.run` too); it runs a thread's body, which the
    code under test may start anyway, and judges nothing. Other methods of Thread, and threading's functions, are
    still watched."""
    guard = _fresh_guard()
    watched = {".".join(e[1]) for e in guard._entries()}
    assert "threading.Thread.start" not in watched and "threading.Thread.run" not in watched
    assert {"threading.Thread.join", "threading.Thread.is_alive", "threading.active_count"} <= watched


def _raised(guard: types.ModuleType, calls: str) -> tuple[str | None, bool]:
    """Where the guard places an exception raised through `calls`: frames compiled under the harness's (`h`) and
    the checkout's (`c`) paths, outermost first, the last one raising; the first of the harness's is the test."""
    namespace: dict[str, object] = {}
    for i, who in enumerate(calls):
        body = f"def f{i}():\n    f{i + 1}()\n" if i + 1 < len(calls) else f"def f{i}():\n    1 / 0\n"
        exec(compile(body, "/harness/t.py" if who == "h" else "/src/pkg.py", "exec"), namespace)
    try:
        namespace["f0"]()  # type: ignore[operator]
    except ZeroDivisionError as exc:
        test = namespace[f"f{calls.index('h')}"].__code__  # type: ignore[attr-defined]
        origin, _last, let_through = guard._raised_at(exc.__traceback__, test)
        return origin, let_through
    raise AssertionError("nothing raised")


def test_an_exception_of_a_harness_callback_the_code_under_test_let_through_is_told_apart() -> None:
    """sentry-python (blind16): its test's `before_breadcrumb` raises ZeroDivisionError, and the base's
    add_breadcrumb lets it through (the defect: the fix contains it). Raised in the harness, through the checkout,
    by a callback that is not the test function itself: the checkout let it through. A test function the project's
    own runner calls (trio's tests run under trio.run) raising in its own body is the test's, as before."""
    guard = _fresh_guard()
    assert _raised(guard, "hcch") == ("harness", True)  # test -> checkout -> callback of the harness raising
    assert _raised(guard, "hhcch") == ("harness", True)
    assert _raised(guard, "hh") == ("harness", False)  # the test's own helper
    assert _raised(guard, "hc") == ("checkout", False)  # the code under test crashing
    assert _raised(guard, "ch") == ("harness", False)  # trio_test -> the test function raising in its body


def _reporter_swap(guard: types.ModuleType, replace: bool) -> list[str]:
    """pytest-relaxed's way: pytest's `terminalreporter` unregistered and another registered under its name
    in a trylast pytest_configure, after the guard's snapshot."""
    import pluggy

    spec, impl = pluggy.HookspecMarker("t"), pluggy.HookimplMarker("t")

    class Spec:
        @spec
        def pytest_collection(self, session: object) -> None: ...

    class Builtin:
        @impl
        def pytest_collection(self, session: object) -> None: ...

    class Relaxed(Builtin):
        @impl
        def pytest_collection(self, session: object) -> None: ...

    pm = pluggy.PluginManager("t")
    pm.add_hookspecs(Spec)
    pm.register(Builtin(), "terminalreporter")
    guard.state["hooks"] = guard._hook_snapshot(pm)
    pm.unregister(name="terminalreporter")
    if replace:
        pm.register(Relaxed(), "terminalreporter")
    guard._accept_swapped_plugins(pm)
    guard._check_hooks(pm)
    return guard.findings


def test_a_plugin_of_the_environment_replacing_pytests_reporter_by_name_removes_no_hook(
        monkeypatch: pytest.MonkeyPatch) -> None:
    here = str(Path(__file__).parent) + "/"
    guard = _fresh_guard()
    monkeypatch.setattr(guard, "_trusted", (here,))
    assert _reporter_swap(guard, replace=True) == []
    guard = _fresh_guard()
    monkeypatch.setattr(guard, "_trusted", (here,))
    assert _reporter_swap(guard, replace=False) == ["hook implementation removed: pytest_collection"]
    guard = _fresh_guard()  # the same swap by the checkout's code is still a removal
    monkeypatch.setattr(guard, "_trusted", ())
    monkeypatch.setitem(guard._PLACES, "checkout", (here,))
    assert "hook implementation removed: pytest_collection" in _reporter_swap(guard, replace=True)


def test_the_guard_tells_the_first_host_outside_the_machine_once() -> None:
    """pydicom's tests (blind17) download their data files at import, each retried with pauses: the run only
    timed out. The guard now says which host they reached for, on the run's own stderr; a server of the
    test's own (loopback, a unix socket) is none."""
    guard = _fresh_guard()
    read, write = os.pipe()
    guard._network["fd"] = write
    try:
        guard._audit_event("socket.getaddrinfo", ("localhost", 8000, 0, 1, 6))
        guard._audit_event("socket.connect", (object(), ("127.0.0.1", 8000)))
        guard._audit_event("socket.connect", (object(), "/tmp/server.sock"))
        guard._audit_event("socket.getaddrinfo", ("github.com", 443, 0, 1, 6))
        guard._audit_event("socket.connect", (object(), ("140.82.112.3", 443)))
    finally:
        os.close(write)
    with os.fdopen(read) as f:
        said = f.read()
    assert said == f"{guard.NETWORK_NOTE}github.com:443\n"
    from signoff.repair import verdict

    assert verdict.network_reached(f"Traceback...\n{said}") == \
        "; the tests reached for the network (github.com:443), which runs never have"

def test_a_namespace_package_the_environment_made_at_start_up_gets_the_checkouts_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """zope.interface (blind17b): zope.event's `-nspkg.pth` made `zope` at start-up with the environment's folder
    as its whole path, and `import zope.interface` failed although the checkout has src/zope/interface."""
    guard = _fresh_guard()
    env, checkout, harness = tmp_path / "site", tmp_path / "src", tmp_path / "harness"
    (env / "nsq17" / "event").mkdir(parents=True)
    (checkout / "nsq17" / "iface").mkdir(parents=True)
    (checkout / "nsq17" / "iface" / "__init__.py").write_text("WHERE = 'checkout'\n")
    (checkout / "regq17").mkdir()
    namespace = types.ModuleType("nsq17")
    namespace.__path__ = [str(env / "nsq17")]  # as the .pth leaves it: no file of its own
    regular = types.ModuleType("regq17")
    regular.__file__, regular.__path__ = str(env / "regq17" / "__init__.py"), [str(env / "regq17")]
    monkeypatch.setitem(sys.modules, "nsq17", namespace)
    monkeypatch.setitem(sys.modules, "regq17", regular)
    joined = guard._join_namespaces({"nsq17": [str(harness / "nsq17")]}, [str(checkout)])
    assert joined == [f"nsq17 ({checkout / 'nsq17'})"]
    assert namespace.__path__ == [str(harness / "nsq17"), str(checkout / "nsq17"), str(env / "nsq17")]
    assert regular.__path__ == [str(env / "regq17")]  # a regular package of the environment: not this
    monkeypatch.delitem(sys.modules, "nsq17.iface", raising=False)
    import importlib

    assert importlib.import_module("nsq17.iface").WHERE == "checkout"
    monkeypatch.delitem(sys.modules, "nsq17.iface")
    assert guard._join_namespaces({}, [str(checkout)]) == []  # joined once


def test_the_harness_root_joins_the_path_before_the_checkout() -> None:
    """django-model-utils (blind17bz): pytest-django imports `tests.settings` at start-up, before pytest collects the
    test package; with only the checkout on the path that was the checkout's `tests`, and pytest then refused the
    harness's test module ("import file mismatch")."""
    guard = _fresh_guard()
    assert guard._joining("/harness/", ["/src", "/src/src"], ["/usr/lib/python3.11"]) == [
        "/harness", "/src", "/src/src"]
    assert guard._joining("/harness", ["/src"], ["/harness", "/usr/lib"]) == ["/src"]  # never twice


def test_ini_keys_keep_their_case() -> None:
    """pytest reads ini keys as written: pytest-django's DJANGO_SETTINGS_MODULE from setup.cfg, lowercased, was
    no option of its, and Django said its settings were not configured."""
    from signoff.repair.pytest_config import read

    cfg = read(lambda n: b"[tool:pytest]\nDJANGO_SETTINGS_MODULE = tests.settings\n" if n == "setup.cfg" else None,
               "base revision")
    assert cfg is not None and "DJANGO_SETTINGS_MODULE = tests.settings" in cfg.text


def test_a_runtest_an_installed_fixture_sets_while_it_is_set_up_is_no_finding() -> None:
    """pytest-django (django-model-utils, blind17bz): its class-scoped autouse fixture `_django_setup_unittest` runs
    each `django.test.TestCase` through its own `non_debugging_runtest`, put in `TestCaseFunction.runtest`'s place
    while the class runs. Accepted only while that fixture of the running test is set up, and only a function
    defined inside it in an installed package's file; the checkout's function, or one left after the teardown,
    is a finding."""
    import sysconfig

    guard = _fresh_guard()
    source = ("def _django_setup_unittest(request):\n    def non_debugging_runtest(self):\n"
              "        self._testcase(result=self)\n    yield non_debugging_runtest\n")
    installed: dict[str, object] = {}
    exec(compile(source, f"{sysconfig.get_paths()['purelib']}/pytest_django/plugin.py", "exec"), installed)
    checkout: dict[str, object] = {}
    exec(compile(source, "/src/pkg/conftest_like.py", "exec"), checkout)
    fixture = types.SimpleNamespace(func=installed["_django_setup_unittest"], cached_result=(None, 0, None))
    guard.state["item"] = types.SimpleNamespace(_fixtureinfo=types.SimpleNamespace(
        name2fixturedefs={"_django_setup_unittest": [fixture]}))

    def original(self: object) -> None:
        pass

    space: dict[str, object] = {"runtest": original, "setup": original}
    guard.state["snapshot"] = [[True, ("_pytest.unittest", "TestCaseFunction", name), space, name, original,
                                guard._code(original), []] for name in space]
    space["runtest"] = next(installed["_django_setup_unittest"](None))  # type: ignore[operator]
    guard._compare()
    assert guard.findings == []
    space["runtest"] = next(checkout["_django_setup_unittest"](None))  # type: ignore[operator]
    space["setup"] = next(installed["_django_setup_unittest"](None))  # type: ignore[operator]
    guard._compare()
    assert [f.split(" (by")[0] for f in guard.findings] == ["replaced: _pytest.unittest.TestCaseFunction.runtest",
                                                            "replaced: _pytest.unittest.TestCaseFunction.setup"]
    guard.findings.clear()
    space["runtest"], space["setup"] = next(installed["_django_setup_unittest"](None)), original  # type: ignore
    fixture.cached_result = None  # torn down: what it left in pytest's place is a replacement
    guard._compare()
    assert [f.split(" (by")[0] for f in guard.findings] == ["replaced: _pytest.unittest.TestCaseFunction.runtest"]


def test_a_librarys_own_import_reaching_into_memory_is_no_finding(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """deepdiff (blind18) imports polars, whose import checks the CPU's features through ctypes (`ctypes.cdata`):
    the library's own import-time code, which the checkout only imported. The same call made by the checkout's
    code, at import of the checkout's own module or after the library's import, is still found."""
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "cpu_checking_lib.py").write_text("import sys\n\ndef check():\n"
                                             "    sys.modules['guard_under_test']._audit('ctypes.cdata', (0,))\n\n"
                                             "check()\n")
    guard = _fresh_guard()
    monkeypatch.setitem(sys.modules, "guard_under_test", guard)
    monkeypatch.setattr(guard, "_trusted", (str(lib) + "/",))
    monkeypatch.syspath_prepend(str(lib))
    checkout: dict[str, object] = {}
    exec(compile("import cpu_checking_lib\n", "/src/pkg.py", "exec"), checkout)
    assert guard.findings == []
    exec(compile("cpu_checking_lib.check()\n", "/src/pkg.py", "exec"), checkout)
    assert guard.findings == ["ctypes.cdata called from /src/pkg.py:1"]
    sys.modules.pop("cpu_checking_lib", None)


def test_an_exception_that_left_the_harnesss_pytest_raises_block_is_told_apart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """exceptiongroup (blind18): the test raises KeyError inside `with pytest.raises(ExceptionGroup), catch(...)`;
    the base's catch() lets it out instead of grouping it, and no frame of the checkout is on its traceback. An
    exception that left a block expecting another is the test's failed check; one raised elsewhere in the
    harness is not."""
    test_file = tmp_path / "test_it.py"
    test_file.write_text("import contextlib, unittest\nimport pytest\n\n"
                         "def test_in_block():\n    with pytest.raises(ValueError), contextlib.nullcontext():\n"
                         "        raise KeyError('x')\n\n"
                         "def test_outside():\n    with contextlib.nullcontext():\n        raise KeyError('y')\n\n"
                         "def test_unittest_style():\n    with unittest.TestCase().assertRaises(ValueError):\n"
                         "        helper()\n\n"
                         "def helper():\n    raise KeyError('z')\n")
    guard = _fresh_guard()
    monkeypatch.setitem(guard._PLACES, "harness", str(tmp_path) + "/")
    namespace: dict[str, object] = {}
    exec(compile(test_file.read_text(), str(test_file), "exec"), namespace)
    escaped = {}
    for name in ("test_in_block", "test_outside", "test_unittest_style"):
        try:
            namespace[name]()  # type: ignore[operator]
        except KeyError as exc:
            escaped[name] = guard._escaped_raises(exc.__traceback__)
    assert escaped == {"test_in_block": True, "test_outside": False, "test_unittest_style": True}


def test_a_file_compiled_under_its_own_name_with_its_own_text_is_no_finding(tmp_path: Path) -> None:
    """pydocstyle (blind18b) compiles each test case file it lints, under that file's path in the harness: the code
    is the file's own and disguises nothing. Other text under a harness or standard-library name is still noted."""
    guard = _fresh_guard()
    guard._PLACES["harness"] = str(tmp_path) + "/"
    case = tmp_path / "test_cases" / "sections.py"
    case.parent.mkdir()
    case.write_bytes(b"def f():\r\n    '''A docstring.'''\r\n")
    space: dict[str, object] = {"audit": guard._audit}
    # The call comes from the code under test (a frame compiled under the checkout's path), as pydocstyle's parser.
    exec(compile("def check(source, name):\n    audit('compile', (source, name))\n", "/src/parser.py", "exec"), space)
    check = space["check"]
    check(b"def f():\n    '''A docstring.'''\n", str(case))  # type: ignore[operator]
    check("def f():\r\n    '''A docstring.'''\r\n", str(case))  # type: ignore[operator]
    assert guard.findings == []
    check(b"def f():\n    pass\n", str(case))  # type: ignore[operator]
    check(b"def f():\n    pass\n", str(tmp_path / "missing.py"))  # type: ignore[operator]
    (tmp_path / "tree.py").write_bytes(b"x = 1\n")
    check(object(), str(tmp_path / "tree.py"))  # type: ignore[operator]  # (an AST: its text is not known)
    assert len(guard.findings) == 3
    assert all(f.startswith("code compiled under the name") and "/src/parser.py:2" in f for f in guard.findings)


def test_reading_a_command_line_is_no_finding_and_an_environment_or_memory_still_is() -> None:
    """typer's tests (blind18b) detect the shell at import through shellingham, which reads the ancestors'
    `/proc/N/cmdline`: inside the sandbox those hold the runner's arguments, never a key. A process's environment
    (the guard's key until it is scrubbed) and memory stay findings."""
    guard = _fresh_guard()
    space: dict[str, object] = {"audit": guard._audit}
    exec(compile("def read(path):\n    audit('open', (path, 'r', 0))\n", "/src/detect.py", "exec"), space)
    read = space["read"]
    read("/proc/3/cmdline")  # type: ignore[operator]
    assert guard.findings == []
    read("/proc/3/environ")  # type: ignore[operator]
    read("/proc/self/mem")  # type: ignore[operator]
    assert guard.findings == ["/proc/3/environ read from /src/detect.py:2", "/proc/self/mem read from /src/detect.py:2"]


def test_a_subtests_failure_stays_the_tests_and_a_hidden_failure_is_still_found() -> None:
    """zipp (blind18bx): its tests loop over fixtures in unittest `subTest`s, and pytest 9 reports each through
    pytest_runtest_makereport and logreport, then the test's own call, which did not raise. The failing subtest's
    assertion stays what the test recorded (the JUnit report says so too), and the passing reports after it are no
    sign of a failure hidden; a call that raised and was reported as passed still is."""
    import types as pytypes

    guard = _fresh_guard()
    space: dict[str, object] = {}
    exec(compile("def test_x():\n    assert 2 != 2\n", "/harness/test_sub.py", "exec"), space)
    try:
        space["test_x"]()  # type: ignore[operator]
    except AssertionError as exc:
        failure = exc
    plugin = guard.Plugin()

    def run(nodeid: str, *calls: tuple[bool, bool]) -> None:
        item = pytypes.SimpleNamespace(nodeid=nodeid, obj=space["test_x"], parent=None, name="test_x",
                                       originalname=None)
        for raised, reported_passed in calls:
            excinfo = pytypes.SimpleNamespace(value=failure) if raised else None
            plugin.pytest_runtest_makereport(item, pytypes.SimpleNamespace(when="call", excinfo=excinfo))
            plugin.pytest_runtest_logreport(pytypes.SimpleNamespace(
                nodeid=nodeid, when="call", passed=reported_passed, failed=not reported_passed, skipped=False))
        plugin.pytest_runtest_logfinish(nodeid, ("test_sub.py", 1, "test_x"))

    # three subtests (the second fails), then the test's own call
    run("test_sub.py::T::test_x", (False, True), (True, False), (False, True), (False, True))
    case = guard.cases["test_sub.py::T::test_x"]
    assert (case["outcome"], case["exception"], case["assertion"]) == ("failed", "AssertionError", True)
    assert guard.findings == []
    run("test_sub.py::T::test_y", (True, True))
    assert guard.findings == ["test_sub.py::T::test_y raised AssertionError but was reported as passed"]
