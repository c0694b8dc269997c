"""The verifier: judge a candidate revision against a frozen harness, in the sandbox.

Order matters and is the point of the design:
1. the harness is digested and frozen before anything runs (and compared with the approved digest);
2. ancestry and the allowlist are checked from git alone, and the candidate's edits to the
   repository's own tests are recorded as a tamper signal (they never feed the verdict);
3. each revision is exported clean, blob by blob: the committed bytes, whatever its attributes say;
4. the test environment is prepared from the *base* revision's requirements (network only here);
5. the executions run concurrently with no network: base/expected, and candidate/expected with
   candidate/regression in one execution (`execution_groups`; each repeated `repeat` times);
6. outcomes come from the JUnit reports; the verdict rules in `verdict.py` decide;
7. a signed in-toto statement records the identity, the fingerprint, every stage and the verdict.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signoff import git
from signoff.git.command import current as git_session
from signoff.kernel import metrics
from signoff.kernel.canonical import canonical_digest
from signoff.kernel.digests import sha256_file
from signoff.kernel.errors import IntegrityError, SignoffError, UnavailableError, UsageError
from signoff.kernel.progress import Progress, silent
from signoff.kernel.settings import Settings
from signoff.repair import (
    extensions,
    forked,
    guard,
    inherited,
    lockfile,
    paths,
    pytest_config,
    run_env,
    testenv,
    wheel_less,
)
from signoff.repair.evidence import REDACTED, REGRESSION_ON_BASE, build_statement, fingerprint, identity, redact
from signoff.repair.harness import FrozenHarness, freeze, harness_digest, load
from signoff.repair.junit import HARNESS_MOUNT, Case, ReportError, check_test_id, collection_cause
from signoff.repair.runners import NODE_MEMORY_MB, RUNNER_MOUNT, SRC_MOUNT, WORKDIR, Runner
from signoff.repair.signals import scan as scan_signals
from signoff.repair.verdict import (
    EXIT_CODES,
    RUNNER_ITSELF,
    Run,
    Summary,
    classify,
    network_reached,
    project_files_line,
    reason,
    skipped_as_on_base,
    summarize,
)
from signoff.repair.workspace import Workspace, make_folder
from signoff.repair.workspace import places as workspace_places
from signoff.repair.workspace import remove as remove_workspace

STAGES = ("base", "candidate", "regression")
# REGRESSION_ON_BASE: the base revision's run of the regression ids the candidate failed, made only then,
# so that a failure the base shares (a dependency newer than the project) is told from one the candidate brings.
MAX_REPEAT = 20
# The parts of the sandbox's isolation record that describe the profile (what was enforced), not
# one run's circumstances (host mount paths, reaped processes): the fingerprint covers only these.
PROFILE_KEYS = ("backend", "version", "binary", "unsafe", "uid", "limits", "enforced", "cgroups", "network",
                "guarantees", "mechanisms", "weaker")


# One whole core per execution (the sandbox's default is 0.75); memory, processes and files as default.
LIMITS_CPUS = 1.0


def _limits(runner: Runner | None = None) -> Any:
    from signoff.sandbox import Limits

    if runner is not None and runner.needs_packages:
        return Limits(cpus=LIMITS_CPUS, memory_mb=NODE_MEMORY_MB)
    return Limits(cpus=LIMITS_CPUS)


def isolation_profile(record: dict[str, Any]) -> dict[str, Any]:
    return {k: record[k] for k in PROFILE_KEYS if k in record}


@dataclass
class VerifyRequest:
    repo: Path
    base: str
    candidate: str
    harness: Path | None
    expect: str
    regression: list[str] = field(default_factory=list)
    allow: list[str] = field(default_factory=list)
    pythonpath: list[str] = field(default_factory=list)
    requirements: str | list[str] | None = None  # requirements files: paths in the base revision, or here
    project_deps: bool = False  # install the dependencies the base revision's pyproject/setup.cfg declares
    extras: list[str] = field(default_factory=list)  # ... and these extras of it (implies project_deps)
    pytest: str | None = None  # pin pytest, e.g. "pytest==7.4.4" (default: the newest)
    lock: str | None = None  # the project's lock file (base revision): every package it names at its version
    python: str | None = None  # the interpreter by version, e.g. "3.11" (default: this machine's python3)
    allow_source_builds: bool = False  # install sdists too (their build code runs on this machine)
    # Variables every execution gets (`--env NAME=VALUE`), checked by repair/run_env.py: recorded in the
    # settings and the execution identity, since they change what the tests do.
    env: dict[str, str] = field(default_factory=dict)
    # Build the extension modules the base declares (setup.py ext_modules), for each revision, in the sandbox
    # (repair/extensions.py); off by default.
    build_extensions: bool = False
    # "auto": empty, then the whole run again as "project" when the tests read or write files
    # relative to the project's root; "empty"; or "project": the run starts in a writable copy of
    # the checkout and the harness
    workdir: str = "auto"
    runner: str = "pytest"
    # "auto": under pytest, "shared" unless this machine has more than a core and a half idle, where
    # "apart" finishes sooner; "shared": one interpreter in one sandbox runs the base, then the
    # candidate (repair/forked.py: one pytest start fewer); "apart": two sandboxes at once
    executions: str = "auto"
    repeat: int = 1
    timeout: float = 120.0
    approved_digest: str | None = None  # the harness digest a person approved; any other is refused
    frozen_digest: str | None = None  # use an already-frozen harness from the store instead of a folder
    redact_paths: bool = False
    evidence_path: Path | None = None
    write_evidence: bool = True
    bundle: Path | None = None  # also write a git bundle of base and candidate here; its digest is signed
    backend: str | None = None
    stages: tuple[str, ...] = ("base", "candidate", "regression")  # the workflow reproduces with ("base",)


@dataclass
class StageResult:
    name: str
    revision: str
    tests: list[str]
    command: list[str]
    runs: list[Run]
    summary: Summary

    def as_json(self) -> dict[str, Any]:
        return {"revision": self.revision, "tests": self.tests, "outcome": self.summary.outcome,
                "assertion": self.summary.assertion, "message": self.summary.message,
                "status": self.summary.status, "per_test": self.summary.per_test,
                "executions": [r.record for r in self.runs if r.record is not None],
                "runs": [r.as_json() for r in self.runs]}

    def evidence_json(self) -> dict[str, Any]:
        return {"revision": self.revision, "tests": self.tests, "command": self.command,
                "summary": self.summary.as_json(), "runs": [r.as_json() for r in self.runs]}


@dataclass
class VerifyResult:
    verdict: str
    reasons: list[dict[str, str]]
    stages: dict[str, StageResult]
    fingerprint: str
    evidence: Path | None
    base: str
    candidate: str
    harness_digest: str
    changed: list[str]
    tamper: list[str]
    predicate: dict[str, Any]
    signals: list[dict[str, Any]] = field(default_factory=list)  # the static tamper signal on the diff
    notes: list[str] = field(default_factory=list)  # what a person should know (e.g. an import-name collision)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    def as_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "reasons": self.reasons,
            "stages": {name: s.as_json() for name, s in self.stages.items()},
            "fingerprint": self.fingerprint,
            "evidence": str(self.evidence) if self.evidence else None,
            "base": self.base,
            "candidate": self.candidate,
            "harness_digest": self.harness_digest,
            "changed": self.changed,
            "tamper": self.tamper,
            "signals": self.signals,
            "notes": self.notes,
        }


def harness_store(settings: Settings) -> Path:
    return settings.home / "repair" / "harness"


def env_cache(settings: Settings) -> Path:
    """Where prepared test environments are cached by digest: [repair] env_cache in signoff.toml,
    SIGNOFF_REPAIR_ENV_CACHE, or under the home folder."""
    named = settings.section("repair").get("env_cache") or os.environ.get("SIGNOFF_REPAIR_ENV_CACHE")
    return Path(named) if named else settings.home / "repair" / "envs"


EXECUTIONS = ("auto", "shared", "apart")


def _shares_interpreter(choice: str) -> bool:
    """Whether base and candidate take turns in one interpreter (`--executions`). Apart, each takes
    a core of its own: that finishes sooner only where two are free; on a busy machine the shared
    interpreter costs it one pytest start less (docs/repair.md, Speed)."""
    if choice != "auto":
        return choice == "shared"
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return cpus - os.getloadavg()[0] < 1.5


def _validate(req: VerifyRequest) -> None:
    if req.executions not in EXECUTIONS:
        raise UsageError(f"--executions must be one of {', '.join(EXECUTIONS)}, got {req.executions!r}",
                         "pass auto (the default), shared or apart")
    if not isinstance(req.repeat, int) or not 1 <= req.repeat <= MAX_REPEAT:
        raise UsageError(f"--repeat must be 1 to {MAX_REPEAT}, got {req.repeat}", "pass a small repeat count")
    if not 0 < req.timeout <= 3600:
        raise UsageError(f"--timeout must be between 0 and 3600 seconds, got {req.timeout}",
                         "pass the seconds one execution may take")
    for p in req.pythonpath:
        parts = Path(p).parts
        if Path(p).is_absolute() or ".." in parts or not p:
            raise UsageError(f"--pythonpath {p!r} must be a folder inside the repository", "pass e.g. src")
    for name, value in (("--approved-digest", req.approved_digest), ("frozen digest", req.frozen_digest)):
        if value is not None and not re.fullmatch(r"[0-9a-f]{64}", value):
            raise UsageError(f"{name} must be 64 lowercase hex characters (a SHA-256), got {value!r}",
                             "pass the digest printed by `signoff repair freeze`")
    if req.harness is None and req.frozen_digest is None:
        raise UsageError("no harness given", "pass --harness DIR")
    if req.workdir not in WORKDIRS:
        raise UsageError(f"--workdir must be {' or '.join(WORKDIRS)}, got {req.workdir!r}",
                         "pass --workdir project for tests that read or write files relative to the project root")
    run_env.check(req.env)
    if req.build_extensions and not Runner.parse(req.runner).needs_python:
        raise UsageError(f"--build-extensions builds Python extension modules; the {req.runner} runner runs none",
                         "leave out --build-extensions, or run the Python tests (--runner pytest)")


WORKDIRS = ("auto", "empty", "project")
# Maintainers run pytest from the project's root, and many tests open `tests/data/x.json` relative
# to it, or write beside their data. `project` starts each run in a writable copy of the checkout
# with the harness laid over it at its places (inside the sandbox's tmpfs, so nothing leaves it); the
# code and tests are still imported from the read-only /src and /harness.
_PROJECT_WORKDIR = f'cp -R {SRC_MOUNT}/. {WORKDIR}/ && cp -R {HARNESS_MOUNT}/. {WORKDIR}/ && exec "$@"'


def _in_workdir(workdir: str, argv: list[str]) -> list[str]:
    return ["/bin/sh", "-c", _PROJECT_WORKDIR, "signoff-workdir", *argv] if workdir == "project" else argv


def requirement_files(req: VerifyRequest) -> list[str]:
    if req.requirements is None:
        return []
    return [req.requirements] if isinstance(req.requirements, str) else list(req.requirements)


def write_requirements(plan: testenv.Plan, workspace: Path) -> Path | None:
    """The requirement lines (and constraints) pip gets, written beside the run. The text names
    nothing of this run: the constraints file is named by its content's digest (pip reads it relative
    to the requirements file), so the environment cache, keyed by this text, is reused for the same
    declarations and never for different ones."""
    if not plan.lines and not plan.constraints:
        return None
    lines = list(plan.lines)
    if plan.constraints:
        # Named by its content and referred to relatively (pip reads it beside this file): the
        # environment's cache key is this file's text, so it must change with the constraints and
        # with nothing else (not with this run's temporary folder).
        text = "\n".join(plan.constraints) + "\n"
        constraints = workspace / f"constraints-{canonical_digest(text)[:16]}.txt"
        constraints.write_text(text)
        constraints.chmod(0o644)
        lines.append(f"-c {constraints.name}")
    if plan.lock or plan.pins:
        # The environment is cached by this file's text: a lock with other hashes is another
        # environment, even where the versions are the same.
        lines.append(f"# locked: {canonical_digest([plan.lock, [dataclasses.astuple(p) for p in plan.pins]])}")
    out = workspace / "requirements.txt"
    out.write_text("\n".join(lines) + "\n")
    out.chmod(0o644)
    return out


def _node_environment() -> dict[str, Any]:
    node = shutil.which("node")
    version = None
    if node:
        proc = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=20, check=False)
        version = proc.stdout.strip() or None
    return {"kind": "node", "version": version}


def _node_packages(repo: Path, base: str, settings: Settings, progress: Progress,
                   preflight: list[dict[str, str]]) -> tuple[dict[str, Any], list[Any]]:
    """The environment record and mounts of a Vitest run: the packages of the base revision's
    package-lock.json, installed by `npm ci` here (network only here) before the sandbox starts.
    What stops it is written into `preflight`."""
    from signoff import sandbox

    environment = _node_environment()
    manifest = git.read_file_at(repo, base, "package.json")
    lock = git.read_file_at(repo, base, "package-lock.json")
    if manifest is None or lock is None:
        preflight.append(reason("environment_unprepared", "the base revision has no package.json and "
                                "package-lock.json at its root", "commit the lock file `npm install` writes"))
        return environment, []
    try:
        progress("installing the lock file's packages")
        nenv = sandbox.prepare_node_env(manifest, lock, env_cache(settings))
    except SignoffError as exc:
        environment["error"] = exc.message
        preflight.append(reason("environment_unprepared", exc.message, exc.fix or ""))
        return environment, []
    return environment | nenv.as_json(), list(nenv.mounts)


def _to_run(execution: Any, runner: Runner, tests: list[str], timeout: float, plan: guard.Plan | None = None,
            harness: Path | None = None, config: str = "") -> Run:
    record = execution.as_json()
    digest = canonical_digest(record)
    # pytest's INTERNALERROR names its cause on its own last line (alembic's `configparser.NoSectionError: No
    # section: 'db'`, from the sqlalchemy plugin reading setup.cfg in the working directory).
    tail = internal_error(execution.stdout or "") or internal_error(execution.stderr or "") or \
        _tail_cause(execution.stderr or execution.stdout or "")
    if execution.timed_out:
        return Run("timeout", f"timed out after {timeout:g}s{network_reached(execution.stderr or '')}", [],
                   execution.exit_code, record, digest)
    if execution.oom_killed or (execution.pids_limit_hit and execution.exit_code != 0):
        return Run("resource_limit", f"stopped by the sandbox ({execution.outcome})", [], execution.exit_code,
                   record, digest)
    try:
        cases = runner.read(tests, execution.files)
    except ReportError as exc:
        return Run("bad_report", str(exc), [], execution.exit_code, record, digest)
    if plan is not None and harness is not None:
        findings, cases, observed = runner.check_guard(plan, tests, cases, execution.files, execution.exit_code)
        shadowed = [f[len(guard.PRELOADED):] for f in findings if f.startswith(guard.PRELOADED)]
        findings = [f for f in findings if not f.startswith(guard.PRELOADED)]
        if shadowed and not findings:
            return Run("import_shadowed", _shadowed_line(shadowed), cases or [], execution.exit_code, record, digest,
                       {"plan": plan.as_json(), "findings": [], "observed": observed})
        if cases is not None and not findings:
            findings = guard.static_findings(harness, tests, cases, guard.harness_skips(harness), config)
        facts = {"plan": plan.as_json(), "findings": findings, "observed": observed}
        lacking = _lacking_at_collection(tests, cases, observed, findings)
        if lacking:
            # A test file that imports what the revision's code lacks (the fix's new name, on base):
            # its requested tests failed at the checkout's API, as plain pytest counts them too.
            assert cases is not None
            facts["observed"] = {**observed, **{c.id: seen for c, seen in lacking}}
            return _complete(execution, [*cases, *(c for c, _s in lacking)], record, digest, facts)
        broken = _collection_errors(tests, cases, observed, findings, plan)
        if broken and shadowed:
            # The test file failed to import because it got the plugin's copy (attrs before its fix
            # here): the copy is the cause to name, not a dependency to install.
            return Run("import_shadowed", f"{_shadowed_line(shadowed)} ({broken[:300]})", cases or [],
                       execution.exit_code, record, digest, facts)
        if broken:
            return Run("collection_error", broken, cases or [], execution.exit_code, record, digest, facts)
        alike = _setup_errors_alike(tests, cases, findings)
        if alike:
            return Run("collection_error", alike, cases or [], execution.exit_code, record, digest, facts)
        if cases is None and execution.exit_code in (PYTEST_INTERRUPTED, guard.PYTEST_USAGE_ERROR) and \
                _only_missing_canaries(findings, allow_unfinished=True):
            # pytest stopped before collecting (a conftest that cannot be imported, an option its
            # configuration needs from a plugin that is not installed): name what stopped it.
            cause = collection_cause(execution.stderr or "") or collection_cause(execution.stdout or "")
            if cause:
                return Run("collection_error", f"pytest could not start: {cause}", [], execution.exit_code, record,
                           digest, facts)
        if findings and (cases is not None or execution.exit_code == 0 or observed):
            internal = internal_error(execution.stdout or "") if _only_missing_canaries(findings, True) else ""
            # Still no verdict (anything, the candidate too, can stop pytest so), but named for what it is.
            detail = (f"pytest stopped with an internal error before its canaries ran: {internal}" if internal
                      else "; ".join(findings))
            return Run("harness_integrity", detail, cases or [], execution.exit_code, record, digest, facts)
        if cases is not None:
            return _complete(execution, cases, record, digest, facts)
    if cases is None:
        return Run("no_report", f"exit {execution.exit_code}, no JUnit report; {tail}", [], execution.exit_code,
                   record, digest)
    return _complete(execution, cases, record, digest)


def _shadowed_line(shadowed: list[str]) -> str:
    """The modules the environment's copy shadowed, said first to be pytest's own when they are (the project
    under test is the runner)."""
    line = ", ".join(shadowed)
    return RUNNER_ITSELF + line if any(s.startswith(("pytest (", "_pytest (")) for s in shadowed) else line


PYTEST_INTERRUPTED = 2
# The oldest pytest the run guard works with (httpie's 2019 tests need pytest 4: the guard reads
# Config.rootdir where rootpath, new in 6.1, is missing; pytest 4.6 is the oldest on Python 3.8).
MIN_PYTEST = (4, 6)
MIN_PYTHON = (3, 8)  # the run guard watches the tests through audit hooks (sys.addaudithook, new in 3.8)


def guard_python_refused(python_exe: str | None) -> SignoffError | None:
    """Why a `--python` older than the run guard supports cannot be used, said before pip installs anything
    (keras of 2018 with TensorFlow 1.x, BugsInPy's Python 3.7: the guard stopped every run with `module 'sys'
    has no attribute 'addaudithook'` and no report); None for one it supports, or the default."""
    from signoff.sandbox.pyenv import version_of

    version = version_of(python_exe) if python_exe else None
    parts = tuple(int(x) for x in re.findall(r"\d+", version or "")[:2])
    if not parts or parts >= MIN_PYTHON:
        return None
    floor = ".".join(map(str, MIN_PYTHON))
    return UnavailableError(f"Python {version} ({python_exe}) is older than signoff's run guard supports: it needs "
                            f"{floor} or newer (it watches the tests through audit hooks)",
                            f"pass --python {floor} or newer, with dependencies that install there (a project "
                            "whose dependencies exist only for an older Python can run only under a "
                            "command-template runner, which has no guard)")


def _pytest_too_old(installed: list[dict[str, Any]]) -> str | None:
    """The installed pytest's version when it is older than the guard supports."""
    for item in installed:
        if str(item.get("name") or "").lower() == "pytest":
            version = str(item.get("version") or "")
            parts = tuple(int(x) for x in re.findall(r"\d+", version)[:2])
            return version if parts and parts < MIN_PYTEST else None
    return None


def internal_error(output: str) -> str:
    """pytest's INTERNALERROR in one line: the exception and the last frame it names ("" if none)."""
    lines = [ln[len("INTERNALERROR>"):].strip() for ln in output.splitlines() if ln.startswith("INTERNALERROR>")]
    if not lines:
        return ""
    cause = next((ln for ln in reversed(lines) if _EXCEPTION_LINE.match(ln)), lines[-1])
    where = next((ln for ln in reversed(lines) if ln.startswith("File ")), "")
    return f"{cause[:300]}" + (f" ({where[:200]})" if where else "")


_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b.*$")


def _tail_cause(text: str) -> str:
    """The last exception line of a run's output (what stopped it), else its last 600 characters."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    found = next((ln for ln in reversed(lines) if _EXCEPTION_LINE.match(ln)), None)
    return found[:500] if found else text[-600:].strip()
# Canaries that errored or were never collected (a project plugin that runs only its own kind of test class):
# every stage runs again with canaries as methods of a class.
CANARIES_NOT_RUN = re.compile(r"the canary that must \w+( by an assertion)? did not \((error|missing)")
_MISSING_CANARY = re.compile(r"^(guard: )?the canary that must (fail by an assertion|pass) did not \(missing\)$")
_UNFINISHED = re.compile(r"^pytest finished with status None, but the process exited [24]$")


def _only_missing_canaries(findings: list[str], allow_unfinished: bool = False) -> bool:
    """Whether the guard's findings are only what a collection that stopped early explains (its
    canaries never ran); anything else (a forged or missing record, a patched framework) is tampering."""
    return all(_MISSING_CANARY.match(f) or (allow_unfinished and _UNFINISHED.match(f)) for f in findings)


def _collection_errors(tests: list[str], cases: list[Any] | None, observed: dict[str, Any], findings: list[str],
                       plan: guard.Plan) -> str:
    """One line naming why a requested test file (or the class holding a requested test) could not be
    collected (its import error, a TestCase pytest cannot instantiate), when that is all that went
    wrong; "" otherwise. The guard's authenticated record must agree that it failed to collect, and a
    collection error of the canary alone is never enough."""
    if cases is None or not _only_missing_canaries(findings):
        return ""
    files = {t.split("::", 1)[0] for t in tests}

    def collector(node: str) -> bool:
        # A file, a folder above one, a conftest, or a class that holds a requested test.
        if "::" in node:
            return any(t.startswith(node + "::") for t in tests)
        return node in files or any(f.startswith(node.rstrip("/") + "/") for f in files) or \
            node.endswith("conftest.py")

    recorded = {k for k, v in observed.items() if isinstance(v, dict) and v.get("outcome") == "error"
                and collector(k)}
    broken = [c for c in cases if c.outcome == "error" and not guard.is_canary(c.id) and collector(c.id)
              and c.id in recorded]
    if not broken:
        return ""
    return "; ".join(f"{c.id}: {c.message}" for c in broken[:3])


_CANARY_ERRED = re.compile(r"^(guard: )?the canary that must (fail by an assertion|pass) did not \(error: (.+)\)$",
                           re.S)


def _setup_errors_alike(tests: list[str], cases: list[Any] | None, findings: list[str]) -> str:
    """One line naming the error every test ran into, the canaries' and the requested ones' alike, when the
    guard found nothing else (flask's conftest, blind15b: its autouse fixture reads `_pytest.monkeypatch.notset`,
    which pytest 9 removed, so every test errors on setup); "" otherwise. Still no verdict, but the cause, not
    tampering: a harness that stops every test the same way says nothing about the candidate."""
    erred = [_CANARY_ERRED.match(f) for f in findings]
    errors = {m.group(3) for m in erred if m}
    if cases is None or not erred or not all(erred) or len(errors) != 1:
        return ""
    error = errors.pop()
    requested = [c for c in cases if any(c.id == t or c.id.startswith(t + "[") for t in tests)]
    if not requested or any(guard.shown(c) != f"error: {error}" for c in requested):
        return ""
    return f"every test errored alike, the canaries too (what the harness's conftest.py runs for each test): {error}"


def _lacking_at_collection(tests: list[str], cases: list[Any] | None, observed: dict[str, Any],
                           findings: list[str]) -> list[tuple[Case, dict[str, Any]]]:
    """When every requested test whose file (or class) could not be collected was stopped by the
    checkout's missing API (the guard's record names it, `lacks`, raised from the harness's own
    import), each such test as failed there, with what the guard saw; [] otherwise (a collection
    error of any other cause stays `collection_error`)."""
    if cases is None or not _only_missing_canaries(findings):
        return []
    broken = {c.id for c in cases if c.outcome == "error"}
    out: list[tuple[Case, dict[str, Any]]] = []
    for test in tests:
        holders = [k for k in broken if test == k or test.startswith(k.rstrip("/") + ("::" if k.endswith(".py") or
                                                                                    "::" in k else "/"))]
        if not holders:
            continue
        seen = observed.get(holders[0])
        if not isinstance(seen, dict) or seen.get("outcome") != "error":
            return []
        lacks = seen.get("lacks")
        if not isinstance(lacks, str) or not lacks:
            return []
        message = f"{holders[0]} could not be imported: the revision lacks {lacks}"
        exception = str(seen.get("exception") or "ImportError")
        out.append((Case(test, "failed", False, exception, message[:500]),
                    {"outcome": "failed", "assertion": False, "exception": exception, "origin": "harness",
                     "lacks": lacks, "message": message[:500], "collected": False}))
    return out


def _complete(execution: Any, cases: list[Any], record: dict[str, Any], digest: str,
              facts: dict[str, Any] | None = None) -> Run:
    if facts is not None:
        # A guarded run always has a failing canary, so its exit status says nothing about the
        # tests; the guard checked it against the framework's own status instead.
        return Run("complete", "", cases, execution.exit_code, record, digest, facts)
    bad = any(c.outcome in ("failed", "error") for c in cases)
    if bad and execution.exit_code == 0:
        return Run("inconsistent", "the report shows failures but the runner exited 0", cases,
                   execution.exit_code, record, digest, facts)
    if cases and not bad and execution.exit_code not in (0, None):
        return Run("inconsistent", f"the report shows no failure but the runner exited {execution.exit_code}",
                   cases, execution.exit_code, record, digest, facts)
    return Run("complete", "", cases, execution.exit_code, record, digest, facts)


@dataclass
class Policy:
    """What git alone says about the candidate (measured before anything runs)."""

    changes: list[Any]
    descends: bool
    outside: list[str]  # changed paths outside the allowlist
    tamper: list[str]  # the candidate's edits to the repository's own tests (reported, never judged)
    signals: list[dict[str, Any]]

    @property
    def changed(self) -> list[str]:
        return sorted({c.path for c in self.changes})


@dataclass
class Measurements:
    """Everything a verification measured: what stopped it before running (`preflight`), what git
    says (`descends`, `outside`) and each stage's executions. `judge` reads only these."""

    base: str
    candidate: str
    tests: dict[str, list[str]]  # stage -> the test ids it ran
    runs: dict[str, list[Run]]  # stage -> its executions (repeats)
    descends: bool = True
    outside: list[str] = field(default_factory=list)
    preflight: list[dict[str, str]] = field(default_factory=list)  # why nothing (more) could run
    # Tests the harness runs whose code the revision defines (inherited from its package) and the candidate
    # changes or removes (`inherited.changed_by_candidate`): the approved harness inherits the base's.
    tests_changed: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Judgement:
    verdict: str
    reasons: list[dict[str, str]]
    summaries: dict[str, Summary]


def judge(m: Measurements) -> Judgement:
    """What the measurements mean, with no I/O: each stage's summary, then VERIFIED, REJECTED or
    INCONCLUSIVE with its reasons (`verdict.classify`). Policy violations (ancestry, allowlist)
    reject; anything that kept the runs from happening is INCONCLUSIVE."""
    violations: list[dict[str, str]] = []
    if not m.descends:
        violations.append(reason("not_descendant", f"{m.candidate[:12]} does not descend from {m.base[:12]}"))
    if m.outside:
        violations.append(reason("path_not_allowed", ", ".join(m.outside)))
    if m.tests_changed:
        violations.append(reason("test_changed", ", ".join(m.tests_changed)))
    summaries = {s: summarize(m.tests[s], m.runs[s], skips_pass=s == "regression") for s in STAGES}
    summaries["candidate"] = skipped_as_on_base(summaries["base"], summaries["candidate"])
    if m.tests.get(REGRESSION_ON_BASE):
        summaries[REGRESSION_ON_BASE] = summarize(m.tests[REGRESSION_ON_BASE], m.runs.get(REGRESSION_ON_BASE, []),
                                                  skips_pass=True)
    # The candidate being the base itself, its regression run is the base's (no second run was made).
    same = m.candidate == m.base and summaries["regression"].status != "harness_integrity"  # named once, as itself
    on_base = summaries.get(REGRESSION_ON_BASE) or (summaries["regression"] if same else None)
    verdict, reasons = classify(summaries["base"], summaries["candidate"], summaries["regression"], violations,
                                m.preflight, on_base)
    return Judgement(verdict, reasons, summaries)


def verify(req: VerifyRequest, settings: Settings, progress: Progress = silent,
           source: Path | None = None) -> VerifyResult:
    """Run the whole verification and (unless told not to) write signed evidence; report each step to
    `progress`. The harness may be a folder or one test file (`source`: the file it was staged from).

    The steps, in order: freeze the harness, read the policy from git, plan the environment, run
    (export, prepare, execute: `_execute`), judge the measurements (`judge`, pure), write the evidence.
    It is one git session: each repository's config is listed once, and the base revision's files
    are read through one git process."""
    _validate(req)
    runner = Runner.parse(req.runner)
    if req.backend in (None, "bwrap"):
        from signoff.sandbox import bwrap

        bwrap.locate_soon()  # its `bwrap --version` runs beside the steps before the first execution
    with git.session():
        repo = git.open_repo(req.repo)
        base = git.resolve(repo, req.base)
        cand = git.resolve(repo, req.candidate)
        if runner.needs_python:
            testenv.search_pkg_resources_soon(repo, base)  # the plan's `git grep`, beside the freeze and policy
        # Started now, to run beside the staging and the freeze: the reader of the base's files, the
        # base's file listing and the policy's three comparisons.
        git.read_soon(repo)
        git.list_soon(repo, base)
        git.compare_soon(repo, base, cand)
        source = source or req.harness
        places = workspace_places(settings.section("repair").get("workspace"))  # docs/repair.md, Speed
        if req.harness is not None and req.harness.is_file():
            # One test file: frozen with its folder's conftest.py files up to the repository's root.
            staging = make_folder(list(places), "signoff-harness-")
            try:
                folder, rel = pytest_config.stage_test_file(req.harness, repo, base, staging)
                req = dataclasses.replace(req, harness=folder, expect=pytest_config.map_test_id(req.expect, rel),
                                          regression=[pytest_config.map_test_id(t, rel) for t in req.regression])
                return _verify(req, settings, progress, source, runner, repo, base, cand, places)
            finally:
                remove_workspace(staging)
        folder_harness = req.harness if req.harness is not None and req.harness.is_dir() else None
        place = None
        if folder_harness is not None and runner.kind == "pytest":
            place = pytest_config.package_place(folder_harness, repo)
        if folder_harness is not None and place is not None:
            # A test folder its modules import by its package name: laid out at its place (as a file is).
            staging = make_folder(list(places), "signoff-harness-")
            try:
                staged = pytest_config.stage_test_package(folder_harness, place, repo, base, staging)
                req = dataclasses.replace(req, harness=staged,
                                          expect=pytest_config.map_package_test_id(req.expect, place),
                                          regression=[pytest_config.map_package_test_id(t, place)
                                                      for t in req.regression])
                return _verify(req, settings, progress, source, runner, repo, base, cand, places)
            finally:
                remove_workspace(staging)
        return _verify(req, settings, progress, source, runner, repo, base, cand, places)


def _verify(req: VerifyRequest, settings: Settings, progress: Progress, source: Path | None, runner: Runner,
            repo: Path, base: str, cand: str, places: list[Path]) -> VerifyResult:
    bundled = _bundle(req, progress, repo, base, cand) if req.bundle is not None else None
    progress("freezing the harness")
    frozen, preflight = _freeze(req, harness_store(settings))
    policy = _policy(repo, base, cand, req.allow)
    measured = Measurements(base, cand, {"base": [req.expect], "candidate": [req.expect],
                                         "regression": list(req.regression)},
                            {s: [] for s in STAGES}, policy.descends, policy.outside, preflight)
    executed = _execute(req, settings, progress, repo, runner, frozen, measured, places)
    compiled = extensions.compiled_changes(policy.changed) if runner.needs_python else []
    unbuilt = compiled if compiled and not req.build_extensions and extensions.declared(repo, base) else []
    if unbuilt:
        executed.notes.append(f"the candidate changes compiled sources ({', '.join(compiled[:3])}) that were not "
                              "built: the runs judged the code without them; pass --build-extensions to build each "
                              "revision's extension modules in the sandbox")
    measured.tests_changed = inherited.changed_by_candidate(
        repo, base, cand, inherited.defined_in_revision([r for runs in measured.runs.values() for r in runs]))
    judged = judge(measured)
    judged = dataclasses.replace(judged, reasons=extensions.unbuilt_fix(judged.reasons, unbuilt))
    stage_rev = {"base": base, "candidate": cand, "regression": cand, REGRESSION_ON_BASE: base}
    stages = {s: StageResult(s, stage_rev[s], measured.tests[s], executed.commands.get(s, []), measured.runs[s],
                             judged.summaries[s]) for s in judged.summaries}
    ident = identity(base, cand, frozen.digest, runner.digest(), canonical_digest(executed.isolation),
                     canonical_digest(executed.environment), executed.commands, run_env.check(req.env))
    fp = fingerprint(ident)
    predicate: dict[str, Any] = {
        "kind": "measured",
        # A reproduction runs the base stage only; its verdict is INCONCLUSIVE by construction and
        # only the base stage matters. A verification runs all three.
        "purpose": "reproduction" if set(req.stages) == {"base"} else "verification",
        "verdict": judged.verdict,
        "reasons": judged.reasons,
        "fingerprint": fp,
        "identity": ident,
        "runner": runner.spec(),
        "isolation": executed.isolation,
        "environment": executed.environment,
        "tests": {"expected": req.expect, "regression": list(req.regression)},
        "policy": {"allow": list(req.allow), "descends": policy.descends, "disallowed": policy.outside,
                   "changed": policy.changed, "tamper": policy.tamper, "signals": policy.signals,
                   "tests_changed": measured.tests_changed},
        "preflight": measured.preflight,
        "stages": {s: stages[s].evidence_json() for s in stages},
        "settings": {"repeat": req.repeat, "executions": req.executions, "timeout": req.timeout,
                     "pythonpath": list(req.pythonpath),
                     "requirements": req.requirements, "approved_digest": req.approved_digest,
                     "project_deps": req.project_deps, "extras": list(req.extras), "pytest": req.pytest,
                     "lock": req.lock, "workdir": executed.workdir,
                     "python": req.python, "allow_source_builds": req.allow_source_builds,
                     **({"env": run_env.check(req.env)} if req.env else {}),
                     **({"build_extensions": True} if req.build_extensions else {})},
        "notes": executed.notes,
        "inputs": {"repository": str(repo), "harness": str(frozen.path),
                   "harness_source": str(source) if source else None},
    }
    if bundled is not None:
        predicate["bundle"] = bundled
    if req.redact_paths:
        predicate = redact(predicate)
        predicate["settings"]["requirements"] = REDACTED if req.requirements else None
    evidence_path = _write_evidence(req, settings, progress, predicate, cand) if req.write_evidence else None
    metrics.count("signoff_verdicts_total", workflow="repair", verdict=judged.verdict.lower())
    return VerifyResult(judged.verdict, judged.reasons, stages, fp, evidence_path, base, cand, frozen.digest,
                        policy.changed, policy.tamper, predicate, policy.signals, executed.notes)


def _freeze(req: VerifyRequest, store: Path) -> tuple[FrozenHarness, list[dict[str, str]]]:
    """Step 1, before anything else runs: the frozen harness, and why nothing may run against it."""
    preflight: list[dict[str, str]] = []
    if req.frozen_digest:
        try:
            frozen: FrozenHarness = load(store, req.frozen_digest)
        except IntegrityError as exc:
            # The stored copy no longer matches the approved digest: nothing may run against it.
            frozen = FrozenHarness(req.frozen_digest, store / req.frozen_digest, ())
            preflight.append(reason("harness_changed", exc.message))
    else:
        frozen = freeze(req.harness, store)  # type: ignore[arg-type]
    if not preflight:
        check_test_id(req.expect, frozen.files)
        for t in req.regression:
            check_test_id(t, frozen.files)
    if not preflight and req.approved_digest is not None and req.approved_digest != frozen.digest:
        preflight.append(reason("harness_changed",
                                f"approved {req.approved_digest[:12]}, now {frozen.digest[:12]}"))
    return frozen, preflight


def _policy(repo: Any, base: str, cand: str, allow: list[str]) -> Policy:
    """Step 2, from git alone: ancestry, the allowlist, edits to the repository's tests, the signal."""
    changes = git.changed_paths(repo, base, cand)
    return Policy(changes, git.is_ancestor(repo, base, cand), paths.disallowed(changes, allow),
                  paths.test_edits(changes), scan_signals(repo, base, cand, changes))


@dataclass
class Executed:
    """What running recorded besides the runs: the commands, environment, isolation and notes."""

    commands: dict[str, list[str]]
    environment: dict[str, Any]
    isolation: dict[str, Any]
    notes: list[str]
    workdir: str  # the one the runs used ("auto" resolved)


def _execute(req: VerifyRequest, settings: Settings, progress: Progress, repo: Any, runner: Runner,
             frozen: FrozenHarness, m: Measurements, places: list[Path]) -> Executed:
    """Steps 3-5 (I/O): plan the environment from the base revision, export the revisions, prepare
    the environment and run every stage's executions in the sandbox. The runs and anything that
    stopped them are written into `m`; nothing runs when the preflight or the policy already decides."""
    from signoff import sandbox

    base, cand = m.base, m.candidate
    preflight, runs = m.preflight, m.runs
    workdir = "empty" if req.workdir == "auto" else req.workdir
    violated = not m.descends or bool(m.outside)
    # What the test environment gets, from the base revision's declarations (bad usage stops here,
    # before anything is exported or installed).
    env_plan = testenv.plan(repo, base, requirement_files(req), req.project_deps, req.extras, req.pytest,
                            req.lock, python=_minor(req.python)) if runner.needs_python else testenv.Plan()
    python_exe = sandbox.find_python(req.python) if req.python and runner.needs_python else None
    notes: list[str] = [f"not installed: {line} (the repository's own code under test, the project itself or a "
                        "project in a folder of it; the tests import the checkout's)" for line in env_plan.dropped]
    notes += [f"not installed: {line} (the project's pytest; --pytest {req.pytest} replaces it)"
              for line in env_plan.replaced]
    stage_rev = {"base": base, "candidate": cand, "regression": cand, REGRESSION_ON_BASE: base}
    left_out: list[str] = []  # test dependencies without a wheel, left out of the environment
    pip_error: Any = None  # pip's error that made the first of them known
    commands: dict[str, list[str]] = {s: [] for s in STAGES}
    environment: dict[str, Any] = {"kind": "none"}
    isolation: dict[str, Any] = {"backend": None, "note": "nothing was executed"}
    while_running = _Beside(signing=req.write_evidence)  # the host's work while a sandbox runs

    where = Workspace(places)  # the fastest safe place first (repair/workspace.py)
    try:
        trees: dict[str, Path] = {}
        if not preflight and not violated:
            if runner.kind == "pytest" and req.repeat == 1 and workdir == "empty" and cand != base \
                    and _shares_interpreter(req.executions):
                # The one shared execution (in this thread) gets its keeper and launcher started now, waiting
                # in their cgroups while the revisions are exported (nothing of the sandbox runs before it).
                sandbox.prepare_run(_limits(runner), backend=req.backend)
            progress("exporting the revisions")
            while True:
                try:
                    trees[base] = git.export(repo, base, where.path / "base")
                    if cand != base and set(req.stages) != {"base"}:
                        trees[cand] = git.export(repo, cand, where.path / "candidate", like=trees[base])
                except git.ExportError as exc:
                    if where.move_on(exc):  # a memory filesystem filled up: export again in the next place
                        trees.clear()
                        continue
                    preflight.append(reason("export_failed", str(exc)))
                break
            for tree in trees.values():
                _drop_bytecode(tree)
            if trees and runner.needs_python and (version_files := testenv.version_files(repo, base)):
                release = testenv.release_of(repo, base)
                for rev, tree in trees.items():
                    notes += [f"version file {rel} written for the {'base' if rev == base else 'candidate'} "
                              f"({release}): the base's pyproject.toml has it generated at install, not committed"
                              for rel in testenv.write_version_files(tree, version_files, release)]
            if trees and runner.needs_python and env_plan.project:
                version, entries = testenv.declared_version(repo, base), testenv.entry_points(repo, base)
                for rev, tree in trees.items():
                    if written := testenv.write_metadata(tree, env_plan.project, version, entries):
                        groups = f", the base's entry points of {', '.join(entries)}" if entries else ""
                        notes.append(f"package metadata {written} written for the "
                                     f"{'base' if rev == base else 'candidate'} (name and version{groups}; never "
                                     "pytest plugins): installing the project would, and its code may read it")
            if trees and runner.needs_python and (scripts := testenv.console_scripts(repo, base)):
                for rev, tree in trees.items():
                    if written_scripts := testenv.write_scripts(tree, scripts):
                        notes.append(f"commands {', '.join(written_scripts)} written for the "
                                     f"{'base' if rev == base else 'candidate'} ({testenv.SCRIPTS_FOLDER}/, last on "
                                     "the PATH): the base declares them and installing the project would")
        if not preflight and not violated:
            # The harness is mounted from a copy that is re-digested first: the store may live where
            # the sandbox's unprivileged uid cannot reach, and the copy must still be the approved bytes.
            mounted = where.path / "harness"
            shutil.copytree(frozen.path, mounted)
            for dirpath, _d, _f in os.walk(mounted):
                Path(dirpath).chmod(0o755)
            if harness_digest(mounted) != frozen.digest:
                preflight.append(reason("harness_changed", "the frozen copy did not match its digest"))
            # The project's own pytest plugins (pytest11 entry points), which installing it registers: the
            # guard loads them from each checkout after its start; a `-p NAME` of them leaves the addopts.
            own_plugins = testenv.pytest_plugins(repo, base) if runner.kind == "pytest" else {}
            if runner.kind == "pytest":
                own_plugins |= pytest_config.checkout_plugins(mounted, repo, base, testenv.package_folders(repo, base))
                # (`-p anyio` names anyio's pytest11 entry point, anyio.pytest_plugin, already above: not the package)
                for name, module in pytest_config.addopts_plugins(mounted, repo, base,
                                                                  testenv.package_folders(repo, base)).items():
                    if name not in own_plugins and name not in own_plugins.values():
                        own_plugins[name] = module
            notes += [f"the project's own pytest plugin {name} ({module}) loaded from each checkout after the "
                      "guard's start, as installing the project registers it; barred from the hooks that run, "
                      "judge or report an outcome" for name, module in own_plugins.items()]
            config = pytest_config.effective(mounted, repo, base, set(own_plugins) | set(own_plugins.values())) \
                if runner.kind == "pytest" else None
            runner_dir = runner.write_files(where.path / "runner", config.text if config else None)
            if runner.kind == "pytest":
                notes += [f"the base's {name} laid at the harness's root, pytest's rootdir, as the project's root "
                          "holds it, for plugins that read their own sections there (not part of the approved "
                          "harness; the run's pytest configuration is the one above)"
                          for name in pytest_config.lay_root_configuration(mounted, repo, base)]
            pythonpath = list(dict.fromkeys([*req.pythonpath, *(config.pythonpath if config else ())]))
            if not pythonpath and runner.needs_python:
                # Where an installed project's packages would come from (the src layout), from the base.
                pythonpath = testenv.package_folders(repo, base)
                notes += [f"import folder {p}/ added: the base revision keeps its packages there (pass "
                          "--pythonpath to choose another)" for p in pythonpath]
            if runner.needs_python:
                # The repository's other projects the requirements install from their folders: each revision's own.
                neighbours = [p for p in env_plan.import_folders if p not in pythonpath]
                pythonpath += neighbours
                notes += [f"import folder {p}/ added: the requirements install that project of the repository from "
                          "its folder; it is taken from each revision, as the checkout is" for p in neighbours]
            python: str | None = None
            python_version = ""
            env_mounts: list[Any] = []
            if not preflight:
                if runner.needs_python:
                    environment = {"kind": "python", "plan": env_plan.as_json(),
                                   "allow_source_builds": req.allow_source_builds, "python_requested": req.python,
                                   "pytest_config": config.as_json() if config else None}
                    try:
                        refused = guard_python_refused(python_exe) if runner.kind == "pytest" else None
                        if refused is not None:  # before pip spends minutes on an environment no run can use
                            raise refused
                        progress("preparing the environment")
                        penv, left_out, pip_error = _prepare_without_wheel_less(env_plan, where.path, settings, req,
                                                                                python_exe, mounted)
                        if left_out:
                            environment |= {"plan": env_plan.as_json(), "left_out": left_out}
                            notes += [f"not installed: {line} (no wheel for it here: published as source only or "
                                      "not at all, or a repository or archive to build; the run goes without it: "
                                      "--allow-source-builds builds it)" for line in left_out]
                        python, env_mounts, python_version = penv.python, list(penv.mounts), penv.python_version
                        runner.write_bytecode(runner_dir, penv.python_version, env_cache(settings) / "bytecode")
                        environment |= {"digest": penv.digest, "python_version": penv.python_version,
                                        "requirements": penv.requirements, "installed": penv.installed}
                        too_old = _pytest_too_old(penv.installed) if runner.kind == "pytest" else None
                        if too_old:
                            preflight.append(reason(
                                "environment_unprepared", f"pytest {too_old} was installed; signoff's run guard "
                                f"needs pytest {'.'.join(map(str, MIN_PYTEST))} or newer",
                                f"pin one it supports with --pytest 'pytest>={'.'.join(map(str, MIN_PYTEST))},<8' "
                                "(tests that need an older pytest can run only under a command-template runner, "
                                "which has no guard)"))
                        mismatched = lockfile.check_hashes(env_plan.pins, penv.installed)
                        if mismatched:
                            preflight.append(reason(
                                "environment_unprepared", "installed packages differ from the locked ones: "
                                + "; ".join(mismatched[:3]), "regenerate the lock file, or check which package "
                                "index served these archives (the evidence lists what was installed)"))
                        site = penv.host_path / "lib" / f"python{penv.python_version}" / "site-packages"
                        while_running.add(functools.partial(_collision_notes, notes, len(notes), trees, base,
                                                            pythonpath, site))
                    except UsageError:
                        raise
                    except sandbox.PipError as exc:
                        # The whole log, without this run's temporary folder (the evidence stays the
                        # same for the same inputs, and names no host path beyond pip's own).
                        environment |= {"error": exc.message,
                                        "log": exc.log.replace(str(where.path), "<workspace>")[-20000:]}
                        preflight.append(reason("environment_unprepared", exc.message,
                                                _wheel_fix(exc, req.allow_source_builds)))
                    except SignoffError as exc:
                        # Any failure of the preparation step (pip, the interpreter, the cache) means
                        # the environment is not there; an unavailable sandbox shows at execution.
                        preflight.append(reason("environment_unprepared", exc.message, exc.fix or ""))
                elif runner.needs_packages:
                    environment, env_mounts = _node_packages(repo, base, settings, progress, preflight)
                else:
                    environment = _node_environment()
            if not preflight and req.build_extensions and runner.needs_python:
                progress("building the extension modules")
                environment["extensions"] = _build_extensions(req, settings, repo, base, cand, trees, python_exe,
                                                              preflight)
            if not preflight:
                canaries_in_class = [False]  # set when plain canaries could not run (below)

                def plan_for(tests: list[str]) -> guard.Plan | None:
                    return guard.plan_pytest(mounted, tests, in_class=True) if canaries_in_class[0] \
                        else runner.plan(mounted, tests)

                def jobs_for(groups: list[tuple[tuple[str, ...], list[str]]]) -> list[tuple[Any, ...]]:
                    jobs = []
                    for group, tests in groups:
                        # The identity records the command without this run's canary, so that the
                        # fingerprint stays the same for the same inputs.
                        for stage in group:
                            commands[stage] = _in_workdir(workdir, runner.command(
                                tests, frozen.files, python, pythonpath)[0])
                        mounts = [sandbox.Mount(trees[stage_rev[group[0]]], SRC_MOUNT),
                                  sandbox.Mount(mounted, HARNESS_MOUNT), sandbox.Mount(runner_dir, RUNNER_MOUNT),
                                  *env_mounts]
                        for _ in range(req.repeat):
                            # Fresh canaries and a fresh key for every execution, written before any runs.
                            plan = plan_for(tests)
                            argv, collect = runner.command(tests, frozen.files, python, pythonpath, plan)
                            argv = _in_workdir(workdir, argv)
                            env = runner.env(python, pythonpath, plugins=own_plugins, variables=req.env) | (
                                runner.guard_env(plan, tests) if plan else {})
                            jobs.append((group, argv, collect, mounts, env, tests, plan))
                    return jobs

                def execute(job: tuple[Any, ...]) -> tuple[tuple[str, ...], Run]:
                    group, argv, collect, mounts, env, tests, plan = job
                    try:
                        ex = sandbox.run(argv, mounts, limits=_limits(runner), env=env, timeout=req.timeout,
                                         workdir=WORKDIR, network=False, backend=req.backend, collect=collect,
                                         meanwhile=while_running)
                    except sandbox.SandboxUnavailable as exc:
                        return group, Run("sandbox_unavailable", exc.message)
                    return group, _to_run(ex, runner, tests, req.timeout, plan, mounted,
                                          config.text if config else "")

                def execute_all(jobs: list[tuple[Any, ...]], done: int,
                                total: int) -> list[tuple[tuple[str, ...], Run]]:
                    # One more worker than cores: a pytest run spends part of its time starting up and
                    # waiting on I/O, so the next execution should not wait for a whole round.
                    # (imported here: one shared execution, the usual case under load, needs no pool)
                    from concurrent.futures import ThreadPoolExecutor

                    workers = max(1, min(len(jobs), (os.cpu_count() or 1) + 1))
                    out = []
                    with ThreadPoolExecutor(max_workers=workers) as pool:
                        for result in pool.map(execute, jobs):
                            out.append(result)
                            progress("executions", done=done + len(out), total=total)
                    return out

                def execute_forked(groups: list[tuple[tuple[str, ...], list[str]]],
                                   done: int) -> list[tuple[tuple[str, ...], Run]] | None:
                    """Both executions from one interpreter in one sandbox (see repair/forked.py), or
                    None when the sandbox cannot run them so."""
                    (base_group, base_tests), (cand_group, cand_tests) = groups
                    assert python is not None
                    for group, tests in groups:
                        for stage in group:
                            commands[stage] = runner.command(tests, frozen.files, python, pythonpath)[0]
                    mounts = [sandbox.Mount(trees[cand], SRC_MOUNT), sandbox.Mount(trees[base], forked.BASE_MOUNT),
                              sandbox.Mount(mounted, HARNESS_MOUNT), sandbox.Mount(runner_dir, RUNNER_MOUNT),
                              *env_mounts]
                    # Fresh canaries and a fresh key for each execution, written before either runs.
                    base_plan, cand_plan = plan_for(base_tests), plan_for(cand_tests)
                    assert base_plan is not None and cand_plan is not None
                    job = forked.command(runner, base_tests, cand_tests, frozen.files, python, pythonpath,
                                         base_plan, cand_plan, req.timeout, own_plugins, req.env)
                    progress("executions", done=done, total=done + 2)
                    try:
                        ex = sandbox.run(job.argv, mounts, limits=_limits(runner), env=job.env, timeout=job.timeout,
                                         workdir=WORKDIR, network=False, backend=req.backend, collect=job.collect,
                                         meanwhile=while_running)
                        base_ex, cand_ex = forked.split(ex, job.base_command, req.timeout)
                        # the base's execution ended first (its result is the sandbox's first line)
                        progress("executions", done=done + 1, total=done + 2)
                    except sandbox.SandboxUnavailable as exc:
                        return [(base_group, Run("sandbox_unavailable", exc.message)),
                                (cand_group, Run("sandbox_unavailable", exc.message))]
                    except forked.Unsupported:
                        return None
                    cfg = config.text if config else ""
                    out = [(base_group, _to_run(base_ex, runner, base_tests, req.timeout, base_plan, mounted, cfg)),
                           (cand_group, _to_run(cand_ex, runner, cand_tests, req.timeout, cand_plan, mounted, cfg))]
                    progress("executions", done=done + 2, total=done + 2)
                    return out

                def forkable(groups: list[tuple[tuple[str, ...], list[str]]]) -> bool:
                    # pidfd_open (Python 3.9) bounds the base's time from inside the sandbox.
                    return (runner.kind == "pytest" and req.repeat == 1 and workdir == "empty" and cand != base
                            and len(groups) == 2 and groups[0][0] == ("base",) and python is not None
                            and tuple(int(x) for x in python_version.split(".")[:2]) >= (3, 9)
                            and _shares_interpreter(req.executions))

                def run_all(done: int) -> list[tuple[tuple[str, ...], Run]]:
                    groups = execution_groups(m.tests, req.stages)
                    results = execute_forked(groups, done) if forkable(groups) else None
                    if results is None:
                        jobs = jobs_for(groups)
                        progress("executions", done=done, total=done + len(jobs))
                        results = execute_all(jobs, done, done + len(jobs))
                    done += len(results)
                    # pytest refuses a whole command line when one test id names nothing (usage error,
                    # nothing run): a shared execution would then hide the other stage's tests too, so
                    # such stages run apart, exactly as they would alone.
                    refused = {stage for group, run in results if len(group) > 1 and runner.kind == "pytest" and
                               run.exit_code == guard.PYTEST_USAGE_ERROR and not run.cases for stage in group}
                    if refused:
                        results = [(g, r) for g, r in results if not set(g) & refused]
                        again = jobs_for([((s,), m.tests[s]) for s in STAGES if s in refused])
                        results += execute_all(again, done, done + len(again))
                    return results

                results = run_all(0)
                asked = next((line for _g, run in results if (line := project_files_line(run))), None)
                # A run that stopped before writing any report may have read its configuration from the
                # working directory and found none (alembic's conftest starts sqlalchemy's plugin, which reads
                # `[db]` from ./setup.cfg and fails without a word about the file): tried from the root too.
                stopped = next((run.detail for _g, run in results if run.status == "no_report"), None)
                if req.workdir == "auto" and (asked or stopped):
                    # Maintainers run pytest from the project's root and these tests read or write
                    # files relative to it (scrapy's conftest, cookiecutter's data): every stage runs
                    # again from a writable copy of the checkout, as `--workdir project` would.
                    workdir = "project"
                    why = f"the tests read or write files relative to the project's root ({asked[:200]})" if asked \
                        else f"a run stopped before writing any report ({str(stopped)[:200]})"
                    notes.append(f"{why}: every execution ran again from a writable copy of the checkout (--workdir "
                                 "project; --workdir empty keeps the first runs)")
                    results = run_all(len(results))
                erred = next((run.detail for _g, run in results if run.status == "harness_integrity"
                              and CANARIES_NOT_RUN.search(run.detail)), None)
                if erred and runner.kind == "pytest" and guard.canary_class_of(m.tests["base"] or m.tests["candidate"]):
                    # A project plugin that runs only its own kind of test class (SQLAlchemy's testing plugin, which
                    # alembic's conftest starts) cannot run plain functions: the canaries become methods of a class
                    # with the bases of the expected test's class, as strict as before, and every stage runs again.
                    canaries_in_class[0] = True
                    notes.append(f"the canaries could not run as plain functions ({erred[:200]}): every execution ran "
                                 "again with canaries that are methods of a class with the bases of the first test's "
                                 "class")
                    results = run_all(len(results))
                notes += refused_plugin_notes([run for _g, run in results])
                added = None
                for group, run in results:
                    unbuilt = testenv.unbuilt_module(run.detail, trees[stage_rev[group[0]]], pythonpath) \
                        if run.status == "collection_error" else ""
                    if unbuilt:
                        run.detail = f"{run.detail} ({unbuilt})"
                    elif run.status == "collection_error" and (grouped := testenv.declared_in_group(
                            run.detail, repo, base, list(req.extras))):
                        run.detail = f"{run.detail} ({grouped})"
                    elif run.status == "collection_error" and (warned := testenv.warning_made_error(
                            run.detail, environment.get("installed") or [])):
                        run.detail = f"{run.detail} ({warned})"
                    if group == ("base",) and cand != base and _key_errors(run):
                        added = _code_added(repo, base, cand) if added is None else added
                        _keys_the_base_lacks(run, added)
                    for stage in group:
                        runs[stage].append(run)
                on_base = _regression_on_base(m, cand != base and "regression" in req.stages)
                if on_base:
                    # One more execution (as many as --repeat), with the same harness, guard and fresh canaries.
                    m.tests[REGRESSION_ON_BASE] = on_base
                    again = jobs_for([((REGRESSION_ON_BASE,), on_base)])
                    runs[REGRESSION_ON_BASE] = [run for _g, run in execute_all(again, len(results),
                                                                                len(results) + len(again))]
                ran = [r for rs in runs.values() for r in rs]
                needed = _left_out_needed(left_out, ran)
                lacking = f"the tests import {needed}" if needed else _left_out_option(left_out, ran)
                if lacking and pip_error is not None:
                    # The tests need what was left out: pip's own error is the cause, as without leaving out.
                    preflight.append(reason("environment_unprepared", f"{pip_error.message} ({lacking})",
                                            _wheel_fix(pip_error, req.allow_source_builds)))
                unavailable = [r for rs in runs.values() for r in rs if r.status == "sandbox_unavailable"]
                if unavailable:
                    preflight.append(reason("sandbox_unavailable", unavailable[0].detail))
                profiles = [r.record["isolation"] for rs in runs.values() for r in rs
                            if r.record is not None and isinstance(r.record.get("isolation"), dict)]
                if profiles:
                    isolation = isolation_profile(profiles[0])
        while_running.finish()
    finally:
        _remove_beside(where.path)
    return Executed(commands, environment, isolation, notes, workdir)


def _build_extensions(req: VerifyRequest, settings: Settings, repo: Path, base: str, cand: str,
                      trees: dict[str, Path], python_exe: str | None,
                      preflight: list[dict[str, str]]) -> dict[str, Any]:
    """Each revision's extension modules, built in the sandbox into its export (repair/extensions.py),
    with a build environment of what the base's [build-system] requires, on the tests' interpreter. A
    revision that declares none, or a build that fails, is INCONCLUSIVE `environment_unprepared`, its
    cause in one line: the runs would judge the pure-Python code the person asked not to judge alone."""
    from signoff import sandbox

    declared = extensions.declared(repo, base)
    record: dict[str, Any] = {"declared_by": declared}
    if declared is None:
        other = extensions.other_backend(repo, base)
        preflight.append(reason(
            "environment_unprepared", "--build-extensions: the base revision declares no extension modules signoff "
            "builds (setup.py ext_modules, [tool.setuptools] ext-modules)" + (f"; its build backend {other} builds "
                                                                             "out of tree" if other else ""),
            "leave out --build-extensions" + (" (only setuptools extensions are built)" if other else "")))
        return record
    record["requires"] = extensions.build_requires(repo, base)
    try:
        builder = sandbox.prepare_python_env(record["requires"], env_cache(settings), base_python=python_exe,
                                             label="the base revision's [build-system] requires")
    except sandbox.PipError as exc:
        preflight.append(reason("environment_unprepared", f"the build environment: {exc.message}",
                                _wheel_fix(exc, False)))
        return record
    named = {"base": trees[base], **({"candidate": trees[cand]} if cand != base and cand in trees else {})}
    record["builds"], failed = extensions.build(named, builder.python, list(builder.mounts), req.env, req.timeout,
                                                req.backend)
    if failed is not None:
        preflight.append(reason("environment_unprepared", *failed))
    return record


def _minor(version: str | None) -> tuple[int, int] | None:
    """(3, 8) of `--python 3.8` or `3.8.10`; None for none (the running interpreter) or another spelling,
    which `sandbox.find_python` refuses with its own error."""
    m = re.fullmatch(r"\s*(\d+)\.(\d+)(?:\.\d+)?\s*", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


class _Beside:
    """What the host does while a sandbox runs (`sandbox.run(meanwhile=...)`) instead of before it:
    importing the signing stack, and jobs that only add notes. Each job runs once, beside the first
    sandbox that runs (runs apart call this from several threads); `finish` runs those left (no
    sandbox ran) or failed there (again, so that an error shows as it would have before)."""

    def __init__(self, signing: bool) -> None:
        self.signing = signing
        self.jobs: list[Callable[[], None]] = []
        self.lock = threading.Lock()

    def add(self, job: Callable[[], None]) -> None:
        with self.lock:
            self.jobs.append(job)

    def __call__(self) -> None:
        if self.signing:
            _signing_stack()
        with self.lock:
            jobs, self.jobs = self.jobs, []
        failed = []
        for job in jobs:
            try:
                job()
            except Exception:  # run again by finish(), where its error is raised as before
                failed.append(job)
        with self.lock:
            self.jobs[:0] = failed

    def finish(self) -> None:
        with self.lock:
            jobs, self.jobs = self.jobs, []
        for job in jobs:
            job()


def _collision_notes(notes: list[str], at: int, trees: dict[str, Path], base: str, pythonpath: list[str],
                     site: Path) -> None:
    """Import names a checkout and an installed distribution both provide, as notes at `at` (where
    the environment's other notes are): read beside the sandbox's run (10-20 ms on a real project)."""
    installed = testenv.installed_modules(site)
    found = []
    for rev, tree in trees.items():
        for c in testenv.collisions(tree, pythonpath, site, installed):
            which = "base" if rev == base else "candidate"
            found.append(f"import-name collision: the {which} checkout's {c['checkout']} and the installed "
                         f"{c['installed']} both provide `{c['module']}`; the tests import the checkout's (it "
                         "comes first on the path)")
    notes[at:at] = found


def _signing_stack() -> None:
    """Done while the sandbox runs (on the other core): import what signing the evidence needs
    after it (cryptography's Ed25519, about 8 ms), instead of at the end of the verification."""
    from signoff.trust.keys import load_cryptography

    load_cryptography()


# The guard's line for an installed pytest plugin it left out (signoff_guard._lenient_entry_points).
_REFUSED_PLUGIN_LINE = re.compile(r"^signoff guard: the installed pytest plugin (\S+) is left out of this run",
                                  re.MULTILINE)


def refused_plugin_notes(runs: list[Run]) -> list[str]:
    """A note per installed pytest plugin the runs' pytest refused and the guard left out (pytest-flake8 of 2021
    under pytest 9), from the line the guard wrote on each execution's stderr, which the evidence keeps."""
    names = sorted({m.group(1) for run in runs
                    for m in _REFUSED_PLUGIN_LINE.finditer(str((run.record or {}).get("stderr") or ""))})
    return [f"the installed pytest plugin {name} was left out of the runs: their pytest refuses it (its hooks take "
            "arguments this pytest no longer has); each execution's stderr says so" for name in names]


def _regression_on_base(m: Measurements, applies: bool) -> list[str]:
    """The regression ids the candidate failed, which the base revision runs too; none when it passed them."""
    if not applies or not m.tests["regression"]:
        return []
    summary = summarize(m.tests["regression"], m.runs["regression"], skips_pass=True)
    if summary.outcome != "failed":
        return []
    return [t for t, o in summary.per_test.items() if o == "failed"]


def _prepare_without_wheel_less(plan: testenv.Plan, workspace: Path, settings: Settings, req: VerifyRequest,
                                python_exe: str | None, harness: Path) -> tuple[Any, list[str], Any]:
    """(the test environment, the lines left out, pip's first error). Without source builds allowed, a direct
    test dependency pip finds no wheel for (httpx's docs tool, Pygments' wcag-contrast-ratio) is left out of
    the plan and the rest installed, as many as the plan holds (ansible's 2019 units.txt names five published as
    source only; each pass leaves one line out, so the plan's length bounds it); when the tests then import one,
    pip's error is the reason after all (_left_out_needed). What was left out is remembered for the plan
    (wheel_less), so the next verification of it pays no failing pip run again. The plan is edited in place (the
    evidence records the lines installed)."""
    from signoff import sandbox

    left_out: list[str] = []
    first: Any = None
    imported: set[str] | None = None  # read only when pip fails (10-16 ms of parsing on a real project)
    memo = wheel_less.memo_path(env_cache(settings), plan.lines, plan.constraints, python_exe)
    learnt = None if req.allow_source_builds else wheel_less.recall(memo)
    if learnt is not None and set(learnt.left_out) <= set(plan.lines):
        imported = _imported_by(harness, [req.expect, *req.regression])
        names = [testenv.requirement_name(line) or "" for line in learnt.left_out]
        if not any(testenv.may_provide(name, module) for name in names for module in imported):
            # This harness imports none of them either: left out at once, as the pip runs would.
            plan.lines = [line for line in plan.lines if line not in learnt.left_out]
            left_out = list(learnt.left_out)
            first = sandbox.PipError(learnt.message, learnt.fix, learnt.log) if left_out else None
            if learnt.final is not None:
                # pip failed for good on this plan before, the same lines left out: it would say the same again.
                raise sandbox.PipError(str(learnt.final["message"]), learnt.final.get("fix"),
                                       "(recalled: pip failed so for this plan and interpreter before; it was not run "
                                       f"again)\n{learnt.final.get('log') or ''}")
    while True:
        reqs = write_requirements(plan, workspace)
        try:
            env = sandbox.prepare_python_env(reqs, env_cache(settings), allow_builds=req.allow_source_builds,
                                             base_python=python_exe, label=", ".join(plan.sources) or None)
            if left_out and (learnt is None or left_out != learnt.left_out):
                wheel_less.remember(memo, wheel_less.Learnt(left_out, first.message, first.fix, first.log))
            return env, left_out, first
        except sandbox.PipError as exc:
            line = None if req.allow_source_builds else testenv.wheel_less_line(exc.message, plan)
            name = testenv.requirement_name(line or "") or ""
            if line is not None and imported is None:
                imported = _imported_by(harness, [req.expect, *req.regression])
            if line is None and not req.allow_source_builds and wheel_less.decided(exc.message, exc.log):
                # Nothing to leave out, whatever the harness imports: remembered with what was left out before it.
                wheel_less.remember(memo, wheel_less.Learnt(
                    left_out, first.message if first else exc.message, first.fix if first else exc.fix,
                    first.log if first else exc.log, {"message": exc.message, "fix": exc.fix, "log": exc.log}))
            if line is None or any(testenv.may_provide(name, module) for module in imported or ()):
                raise  # none to leave out, or the harness itself imports it: pip's error is the cause
            first = first or exc
            plan.lines.remove(line)
            left_out.append(line)


def _imported_by(harness: Path, tests: list[str]) -> set[str]:
    """The top-level modules the run of `tests` imports from outside the harness (harness_imports)."""
    from signoff.repair.harness_imports import imported_by

    return set(imported_by(harness, tests))


def _left_out_needed(left_out: list[str], runs: list[Run]) -> str | None:
    """A module a run could not import that is one of the packages left out for want of a wheel (by its
    name: `wcag_contrast_ratio` is `wcag-contrast-ratio`, `odf` is odfpy's; testenv.may_provide), or None."""
    names = [testenv.requirement_name(line) or "" for line in left_out]
    for run in runs:
        texts = [run.detail, *(c.message for c in run.cases)]
        for module in re.findall(r"No module named '([\w.]+)'", "\n".join(t for t in texts if t)):
            top = str(module).split(".", 1)[0]
            if any(testenv.may_provide(name, top) for name in names):
                return top
    return None


def _left_out_option(left_out: list[str], runs: list[Run]) -> str | None:
    """Why pytest could not start, when the project's configuration passes an option no installed plugin has and a
    pytest plugin was left out for want of a wheel (python-semantic-release's addopts say `--diff-symbols`, of
    pytest-clarity, published as source only), or None."""
    plugins = [line.strip() for line in left_out if "pytest" in testenv.normalise(testenv.requirement_name(line) or "")]
    for run in runs if plugins else []:
        option = re.search(r"unrecognized arguments: (-[-\w]+)", run.detail or "")
        if option:
            return (f"pytest could not start: the pytest configuration passes {option.group(1)}, an option of none of "
                    f"the installed plugins; left out for want of a wheel: {', '.join(plugins)}")
    return None


def _wheel_fix(exc: SignoffError, builds_allowed: bool) -> str:
    """pip's fix, naming the option to pass when what pip could not find may exist only as source
    (parso's docopt, black's toml 0.9.4: no wheel at all, or none for this Python)."""
    missing = re.search(r"No matching distribution found for (\S+)", exc.message)
    other_python = re.search(r"No matching distribution found for (\S+) \(release \S+ requires Python ([^)]+)\)",
                             exc.message)
    if other_python:  # no build makes it installable here (aiohttp's requirements compiled under Python 3.10)
        return (f"{other_python.group(1)} is pinned to a release for another Python ({other_python.group(2)}): pass "
                "--python with a version it allows (the file may say which Python compiled it), or pin a release "
                "for this one")
    # A conflict where every release pip tried depends on one package that has no wheel (anyio's test
    # group: blockbuster depends on forbiddenfruit, published as source only) says so only that way.
    needed = set(re.findall(r"\S+ depends on (\S+?)[;,]", exc.message + ",")) if "conflict:" in exc.message else set()
    if missing is None and len(needed) == 1:
        missing = re.match(r"(.+)", needed.pop())
    if builds_allowed or missing is None or "(constraint)" in str(getattr(exc, "log", "")):
        return exc.fix or ""
    backtracked = re.search(r"gave up after backtracking over (.+?), so one of them", exc.message)
    if backtracked:  # what pip named is no culprit (dacite's coverage>=7.10.6): the packages it went through are
        return (f"pass --allow-source-builds: one of {backtracked.group(1)}, or a package it needs, may be published "
                "only as source (its build code then runs on this machine); or pin them to releases of the project's "
                "time that have wheels for this Python")
    return (f"{missing.group(1)} may be published only as source (no wheel, or none for this Python): pass "
            "--allow-source-builds (its build code then runs on this machine), or pin a release that has a "
            "wheel; else check its name and version")


def _key_errors(run: Run) -> list[dict[str, Any]]:
    """What the guard saw of tests that failed on a KeyError raised in the harness's own code."""
    observed = (run.guard or {}).get("observed") or {}
    return [s for s in observed.values() if isinstance(s, dict) and s.get("exception") == "KeyError"
            and s.get("origin") == "harness" and not s.get("lacks")]


def _code_added(repo: Path, base: str, cand: str) -> str:
    """The lines the candidate adds to files other than the repository's tests."""
    tests = set(paths.test_edits(git.changed_paths(repo, base, cand)))
    out, keep = [], False
    for line in git.diff_text(repo, base, cand).splitlines():
        if line.startswith("diff --git "):
            keep = line.rsplit(" b/", 1)[-1] not in tests
        elif keep and line.startswith("+") and not line.startswith("+++"):
            out.append(line[1:])
    return "\n".join(out)


def _keys_the_base_lacks(run: Run, added: str) -> None:
    """A test that failed on base reading a key the candidate's code adds (luigi's summary gets
    `ever_failed`; an API's JSON its new field) ran into what the base lacks, as plain pytest counts
    it: named in what the guard observed, so it shows the defect (verdict.raised_in_checkout)."""
    for seen in _key_errors(run):
        key = re.fullmatch(r"'([\w.:/ -]{1,80})'", str(seen.get("message") or ""))
        if key and re.search(rf"""['"]{re.escape(key.group(1))}['"]""", added):
            seen["lacks"] = f"the key {key.group(1)!r}, which the candidate's code adds"


def _bundle(req: VerifyRequest, progress: Progress, repo: Path, base: str, cand: str) -> dict[str, Any]:
    """The git bundle of the base and candidate revisions (with their history), written before
    anything runs, as the evidence records it: its file name, SHA-256 and refs."""
    assert req.bundle is not None
    progress("writing the git bundle")
    path = git.bundle(repo, {"base": base, "candidate": cand}, req.bundle)
    return {"file": path.name, "sha256": sha256_file(path),
            "refs": {"refs/heads/base": base, "refs/heads/candidate": cand}}


def execution_groups(tests: dict[str, list[str]], wanted: tuple[str, ...]) -> list[tuple[tuple[str, ...], list[str]]]:
    """The executions a verification makes: (the stages one execution serves, the test ids it runs).

    The candidate's two stages share one execution: the same revision, harness and environment, so
    a second interpreter would only start pytest again (a third of the runs' cost). Each stage's
    summary still selects only its own test ids from that execution's report, and every defence
    (canaries, the guard's authenticated record, static collection) applies to the execution as a
    whole, so anything that spoils it leaves both stages incomplete. The base revision always runs
    in its own execution."""
    stages = [s for s in STAGES if s in wanted and tests[s]]
    if "candidate" in stages and "regression" in stages:
        merged = list(dict.fromkeys([*tests["candidate"], *tests["regression"]]))
        return [((s,), tests[s]) for s in stages if s not in ("candidate", "regression")] + \
            [(("candidate", "regression"), merged)]
    return [((s,), tests[s]) for s in stages]


def _write_evidence(req: VerifyRequest, settings: Settings, progress: Progress, predicate: dict[str, Any],
                    cand: str) -> Path:
    """Step 7: the signed in-toto statement of the verification."""
    from signoff.trust import KeyStore, write_evidence

    progress("writing the evidence")
    key = KeyStore(settings.keys_dir).ensure("verifier")
    return write_evidence(build_statement(predicate), key, settings.evidence_dir, path=req.evidence_path,
                          stem=f"repair-{cand[:12]}")


def _drop_bytecode(tree: Path) -> None:
    """Committed bytecode would run instead of the source a person reviews (a crafted .pyc matches
    its .py's size and time, or is unchecked): the run sees source only; the diff signal shows it."""
    for dirpath, dirs, files in os.walk(tree):  # one walk (two globs walked the tree twice)
        for name in [*files, *(d for d in dirs if os.path.islink(os.path.join(dirpath, d)))]:
            if name.endswith((".pyc", ".pyo")):
                os.unlink(os.path.join(dirpath, name))


def _remove_beside(workspace: Path) -> None:
    """Remove the workspace while the verification judges its runs and writes its evidence (unlinking
    the exports took 20-140 ms on this machine's /tmp): in a thread that the verification's git
    session joins as it ends, so that the workspace is gone when `verify` returns, as before. Outside
    a session, or with an exception on its way, it is removed here."""
    session = git_session()
    if session is None or sys.exc_info()[0] is not None:
        remove_workspace(workspace)
        return
    removal = threading.Thread(target=remove_workspace, args=(workspace,), name="signoff-workspace-removal")
    removal.start()
    session.closers.append(removal.join)

