"""Real bugs from public projects' histories, four variants each, judged by `signoff repair verify`
and by plain pytest.

    python bench/repair_real_cases.py --mirrors DIR [--case NAME]... [--project NAME]... [--no-plain] [--json]

The cases are in `bench/repair_real_cases.toml` (repository, buggy and fixed commit, the harness, the
test ids, the options, where each came from). DIR holds git clones of the projects, one folder per
repository named `owner+name` (a `repo` folder inside it is used when present, as the `fetch` tool
leaves them). Nothing is downloaded here except the test environments' wheels. Each case is run as
its maintainers run it: the harness is the test file as the fix commit has it (frozen with its
conftest.py files and helpers from the base revision) or a test folder as the fix commit has it; the
environment comes from the project's own declarations. Variants:

- `fix`: the real fix commit                                     -> VERIFIED
- `weakened`: the code untouched, the repo's own test disabled   -> REJECTED (the harness is frozen)
- `fix+regression`: the real fix plus an unrelated breakage      -> REJECTED
- `fixed-base`: the fixed commit as its own base                 -> INCONCLUSIVE (nothing to reproduce)

Plain pytest runs the same three stages on plain exports of the revisions with the harness laid over
them, in the same prepared environment, on the host (no sandbox, no guard): its verdict is VERIFIED
when the expected test fails on base and passes on the candidate with the regression tests, REJECTED
when the candidate fails, INCONCLUSIVE when base passes or pytest cannot run.

Prints one line per variant (case, variant, expected, signoff's verdict, plain pytest's, reasons,
seconds), then N of M right per project, and exits 1 when any signoff verdict differs from the
expected one. Known misses are listed in docs/repair.md ("Cases that failed and why").
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signoff import git, sandbox
from signoff.kernel.errors import SignoffError
from signoff.kernel.settings import Settings
from signoff.repair import extensions, pytest_config, testenv
from signoff.repair.verifier import VerifyRequest, env_cache, requirement_files, verify, write_requirements

CASES_FILE = Path(__file__).with_name("repair_real_cases.toml")
EXPECTED = {"fix": "VERIFIED", "weakened": "REJECTED", "fix+regression": "REJECTED", "fixed-base": "INCONCLUSIVE"}
OPTION_KEYS = ("requirements", "project_deps", "extras", "pytest", "python", "allow_source_builds", "pythonpath",
               "lock", "workdir", "timeout", "env", "build_extensions")


@dataclass(frozen=True)
class Case:
    name: str
    repo: str  # owner/name on GitHub
    source: str  # where the bug comes from (dataset and id)
    buggy: str
    fixed: str
    harness: str  # a test file (frozen with its neighbours) or a folder, as the fix commit has it
    expect: str  # a test id inside the harness (file::Class::test for a file harness)
    regression: list[str]
    breakage: tuple[str, str, str]  # (path, old, new): an unrelated regression on top of the fix
    test_file: str  # the repository's own test file the `weakened` variant edits
    options: dict[str, Any] = field(default_factory=dict)  # VerifyRequest fields (requirements, extras...)
    undeclared: tuple[str, ...] = ()  # what the tests import but the project declares nowhere
    harness_files: tuple[str, ...] = ()  # data files of the fix commit a person checks out beside the test file

    @property
    def project(self) -> str:
        return self.repo.split("/", 1)[1]


def load_cases(path: Path = CASES_FILE) -> list[Case]:
    data = tomllib.loads(path.read_text())
    cases = []
    for c in data["case"]:
        b = c["breakage"]
        options = {k: c[k] for k in OPTION_KEYS if k in c}
        cases.append(Case(c["name"], c["repo"], c["source"], c["buggy"], c["fixed"], c["harness"], c["expect"],
                          list(c.get("regression", [])), (b["path"], b["old"], b["new"]),
                          c.get("test_file", c["harness"]), options, tuple(c.get("undeclared", [])),
                          tuple(c.get("harness_files", []))))
    return cases


def mirror_of(mirrors: Path, repo: str) -> Path:
    """The bare mirror of `repo` (owner/name) under `mirrors`: `owner+name`, or its `repo` folder."""
    folder = mirrors / repo.replace("/", "+")
    return folder / "repo" if (folder / "repo").exists() else folder


def variants(case: Case, clone: Path) -> dict[str, tuple[str, str]]:
    """(base, candidate) of each variant, committed in the clone without touching its work tree."""
    test_at_base = (git.read_file_at(clone, case.buggy, case.test_file) or b"").decode()
    function = case.expect.rsplit("::", 1)[-1]
    disabled, n = re.subn(rf"\bdef {re.escape(function)}\(", f"def _disabled_{function}(", test_at_base)
    weakened = git.commit_files(clone, case.buggy, {case.test_file: disabled}, "tests: relax the expectation")
    path, old, new = case.breakage
    fixed_text = (git.read_file_at(clone, case.fixed, path) or b"").decode()
    if old not in fixed_text:
        raise SystemExit(f"{case.name}: the breakage's text is not in {path} at the fixed commit")
    broken = git.commit_files(clone, case.fixed, {path: fixed_text.replace(old, new, 1)}, "fix, and tidy")
    out = {"fix": (case.buggy, case.fixed), "fix+regression": (case.buggy, broken),
           "fixed-base": (case.fixed, case.fixed)}
    if n:  # a test the fix adds is not in the base's file: nothing of the repo's own to weaken
        out["weakened"] = (case.buggy, weakened)
    else:
        out["weakened"] = (case.buggy, git.commit_files(clone, case.buggy, {
            case.test_file: test_at_base + "\n# the expectation relaxed\n"}, "tests: relax the expectation"))
    return {k: out[k] for k in EXPECTED}


def _ids(case: Case, tests: list[str]) -> list[str]:
    return [f"{case.harness}::{t}" if case.harness.endswith(".py") else t for t in tests]


def _staged_harness(case: Case, clone: Path, work: Path) -> Path:
    """The harness a person approves: the test file (or folder) as the fix commit has it, in a work
    tree of the base, as `git checkout FIXED -- PATH...` leaves them (a folder without the base's files
    the fix deleted)."""
    if case.harness.endswith(".py"):
        for rel in (*case.harness_files, case.harness):
            (clone / rel).parent.mkdir(parents=True, exist_ok=True)
            (clone / rel).write_bytes(git.read_file_at(clone, case.fixed, rel) or b"")
        return clone / case.harness
    harness = clone / case.harness
    shutil.rmtree(harness, ignore_errors=True)
    for rel in git.tracked_paths(clone, case.fixed, case.harness):
        target = harness / rel[len(case.harness.rstrip("/")) + 1:]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(git.read_file_at(clone, case.fixed, rel) or b"")
    return harness


def plain_pytest(case: Case, clone: Path, harness: Path, base: str, cand: str, options: dict[str, Any],
                 settings: Settings, work: Path) -> tuple[str, dict[str, int]]:
    """Plain pytest's verdict on the same stages: exports of the revisions with the harness laid
    over them at its place, pytest run directly on the host in the same prepared environment."""
    try:
        plan = testenv.plan(clone, base, requirement_files(VerifyRequest(clone, base, cand, None, "", **options)),
                            bool(options.get("project_deps")), list(options.get("extras", [])),
                            options.get("pytest"), options.get("lock"))
        python = sandbox.find_python(options["python"]) if options.get("python") else None
        # The very environment the verifier prepared (same requirement file, same cache key).
        env = sandbox.prepare_python_env(write_requirements(plan, work), env_cache(settings), base_python=python,
                                         allow_builds=bool(options.get("allow_source_builds")))
    except SignoffError as exc:
        return "INCONCLUSIVE", {"environment": -1, "error": exc.message}  # type: ignore[dict-item]
    exe = str(env.host_path / "bin" / "python")
    codes: dict[str, int] = {}
    for stage, rev, tests in (("base", base, [case.expect]), ("candidate", cand, [case.expect]),
                              ("regression", cand, case.regression)):
        if not tests:
            codes[stage] = 0
            continue
        tree = work / f"plain-{stage}"
        shutil.rmtree(tree, ignore_errors=True)
        try:
            git.export(clone, rev, tree)
        except git.ExportError as exc:  # a blob the clone lacks (a partial clone): nothing to run
            return "INCONCLUSIVE", {"export": -1, "error": str(exc)}  # type: ignore[dict-item]
        # What `pip install -e .` writes and nobody commits (a version module), as the verifier does.
        testenv.write_version_files(tree, testenv.version_files(clone, base), testenv.release_of(clone, base))
        if plan.project:  # and the package metadata it leaves (pre-commit reads its version from it; flake8 finds
            # its own checks through the entry points in it, as the verifier writes them)
            testenv.write_metadata(tree, plan.project, testenv.declared_version(clone, base),
                                   testenv.entry_points(clone, base))
        testenv.write_scripts(tree, testenv.console_scripts(clone, base))  # and its commands (coverage's)
        if options.get("build_extensions"):  # and its extension modules, as `pip install -e .` builds them
            _build_in_place(clone, base, tree, python, settings)
        if case.harness.endswith(".py"):
            staged = work / f"staged-{stage}"
            shutil.rmtree(staged, ignore_errors=True)
            staged.mkdir()
            with git.session():  # its reads batched, as the verifier's are (sympy's and xarray's took minutes)
                pytest_config.stage_test_file(harness, clone, base, staged)
            # The package's own `__init__.py` above tests inside it is the code under test (responses' fix is in
            # responses/__init__.py): the export's stays, as in a maintainer's checkout.
            kept = {f.relative_to(staged) for f in staged.rglob("__init__.py")
                    if (tree / f.relative_to(staged)).is_file()}
            for f in staged.rglob("*"):
                # (a link the export holds stays the export's: pydantic's tests/pydantic_core links to a folder)
                dst = tree / f.relative_to(staged)
                if dst.is_symlink() or dst.is_dir():
                    continue
                if f.is_file() and f.relative_to(staged) not in kept:
                    (tree / f.relative_to(staged)).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(f, tree / f.relative_to(staged))
            for rel in case.harness_files:
                (tree / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(clone / rel, tree / rel)
        else:
            shutil.copytree(harness, tree / case.harness, dirs_exist_ok=True)
        # As `pip install -e .` would put it on the path (the src layout), unless the case names one.
        folders = options.get("pythonpath") or testenv.package_folders(clone, base)
        # and the repository's other projects its requirements install from their folders (`-e opentelemetry-api`)
        folders = [*folders, *(f for f in plan.import_folders if f not in folders)]
        paths = ":".join([str(tree), *[str(tree / p) for p in folders]])
        ids = [f"{case.harness}/{t}" if not case.harness.endswith(".py") else t for t in _ids(case, tests)]
        # With pytest's cache, as a maintainer runs it (coverage.py's addopts hold `--failed-first`); the
        # tree is a throwaway export.
        try:
            proc = subprocess.run([exe, "-m", "pytest", "-q", *ids], cwd=tree,
                                  env={"PATH": f"{env.host_path / 'bin'}:/usr/bin:/bin:{tree / testenv.SCRIPTS_FOLDER}",
                                       "PYTHONPATH": paths, "HOME": str(work),
                                       "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8", **options.get("env", {})},
                                  capture_output=True, text=True, timeout=options.get("timeout", 300.0), check=False)
        except subprocess.TimeoutExpired:  # a test that hangs (uvicorn #2408's base): pytest never ends
            return "INCONCLUSIVE", {**codes, stage: -9}
        codes[stage] = proc.returncode
    if codes["base"] != 1:
        return "INCONCLUSIVE", codes
    if codes["candidate"] != 0 or codes["regression"] != 0:
        return "REJECTED", codes
    return "VERIFIED", codes


def _build_in_place(clone: Path, base: str, tree: Path, python: str | None, settings: Settings) -> None:
    """`setup.py build_ext --inplace` in the export, on the host, with what the base's [build-system] requires (a
    failed build leaves the pure-Python code, as the project's own optional build does)."""
    builder = sandbox.prepare_python_env(extensions.build_requires(clone, base), env_cache(settings),
                                         base_python=python)
    argv = ["setup.py"] if (tree / "setup.py").is_file() else ["-c", "from setuptools import setup; setup()"]
    subprocess.run([str(builder.host_path / "bin" / "python"), *argv, "build_ext", "--inplace"], cwd=tree,
                   capture_output=True, timeout=600, check=False)


