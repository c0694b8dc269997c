"""signoff guard for pytest: snapshot, audit hook, outcomes, authenticated record.

It runs in the sandbox with the project's own Python (3.8 or later: audit hooks) and pytest, never
with signoff's: it imports nothing from signoff, and its annotations are never evaluated (so no name
of a newer pytest is looked up at run time, and `typing` is not imported for them).
"""
from __future__ import annotations

import ast
import atexit
import builtins
import hashlib
import hmac
import json
import os
import re
import sys
import threading
import types

import pytest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Generator
    from typing import Any


def _scrub_environment(name: str) -> None:
    """Overwrite the variable's value in the process's initial environment block, so that neither
    /proc/self/environ nor a child reading /proc/<pid>/environ shows it after the guard read it.
    (Through /proc/self/mem: no ctypes to import on every run.)"""
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[-3]), int(fields[-2])  # env_start, env_end
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            block = mem.read(end - start)
            prefix = b"\0" + name.encode() + b"="
            at = (b"\0" + block).find(prefix)
            if at >= 0:
                value_at = at + len(prefix) - 1
                stop = block.find(b"\0", value_at)
                stop = len(block) if stop < 0 else stop
                mem.seek(start + value_at)
                mem.write(b"0" * (stop - value_at))
    except (OSError, ValueError, IndexError):
        pass  # the key is still removed from os.environ below


_KEY = os.environ.get("SIGNOFF_GUARD_KEY", "").encode()
_scrub_environment("SIGNOFF_GUARD_KEY")
os.environ.pop("SIGNOFF_GUARD_KEY", None)
_WORK = os.getcwd().rstrip("/") + "/"
_RECORD = _WORK + "signoff-guard.json"
_RUNNER = os.path.dirname(os.path.abspath(__file__)).rstrip("/") + "/"
_PLACES: dict[str, Any] = {"checkout": ("/src/",), "harness": "/harness/", "report": _WORK + "junit.xml"}
# What runs, judges and reports a test: checked right before every test, and at the end with the rest.
_HOT = ("_pytest.python", "_pytest.runner", "_pytest.reports", "_pytest.main", "_pytest.nodes",
        "_pytest.fixtures", "_pytest.skipping", "_pytest.outcomes", "_pytest.unittest", "_pytest.junitxml",
        "_pytest.assertion", "_pytest.config", "_pytest.python_api", "_pytest.raises", "_pytest.warnings",
        "pluggy", "unittest.case", "unittest.result", "signoff_guard")
# Checked at the end only: a test may patch these for its own length (monkeypatch undoes it). What
# the guard itself uses from json, hmac and hashlib it holds directly, and code swapped inside any of
# them shows in the audit hook.
_BROAD = ("builtins", "os", "posix", "sys", "importlib", "importlib._bootstrap", "importlib._bootstrap_external",
          "importlib.util", "importlib.machinery", "atexit", "types", "threading", "io")
# Hooks pytest itself replaces for the length of a session.
_MANAGED_MODULES = {"sys", "threading"}
_MANAGED = {"sys.unraisablehook", "sys.breakpointhook", "threading.excepthook", "sys.excepthook",
            "sys.displayhook", "threading._trace_hook", "threading._profile_hook",
            # It only prints a value (the interpreter's prompt, doctest's examples), as a __repr__ does, and judges
            # nothing: sympy's root conftest.py sets it to the pretty printer its own init_printing installed.
            "sys.__displayhook__"}
# Methods the code under test may wrap by design: tracing SDKs carry their context into new threads (sentry-python's
# threading integration wraps Thread.start, OpenTelemetry's Thread.run). They run a thread's body, which the code
# under test may start anyway, and judge nothing.
_WRAPPED_BY_DESIGN = {"threading.Thread.start", "threading.Thread.run"}
_AssertionError = AssertionError
_Failed = pytest.fail.Exception  # pytest's own failed check: `pytest.raises` that DID NOT RAISE, `pytest.fail()`
_PathFinder = __import__("importlib.machinery").machinery.PathFinder
_getframe = sys._getframe
_trusted = tuple(sorted({p.rstrip("/") + "/" for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                                                          *sys.path) if p and p != "/"}))
_open = builtins.open
_ast_parse = ast.parse
_dumps = json.dumps
_hmac_new = hmac.new
_sha256 = hashlib.sha256
_exists = os.path.exists

findings: list[str] = []
cases: dict[str, dict[str, Any]] = {}
state: dict[str, Any] = {"snapshot": {}, "hooks": {}, "exitstatus": None, "started": False, "finished": False,
                         "lacks": {}, "reloaded": [], "own": [], "own_declared": {}, "calls": {},
                         "reached": set(), "wrapped": set(), "entered": set(), "failed_call": set(),
                         "last_raised": {}}


def _note(text: str) -> None:
    if text not in findings and len(findings) < 50:
        findings.append(text)


def _origin(filename: str | None) -> str:
    filename = filename or ""
    if "/." in filename:
        filename = os.path.normpath(filename)
    if filename.startswith(_PLACES["harness"]):
        return "harness"
    if filename.startswith(_PLACES["checkout"]):
        return "checkout"
    if filename.startswith(_RUNNER) or filename.startswith(_trusted):
        return "trusted"
    if filename.startswith("<frozen "):
        return "trusted"
    return "unknown"  # /work, /tmp, code compiled from a string...


def _untrusted_caller(whole_stack: bool = True, past_imports: bool = False) -> str | None:
    """The first frame on the stack whose code comes from the checkout or from nowhere we know
    (with whole_stack=False, only the frame that caused the event). With past_imports, none when a trusted
    module's own import-time code caused it before any such frame: the checkout only imported it."""
    f: types.FrameType | None = _getframe(3)  # past this function, _audit_event and _audit
    if not whole_stack:
        if f is None or _origin(f.f_code.co_filename) not in ("checkout", "unknown"):
            return None
        return f"{f.f_code.co_filename}:{f.f_lineno}"
    while f is not None:
        where = _origin(f.f_code.co_filename)
        if where in ("checkout", "unknown"):
            return f"{f.f_code.co_filename}:{f.f_lineno}"
        if past_imports and _imported_module_body(f):
            return None
        f = f.f_back
    return None


def _imported_module_body(f: types.FrameType) -> bool:
    """Whether `f` is a trusted module's top-level code run by the import system (not exec, not runpy)."""
    caller = f.f_back
    return (f.f_code.co_name == "<module>" and _origin(f.f_code.co_filename) == "trusted"
            and not f.f_code.co_filename.startswith("<") and caller is not None
            and caller.f_code.co_name == "_call_with_frames_removed"
            and caller.f_code.co_filename.startswith("<frozen importlib._bootstrap"))


def _watched(name: str) -> bool:
    return name in _BROAD or name == "pytest" or name.startswith(_HOT)


def _code(value: Any) -> types.CodeType | None:
    kind = type(value)
    if kind is types.FunctionType:
        code: types.CodeType = value.__code__
        return code
    if kind in (staticmethod, classmethod, types.MethodType):
        return getattr(value.__func__, "__code__", None)
    if kind is property:
        return getattr(value.fget, "__code__", None)
    return None  # classes and built-in functions: identity alone


# Functions, methods and classes; not arbitrary callables (mock's `call` builds itself anew).
_KIND_SET = {types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.WrapperDescriptorType,
             types.MethodDescriptorType, types.ClassMethodDescriptorType, staticmethod, classmethod, property}


def _entries() -> list[list[Any]]:
    # Each entry: [core, label parts, namespace, attr, value, code, other accepted (value, code)].
    out: list[list[Any]] = []
    kinds, code_of = _KIND_SET, _code
    for name, mod in list(sys.modules.items()):
        if mod is None or not _watched(name):
            continue
        core = name not in _BROAD
        space = vars(mod)
        for attr, val in list(space.items()):
            kind = type(val)
            if kind not in kinds and not isinstance(val, type):
                continue
            if name in _MANAGED_MODULES and f"{name}.{attr}" in _MANAGED:
                continue
            out.append([core, (name, attr), space, attr, val, code_of(val), []])
            if isinstance(val, type) and val.__module__ == name:
                inner = vars(val)
                for a, v in list(inner.items()):
                    if (type(v) in kinds or isinstance(v, type)) and f"{name}.{attr}.{a}" not in _WRAPPED_BY_DESIGN:
                        out.append([core, (name, attr, a), inner, a, v, code_of(v), []])
    return out


def snapshot() -> None:
    state["snapshot"] = _entries()
    state["core"] = [e for e in state["snapshot"] if e[0]]


_MISSING = object()


def _compare(core_only: bool = False) -> None:
    # The fast path is one dict lookup and one or two identity tests per entry (a plain function's
    # code read in place: most entries are functions, and this runs before every test).
    function = types.FunctionType
    for entry in state["core" if core_only else "snapshot"]:
        value = entry[2].get(entry[3], _MISSING)
        old, old_code = entry[4], entry[5]
        if value is old and (old_code is None or (value.__code__ if type(value) is function else _code(value))
                             is old_code):
            continue
        label = ".".join(entry[1])
        if value is _MISSING:
            _note(f"removed: {label}")
        elif _swapped_by_running_plugin(entry[1][-1], value) or _set_by_active_fixture(entry[1], value):
            continue
        elif not any(value is v and (c is None or _code(value) is c) for v, c in entry[6]):
            _note((f"replaced: {label}" if value is not old else f"code replaced: {label}") + _by(value))


def _installed_plugin_file(filename: str) -> bool:
    """A file of a third-party package of the test environment (not pytest's, pluggy's or the guard's)."""
    if _origin(filename) != "trusted" or "site-packages/" not in filename:
        return False
    return not filename.split("site-packages/", 1)[1].startswith(("_pytest/", "pytest/", "pluggy/"))


