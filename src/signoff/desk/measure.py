"""Measurements in the sandbox, through repair's verifier and its assertion-failure rules.

The desk never takes an agent's word for a test result: it runs the proposed test itself.

- `reproduce`: one run of the proposed test on the base revision plus the baseline suite. The
  reproduction counts only if the baseline is green and the test fails by an assertion with a
  complete report (repair's `summarize`: syntax, import and collection errors, timeouts and
  missing reports are not reproductions), the run guard found no tampering (`harness_integrity`:
  something in the checkout that makes the framework fail tests is not a defect the test shows),
  and the failing assertion was raised by the test itself, not by code in the checkout.
- `verify_fix`: repair's full verdict on the candidate (base fails by assertion, candidate passes
  the test, the whole baseline suite passes, only allowed paths changed), then the repository's
  configured checks (ruff lint and format, mypy) on the candidate tree, also in the sandbox.
"""

from __future__ import annotations

import json
import re
import shlex
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signoff import git
from signoff.kernel import pathglob
from signoff.kernel.errors import SignoffError, UsageError
from signoff.kernel.settings import Settings
from signoff.repair.guard import assertion_origins
from signoff.repair.runners import NODE_CONFIG_FILES
from signoff.repair.signals import summary as signal_summary
from signoff.repair.verdict import VERIFIED
from signoff.repair.verifier import VerifyRequest, env_cache, verify

CHECK_TOOLS = {"ruff": "ruff==0.15.0", "mypy": "mypy==1.18.2"}


@dataclass
class Measurement:
    ok: bool
    reason: str
    detail: dict[str, Any] = field(default_factory=dict)
    evidence: str | None = None


def _baseline(repo: Path, base: str, test_dir: str, exclude: str) -> dict[str, str]:
    """The repository's own test files at `base` (path relative to test_dir -> text)."""
    out: dict[str, str] = {}
    for path in git.tracked_paths(repo, base, under=test_dir):
        rel = path[len(test_dir) + 1:]
        if path == exclude or not rel:
            continue
        data = git.read_file_at(repo, base, path)
        if data is not None:
            out[rel] = data.decode("utf-8", errors="replace")
    return out