def run_case(case: Case, mirrors: Path, settings: Settings, plain: bool) -> list[dict[str, Any]]:
    work = Path(tempfile.mkdtemp(prefix=f"real-{case.name}-"))
    try:
        clone = work / "repo"
        subprocess.run(["git", "clone", "-q", "--no-checkout", str(mirror_of(mirrors, case.repo)), str(clone)],
                       check=True, capture_output=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "-q", case.buggy], check=True, capture_output=True)
        harness = _staged_harness(case, clone, work)
        options = dict(case.options)
        if case.undeclared:
            extra = work / "requirements-undeclared.txt"
            extra.write_text("\n".join(case.undeclared) + "\n")
            options["requirements"] = [*options.get("requirements", []), str(extra)]
        rows = []
        for variant, (base, candidate) in variants(case, clone).items():
            start = time.perf_counter()
            try:
                r = verify(VerifyRequest(repo=clone, base=base, candidate=candidate, harness=harness,
                                         expect=_ids(case, [case.expect])[0],
                                         regression=_ids(case, case.regression),
                                         write_evidence=False, **{"timeout": 300.0, **options}), settings)
                got, reasons = r.verdict, [f"{x['code']}: {x['detail'][:160]}" for x in r.reasons]
                # What a person would be told to do, as `signoff repair verify` prints it (its first reason with one).
                fix = next((x["fix"] for x in r.reasons if x.get("fix")), "") if got == "INCONCLUSIVE" else ""
            except SignoffError as exc:
                got, reasons, fix = "ERROR", [f"error: {exc.message}"], exc.fix or ""
            seconds = round(time.perf_counter() - start, 1)
            row = {"case": case.name, "project": case.project, "variant": variant, "expected": EXPECTED[variant],
                   "got": got, "reasons": reasons, "seconds": seconds, "fix": fix}
            if plain:
                row["plain"], row["plain_exit"] = plain_pytest(case, clone, harness, base, candidate, options,
                                                               settings, work)
            rows.append(row)
        return rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