def _swapped_by_running_plugin(attr: str, value: Any) -> bool:
    """Whether `value` (what now stands in pytest's `attr`) is a rerun plugin's own method of that name, put
    there by the plugin while it runs the test protocol itself: flaky (in coverage.py's test requirements)
    replaces `_pytest.runner.call_and_report` with `self.call_and_report` inside its
    `pytest_runtest_protocol` and puts pytest's back when it returns. Accepted only so: a method named
    `attr` of an object whose `pytest_runtest_protocol` is on the stack right now, both defined in one file
    of an installed package (never the checkout's, nor pytest's own), and the class still holding that very
    function. Anything else, or the same value once that protocol has returned (the end of the session
    compares everything again), is a replacement."""
    func, owner = getattr(value, "__func__", None), getattr(value, "__self__", None)
    code = getattr(func, "__code__", None)
    if code is None or owner is None or getattr(func, "__name__", None) != attr \
            or getattr(type(owner), attr, None) is not func or not _installed_plugin_file(code.co_filename):
        return False
    f: types.FrameType | None = _getframe(1)
    while f is not None:
        if f.f_code.co_name == "pytest_runtest_protocol" and f.f_code.co_filename == code.co_filename \
                and f.f_locals.get("self") is owner:
            return True
        f = f.f_back
    return False


# What a fixture of the environment may put in pytest's place while it is set up, by the attribute's label.
_FIXTURE_SWAPPABLE = {("_pytest.unittest", "TestCaseFunction", "runtest")}


def _set_by_active_fixture(label: tuple[str, ...], value: Any) -> bool:
    """Whether `value` stands in `_pytest.unittest.TestCaseFunction.runtest` because a fixture of an installed
    plugin put it there for as long as the fixture is set up: pytest-django's class-scoped autouse
    `_django_setup_unittest` runs every `django.test.TestCase` through its own `non_debugging_runtest` (the test
    case called with the item as its result, without pytest's debugger wrapping) and puts pytest's back at the
    class's teardown (django-model-utils, blind17bz). Accepted only so: a plain function defined inside a fixture
    function of the same installed package file (never the checkout's, nor pytest's own), that fixture being one
    the running test uses and set up right now. Anything else, or the same value after the fixture's teardown (the
    end of the session compares everything again), is a replacement."""
    if label not in _FIXTURE_SWAPPABLE or type(value) is not types.FunctionType \
            or not _installed_plugin_file(value.__code__.co_filename):
        return False
    code = value.__code__
    info = getattr(state.get("item"), "_fixtureinfo", None)
    for fixturedefs in list((getattr(info, "name2fixturedefs", None) or {}).values()):
        for fixturedef in fixturedefs:
            func = getattr(fixturedef, "func", None)
            func = getattr(func, "__wrapped__", func)
            outer = getattr(func, "__code__", None)
            if outer is not None and outer.co_filename == code.co_filename and code in outer.co_consts \
                    and getattr(fixturedef, "cached_result", None) is not None:
                return True
    return False


def _by(value: Any) -> str:
    """Whose code a replacement is, for a person to act on: an installed plugin that patches pytest as
    tests run (flaky, in coverage.py's test requirements) is left out of the environment; anything else
    is read."""
    code = _code(value)
    name = getattr(code, "co_filename", "") or ""
    if not name:
        return ""
    if _origin(name) == "trusted" and "site-packages/" in name:
        return (f" (by {name.split('site-packages/', 1)[1]}, installed in the test environment: leave that "
                "plugin out of the test requirements)")
    return f" (by {name})"


def _rebase() -> None:
    """After pytest's own configuration: accept what the environment's plugins patched (pytest's
    legacypath plugin patches Config, for one), refuse anything else, and take that as the baseline."""
    for entry in state["snapshot"]:
        _core, parts, space, attr, old, old_code, extra = entry
        value = space.get(attr, _MISSING)
        if value is not _MISSING and (value is not old or _code(value) is not old_code):
            code = _code(value)
            if code is None or _origin(code.co_filename) != "trusted":
                _note(f"replaced during configuration: {'.'.join(parts)}")
            # Both stay acceptable: pytest undoes its own patches when the session ends.
            extra.append((old, old_code))
            entry[4], entry[5] = value, code


def _hook_snapshot(pm: pytest.PytestPluginManager) -> dict[str, list[tuple[Any, Any, str]]]:
    out = {}
    for name in dir(pm.hook):
        caller = getattr(pm.hook, name, None)
        impls = getattr(caller, "get_hookimpls", None)
        if impls is None:
            continue
        out[name] = [(i.function, getattr(i.function, "__code__", None), getattr(i, "plugin_name", ""))
                     for i in impls()]
    return out


def _accept_swapped_plugins(pm: pytest.PytestPluginManager) -> None:
    """A plugin of the environment that replaces one of pytest's under the same name in a trylast
    pytest_configure, after the guard's snapshot (pytest-relaxed and pytest-sugar swap the
    `terminalreporter`), configured the run as installed: the replaced plugin's hooks leave the
    baseline. Anything else removed stays in it, and the checks before each test say so."""
    for name, before in state["hooks"].items():
        now: list[Any] = getattr(getattr(pm.hook, name, None), "get_hookimpls", lambda: [])()
        before[:] = [(fn, code, owner) for fn, code, owner in before
                     if any(i.function is fn for i in now) or not _swapped_in_environment(pm, owner, fn)]


def _swapped_in_environment(pm: pytest.PytestPluginManager, owner: str, fn: Any) -> bool:
    new = pm.get_plugin(owner) if owner else None
    if new is None or new is getattr(fn, "__self__", None):
        return False
    codes = [getattr(i.function, "__code__", None) for caller in pm.get_hookcallers(new) or []
             for i in caller.get_hookimpls() if i.plugin is new]
    return bool(codes) and all(c is not None and _origin(c.co_filename) == "trusted" for c in codes)


def _own(plugin: Any) -> bool:
    return any(plugin is p for p in state["own"])


def _check_hooks(pm: pytest.PytestPluginManager) -> None:
    before = state["hooks"]
    for name in dir(pm.hook):
        caller = getattr(pm.hook, name, None)
        impls = getattr(caller, "get_hookimpls", None)
        if impls is None:
            continue
        now = impls()
        for fn, code, _owner in before.get(name, []):
            match = [i for i in now if i.function is fn]
            if not match:
                _note(f"hook implementation removed: {name}")
            elif code is not None and getattr(fn, "__code__", None) is not code:
                _note(f"hook implementation rewritten: {name}")
        for i in now:
            code = getattr(i.function, "__code__", None)
            if code is not None and _origin(code.co_filename) in ("checkout", "unknown"):
                if _own(i.plugin) and _origin(code.co_filename) == "checkout":
                    # Any hook (anyio runs tests in pytest_pyfunc_call, pyfakefs wraps pytest_runtest_logreport):
                    # what no hook can forge is checked apart, on the test function itself (_watch_call).
                    continue
                _note(f"hook {name} implemented outside the harness and environment: {code.co_filename}")
    for plugin in pm.get_plugins():
        where = _origin(getattr(plugin, "__file__", None) or "")
        if getattr(plugin, "__file__", None) and where in ("checkout", "unknown") and not _own(plugin):
            _note(f"plugin loaded from outside the harness and environment: {plugin.__file__}")


def _check_hooks_of_interpreter() -> None:
    for label, fn in (("trace function", _gettrace()), ("profile function", sys.getprofile()),
                      ("thread trace function", getattr(threading, "_trace_hook", None)),
                      ("thread profile function", getattr(threading, "_profile_hook", None))):
        if fn is None:
            continue
        # A callable object's code is that of its __call__ method (this asks for the code, not whether it is callable).
        code = getattr(fn, "__code__", None) or getattr(getattr(fn, "__call__", None), "__code__", None)  # noqa: B004
        if code is not None and _origin(code.co_filename) in ("checkout", "unknown"):
            _note(f"{label} installed from {code.co_filename}")
    # Only finders placed before the standard ones can intercept a module the standard ones would
    # find (a test module); one appended after them (six does that) only sees what nothing else found.
    for label, hooks, standard in (("import finder", sys.meta_path, _PathFinder),
                                   ("path hook", sys.path_hooks, None)):
        for h in hooks:
            if standard is not None and h is standard:
                break
            if standard is None and "FileFinder" in getattr(h, "__qualname__", ""):
                break
            kind = h if isinstance(h, type) else type(h)
            code = getattr(h, "__code__", None)
            if code is not None:
                file_ = code.co_filename
            else:
                mod = sys.modules.get(getattr(kind, "__module__", "") or "")
                file_ = getattr(mod, "__file__", None) if mod is not None else "?"
            if file_ is not None and _origin(file_) in ("checkout", "unknown"):
                _note(f"{label} {getattr(kind, '__qualname__', kind)} installed from {file_}")
    for name in ("sitecustomize", "usercustomize"):
        mod = sys.modules.get(name)
        if mod is not None and _origin(getattr(mod, "__file__", None) or "") != "trusted":
            _note(f"{name} imported from {getattr(mod, '__file__', '?')}")
    # By name first: this runs after every test, and a project's tests can import a thousand modules.
    for name, mod in list(sys.modules.items()):
        if name != "conftest" and not name.endswith(".conftest"):
            continue
        file_ = getattr(mod, "__file__", None) or ""
        if file_.startswith(_PLACES["checkout"]):
            _note(f"the checkout's {mod.__file__} was imported")