def _harness(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    for rel, text in files.items():
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        p.chmod(0o644)
    return folder


@dataclass(frozen=True)
class Suite:
    """What one measurement runs: the harness's files, the expected test, the baseline suite, the runner."""

    files: dict[str, str]
    expect: str
    regression: list[str]
    runner: str


_NODE_TEST = re.compile(r"\.(test|spec)\.[cm]?[jt]sx?$")


def package_json(repo: Path, commit: str) -> dict[str, Any] | None:
    """The root package.json at `commit` (None when there is none or it is not a JSON object)."""
    data = git.read_file_at(repo, commit, "package.json")
    try:
        parsed = json.loads(data) if data is not None else None
    except (ValueError, UnicodeDecodeError):
        return None
    return parsed if isinstance(parsed, dict) else None


def declared(manifest: dict[str, Any] | None) -> set[str]:
    """The packages package.json declares (dependencies and devDependencies)."""
    out: set[str] = set()
    for key in ("dependencies", "devDependencies"):
        deps = (manifest or {}).get(key)
        if isinstance(deps, dict):
            out.update(str(k) for k in deps)
    return out


def suite(repo: Path, base: str, test_dir: str, test_path: str, test_source: str, stack: str,
          fix_paths: list[str] | tuple[str, ...] = ()) -> Suite:
    """The harness of a measurement: the base revision's tests with the proposed one. Python: files
    relative to test_dir, under pytest. Node: files at their places in the project, with the base
    revision's runner configuration, under Vitest (which package.json must declare); where tests sit
    beside the code (test_dir `src`), the files the fixer may change are left to the candidate."""
    baseline = _baseline(repo, base, test_dir, exclude=test_path)
    if stack != "node":
        regression = sorted(p for p in baseline if p.endswith(".py") and p.rsplit("/", 1)[-1].startswith("test_"))
        return Suite({**baseline, test_path[len(test_dir) + 1:]: test_source}, test_path[len(test_dir) + 1:],
                     regression, "pytest")
    deps = declared(package_json(repo, base))
    runner = "vitest" if "vitest" in deps else "jest" if "jest" in deps else None
    if runner is None:
        raise UsageError("the project's package.json declares neither vitest nor jest, the test runners the desk "
                         "runs", "add vitest (or jest) to devDependencies (and commit package-lock.json)")
    files = {f"{test_dir}/{rel}": text for rel, text in baseline.items()
             if _NODE_TEST.search(rel) or not pathglob.matches(f"{test_dir}/{rel}", list(fix_paths))}
    for name in NODE_CONFIG_FILES:  # the base revision's runner configuration (pytest.ini's role)
        data = git.read_file_at(repo, base, name)
        if data is not None:
            files[name] = data.decode("utf-8", errors="replace")
    regression = sorted(p for p in files if p.startswith(test_dir + "/") and _NODE_TEST.search(p))
    return Suite({**files, test_path: test_source}, test_path, regression, runner)


def reproduce(settings: Settings, repo: Path, base: str, test_dir: str, test_path: str, test_source: str,
              timeout: float = 120.0, stack: str = "python") -> Measurement:
    try:
        s = suite(repo, base, test_dir, test_path, test_source, stack)
    except UsageError as exc:
        return Measurement(False, f"not measured: {exc.message}", {"fix": exc.fix})
    test_rel, regression = s.expect, s.regression
    with tempfile.TemporaryDirectory(prefix="signoff-desk-") as tmp:
        harness = _harness(Path(tmp) / "harness", s.files)
        result = verify(VerifyRequest(repo=repo, base=base, candidate=base, harness=harness, expect=test_rel,
                                      regression=regression, timeout=timeout, stages=("base", "regression"),
                                      redact_paths=True, runner=s.runner), settings)
    base_s, reg_s = result.stages["base"].summary, result.stages["regression"].summary
    detail = {"base": result.stages["base"].as_json() | {"executions": []},
              "baseline": {"outcome": reg_s.outcome, "per_test": reg_s.per_test, "message": reg_s.message},
              "fingerprint": result.fingerprint, "harness_digest": result.harness_digest}
    evidence = str(result.evidence) if result.evidence else None
    tampered = [s for s in (base_s, reg_s) if s.outcome == "incomplete" and s.status == "harness_integrity"]
    if tampered:
        return Measurement(False, f"not a reproduction: the run shows tampering ({tampered[0].message[:300]})",
                           detail | {"harness_integrity": True}, evidence)
    if reg_s.outcome not in ("passed", "none"):
        return Measurement(False, f"baseline suite is not green ({reg_s.outcome}: {reg_s.message[:200]})",
                           detail | {"baseline_red": True}, evidence)
    if base_s.outcome == "incomplete" and base_s.status == "collection_error":
        # A syntax or import error in the test (or what it imports) is the clearest non-reproduction.
        return Measurement(False, f"not a reproduction: the test cannot be collected ({base_s.message[:200]})",
                           detail, evidence)
    if base_s.outcome == "incomplete":
        return Measurement(False, f"the run did not complete ({base_s.status}: {base_s.message[:200]})", detail,
                           evidence)
    if not (base_s.outcome == "failed" and base_s.assertion):
        shown = {"passed": "the test passes on the current code", "error": "the test errored (not an assertion)",
                 "missing": "the test was not found in the report", "skipped": "the test was skipped",
                 "failed": "the test failed without an assertion error"}.get(base_s.outcome, base_s.outcome)
        return Measurement(False, f"not a reproduction: {shown}", detail, evidence)
    origins = assertion_origins(result.stages["base"].runs, test_rel)
    if "harness" not in origins:
        where = ", ".join(sorted(o or "unknown" for o in origins)) or "nowhere the guard saw"
        return Measurement(False, f"not a reproduction: the assertion was raised from {where}, not by the test",
                           detail, evidence)
    return Measurement(True, f"fails by assertion: {base_s.message[:300]}", detail, evidence)


def configured_checks(repo: Path, commit: str) -> list[str]:
    """The checkers the repository configures at `commit` (pyproject tables or their own files)."""
    data = git.read_file_at(repo, commit, "pyproject.toml")
    tool: dict[str, Any] = {}
    if data is not None:
        try:
            tool = tomllib.loads(data.decode()).get("tool", {})
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            tool = {}
    found = []
    if "ruff" in tool or git.read_file_at(repo, commit, "ruff.toml") is not None:
        found.append("ruff")
    if "mypy" in tool or git.read_file_at(repo, commit, "mypy.ini") is not None:
        found.append("mypy")
    return found


def configured_node_checks(repo: Path, commit: str, changed: list[str] | None = None) -> list[list[str]]:
    """The checks a Node project declares at `commit`: Prettier, ESLint, and TypeScript's compiler
    when package.json names them (tsc only with a tsconfig.json), each as the command it runs: the
    project's own invocation in its `scripts` when one is a plain call of the tool (made read-only:
    Prettier checks, ESLint does not fix, tsc emits nothing), else Prettier and ESLint on the files
    the change touched (`changed`; the whole project without it) and tsc on the whole project."""
    manifest = package_json(repo, commit)
    deps = declared(manifest)
    scripts = (manifest or {}).get("scripts")
    scripts = scripts if isinstance(scripts, dict) else {}
    found = []
    files = sorted(p for p in changed or [] if git.read_file_at(repo, commit, p) is not None) or ["."]
    if "prettier" in deps:
        found.append(read_only_call("prettier", script_call(scripts, "prettier"))
                     or ["prettier", "--check", "--ignore-unknown", *files])
    if "eslint" in deps:
        found.append(read_only_call("eslint", script_call(scripts, "eslint")) or ["eslint", *files])
    if "typescript" in deps and git.read_file_at(repo, commit, "tsconfig.json") is not None:
        found.append(read_only_call("tsc", script_call(scripts, "tsc")) or ["tsc", "--noEmit"])
    return found


_PLAIN_ARG = re.compile(r"[A-Za-z0-9_./@:=,*{}\-]+")


def script_call(scripts: dict[str, Any], tool: str) -> list[str] | None:
    """The first plain call of `tool` in the project's scripts (`prettier --check src`, `npx eslint .`,
    one step of `a && b`), as its arguments; None when no script calls it plainly (pipes, variables,
    other shell syntax are never run)."""
    for command in scripts.values():
        if not isinstance(command, str):
            continue
        for step in command.split("&&"):
            words = step.split()
            if words[:1] == ["npx"]:
                words = words[1:]
            if words[:1] == [tool] and all(_PLAIN_ARG.fullmatch(w) for w in words[1:]):
                return words
    return None


def read_only_call(tool: str, words: list[str] | None) -> list[str] | None:
    """The project's call of `tool`, made to check without changing anything (None: use the default)."""
    if words is None:
        return None
    args = words[1:]
    if tool == "prettier":
        args = [a for a in args if a not in ("--write", "-w")]
        if not {"--check", "-c", "--list-different", "-l"} & set(args):
            args = ["--check", *args]
    elif tool == "eslint":
        args = [a for a in args if a not in ("--fix", "--fix-dry-run") and not a.startswith("--fix-type")]
    elif tool == "tsc":
        if {"--build", "-b", "--watch", "-w", "--init"} & set(args):
            return None
        args = [*args, "--noEmit"] if "--noEmit" not in args else args
    return [tool, *args] if any(not a.startswith("-") for a in args) or tool == "tsc" else None


def _node_checks(settings: Settings, repo: Path, commit: str, timeout: float,
                 changed: list[str] | None = None) -> Measurement:
    """Prettier, ESLint and tsc as the project declares them, on the commit's tree in the sandbox
    (no network, its packages from the lock file), each from the project's root."""
    from signoff import sandbox
    from signoff.repair.runners import NODE_MEMORY_MB, NODE_THREADS, SRC_MOUNT, WORKDIR, node_project

    commands = configured_node_checks(repo, commit, changed)
    if not commands:
        return Measurement(True, "the project declares no formatter, linter or type checker", {"checks": []})
    manifest = git.read_file_at(repo, commit, "package.json") or b""
    lock = git.read_file_at(repo, commit, "package-lock.json")
    if lock is None:
        return Measurement(False, "the project has no package-lock.json to install its checkers from",
                           {"checks": [" ".join(c) for c in commands]})
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="signoff-desk-checks-") as tmp:
        Path(tmp).chmod(0o755)  # the sandbox's unprivileged uid reads the export
        tree = git.export(repo, commit, Path(tmp) / "src")
        try:
            env = sandbox.prepare_node_env(manifest, lock, env_cache(settings))
        except SignoffError as exc:
            return Measurement(False, f"the check tools could not be prepared: {exc.message}",
                               {"checks": [" ".join(c) for c in commands]})
        for command in commands:
            tool = shlex.join([f"node_modules/.bin/{command[0]}", *command[1:]])
            script = f"{node_project(harness=False)} && exec {tool}"
            ex = sandbox.run(["/bin/sh", "-c", script], [sandbox.Mount(tree, SRC_MOUNT), *env.mounts],
                             limits=sandbox.Limits(memory_mb=NODE_MEMORY_MB, cpus=1.0),
                             env={"HOME": WORKDIR, "NO_COLOR": "1", **NODE_THREADS}, timeout=timeout, workdir=WORKDIR,
                             network=False)
            results.append({"command": " ".join(command), "exit_code": ex.exit_code, "timed_out": ex.timed_out,
                            "output": (ex.stdout + ex.stderr)[-1500:]})
    failed = [r for r in results if r["exit_code"] != 0 or r["timed_out"]]
    if failed:
        return Measurement(False, f"configured check failed: {failed[0]['command']}: {failed[0]['output'][-300:]}",
                           {"checks": results})
    return Measurement(True, f"checks passed: {', '.join(r['command'] for r in results)}", {"checks": results})