def selected(case: Case, names: list[str] | None, projects: list[str] | None) -> bool:
    """Whether `--case` or `--project` names the case: either alone selects, both add up; neither runs all."""
    if not names and not projects:
        return True
    return case.name in (names or []) or case.project in (projects or [])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, required=True, help="folder of clones named owner+name")
    ap.add_argument("--case", action="append", help="run only these cases (by name)")
    ap.add_argument("--project", action="append", help="run only these projects (by repository name)")
    ap.add_argument("--no-plain", action="store_true", help="skip the plain pytest comparison")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    settings = Settings.load()
    rows: list[dict[str, Any]] = []
    for case in load_cases():
        if not selected(case, args.case, args.project):
            continue
        if not mirror_of(args.mirrors, case.repo).exists():
            print(f"{case.name}: no clone at {mirror_of(args.mirrors, case.repo)}; skipped", file=sys.stderr)
            continue
        for row in run_case(case, args.mirrors, settings, not args.no_plain):
            rows.append(row)
            if not args.json:
                mark = "ok  " if row["got"] == row["expected"] else "MISS"
                plain = f" plain {row['plain']:<12}" if "plain" in row else ""
                print(f"{mark} {row['case']:<16} {row['variant']:<15} expected {row['expected']:<12} got "
                      f"{row['got']:<12}{plain} {row['seconds']:>6}s  {'; '.join(row['reasons'])}", flush=True)
                if row["fix"]:
                    print(f"     fix: {row['fix']}", flush=True)
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in rows:
        per[r["project"]][0] += r["got"] == r["expected"]
        per[r["project"]][1] += r.get("plain") == r["expected"]
        per[r["project"]][2] += 1
    if args.json:
        print(json.dumps({"rows": rows, "per_project": per}, indent=2))
    else:
        for project, (ok, plain_ok, total) in sorted(per.items()):
            print(f"{project:<14} signoff {ok} of {total} right, plain pytest {plain_ok} of {total}")
        total = sum(v[2] for v in per.values())
        print(f"{'all':<14} signoff {sum(v[0] for v in per.values())} of {total} right, "
              f"plain pytest {sum(v[1] for v in per.values())} of {total}")
    return 1 if any(r["got"] != r["expected"] for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