_MEMORY_EVENTS = {"gc.get_objects", "gc.get_referrers", "gc.get_referents", "ctypes.string_at",
                  "ctypes.wstring_at", "ctypes.cdata", "sys._current_frames"}
_FILE_EVENTS = {"open", "os.remove", "os.rename", "os.replace", "os.truncate", "os.link", "os.symlink"}
# A test reaching for a host (runs have no network) is told once on the run's own stderr, past pytest's capture:
# pydicom's tests download their data files at import, each retried with sleeps, and the run only timed out.
# It judges nothing; the verifier names it when a run times out.
_NETWORK_EVENTS = {"socket.getaddrinfo", "socket.connect"}
NETWORK_NOTE = "signoff-guard: the tests reached for the network: "
_network: dict[str, Any] = {"fd": os.dup(2), "told": False}
_WATCHED_EVENTS = {"sys.settrace", "sys.setprofile", "object.__setattr__", "sys.addaudithook", "compile",
                   *_MEMORY_EVENTS, *_FILE_EVENTS, *_NETWORK_EVENTS}


def _audit(event: str, args: tuple[Any, ...]) -> None:
    # Called for every audited event in the process: leave at once for all but a few.
    if event not in _WATCHED_EVENTS:
        return
    _audit_event(event, args)


def _audit_event(event: str, args: tuple[Any, ...]) -> None:
    if event == "sys.settrace" and _tracing["installing"]:
        return  # the guard's own settrace, installing a trace function of the checkout behind _trampoline
    if event == "sys.settrace" or event == "sys.setprofile":
        who = _untrusted_caller()
        if who:
            _note(f"{event} called from {who}")
    elif event == "object.__setattr__" and len(args) >= 2 and args[1] == "__code__":
        # Only the frame doing it: the standard library and libraries rewrite code objects of their
        # own (types.coroutine, hypothesis) while code from the checkout is further up the stack.
        target = getattr(args[0], "__code__", None)
        who = _untrusted_caller(whole_stack=False)
        if who and target is not None and _origin(target.co_filename) != "checkout":
            _note(f"code of {getattr(args[0], '__qualname__', '?')} ({target.co_filename}) replaced from {who}")
    elif event == "compile" and len(args) > 1 and isinstance(args[1], str):
        # Code the checkout compiles under the name of a file it does not own would pass for trusted.
        name = args[1]
        if _origin(name) in ("trusted", "harness") and not name.startswith("<"):
            who = _untrusted_caller(whole_stack=False)
            if who and not _is_text_of(args[0], name):
                _note(f"code compiled under the name {name} from {who}")
    elif event in _MEMORY_EVENTS:
        # Ways to reach into the guard's memory, which a fix has no need for. A library's own import-time code
        # doing so is the library's, the checkout having only imported it (polars reads the CPU's features
        # through ctypes when imported: deepdiff's `import polars`, blind18); code of the checkout below it,
        # or any call after the import, is still found.
        who = _untrusted_caller(past_imports=True)
        if who:
            _note(f"{event} called from {who}")
    elif event in _NETWORK_EVENTS:
        _tell_network(event, args)
    elif event == "sys.addaudithook":
        who = _untrusted_caller()
        if who:
            _note(f"audit hook added from {who}")
    elif event == "open" and args and isinstance(args[0], str) and args[0].startswith("/proc/"):
        # A process's environment holds the guard's key until it is scrubbed, its memory everything. Command lines
        # are not watched: the keys travel in the environment and bubblewrap's options through a descriptor, so a
        # command line inside the sandbox holds the runner's arguments, which sys.argv and /harness show anyway;
        # shell detection reads them (shellingham, which typer's tests call at import; blind18b).
        who = _untrusted_caller()
        if who and ("/environ" in args[0] or "/mem" in args[0]):
            _note(f"{args[0]} read from {who}")
    elif event in _FILE_EVENTS:
        path = args[0] if args else None
        if isinstance(path, bytes):
            path = path.decode(errors="replace")
        if not isinstance(path, str) or not _is_report(path):
            return
        writing = event != "open"
        if len(args) > 1 and isinstance(args[1], str) and any(c in args[1] for c in "wax+"):
            writing = True
        if len(args) > 2 and isinstance(args[2], int) and args[2] & (os.O_WRONLY | os.O_RDWR):
            writing = True
        if writing:
            who = _untrusted_caller()
            if who:
                _note(f"the report {path} was written from {who}")


def _is_text_of(source: Any, name: str) -> bool:
    """Whether `source` is the very text the file `name` holds (line endings aside). A linter or parser under
    test compiling a file it checks (pydocstyle compiles each test case it lints, under its path) disguises
    nothing: that code is the file's own. Anything else under a harness or trusted name is still noted."""
    if isinstance(source, str):
        source = source.encode("utf-8", "surrogatepass")
    if not isinstance(source, bytes):
        return False
    try:
        with _open(name, "rb") as fh:
            held = fh.read()
    except (OSError, ValueError):
        return False
    return source.replace(b"\r\n", b"\n") == held.replace(b"\r\n", b"\n")


def _tell_network(event: str, args: tuple[Any, ...]) -> None:
    """The first host outside the machine the tests try to reach, once; a server of the test's own (loopback,
    a unix socket) is none."""
    if _network["told"] or len(args) < 2:
        return
    where = (args[0], args[1]) if event == "socket.getaddrinfo" else args[1]
    if not isinstance(where, tuple) or len(where) < 2:
        return  # a unix socket's path
    host = where[0].decode(errors="replace") if isinstance(where[0], bytes) else where[0]
    if not isinstance(host, str) or not host or host == "localhost" or host.startswith(("127.", "::1")):
        return
    _network["told"] = True
    try:
        os.write(_network["fd"], f"{NETWORK_NOTE}{host}:{where[1]}\n".encode(errors="replace"))
    except OSError:
        pass


def _is_report(path: str) -> bool:
    base = path.rsplit("/", 1)[-1]
    if not (base.startswith("junit") and base.endswith(".xml")) and not base.startswith("signoff-guard"):
        return False
    full = path if path.startswith("/") else _WORK + path  # never os.getcwd: a test may patch it
    return os.path.normpath(full).startswith(_WORK)


sys.addaudithook(_audit)


# -- trace functions of the checkout (a tracer such as PySnooper is the code under test) -------------
#
# `sys.settrace` called by the checkout installs the guard's _trampoline, which hands the checkout's
# function the events of the checkout's and the harness's frames only, never pytest's, the guard's or
# the environment's, and checks after every call of it that it moved no harness frame's line (a jump
# past an assert) and rewrote none of its locals, nor the harness modules' names (a module the test
# calls swapped). A trace function set on a frame directly (`frame.f_trace = fn`, as PySnooper does for
# the frame of `with snoop():`) is wrapped the same way on the next event, or removed from a frame the
# checkout does not own. What it cannot do through the trampoline it could not do before either: the
# guard's own checks run with tracing as it was, and read nothing the trace function returns.

_settrace, _gettrace = sys.settrace, sys.gettrace
_get_ident = threading.get_ident
_tracing: dict[str, Any] = {"installing": False, "user": {}}  # user: thread -> the checkout's function


def _frame_origin(frame: types.FrameType) -> str:
    return _origin(frame.f_code.co_filename)


_harness_modules: list[Any] = [-1, []]  # (len(sys.modules) when listed, [(name, namespace)])


def _harness_names() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """The harness modules' namespaces, each with a copy to compare with after a trace call."""
    if _harness_modules[0] != len(sys.modules):
        _harness_modules[:] = [len(sys.modules), [(n, vars(m)) for n, m in list(sys.modules.items())
                                                  if _origin(getattr(m, "__file__", None) or "") == "harness"]]
    return [(name, space, dict(space)) for name, space in _harness_modules[1]]


def _owned_by_checkout(fn: Any) -> bool:
    """Whether a trace function is the checkout's (its code, or the object it is bound to)."""
    code = getattr(fn, "__code__", None) or getattr(getattr(fn, "__func__", None), "__code__", None) \
        or getattr(getattr(fn, "__call__", None), "__code__", None)  # noqa: B004
    if code is None or _origin(code.co_filename) in ("checkout", "unknown"):
        return True
    bound = getattr(fn, "__self__", None)
    return bound is not None and _from_checkout(bound)


def _adopt(frame: types.FrameType | None) -> None:
    """Put every trace function set directly on a frame of the stack behind the checks (or off a
    frame of pytest, the guard or the environment)."""
    while frame is not None:
        fn = frame.f_trace
        if fn is not None and type(fn) is not _Local and _owned_by_checkout(fn):
            if _frame_origin(frame) != "trusted":
                frame.f_trace = _Local(fn)
            else:
                frame.f_trace = None
                _note(f"a trace function of the checkout was set on a frame of {frame.f_code.co_filename}")
        frame = frame.f_back


class _Local:
    """The checkout's trace function on one frame of the checkout or the harness."""

    __slots__ = ("fn",)

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def __call__(self, frame: types.FrameType, event: str, arg: Any) -> _Local:
        fn = self.fn
        if fn is not None:
            watched = [(f, f.f_lineno) for f in _stack(frame) if _frame_origin(f) in ("harness", "unknown")]
            own = _frame_origin(frame) == "checkout"
            before = None if own else dict(frame.f_locals)
            names = _harness_names()
            new = fn(frame, event, arg)
            if new is not None or event == "call":  # on "call", None: this frame is not traced further
                self.fn = new
            where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
            if any(f.f_lineno != line for f, line in watched):
                _note(f"a trace function of the checkout moved the line of a harness frame (at {where})")
            if before is not None:
                # Reading f_locals again also drops, before Python 3.13, any write into the dict that
                # the interpreter would copy back into the frame after this call.
                after = frame.f_locals
                if any(after.get(k, _MISSING) is not v for k, v in before.items()):
                    _note(f"a trace function of the checkout rewrote the locals of {where}")
            for name, space, was in names:
                if any(space.get(k, _MISSING) is not v for k, v in was.items()):
                    _note(f"a trace function of the checkout changed the names of {name} (at {where})")
        if event == "return" or fn is not None:
            _adopt(frame.f_back if event == "return" else frame)
        return self