def run_checks(settings: Settings, repo: Path, commit: str, timeout: float = 120.0,
               stack: str = "python", changed: list[str] | None = None) -> Measurement:
    from signoff import sandbox

    if stack == "node":
        return _node_checks(settings, repo, commit, timeout, changed)
    tools = configured_checks(repo, commit)
    if not tools:
        return Measurement(True, "the repository configures no checks", {"checks": []})
    commands = {"ruff": [["-m", "ruff", "check", "--no-cache", "/src"],
                         ["-m", "ruff", "format", "--check", "--no-cache", "/src"]],
                "mypy": [["-m", "mypy", "--cache-dir=/work/.mypy", "--config-file",
                          "/src/mypy.ini" if git.read_file_at(repo, commit, "mypy.ini") else "/src/pyproject.toml",
                          "/src"]]}
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="signoff-desk-checks-") as tmp:
        Path(tmp).chmod(0o755)  # the sandbox's unprivileged uid reads the export
        tree = git.export(repo, commit, Path(tmp) / "src")
        try:
            env = sandbox.prepare_python_env([CHECK_TOOLS[t] for t in tools], env_cache(settings))
        except SignoffError as exc:
            return Measurement(False, f"the check tools could not be prepared: {exc.message}", {"checks": tools})
        for tool in tools:
            for args in commands[tool]:
                ex = sandbox.run([env.python, *args], [sandbox.Mount(tree, "/src"), *env.mounts],
                                 env=env.env() | {"RUFF_CACHE_DIR": "/work/.ruff"}, timeout=timeout, workdir="/work",
                                 network=False)
                # Each checker runs from the checkout; the export is read-only and mounted at /src.
                results.append({"command": " ".join(args[1:4]), "exit_code": ex.exit_code,
                                "timed_out": ex.timed_out, "output": (ex.stdout + ex.stderr)[-1500:]})
    # A checker that found nothing to check has not checked anything: fail closed.
    failed = [r for r in results if r["exit_code"] != 0 or r["timed_out"] or "No Python files found" in r["output"]]
    if failed:
        return Measurement(False, f"configured check failed: {failed[0]['command']}: {failed[0]['output'][-300:]}",
                           {"checks": results})
    return Measurement(True, f"checks passed: {', '.join(r['command'] for r in results)}", {"checks": results})


