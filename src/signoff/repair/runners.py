"""Test runners: the command each stage executes in the sandbox, and how its report is read.

Inside the sandbox the layout is fixed: the exported revision at /src, the frozen harness at
/harness, this module's runner files at /runner (all read-only), and the writable tmpfs at /work.

pytest is started isolated (`python -I`) through a bootstrap that loads signoff's guard and pytest
from the prepared environment *before* the checkout joins the import path, and adds the checkout
folders (after the standard library, before the environment's packages, so the candidate's own code
is what the tests import even when a release of it is installed) only after pytest has loaded its
plugins, so a candidate can neither shadow pytest nor ship plugins, `.pth` files or `sitecustomize`.
The harness's own `pytest.ini` governs the run when present; otherwise an empty one does, so the
repository's configuration and conftest files never apply. Under node every test file's process loads the guard first
(`--require`). Both write the authenticated record that `repair/guard.py` checks.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signoff.kernel.canonical import canonical_digest
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import UsageError
from signoff.repair.guard import (
    NODE_CANARY_REPORT,
    PYTEST_RECORD,
    RUNNER_RECORD,
    Plan,
    check_node,
    check_pytest,
    check_wrapped,
    node_record,
    plan_jest,
    plan_node,
    plan_pytest,
    plan_vitest,
)
from signoff.repair.guard_sources import NODE_GUARD, NODE_WRAPPER, PYTEST_BOOTSTRAP, PYTEST_GUARD
from signoff.repair.junit import (
    HARNESS_MOUNT,
    Case,
    ReportError,
    jest_frames,
    parse_generic,
    parse_jest,
    parse_node,
    parse_pytest,
    parse_vitest,
    vitest_frames,
)
from signoff.repair.testenv import SCRIPTS_FOLDER
from signoff.sandbox.nodeenv import DEPS_DST

SRC_MOUNT = "/src"
RUNNER_MOUNT = "/runner"
WORKDIR = "/work"
JUNIT = "junit.xml"
GUARD_FILE = "signoff_guard.py"

EMPTY_INI = "[pytest]\n"
RUNNERS = ("pytest", "node", "vitest", "jest")
JEST_REPORT = "jest.json"
# The runners that run in a copy of the project with its packages (see node_project).
PACKAGED = ("vitest", "jest")
# Vitest runs in a writable copy of the project: the checkout, without any node_modules it carries,
# the harness laid over it at its places (the base revision's tests and runner configuration win over
# the candidate's), and the packages installed from the base revision's lock file (read-only).
PROJECT = f"{WORKDIR}/project"
DEPS = DEPS_DST


# The runner's configuration at the project's root: under a harness the base revision's copies (or
# none) apply, never the candidate's, so a candidate cannot change how tests are collected or set up.
NODE_CONFIG_FILES = (*(f"{stem}.{ext}" for stem in ("vitest.config", "vite.config", "vitest.workspace", "jest.config",
                                                      "babel.config")
                       for ext in ("ts", "mts", "cts", "js", "mjs", "cjs", "json")),
                     "package.json", "tsconfig.json", ".babelrc")


# Node, libuv and esbuild (Go) size their thread pools by the host's cores, and every thread counts
# against the sandbox's process limit: on a many-core machine a Vitest run would hit it. Two each.
NODE_THREADS = {"NODE_OPTIONS": "--v8-pool-size=2", "UV_THREADPOOL_SIZE": "2", "GOMAXPROCS": "2", "CI": "1"}
NODE_WORKERS = ["--maxWorkers=2", "--minWorkers=1"]
# Vitest's main process, two workers and esbuild need more than a pytest run's memory.
NODE_MEMORY_MB = 1024


def node_project(harness: bool = True) -> str:
    """The shell steps that lay the project out at PROJECT and enter it (the checks run without a harness)."""
    overlay = (f"(cd {PROJECT} && rm -f {' '.join(NODE_CONFIG_FILES)}) && cp -R {HARNESS_MOUNT}/. {PROJECT}/ && "
               if harness else "")
    return (f"mkdir -p {PROJECT} && cp -R {SRC_MOUNT}/. {PROJECT}/ && "
            f"find {PROJECT} -name node_modules -prune -exec rm -rf {{}} + && {overlay}"
            # A folder of links, not one link: Vite writes its bundled configuration and caches there.
            f"mkdir {PROJECT}/node_modules && for e in {DEPS}/node_modules/* {DEPS}/node_modules/.[!.]*; do "
            f'if [ -e "$e" ]; then ln -s "$e" {PROJECT}/node_modules/; fi; done && cd {PROJECT}')


@dataclass(frozen=True)
class Runner:
    kind: str  # pytest | node | template
    template: str | None = None

    @classmethod
    def parse(cls, text: str) -> Runner:
        text = (text or "pytest").strip()
        if text in RUNNERS:
            return cls(text)
        if "{junit}" not in text:
            raise UsageError(f"runner {text!r} is not pytest, node, vitest, jest or a command template with {{junit}}",
                             'use --runner pytest, node, vitest or jest, or --runner "CMD {tests} {junit}"')
        unknown = {p for p in _placeholders(text)} - {"tests", "junit", "harness", "src", "python"}
        if unknown:
            raise UsageError(f"runner template has unknown placeholders: {', '.join(sorted(unknown))}",
                             "use {tests}, {junit}, {harness}, {src} and {python}")
        return cls("template", text)

    @property
    def needs_python(self) -> bool:
        return self.kind not in ("node", *PACKAGED)

    @property
    def needs_packages(self) -> bool:
        """Whether the run needs the project's packages (installed from its lock file into /deps)."""
        return self.kind in PACKAGED

    def files(self) -> dict[str, str]:
        """Files placed in /runner for this runner."""
        if self.kind == "pytest":
            return {"run_pytest.py": PYTEST_BOOTSTRAP, GUARD_FILE: PYTEST_GUARD, "pytest.ini": EMPTY_INI}
        if self.kind == "node":
            return {"signoff_guard.cjs": NODE_GUARD}
        if self.kind in PACKAGED:
            return {"run_tests.mjs": NODE_WRAPPER}
        return {}

    @property
    def guarded(self) -> bool:
        """Whether runs get canaries and the guard (a command template runs whatever it names)."""
        return self.kind in ("pytest", "node", *PACKAGED)

    def spec(self) -> dict[str, Any]:
        return {"kind": self.kind, "template": self.template,
                "files": {name: sha256_bytes(text.encode()) for name, text in sorted(self.files().items())}}

    def digest(self) -> str:
        return canonical_digest(self.spec())

    def write_files(self, folder: Path, ini: str | None = None) -> Path:
        """The runner files in `folder`; `ini` replaces the empty pytest.ini (the project's own
        configuration from the base revision, recorded in the environment)."""
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o755)
        files = self.files()
        if ini is not None and "pytest.ini" in files:
            files["pytest.ini"] = ini
        for name, text in files.items():
            p = folder / name
            p.write_text(text)
            p.chmod(0o444)
        return folder

    def write_bytecode(self, folder: Path, python_version: str, cache: Path) -> None:
        """The guard's bytecode beside its source in `folder` (`__pycache__`, as Python looks for it)
        when the run's Python is of this interpreter's version: the run then loads it instead of
        compiling the guard's 800 lines again (about 4% of a small run's instructions). It is
        checked against the source's hash when loaded, so any difference means the source is
        compiled as before. Compiled once per guard source and Python version, kept in `cache`."""
        tag = sys.implementation.cache_tag
        if self.kind != "pytest" or tag is None or python_version != f"{sys.version_info[0]}.{sys.version_info[1]}":
            return
        import importlib.util
        import py_compile

        source = self.files()[GUARD_FILE].encode()
        cached = cache / f"signoff_guard-{sha256_bytes(source + importlib.util.MAGIC_NUMBER)[:24]}.{tag}.pyc"
        try:
            if not cached.is_file():
                cache.mkdir(parents=True, exist_ok=True)
                py_compile.compile(str(folder / GUARD_FILE), cfile=str(cached), dfile=f"{RUNNER_MOUNT}/{GUARD_FILE}",
                                   doraise=True, invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
            data = cached.read_bytes()
        except (OSError, py_compile.PyCompileError):
            return  # an unwritable cache: the run compiles the source, as without one
        pycache = folder / "__pycache__"
        pycache.mkdir(exist_ok=True)
        pycache.chmod(0o755)
        target = pycache / f"signoff_guard.{tag}.pyc"
        target.write_bytes(data)
        target.chmod(0o444)

    def command(self, tests: list[str], harness_files: tuple[str, ...], python: str | None,
                pythonpath: list[str], plan: Plan | None = None, src: str = SRC_MOUNT) -> tuple[list[str], list[str]]:
        """(argv, report files to collect) for running `tests` on the checkout mounted at `src`, with
        the plan's canary when given."""
        paths = ":".join([src, *[f"{src}/{p}" for p in pythonpath]])
        if self.kind == "pytest":
            assert python is not None
            ini = f"{HARNESS_MOUNT}/pytest.ini" if "pytest.ini" in harness_files else f"{RUNNER_MOUNT}/pytest.ini"
            argv = [python, "-I", "-B", f"{RUNNER_MOUNT}/run_pytest.py", paths,
                    # pytest-enabler (the jaraco skeleton's) adds --cov, -n auto, --mypy and --ruff at
                    # start-up, past the project's addopts the run leaves out: never loaded.
                    "-p", "no:cacheprovider", "-p", "no:enabler", f"--rootdir={HARNESS_MOUNT}", "-c", ini,
                    f"--confcutdir={HARNESS_MOUNT}", "--continue-on-collection-errors",  # so the canaries still run
                    "-o", "junit_family=xunit1", "-o", "console_output_style=classic",
                    f"--junitxml={WORKDIR}/{JUNIT}", "-q", "--color=no",
                    *[f"{HARNESS_MOUNT}/{t}" for t in tests]]
            if plan is None:
                return argv, [JUNIT]
            # The failing canary must not stop the session (a harness `-x` would): run everything.
            return [*argv[:-len(tests)], f"--maxfail={2**31 - 1}", *argv[-len(tests):],
                    f"{HARNESS_MOUNT}/{plan.canary_file}"], [JUNIT, PYTEST_RECORD]
        if self.kind == "node":
            files = _files_of(tests)
            guard = f"--require {RUNNER_MOUNT}/signoff_guard.cjs " if plan is not None else ""
            lines = ["rc=0"]
            runs = [(f, f"junit-{i}.xml") for i, f in enumerate(files)]
            if plan is not None:
                runs.append((plan.canary_file, NODE_CANARY_REPORT))
            for f, report in runs:
                lines.append(
                    f"node {guard}--test --test-reporter=junit --test-reporter-destination={WORKDIR}/{report} "
                    f"{shlex.quote(HARNESS_MOUNT + '/' + f)} || rc=1")
            lines.append("exit $rc")
            collect = [report for _f, report in runs]
            if plan is not None:
                collect += [node_record(i, runner) for i in range(len(runs)) for runner in (False, True)]
            return ["/bin/sh", "-c", "\n".join(lines)], collect
        if self.kind == "vitest":
            files = [*_files_of(tests), *([plan.canary_file] if plan is not None else [])]
            vitest = [f"{DEPS}/node_modules/vitest/vitest.mjs", "run", "--root", PROJECT, "--reporter=junit",
                      f"--outputFile={WORKDIR}/{JUNIT}", *NODE_WORKERS, *files]
            wrapper = [f"{RUNNER_MOUNT}/run_tests.mjs", f"{WORKDIR}/{JUNIT}", f"{WORKDIR}/{RUNNER_RECORD}", "--"]
            script = f"{node_project()} && exec node {shlex.join([*wrapper, 'node', *vitest])}"
            return ["/bin/sh", "-c", script], [JUNIT, RUNNER_RECORD]
        if self.kind == "jest":
            files = [*_files_of(tests), *([plan.canary_file] if plan is not None else [])]
            jest = [f"{DEPS}/node_modules/jest/bin/jest.js", "--ci", "--json", f"--outputFile={WORKDIR}/{JEST_REPORT}",
                    "--rootDir", PROJECT, "--watchman=false", "--maxWorkers=2", "--runTestsByPath", *files]
            wrapper = [f"{RUNNER_MOUNT}/run_tests.mjs", f"{WORKDIR}/{JEST_REPORT}", f"{WORKDIR}/{RUNNER_RECORD}", "--"]
            script = f"{node_project()} && exec node {shlex.join([*wrapper, 'node', *jest])}"
            return ["/bin/sh", "-c", script], [JEST_REPORT, RUNNER_RECORD]
        assert self.template is not None
        values = {
            "tests": " ".join(shlex.quote(f"{HARNESS_MOUNT}/{t}") for t in tests),
            "junit": f"{WORKDIR}/{JUNIT}", "harness": HARNESS_MOUNT, "src": SRC_MOUNT,
            "python": python or "python3",
        }
        return ["/bin/sh", "-c", self.template.format_map(values)], [JUNIT]

    def env(self, python: str | None, pythonpath: list[str], src: str = SRC_MOUNT,
            plugins: dict[str, str] | None = None, variables: dict[str, str] | None = None) -> dict[str, str]:
        """The execution's environment; `plugins` are the project's own pytest plugins (entry point name ->
        module), which the guard loads from the checkout after its start; `variables` are the person's
        (`--env`, checked by repair/run_env.py), under the run's own, which always win."""
        return {**(variables or {}), **self._own_env(python, pythonpath, src, plugins)}

    def _own_env(self, python: str | None, pythonpath: list[str], src: str,
                 plugins: dict[str, str] | None) -> dict[str, str]:
        folders = [src, *[f"{src}/{p}" for p in pythonpath]]
        path = "/usr/local/bin:/usr/bin:/bin"
        if python and "/" in python:
            path = python.rsplit("/", 1)[0] + ":" + path
        if self.kind in PACKAGED:
            # Packages resolve from the project's node_modules only: no NODE_PATH into the checkout.
            return {"PATH": path, "HOME": WORKDIR, "TMPDIR": "/tmp", "LANG": "C.UTF-8",  # noqa: S108 -- sandbox tmpfs
                    "SIGNOFF_CHECKOUT": src, "SIGNOFF_HARNESS": HARNESS_MOUNT, "NO_COLOR": "1", **NODE_THREADS}
        # The project's own commands (testenv.write_scripts) come last: they never hide a system one.
        path += f":{src}/{SCRIPTS_FOLDER}"
        return {
            "PATH": path, "HOME": WORKDIR, "TMPDIR": "/tmp", "LANG": "C.UTF-8",  # noqa: S108 -- sandbox tmpfs
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": ":".join(folders), "NODE_PATH": ":".join(folders),
            "SIGNOFF_CHECKOUT": src, "SIGNOFF_HARNESS": HARNESS_MOUNT,
            "HYPOTHESIS_STORAGE_DIRECTORY": f"{WORKDIR}/.hypothesis", "NO_COLOR": "1",
            **({"SIGNOFF_OWN_PLUGINS": ",".join(f"{k}={v}" for k, v in sorted(plugins.items()))}
               if plugins and self.kind == "pytest" else {}),
        }

    def plan(self, harness: Path, tests: list[str]) -> Plan | None:
        """A fresh plan (key, canaries written into `harness`) for one guarded execution."""
        if self.kind == "pytest":
            return plan_pytest(harness, tests)
        if self.kind == "node":
            return plan_node(harness, tests)
        if self.kind == "vitest":
            return plan_vitest(harness, tests)
        if self.kind == "jest":
            return plan_jest(harness, tests)
        return None

    def check_guard(self, plan: Plan, tests: list[str], cases: list[Case] | None, files: dict[str, bytes],
                    exit_code: int | None) -> tuple[list[str], list[Case] | None, dict[str, Any]]:
        """(findings, the cases without canaries, what the guard observed) for one execution."""
        if self.kind == "pytest":
            return check_pytest(plan, tests, cases, files, exit_code)
        if self.kind in PACKAGED:
            report = JUNIT if self.kind == "vitest" else JEST_REPORT
            data = files.get(report)
            try:
                frames = {} if data is None else vitest_frames(data) if self.kind == "vitest" else \
                    jest_frames(data, PROJECT)
            except ReportError:
                frames = {}
            return check_wrapped(plan, cases, files, report, exit_code, frames)
        data = files.get(NODE_CANARY_REPORT)
        try:
            canary = parse_node(data, plan.canary_file) if data is not None else None
        except ReportError as exc:
            return [f"the canary report is malformed: {exc}"], cases, {}
        reports = [*[f"junit-{i}.xml" for i in range(len(_files_of(tests)))], NODE_CANARY_REPORT]
        return check_node(plan, _files_of(tests), reports, files, canary, exit_code), cases, {}

    def guard_env(self, plan: Plan, tests: list[str]) -> dict[str, str]:
        """What the guard reads (and removes) at start: the run's key, and for node the file order."""
        env = {"SIGNOFF_GUARD_KEY": plan.key}
        if self.kind == "node":
            env["SIGNOFF_GUARD_FILES"] = ":".join(f"{HARNESS_MOUNT}/{f}" for f in [*_files_of(tests), plan.canary_file])
        return env

    def read(self, tests: list[str], files: dict[str, bytes]) -> list[Case] | None:
        """Cases from the collected reports; None when a report is absent. ReportError when malformed."""
        if self.kind == "node":
            cases: list[Case] = []
            for i, f in enumerate(_files_of(tests)):
                data = files.get(f"junit-{i}.xml")
                if data is None:
                    return None
                cases.extend(parse_node(data, f))
            return cases
        if self.kind == "jest":
            report = files.get(JEST_REPORT)
            return None if report is None else parse_jest(report, PROJECT)
        data = files.get(JUNIT)
        if data is None:
            return None
        if self.kind == "vitest":
            return parse_vitest(data)
        return parse_pytest(data) if self.kind == "pytest" else parse_generic(data)


def _files_of(tests: list[str]) -> list[str]:
    seen: list[str] = []
    for t in tests:
        f = t.split("::", 1)[0]
        if f not in seen:
            seen.append(f)
    return seen


def _placeholders(text: str) -> list[str]:
    import string

    return [name for _lit, name, _spec, _conv in string.Formatter().parse(text) if name is not None]


__all__ = ["DEPS", "JUNIT", "NODE_CONFIG_FILES", "NODE_MEMORY_MB", "NODE_THREADS", "PROJECT", "RUNNER_MOUNT",
           "SRC_MOUNT", "WORKDIR", "ReportError", "Runner", "node_project"]