def _stack(frame: types.FrameType | None) -> list[types.FrameType]:
    out = []
    while frame is not None:
        out.append(frame)
        frame = frame.f_back
    return out


def _trampoline(frame: types.FrameType, event: str, arg: Any) -> _Local | None:
    if frame.f_trace is not None and type(frame.f_trace) is not _Local:
        _adopt(frame)  # a generator resumed with a trace function set on it meanwhile
    if _frame_origin(frame) == "trusted":
        return None
    local = _Local(_tracing["user"].get(_get_ident()))
    local(frame, event, arg)
    return local


def _guarded_settrace(fn: Any) -> None:
    """sys.settrace as the tests see it: the checkout's trace function goes behind _trampoline."""
    caller: types.FrameType | None = _getframe(1)
    # The checkout's function goes behind the trampoline whoever installs it (trusted code that saved
    # what sys.gettrace gave and puts it back, too), and so does any function the checkout installs.
    ours = fn is not None and fn is not _trampoline and _owned_by_checkout(fn)
    while caller is not None and not ours:
        if _frame_origin(caller) in ("checkout", "unknown"):
            ours = True
            break
        caller = caller.f_back
    if fn is None or fn is _trampoline or not ours:
        _tracing["user"].pop(_get_ident(), None)
        if fn is not None:
            _settrace(fn)  # trusted code's own (a debugger in the environment): audited as before
            return
    else:
        _tracing["user"][_get_ident()] = fn
        _adopt(_getframe(1))
        fn = _trampoline
    _tracing["installing"] = True
    try:
        _settrace(fn)
    finally:
        _tracing["installing"] = False


def _guarded_gettrace() -> Any:
    fn = _gettrace()
    return _tracing["user"].get(_get_ident()) if fn is _trampoline else fn


sys.settrace, sys.gettrace = _guarded_settrace, _guarded_gettrace


def start(paths: list[str]) -> None:
    """Called by the bootstrap before pytest.main: nothing from the checkout is importable yet."""
    state["paths"] = paths
    _PLACES["checkout"] = tuple(p.rstrip("/") + "/" for p in paths) or ("/src/",)
    # The project's own pytest plugins (its pytest11 entry points, read from the base revision by signoff):
    # name=module,... They load from the checkout once the guard has its snapshot (load_own_plugins).
    declared = os.environ.pop("SIGNOFF_OWN_PLUGINS", "")
    state["own_declared"] = dict(p.split("=", 1) for p in declared.split(",") if "=" in p)
    _defer_checkout_filters(paths)
    _lenient_entry_points()


def _defer_checkout_filters(paths: list[str]) -> None:
    """pytest 9 applies the configured `filterwarnings` while it loads the environment's plugins, before any
    hook of the guard: a warning class of the project's own (pyjwt's `ignore::jwt.warnings.InsecureKeyLengthWarning`)
    cannot be imported then, and after an `error` filter the warning that says so ends the run. Until the
    checkout joins the path, a filter naming a module of the checkout is left out (never imported early: the
    checkout's code runs only after the snapshot); the guard puts pytest's function back before its snapshot,
    and every later stage (the conftests', each test's) applies them all, as pytest does."""
    config = sys.modules.get("_pytest.config")
    original = getattr(config, "apply_warning_filters", None)
    if original is None:
        return
    tops: set[str] = set()
    for p in paths:
        try:
            tops.update(n[:-3] if n.endswith(".py") else n for n in os.listdir(p))
        except OSError:
            continue

    def _checkouts(arg: str) -> bool:
        parts = [x.strip() for x in arg.split(":")]
        return len(parts) > 2 and "." in parts[2] and parts[2].split(".", 1)[0] in tops

    def apply_warning_filters(config_filters: Any, cmdline_filters: Any) -> None:
        # pytest 8's warnings plugin binds this function by name when pytest imports it: it must become
        # pytest's own behaviour again once the checkout is on the path, wherever it is bound.
        deferred = "filters" in state
        original([f for f in config_filters if not (deferred and _checkouts(f))], cmdline_filters)

    config.apply_warning_filters = apply_warning_filters  # type: ignore[union-attr]
    state["filters"] = (config, original)


def _lenient_entry_points() -> None:
    """An installed pytest plugin this pytest refuses (PluginValidationError: pytest-flake8 and pytest-gitignore
    of 2021 implement `pytest_collect_file(path, parent)`, an argument pytest 9 no longer has) would end every
    run at its start, as it ends plain pytest's. A maintainer of the time ran it under the pytest it was written
    for; here it is left out, unregistered and blocked, and said so on stderr (kept in the evidence): a test
    that needs it then fails on its own missing fixture or option, not on the plugin. Only while pytest loads
    the environment's entry points, before the checkout can be imported; pytest's own method is back before
    the guard's snapshot (_restore_entry_points)."""
    import pluggy

    config = sys.modules.get("_pytest.config")
    manager = getattr(config, "PytestPluginManager", None)
    if manager is None:
        return
    own = vars(manager).get("load_setuptools_entrypoints")  # pytest 9's, which wraps pluggy's; older ones inherit
    original = manager.load_setuptools_entrypoints
    refused = state.setdefault("refused", [])

    def load_setuptools_entrypoints(self: Any, group: str, name: str | None = None) -> int:
        register = self.register

        def lenient(plugin: Any, name: str | None = None) -> str | None:
            try:
                registered: str | None = register(plugin, name)
                return registered
            except pluggy.PluginValidationError as exc:
                left = name or getattr(plugin, "__name__", repr(plugin))
                self.unregister(name=left)
                self.set_blocked(left)
                refused.append(f"{left} ({getattr(plugin, '__file__', None) or plugin!r}): {exc}")
                sys.stderr.write(f"signoff guard: the installed pytest plugin {left} is left out of this run: this "
                                 f"pytest refuses it ({type(exc).__name__}: {exc})\n")
                return None

        self.register = lenient
        try:
            loaded: int = original(self, group, name)
            return loaded
        finally:
            del self.register

    manager.load_setuptools_entrypoints = load_setuptools_entrypoints
    state["entry_points"] = (manager, own)


def _restore_entry_points() -> None:
    manager, own = state.pop("entry_points", (None, None))
    if manager is None:
        return
    if own is not None:
        manager.load_setuptools_entrypoints = own
    else:
        del manager.load_setuptools_entrypoints


def _restore_filters() -> None:
    config, original = state.pop("filters", (None, None))
    if config is not None:
        config.apply_warning_filters = original


def _load_own_plugins(pm: pytest.PytestPluginManager) -> None:
    """The project's own pytest plugins, from the checkout, as installing the project registers them by
    their entry points (pytest-mock's `mocker`, anyio's `-p anyio`): after the snapshot, watched as the
    checkout's code is. Whatever hooks they implement, every test function is then watched itself
    (_watch_call): a pass the function did not earn shows, whoever reported it."""
    import importlib

    for name, module in state["own_declared"].items():
        if pm.is_blocked(name) or pm.is_blocked(module) or pm.has_plugin(name) or pm.has_plugin(module):
            continue  # `-p no:NAME`, or the environment has an installed copy registered already
        try:
            mod = importlib.import_module(module)
        except Exception as exc:  # an optional plugin whose own dependency is not installed: the tests may not need it
            sys.stderr.write(f"signoff guard: the project's own pytest plugin {name} ({module}) could not be imported, "
                             f"so it is not loaded: {type(exc).__name__}: {exc}\n")
            continue
        # (or from the frozen harness: trio's `-p trio._tests.pytest_plugin` lives in the package's test folder,
        # which the harness of a test inside the package holds and the run searches first)
        if _origin(getattr(mod, "__file__", None) or "") not in ("checkout", "harness"):
            _note(f"the project's own pytest plugin {name} ({module}) was not imported from the checkout: "
                  f"{getattr(mod, '__file__', None)}")
            continue
        pm.register(mod, name)
        state["own"].append(mod)


def _own_plugins_for_children(declared: dict[str, str]) -> None:
    """Declare the project's own plugins to the pytest sessions the tests start, as installing the project
    would: pytest-asyncio's tests run pytest in a child (pytester's runpytest_subprocess), which loads
    the plugin by its entry point or finds `async def` tests unsupported; pytest-xdist's run it in this
    process (pytester's parseconfigure, runpytest), whose new config loads plugins by entry point too, or
    has no `-n`. Package metadata holding only those entry points, on the children's PYTHONPATH and at the
    end of this process's path, now: this session loaded its entry points before the checkout joined, and
    the guard loaded these plugins itself after its snapshot, so only the sessions the tests start read
    them. A child has no guard; what it prints is what the test checks."""
    if not declared:
        return
    folder = os.path.join(os.environ.get("TMPDIR") or "/tmp", "signoff-own-plugins")  # noqa: S108 -- sandbox tmpfs
    info = os.path.join(folder, "signoff_own_plugins-0.dist-info")
    try:
        os.makedirs(info, exist_ok=True)
        with _open(os.path.join(info, "METADATA"), "w") as fh:
            fh.write("Metadata-Version: 2.1\nName: signoff-own-plugins\nVersion: 0\n")
        with _open(os.path.join(info, "entry_points.txt"), "w") as fh:
            fh.write("[pytest11]\n" + "".join(f"{n} = {m}\n" for n, m in sorted(declared.items())))
        # The plugins' files, as an install records them: pytest marks a plugin's modules for assertion
        # rewriting by them, else `pytest_plugins = "pytest_asyncio"` in a child's test module warns that
        # the module was imported already (an error under `-W error`).
        tops = sorted({m.split(".", 1)[0] for m in declared.values()})
        with _open(os.path.join(info, "RECORD"), "w") as fh:
            fh.write("".join(f"{t}/__init__.py,,\n{t}.py,,\n" for t in tops))
    except OSError:
        return  # a read-only /tmp: the children run without them, as before
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join([*paths, folder])
    sys.path.append(folder)  # last: the environment's and the checkout's own metadata come first