def verify_fix(settings: Settings, repo: Path, base: str, candidate: str, test_dir: str, test_path: str,
               test_source: str, allow: list[str], checks: bool = True, timeout: float = 120.0,
               stack: str = "python") -> Measurement:
    try:
        s = suite(repo, base, test_dir, test_path, test_source, stack, allow)
    except UsageError as exc:
        return Measurement(False, f"not measured: {exc.message}", {"fix": exc.fix})
    with tempfile.TemporaryDirectory(prefix="signoff-desk-") as tmp:
        harness = _harness(Path(tmp) / "harness", s.files)
        result = verify(VerifyRequest(repo=repo, base=base, candidate=candidate, harness=harness, expect=s.expect,
                                      regression=s.regression, allow=[*allow, test_path], timeout=timeout,
                                      redact_paths=True, runner=s.runner), settings)
    detail: dict[str, Any] = {"verdict": result.verdict, "reasons": result.reasons, "fingerprint": result.fingerprint,
                              "changed": result.changed, "signals": result.signals}
    evidence = str(result.evidence) if result.evidence else None
    # The static tamper signal goes wherever the reason goes (the change request a person reviews).
    signal = f" Tamper signal on the diff: {signal_summary(result.signals)}." if result.signals else ""
    if result.verdict != VERIFIED:
        why = "; ".join(f"{r['code']}: {r['detail']}" for r in result.reasons)[:500]
        return Measurement(False, f"{result.verdict}: {why}{signal}", detail, evidence)
    if checks:
        chk = run_checks(settings, repo, candidate, timeout, stack, result.changed)
        detail["checks"] = chk.detail.get("checks", [])
        if not chk.ok:
            return Measurement(False, chk.reason, detail, evidence)
    return Measurement(True, "VERIFIED: fails on base by assertion, passes with the fix, whole suite passes"
                       + signal, detail, evidence)