def _sha_file(path: str) -> str | None:
    try:
        with _open(path, "rb") as fh:
            return _sha256(fh.read()).hexdigest()
    except OSError:
        return None


def _preloaded(paths: list[str]) -> list[tuple[str, str]]:
    """(module, file) of modules the checkout provides that were already imported from the
    environment before the checkout joined the path: the tests would use that installed copy, not the
    candidate's code."""
    out = set()
    env = sys.prefix.rstrip("/") + "/"
    for p in paths:
        try:
            names = os.listdir(p)
        except OSError:
            continue
        for n in names:
            mod = n[:-3] if n.endswith(".py") else n
            if not (n.endswith(".py") or os.path.isfile(os.path.join(p, n, "__init__.py"))):
                continue
            where = getattr(sys.modules.get(mod), "__file__", None) or ""
            if where.startswith(env):
                out.add((mod, where))
    return sorted(out)


def _pytest_requires() -> set[str]:
    """The top-level modules of the distributions pytest itself requires, and theirs in turn
    (pluggy, iniconfig, packaging...): pytest imports them to start, whatever the plugins are."""
    try:
        from importlib import metadata
    except ImportError:
        return set()
    modules: set[str] = set()
    seen, todo = {"pytest"}, ["pytest"]
    while todo:
        try:
            dist = metadata.distribution(todo.pop())
        except metadata.PackageNotFoundError:  # a requirement for another platform or Python
            continue
        if dist.metadata["Name"].lower() != "pytest":
            top = dist.read_text("top_level.txt")
            files = [str(f) for f in dist.files or []]
            modules.update(top.split() if top else {f.split("/", 1)[0].split(".py")[0] for f in files
                                                   if f.endswith(".py") and not f.startswith("..")})
        for req in dist.requires or []:
            m = re.match(r"[A-Za-z0-9._-]+", req)
            if m and not re.search(r"\bextra\s*==", req) and m.group(0).lower() not in seen:
                seen.add(m.group(0).lower())
                todo.append(m.group(0))
    return modules


# What runs and judges the tests: never loaded anew, whatever the checkout ships under these names (a
# candidate's own pytest.py would write the report).
_FRAMEWORK = {"pytest", "_pytest", "py", "signoff_guard"}


def _plugin_words() -> set[str]:
    """The words of the environment's pytest plugin distributions' names (pytest-sanic: pytest, sanic)."""
    from importlib import metadata

    out: set[str] = set()
    for dist in metadata.distributions():
        if any(ep.group == "pytest11" for ep in dist.entry_points):
            out.update(re.split(r"[-_.]+", str(dist.metadata["Name"] or "").lower()))
    return out


def _load_anew(preloaded: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Copies of the project under test that were imported before the checkout joined the path. By
    pytest itself (pluggy) or by a plugin that only uses the library (pytest-mypy-plugins imports
    attrs): pytest and the plugin keep the copy they hold, and the tests import the checkout's, loaded
    anew (a maintainer's `pip install -e .` would have pytest and its plugins run the candidate's code
    before anything is checked, which the guard must never allow). By a plugin made for that package
    (pytest-sanic for sanic, named after it), whose fixtures hand its copy to the tests: that copy
    stays, and is returned (import_shadowed)."""
    try:
        own, plugins = _pytest_requires(), _plugin_words()
    except Exception:  # unreadable metadata: every copy stays named as shadowing
        return preloaded
    stays = []
    for mod, where in preloaded:
        if mod in _FRAMEWORK or (mod not in own and mod.lower() in plugins):
            stays.append((mod, where))
            continue
        for name in [n for n in sys.modules if n == mod or n.startswith(mod + ".")]:
            del sys.modules[name]
        state["reloaded"].append(f"{mod} ({where})")
    return stays


# Folders that hold tests rather than the project's code (a package's `test/`, `tests/`, `testing/`).
_TEST_FOLDER = re.compile(r"(tests?|testing)([_-]\w*)?|\w*[_-]tests?")


def _project_packages(harness: str, paths: list[str]) -> dict[str, list[str]]:
    """The packages a harness holds only as the folders above its test files, tests inside the
    project's package (dateutil/test/, h11/tests/): name -> the harness's folders of it."""
    out: dict[str, list[str]] = {}
    for top, dirs, files in os.walk(harness):
        if top != harness.rstrip("/") and "__init__.py" in files:
            name = os.path.basename(top)
            dirs[:] = []  # its subfolders are its subpackages
            if not _TEST_FOLDER.fullmatch(name) and name not in _FRAMEWORK and any(
                    os.path.isfile(os.path.join(p, name, "__init__.py")) for p in paths):
                out.setdefault(name, []).append(top)
    return out


def _joining(harness_root: str, checkout: list[str], path: list[str]) -> list[str]:
    """The folders that join the import path once pytest's plugins are loaded: the harness's root first, as `python
    -m pytest` from a project's root has that folder on the path from the start, so that a plugin importing a module
    of the test folder by its name at start-up (pytest-django's `DJANGO_SETTINGS_MODULE = tests.settings`) gets the
    harness's `tests`, not the checkout's (pytest puts the same folder first anyway when it collects the test
    package); then the checkout's folders."""
    return [p for p in dict.fromkeys([harness_root.rstrip("/"), *checkout]) if p and p not in path]


def _join_namespaces(harness_top: dict[str, list[str]], paths: list[str]) -> list[str]:
    """Namespace packages the environment made before the checkout joined the path: an installed
    distribution's `-nspkg.pth` (zope.event's, of the setuptools `namespace_packages` kind) creates
    `zope` at start-up with the environment's folder as its whole path, so the checkout's
    `src/zope/interface` is never found. The checkout's folder of it joins that path, first, and the
    harness's before it (tests inside the package, `_ProjectPackages`), as `pip install -e .` would
    have joined the checkout's. Only a module without a file of its own: a regular package imported
    from the environment is another matter (`_preloaded`)."""
    joined = []
    for p in paths:
        try:
            names = sorted(os.listdir(p))
        except OSError:
            continue
        for name in names:
            module, folder = sys.modules.get(name), os.path.join(p, name)
            if module is None or getattr(module, "__file__", None) or not hasattr(module, "__path__") \
                    or not os.path.isdir(folder):
                continue
            old = [str(x) for x in module.__path__]
            if folder not in old:
                module.__path__ = [*(h for h in harness_top.get(name, []) if h not in old), folder, *old]
                joined.append(f"{name} ({folder})")
    return joined


class _ProjectPackages:
    """For tests inside the project's package: the harness holds the package's `__init__.py` files
    only so that pytest names the test module as the project does (`dateutil.test.test_parser`). The
    package and each subpackage are the checkout's, with the harness's folder searched first, so the
    test folder (which only the harness holds as approved) is the harness's and all else the checkout's."""

    def __init__(self, top: dict[str, list[str]], checkout: list[str]) -> None:
        self.top, self.checkout = top, checkout

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        parent, _, last = fullname.rpartition(".")
        if not parent:
            where, search = self.top.get(fullname), self.checkout
        else:
            locations = [str(p) for p in getattr(sys.modules.get(parent), "__path__", None) or []]
            harness = _PLACES["harness"]
            where = [f"{p}/{last}" for p in locations if p.startswith(harness)
                     and os.path.isfile(f"{p}/{last}/__init__.py")] if not _TEST_FOLDER.fullmatch(last) else None
            search = [p for p in locations if not p.startswith(harness)]
        if not where or not search:
            return None
        spec = _PathFinder.find_spec(fullname, search)
        if spec is None or not isinstance(spec.submodule_search_locations, list):
            return None
        spec.submodule_search_locations[:0] = where
        return spec


def _write_record() -> None:
    body = {"v": 1, "started": state["started"], "finished": state["finished"],
            "exitstatus": state["exitstatus"], "junit_sha256": _sha_file(_PLACES["report"]),
            "cases": cases, "findings": findings, "preloaded": state.get("preloaded", []),
            "reloaded": state["reloaded"], "refused": state.get("refused", [])}
    text = _dumps(body, sort_keys=True, separators=(",", ":"))
    mac = _hmac_new(_KEY, text.encode(), "sha256").hexdigest()
    with _open(_RECORD, "w") as fh:
        fh.write(_dumps({"body": text, "mac": mac}))


def _checked(check: Callable[..., object], *args: Any) -> None:
    # A guard that breaks says so in its record (and the run is not trusted); it never just stops.
    try:
        check(*args)
    except Exception as exc:
        _note(f"guard check {check.__name__} failed: {type(exc).__name__}: {exc}")


def finish(status: int) -> int:
    _finish_base()  # a session that ended before its checkout joined the path
    _checked(_compare)
    _checked(_check_hooks_of_interpreter)
    state["finished"] = True
    _write_record()
    return status


def exit_now(status: int) -> None:
    """End the process once the record is written, without the interpreter's teardown (freeing
    every module and object one by one costs a small pytest run about 7% of its instructions, and the
    report and the record are closed by now). Exit handlers still run and the output is flushed,
    so the process ends as it would have, with the same status; with another thread still
    running, the normal exit waits for it instead. (The CLI ends the same way, in
    signoff.cli.main; the guard imports nothing from signoff.)"""
    if threading.active_count() > 1:
        raise SystemExit(status)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be written anyway
            pass
    os._exit(int(status))


# -- one interpreter for two executions: the base's in a forked child, then the candidate's --------
#
# pytest and this guard are imported once (about two thirds of a small run). The base's execution
# runs in a child forked before any code of a checkout is importable. Meanwhile this process starts
# the candidate's pytest session up to the point where the checkout would join the import path (the
# first thing Plugin.pytest_load_initial_conftests does): there it waits for the child, writes the
# base's report, record, output and exit status as the first line of stdout, out of the sandbox,
# removes everything the child left (its processes, /work, /tmp, /dev/shm), and only then lets the
# candidate's checkout join the path, as a lone run would. So no code of the candidate ever runs
# while the base's result is still inside the sandbox, and the candidate's exit status is the
# sandbox's own.

BASE_FRAME = "signoff-base-run "
_OUTPUT_CAP = 128 << 10
_PR_SET_CHILD_SUBREAPER = 36
_BASE_OUT, _BASE_ERR = "/tmp/.signoff-base-stdout", "/tmp/.signoff-base-stderr"  # noqa: S108 -- sandbox tmpfs


def run_base_first(spec_json: str) -> None:
    """Start the base's execution (`spec`: paths, pytest arguments, environment, timeout, the report
    files) in a forked child and return at once; `_finish_base` collects it."""
    spec = json.loads(spec_json)
    key = os.environ.get("SIGNOFF_GUARD_KEY_BASE", "").encode()
    _scrub_environment("SIGNOFF_GUARD_KEY_BASE")
    os.environ.pop("SIGNOFF_GUARD_KEY_BASE", None)
    import time

    began = time.monotonic()
    try:
        import ctypes

        # Every process the base's tests leave behind comes back to this process (not to the
        # sandbox's pid 1), so that all of them are stopped before the candidate's code runs.
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    except (OSError, ImportError, AttributeError) as exc:
        _send_frame(1, {"v": 1, "unsupported": f"cannot collect the base's processes: {exc}"})
        os._exit(70)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:
        # The child never returns: exit_now ends it, or (another thread still running, or anything
        # raised) the exception ends the bootstrap, and so the process, as it ends a lone run.
        global _KEY
        _KEY = key
        for fd, path in ((1, _BASE_OUT), (2, _BASE_ERR)):
            f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(f, fd)
            os.close(f)
        _network["fd"] = os.dup(2)  # the base's own stderr, which its frame carries
        os.environ.update(spec["env"])
        sys.argv[1:] = [":".join(spec["paths"]), *spec["args"]]
        start(spec["paths"])
        exit_now(finish(pytest.main(spec["args"], plugins=[Plugin()])))
        raise SystemExit(70)  # not reached: exit_now ends the process or raises
    key = b""
    # pytest captures the descriptor 1 during its session: the frame goes to the sandbox's own stdout.
    state["base"] = {"pid": pid, "spec": spec, "began": began, "stdout": os.dup(1), "libc": libc}


def _finish_base() -> None:
    """Wait for the base's child, send its result, and remove everything it left (once; nothing
    when there is no base's execution in this process)."""
    base = state.pop("base", None)
    if base is None:
        return
    import time

    spec, began = base["spec"], base["began"]
    status, timed_out, usage = _wait_child(base["pid"], float(spec["timeout"]))
    frame: dict[str, Any] = {"v": 1, "timed_out": timed_out, "duration": time.monotonic() - began,
                             "exit_code": None, "signal": None, "files": {},
                             "cpu_time": usage.ru_utime + usage.ru_stime if usage else 0.0,
                             "peak_memory_bytes": usage.ru_maxrss * 1024 if usage else None}
    if status is not None:
        if os.WIFSIGNALED(status):
            frame["signal"] = os.WTERMSIG(status)
        else:
            frame["exit_code"] = os.waitstatus_to_exitcode(status)
    _stop_descendants()
    for name, path in (("stdout", _BASE_OUT), ("stderr", _BASE_ERR)):
        data = _read(path, _OUTPUT_CAP + 1) or b""
        frame[name] = data[:_OUTPUT_CAP].decode(errors="replace")
        frame[f"{name}_truncated"] = len(data) > _OUTPUT_CAP
    import base64

    for name in spec["collect"]:
        report = _read(_WORK + name, 16 << 20)
        if report is not None:
            frame["files"][name] = base64.b64encode(report).decode()
    frame["at"] = time.monotonic() - began
    _send_frame(base["stdout"], frame)
    os.close(base["stdout"])
    for folder in (_WORK, "/tmp/", "/dev/shm/"):  # noqa: S108 -- the sandbox's own tmpfs
        _empty(folder)
    base["libc"].prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def _send_frame(fd: int, frame: dict[str, Any]) -> None:
    # Straight to the descriptor, whole, before anything else can write there.
    data = (BASE_FRAME + _dumps(frame, sort_keys=True) + "\n").encode()
    while data:
        data = data[os.write(fd, data):]


def _wait_child(pid: int, timeout: float) -> tuple[int | None, bool, Any]:
    """(wait status, whether it was stopped for taking longer than `timeout`, its resource usage)."""
    import select

    timed_out = False
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        ready, _, _ = select.select([fd], [], [], timeout)
        os.close(fd)
        if not ready:
            timed_out = True
            os.kill(pid, 9)
    _pid, status, usage = os.wait4(pid, 0)
    return (None if timed_out else status), timed_out, usage


def _stop_descendants() -> None:
    """Kill and reap every process left under this one (this process is their subreaper)."""
    me = str(os.getpid())
    for _ in range(1000):
        children = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                stat = _read(f"/proc/{name}/stat", 4096) or b""
                fields = stat.rsplit(b")", 1)[-1].split()
                if len(fields) > 1 and fields[1].decode() == me:
                    children.append(int(name))
        if not children:
            return
        for child in children:
            try:
                os.kill(child, 9)
            except ProcessLookupError:
                pass
        for child in children:
            try:
                os.waitpid(child, 0)
            except ChildProcessError:
                pass


def _read(path: str, limit: int) -> bytes | None:
    try:
        with _open(path, "rb") as fh:
            data: bytes = fh.read(limit)
            return data
    except OSError:
        return None


def _empty(folder: str) -> None:
    import shutil

    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        path = folder + name
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass


def _canary(nodeid: str) -> bool:
    """Whether a node id is of signoff's canary module (guard.CANARY_PREFIX, written beside the first test)."""
    return nodeid.split("::", 1)[0].rsplit("/", 1)[-1].startswith("test_signoff_canary_")


def _case(nodeid: str) -> dict[str, Any]:
    return cases.setdefault(nodeid, {"outcome": "passed", "assertion": False, "exception": None, "origin": None,
                                     "message": "", "lacks": None})


def _watch_call(item: pytest.Item) -> None:
    """With the project's own plugin loaded (it may implement pytest_pyfunc_call, as anyio's runs async
    tests): the test function is wrapped so that the guard sees it entered, and what it raised, whoever
    calls it; a plugin that reports a pass without running the test, or swallows its failure, shows."""
    import functools
    import inspect

    state["reached"].add(item.nodeid)  # the protocol reached this guard's pytest_runtest_call
    fn = getattr(item, "obj", None)
    if type(item) is not pytest.Function or fn is None or inspect.isgeneratorfunction(fn) \
            or inspect.isasyncgenfunction(fn):
        return
    parent = getattr(getattr(item, "parent", None), "obj", None)
    defined = getattr(parent, getattr(item, "originalname", None) or item.name, None)
    if getattr(defined, "__func__", defined) is not getattr(fn, "__func__", fn):
        _note(f"{item.nodeid}: its function is not the one its module or class defines under its name")
    seen: dict[str, Any] = {"entered": False, "raised": None}
    state["calls"][item.nodeid] = seen
    state["wrapped"].add(item.nodeid)
    entered, nodeid = state["entered"], item.nodeid
    wrapper: Any
    if inspect.iscoroutinefunction(fn):
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            seen["entered"] = True
            entered.add(nodeid)
            try:
                return await fn(*args, **kwargs)
            except BaseException as exc:
                seen["raised"] = exc
                raise
    else:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            seen["entered"] = True
            entered.add(nodeid)
            try:
                return fn(*args, **kwargs)
            except BaseException as exc:
                seen["raised"] = exc
                raise
    item.obj = functools.update_wrapper(wrapper, fn)  # type: ignore[attr-defined]


def _check_watched_call(item: pytest.Item, call: pytest.CallInfo[None]) -> None:
    seen = state["calls"].pop(item.nodeid, None)
    if seen is None:
        return
    item.obj = getattr(item.obj, "__wrapped__", item.obj)  # type: ignore[attr-defined]
    if call.excinfo is None and not seen["entered"]:
        _note(f"{item.nodeid}: reported as passed, but the test function never ran")
    elif call.excinfo is None and seen["raised"] is not None and \
            type(seen["raised"]).__name__ not in ("Skipped", "XFailed"):
        _note(f"{item.nodeid} raised {type(seen['raised']).__name__} but was reported as passed")


def _observe_call(item: pytest.Item, call: pytest.CallInfo[None]) -> None:
    _check_watched_call(item, call)
    c = _case(item.nodeid)
    own = vars(item)
    for name in ("runtest", "setup", "teardown", "ihook"):
        if name in own and _origin(getattr(getattr(own[name], "__code__", None), "co_filename", "")) != "trusted":
            _note(f"{item.nodeid}: its {name} was replaced on the item")
    fn = getattr(item, "obj", None)
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is not None and _origin(code.co_filename) in ("checkout", "unknown"):
        # A harness test decorated by the code under test is the harness's own choice; a test
        # function that is no longer what its module defines was swapped.
        parent = getattr(getattr(item, "parent", None), "obj", None)
        defined = getattr(parent, getattr(item, "originalname", None) or item.name, None)
        if getattr(defined, "__func__", defined) is not fn:
            _note(f"{item.nodeid} ran code from {code.co_filename}, not the harness's test")
    excinfo = call.excinfo
    state["last_raised"][item.nodeid] = excinfo is not None  # what the report that follows this call is about
    if excinfo is None and item.nodeid in state["failed_call"]:
        # pytest 9 reports each unittest `subTest` through this hook, then the test's own call, which did not raise:
        # a subtest's failure stays what this test's run recorded (zipp's tests loop over fixtures in subtests).
        return
    c.update(exception=None, assertion=False, origin=None, message="", lacks=None, harness_check=False,
             let_through=False, escaped_raises=False)  # this call
    if code is not None and _origin(code.co_filename) == "checkout":
        # The test's own code is the revision's (a method the harness's class inherits from the package:
        # webargs' CommonTestCase): where, so that the verifier can hold the candidate to the base's.
        root = min((p for p in _PLACES["checkout"] if code.co_filename.startswith(p)), key=len)  # the revision's root
        c["defined"] = f"{code.co_filename[len(root):]}::{getattr(fn, '__qualname__', '')}"
    if excinfo is None:
        return
    state["failed_call"].add(item.nodeid)
    value = excinfo.value
    c["exception"] = type(value).__name__
    c["assertion"] = isinstance(value, _AssertionError)
    origin, tb_last, c["let_through"] = _raised_at(value.__traceback__, code)
    c["origin"] = origin
    # The harness's own kind of failed check: an exception class a harness module defines, raised from
    # the harness's code (PySnooper's tests raise their OutputFailure), or pytest's own failed check
    # the harness called (tomli's `pytest.raises(TOMLDecodeError)` that DID NOT RAISE).
    defined_in = getattr(sys.modules.get(type(value).__module__), "__file__", None) or ""
    c["harness_check"] = origin == "harness" and (_origin(defined_in) == "harness" or isinstance(value, _Failed))
    c["message"] = str(value)[:500]
    if origin == "harness":
        c["lacks"] = _checkout_lacks(value, tb_last)
        c["escaped_raises"] = not c["harness_check"] and _escaped_raises(value.__traceback__)
    if type(value).__name__ in ("Skipped", "XFailed", "Exit") and origin in ("checkout", "unknown"):
        _note(f"{item.nodeid}: the code under test raised {type(value).__name__} (skip, xfail or exit)")


def _raised_at(tb: types.TracebackType | None, test_code: types.CodeType | None
               ) -> tuple[str | None, types.TracebackType | None, bool]:
    """(where it was raised, its last traceback entry, whether the checkout let it through). Where: the deepest
    frame of the test or the code under test (a frame of pytest or unittest helpers such as assertEqual or skip()
    counts for whoever called it). Let through: raised in the harness by a callback the checkout's code called
    (sentry-python's `before_breadcrumb` raising, which the base's add_breadcrumb does not contain), never by the
    test function itself that the project's own runner calls (trio's tests run under trio.run)."""
    origin: str | None = None
    tb_last = None
    callee: list[types.CodeType] = []  # the harness's frames below the checkout's deepest one
    checkout_seen = False
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        where = _origin(filename)
        if where == "unknown" and filename.startswith("<") and origin in ("checkout", "harness"):
            # Code compiled from a string ("<cattrs generated structure ...>") is its caller's: the
            # checkout's structure hook raising ValueError is the checkout's crash.
            where = origin
        if where != "trusted":
            origin = where
        if where == "checkout":
            checkout_seen, callee = True, []
        elif where == "harness" and checkout_seen:
            callee.append(tb.tb_frame.f_code)
        tb_last = tb
        tb = tb.tb_next
    let_through = origin == "harness" and bool(callee) and test_code not in callee
    return origin, tb_last, let_through


# The harness's ways of saying "this block raises X": an exception that left such a block was not the one the test
# expects there (pytest.raises lets any other through), a failed check as much as DID NOT RAISE.
_EXPECTING = ("raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp")
_expecting_blocks: dict[str, list[tuple[int, int]]] = {}


def _escaped_raises(tb: types.TracebackType | None) -> bool:
    """Whether the exception went through a `with pytest.raises(...)` (or assertRaises) block of the harness:
    exceptiongroup's test raises KeyError inside `with pytest.raises(ExceptionGroup), catch(...)`, and the base's
    catch() lets the KeyError out instead of grouping it; no frame of the checkout is on its traceback."""
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if _origin(filename) == "harness" and any(a <= tb.tb_lineno <= b for a, b in _expecting_blocks_of(filename)):
            return True
        tb = tb.tb_next
    return False


def _expecting_blocks_of(filename: str) -> list[tuple[int, int]]:
    """The line ranges of the bodies of `with` statements in `filename` that expect an exception."""
    if filename not in _expecting_blocks:
        blocks: list[tuple[int, int]] = []
        try:
            with _open(filename, "rb") as f:
                tree: ast.AST | None = _ast_parse(f.read())
        except (OSError, SyntaxError, ValueError):
            tree = None
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, (ast.With, ast.AsyncWith)) and node.body and any(
                    _expects_exception(item.context_expr) for item in node.items):
                end = max(getattr(n, "end_lineno", None) or n.lineno for n in node.body)
                blocks.append((node.body[0].lineno, end))
        _expecting_blocks[filename] = blocks
    return _expecting_blocks[filename]


def _expects_exception(expr: ast.expr) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in _EXPECTING


def _observe_collection(nodeid: str, value: BaseException) -> None:
    """What a test file that could not be imported ran into, when it is the checkout's missing API
    raised from the harness's own code (pytest wraps the ImportError in its CollectError)."""
    cause = value.__cause__ or value.__context__ or value
    tb, last, where = cause.__traceback__, None, None
    while tb is not None:
        here = _origin(tb.tb_frame.f_code.co_filename)
        if here != "trusted":
            last, where = tb, here
        tb = tb.tb_next
    lacks = _checkout_lacks(cause, last) if where == "harness" else None
    if lacks:
        state["lacks"][nodeid] = (lacks, type(cause).__name__)


def _from_checkout(obj: Any) -> bool:
    """Whether `obj` (a module, class, function or instance) is defined by the checkout's code."""
    if isinstance(obj, types.ModuleType):
        return _origin(getattr(obj, "__file__", None) or "") == "checkout"
    code = _code(obj)
    if code is not None:
        return _origin(code.co_filename) == "checkout"
    cls = obj if isinstance(obj, type) else type(obj)
    mod = sys.modules.get(getattr(cls, "__module__", None) or "")
    return mod is not None and _origin(getattr(mod, "__file__", None) or "") == "checkout"


def _static_attr(obj: Any, name: str) -> Any:
    """`obj.name` without running any code of the object's (no property, no __getattr__): the instance's
    own value, a slot's, a named tuple field's (unearth's BestMatch), or _MISSING."""
    try:
        own = object.__getattribute__(obj, "__dict__")  # past any __getattribute__ of the object's class
    except AttributeError:
        own = None
    if isinstance(own, dict) and name in own:
        return own[name]
    for klass in type(obj).__mro__:
        attr = vars(klass).get(name, _MISSING)
        if attr is not _MISSING:
            # A slot, or a named tuple's field (a C getter; `property(itemgetter(i))` before Python 3.8).
            kind = type(attr)
            if kind is types.MemberDescriptorType or kind.__name__ == "_tuplegetter" or (
                    kind is property and type(attr.fget).__name__ == "itemgetter"):
                return attr.__get__(obj, type(obj))
            return _MISSING
    return _MISSING


def _none_from_checkout(frame: types.FrameType, attr: str) -> str | None:
    """The test read `attr` of a None that the checkout's own object holds (unearth's `match.best.version`,
    where the base's `find_best_match` left `best` None): the defect, as plain pytest counts it, though
    raised in the test's line. Only a chain of plain names on that line (`match.best`), looked up without
    running code, whose last holder is the checkout's object and holds None there; a None the test made
    itself, or one reached through a call, stays the test's own error."""
    import linecache

    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    chains = set(re.findall(r"(?<![\w.)\]])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)\s*\.\s*" + attr + r"\b", line))
    if len(chains) != 1:
        return None
    first, *rest = chains.pop().split(".")
    holder = frame.f_locals.get(first, frame.f_globals.get(first, _MISSING))
    for part in rest[:-1]:
        holder = _static_attr(holder, part) if holder is not _MISSING else _MISSING
    if holder is _MISSING or not _from_checkout(holder) or _static_attr(holder, rest[-1]) is not None:
        return None
    return f"a value: {first}.{'.'.join(rest)} is None (the checkout's {type(holder).__name__}.{rest[-1]})"


_SIGNATURE = re.compile(r"^([\w.]+)\(\) (got an unexpected keyword argument|got multiple values|"
                        r"missing \d+ required|takes \d+ positional|takes no )")


def _checkout_lacks(value: BaseException, tb: Any) -> str | None:
    """What of the checkout's API a test ran into that the revision does not have (the test uses what
    the fix adds: cookiecutter's `exceptions.FailedHookException`, a keyword argument fastapi's fix adds
    to `jsonable_encoder`), named, or None. Only the checkout's own modules, classes and functions
    count, so a missing dependency or an error in the test itself never does."""
    try:
        if isinstance(value, ImportError):
            # `from pkg.mod import New` (path: the checkout's module), `import pkg.new` (its parent).
            if _origin(getattr(value, "path", None) or "") == "checkout":
                m = re.match(r"cannot import name '(\w+)'", str(value))
                return f"{value.name}.{m.group(1)}" if m else value.name
            parent = (getattr(value, "name", None) or "").rpartition(".")[0]
            mod = sys.modules.get(parent) if parent else None
            return value.name if mod is not None and _from_checkout(mod) else None
        if isinstance(value, AttributeError):
            obj = getattr(value, "obj", _MISSING)  # Python 3.10 and later
            if obj is _MISSING:
                m = re.match(r"module '([\w.]+)' has no attribute '(\w+)'", str(value))
                obj = sys.modules.get(m.group(1), _MISSING) if m else _MISSING
            named_type = re.match(r"(?:type object )?'(\w+)'(?: object)? has no attribute '(\w+)'", str(value))
            if obj is _MISSING and tb is not None and named_type is not None:
                # Python 3.8 and 3.9 name only the type: an object (or class) of that name in the
                # test's own frame, of the checkout, without that attribute.
                m = named_type
                frame = tb.tb_frame
                for v in [*frame.f_locals.values(), *frame.f_globals.values()]:
                    named = v if isinstance(v, type) else type(v)
                    if named.__name__ == m.group(1) and not hasattr(v, m.group(2)) and _from_checkout(v):
                        obj = v
                        break
            if obj is not _MISSING and _from_checkout(obj):
                return f"{getattr(obj, '__name__', type(obj).__name__)}.{getattr(value, 'name', None) or str(value)}"
            none = re.match(r"'NoneType' object has no attribute '(\w+)'", str(value))
            if none and tb is not None:
                return _none_from_checkout(tb.tb_frame, none.group(1))
            return None
        if isinstance(value, TypeError) and tb is not None:
            # The call never entered the function: the innermost frame is the test's. Find the callee
            # by the name the message gives, in that frame's namespaces.
            m = _SIGNATURE.match(str(value))
            if not m:
                return None
            frame = tb.tb_frame
            first, *rest = m.group(1).split(".")
            found = frame.f_locals.get(first, frame.f_globals.get(first, _MISSING))
            for part in rest:
                found = getattr(found, part, _MISSING)
            if found is _MISSING:
                # Called through a module or an object of the checkout (`encoders.jsonable_encoder(...)`).
                for v in [*frame.f_locals.values(), *frame.f_globals.values()]:
                    candidate = getattr(v, m.group(1).rsplit(".", 1)[-1], _MISSING) if _from_checkout(v) else _MISSING
                    if candidate is not _MISSING and _from_checkout(candidate):
                        return f"{getattr(candidate, '__module__', '?')}.{m.group(1)}: {m.group(2)}"
                return None
            return f"{getattr(found, '__module__', '?')}.{m.group(1)}: {m.group(2)}" if _from_checkout(found) else None
    except Exception:  # a name that cannot be looked up is not a missing API
        return None
    return None


class Plugin:
    """Registered by the bootstrap itself, never found on a path."""

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_load_initial_conftests(self, early_config: pytest.Config) -> Generator[None, None, None]:
        # Entry points were loaded from the environment alone; now the checkout may join the path:
        # after the standard library (which it must never shadow), before the environment's
        # packages (an installed release of the project under test must never be what the tests
        # import instead of the candidate). pytest and its plugins are already imported.
        # A wrapper called first: pytest's warnings plugin wraps this hook too and resolves the
        # configured `filterwarnings` categories before the conftests load, and a project's own
        # category (pyjwt's `ignore::jwt.warnings.InsecureKeyLengthWarning`) is imported from the
        # checkout then, after the snapshot below.
        _finish_base()  # before anything of the checkout can be imported
        _restore_filters()  # pytest's own function in the snapshot
        _restore_entry_points()  # and its own method
        root = getattr(early_config, "rootpath", None) or early_config.rootdir  # type: ignore[attr-defined]  # <6.1
        _PLACES["harness"] = str(root).rstrip("/") + "/"
        xml = getattr(early_config.known_args_namespace, "xmlpath", None)
        if xml:
            _PLACES["report"] = os.path.abspath(xml)
        snapshot()
        state["hooks"] = _hook_snapshot(early_config.pluginmanager)
        state["pm"] = early_config.pluginmanager
        state["started"] = True
        joining = _joining(str(root), state.get("paths", []), sys.path)
        preloaded = _preloaded(joining)
        state["preloaded"] = [f"{m} ({w})" for m, w in (_load_anew(preloaded) if preloaded else [])]
        at = next((i for i, p in enumerate(sys.path) if p.rstrip("/").endswith(("site-packages", "dist-packages"))),
                  len(sys.path))
        sys.path[at:at] = joining
        packages = _project_packages(_PLACES["harness"], state.get("paths", []))
        _join_namespaces(packages, state.get("paths", []))
        if packages:
            sys.meta_path.insert(0, _ProjectPackages(packages, state.get("paths", [])))
        if state["own_declared"]:
            _load_own_plugins(early_config.pluginmanager)
            # Only those that loaded here: one that cannot be imported would end a child's pytest at its start.
            loaded = {getattr(m, "__name__", "") for m in state["own"]}
            _own_plugins_for_children({n: m for n, m in state["own_declared"].items() if m in loaded})
        yield

    @pytest.hookimpl(trylast=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        _rebase()
        state["hooks"] = _hook_snapshot(config.pluginmanager)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # Configuration is over: trylast pytest_configure hooks registered after the guard's have run.
        _checked(_accept_swapped_plugins, session.config.pluginmanager)

    @pytest.hookimpl(tryfirst=True)
    def pytest_pycollect_makeitem(self, collector: Any, name: str, obj: Any) -> Any:
        # The canaries are plain test functions: a project plugin that collects only its own kind of test
        # (SQLAlchemy's, which alembic's conftest installs, keeps only methods of its TestBase classes) would
        # drop them, so they are made here first, as pytest makes them (the harness's own tests are not).
        # pytest's own making (its private _genfunctions, as its default hook calls it), so that fixtures with
        # params parametrise them as any test (pypa/build's autouse `has_virtualenv`, params=[False]).
        make = getattr(collector, "_genfunctions", None)
        if make is not None and _canary(collector.nodeid) and isinstance(obj, types.FunctionType) \
                and collector.istestfunction(obj, name):
            return list(make(name, obj))
        return None

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(self, session: Any, config: Any, items: list[Any]) -> Generator[None, None, None]:
        # ...and kept, whatever a plugin deselects (SQLAlchemy's keeps only items of a class): they must run to
        # show the outcomes are reported as they happen.
        canaries = [i for i in items if _canary(i.nodeid)]
        yield
        kept = {id(i) for i in items}
        items.extend(i for i in canaries if id(i) not in kept)

    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> None:
        if call.when == "call":
            _checked(_observe_call, item, call)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if state["own"] and report.when == "call" and report.passed and (
                report.nodeid not in state["reached"]
                or (report.nodeid in state["wrapped"] and report.nodeid not in state["entered"])):
            # A plugin that took over the protocol and reported a pass for a test whose function never ran.
            _note(f"{report.nodeid}: reported as passed, but the test function never ran")
        c = _case(report.nodeid)
        if report.when == "call" and report.passed and c["exception"] and c["exception"] not in ("Skipped", "XFailed") \
                and state["last_raised"].get(report.nodeid, True):
            _note(f"{report.nodeid} raised {c['exception']} but was reported as passed")
        if report.failed:
            c["outcome"] = "failed" if report.when == "call" else ("failed" if c["outcome"] == "failed" else "error")
        elif report.skipped and c["outcome"] == "passed" and not hasattr(report, "wasxfail"):
            c["outcome"] = "skipped"  # an xfail mark that held stays passed, as the JUnit report reads it

    def pytest_exception_interact(self, node: Any, call: Any, report: Any) -> None:
        # Called before pytest_collectreport for a collector that raised: a test file importing a
        # name the checkout does not have (`from pkg.mod import New`, as the fix's test does on base).
        # (pytest.CollectReport is a name of pytest 7 and later; a Collector is what collection runs.)
        if isinstance(node, pytest.Collector) and report.failed and call.excinfo is not None:
            _checked(_observe_collection, report.nodeid or "<session>", call.excinfo.value)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            nodeid = report.nodeid or "<session>"
            lacks, exception = state["lacks"].pop(nodeid, (None, None))
            cases[nodeid] = {"outcome": "error", "assertion": False, "exception": exception, "origin": None,
                             "message": str(report.longrepr)[-500:], "lacks": lacks}

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> None:
        # Right before the test runs: a patch that puts itself back afterwards is still in place here.
        if state["own"]:
            _checked(_watch_call, item)
        state["item"] = item  # whose fixtures are set up now (_set_by_active_fixture)
        _checked(_compare, True)
        pm = state.get("pm")
        if pm is not None:
            _checked(_check_hooks, pm)

    def pytest_runtest_logfinish(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        state["failed_call"].discard(nodeid)  # (a plugin that runs it again starts afresh)
        # The framework itself is checked before the next test and at the end; hooks of the
        # interpreter (trace, import) after each test too.
        _checked(_check_hooks_of_interpreter)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int | pytest.ExitCode) -> None:
        state["exitstatus"] = int(exitstatus)
