"""Benchmark: `signoff repair verify`, as a person runs it, against the same three pytest runs made directly.

    python bench/repair_verify.py [--runs 7] [--case coupon] [--case thefuck-5 --mirrors DIR] [--before SRC]

Cases: `coupon` (examples/coupon, built here) and `thefuck-5`, a real project's bug: BugsInPy's thefuck
bug 5, repository https://github.com/nvbn/thefuck, buggy commit 1683f45e940a25a87b989c0e121a03018661e097,
fixed commit 84c16fb69a4c0abcb9fe1c90787076800320a950 (the case as bench/repair_real_cases.py defines
it), cloned from `DIR/nvbn+thefuck` (a `repo` folder inside it is used when present). Nothing is
downloaded except the test environment's wheels on the first run.

verify = the whole CLI command in a fresh process (`python -m signoff.cli.main repair verify ...`):
start-up, freezing the harness, git policy, exports, the sandboxed executions with every tamper
defence on (canaries, the guard, static collection), JUnit, verdict and signed evidence.
direct = the three pytest runs a person would make, one after another, on plain checkouts (no
sandbox, no export, no evidence): base/expected, candidate/expected, candidate/regression, with the
very Python environment the verification prepared (for the coupon: pytest only; for thefuck: the
project's declared dependencies and its requirements.txt), in the project's layout (thefuck's own
configuration and conftest apply). Both start warm (the environment is built and the bytecode of
signoff and of the environment is written before measuring); the sides alternate.

`--before SRC` adds a third side, `before`: the same CLI command with signoff imported from SRC (a
`src` folder of an older revision), measured in the same rounds, so that a change is compared under
the same load.

The verification makes its workspace where signoff's rule puts it (docs/repair.md, Speed: `/dev/shm` where
that is safe, the temporary folder when `TMPDIR` is set); `--workspace DIR` sets `SIGNOFF_REPAIR_WORKSPACE`
for every CLI side, to measure another place.

Prints, per case, each side's median wall time, spread and run count and its median CPU time (of
every process it started), then `ratio <x>` = verify / direct in wall time (and the CPU ratio, and
the before ratios). Goal: <= 1.0x. The load average is printed: on a shared machine other work
shifts both sides, so compare sides of one run, not runs. Under load the wall ratio favours the
verification, whose two executions run at once and so get two shares of a contended CPU while the
direct runs get one; the CPU ratio is what the verification costs the machine.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from repair_real_cases import load_cases, mirror_of

from signoff import git
from signoff.demo.fixture import build, examples_root
from signoff.kernel.settings import Settings
from signoff.repair import testenv
from signoff.repair.verifier import VerifyRequest, env_cache, requirement_files, verify, write_requirements
from signoff.sandbox import prepare_python_env


@dataclass
class Prepared:
    """One case, ready to measure: the CLI's arguments and the three direct runs."""

    name: str
    cli: list[str]  # after `signoff`
    cwd: Path
    direct: list[tuple[list[str], Path, dict[str, str]]]  # (argv, cwd, extra env) of each pytest run


def _coupon(tmp: Path, settings: Settings) -> Prepared:
    fixture = build(examples_root() / "coupon", tmp / "repo")
    harness = examples_root() / "coupon" / "harness"
    expect = "test_coupon.py::test_coupon_applies_once"
    regression = ["test_coupon.py::test_zero_coupon_keeps_total", "test_coupon.py::test_empty_cart_costs_nothing"]
    request = VerifyRequest(repo=fixture.path, base="main", candidate="genuine-fix", harness=harness, expect=expect,
                            regression=regression, allow=["cart.py"], write_evidence=False)
    python = _warm(request, settings)
    trees = {"base": git.export(fixture.path, fixture.base, tmp / "base"),
             "candidate": git.export(fixture.path, fixture.candidates["genuine-fix"], tmp / "cand")}
    pytest = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--rootdir={harness}"]
    direct = [([*pytest, *[f"{harness}/{t}" for t in tests]], harness, {"PYTHONPATH": str(trees[rev])})
              for rev, tests in (("base", [expect]), ("candidate", [expect]), ("candidate", regression))]
    cli = ["repair", "verify", "--repo", str(fixture.path), "--base", "main", "--candidate", "genuine-fix",
           "--harness", str(harness), "--expect", expect, *[a for t in regression for a in ("--regression", t)],
           "--allow", "cart.py"]
    return Prepared("coupon", cli, fixture.path, direct)


def _real(name: str, tmp: Path, settings: Settings, mirrors: Path) -> Prepared:
    case = next(c for c in load_cases() if c.name == name)
    source = mirror_of(mirrors, case.repo)
    clone = tmp / name
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(source), str(clone)], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", case.buggy], check=True, capture_output=True)
    # The harness: the test file as the fix has it, in the base's work tree (docs/repair.md, "Your own project").
    harness = clone / case.test_file
    test_text = git.read_file_at(clone, case.fixed, case.test_file) or b""
    harness.write_bytes(test_text)
    file_ = case.test_file.rsplit("/", 1)[-1]
    expect, regression = f"{file_}::{case.expect}", [f"{file_}::{t}" for t in case.regression]
    options = dict(case.options)
    request = VerifyRequest(repo=clone, base=case.buggy, candidate=case.fixed, harness=harness, expect=expect,
                            regression=regression, allow=["thefuck/**", "tests/**"], timeout=300.0,
                            write_evidence=False, **options)
    python = _warm(request, settings)
    # Plain checkouts as a person has them: the revision's files with the harness's test file in place.
    trees = {}
    for rev, commit in (("base", case.buggy), ("candidate", case.fixed)):
        trees[rev] = git.export(clone, commit, tmp / f"{name}-{rev}")
        (trees[rev] / case.test_file).write_bytes(test_text)
    pytest = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    direct = [([*pytest, *[f"{case.test_file}::{t.split('::', 1)[1]}" for t in tests]], trees[rev], {})
              for rev, tests in (("base", [expect]), ("candidate", [expect]), ("candidate", regression))]
    cli = ["repair", "verify", "--repo", str(clone), "--base", case.buggy, "--candidate", case.fixed,
           "--harness", str(harness), "--expect", expect, *[a for t in regression for a in ("--regression", t)],
           "--allow", "thefuck/**", "--allow", "tests/**", "--timeout", "300"]
    if options.get("project_deps"):
        cli.append("--project-deps")
    for r in options.get("requirements", []):
        cli += ["--requirements", r]
    return Prepared(name, cli, clone, direct)


def _warm(request: VerifyRequest, settings: Settings) -> str:
    """Verify once (builds and caches the environment) and return the host path of its Python."""
    result = verify(request, settings)
    if result.verdict != "VERIFIED":
        raise SystemExit(f"warm-up verification gave {result.verdict}: {result.reasons}")
    plan = testenv.plan(request.repo, git.resolve(git.open_repo(request.repo), request.base),
                        requirement_files(request), request.project_deps, request.extras, request.pytest)
    with tempfile.TemporaryDirectory(prefix="signoff-bench-reqs-") as ws:
        reqs = write_requirements(plan, Path(ws))
        env = prepare_python_env(reqs, env_cache(settings), label=", ".join(plan.sources) or None)
    return str(env.host_path / "bin" / "python")


WORKSPACE: list[str] = []  # --workspace, when given


def _env(home: Path, src: Path | None = None) -> dict[str, str]:
    # Bytecode is written once and read after that, as in any installed copy (a machine-wide
    # PYTHONDONTWRITEBYTECODE would make every CLI run compile signoff again).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["SIGNOFF_HOME"] = str(home)
    if WORKSPACE:
        env["SIGNOFF_REPAIR_WORKSPACE"] = WORKSPACE[0]
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


Sample = tuple[float, float]  # (wall seconds, CPU seconds of every process the side started)


def _cpu() -> float:
    # Children's CPU: every process is waited for (the sandbox's keeper reaps its tree), so this
    # counts pytest, bubblewrap and git too.
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def cli_run(case: Prepared, home: Path, src: Path | None = None) -> Callable[[], Sample]:
    argv = [sys.executable, "-m", "signoff.cli.main", *case.cli, "--evidence",
            str(home / "evidence.json")]

    def once() -> Sample:
        start, cpu = time.perf_counter(), _cpu()
        done = subprocess.run(argv, cwd=case.cwd, env=_env(home, src), capture_output=True, text=True,
                              check=False, timeout=900)
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"{case.name}: verify exited {done.returncode}: {done.stdout[-800:]}{done.stderr[-800:]}")
        return elapsed, _cpu() - cpu
    return once


def direct_run(case: Prepared) -> Callable[[], Sample]:
    def once() -> Sample:
        start, cpu = time.perf_counter(), _cpu()
        for argv, cwd, extra in case.direct:
            env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **extra}
            subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False, timeout=900)
        return time.perf_counter() - start, _cpu() - cpu
    return once


def _line(name: str, samples: list[Sample]) -> str:
    xs, cpu = [w for w, _ in samples], [c for _, c in samples]
    return (f"  {name:<7} median {statistics.median(xs) * 1000:.0f} ms (min {min(xs) * 1000:.0f} ms, "
            f"max {max(xs) * 1000:.0f} ms, {len(xs)} runs); CPU median {statistics.median(cpu) * 1000:.0f} ms "
            f"(min {min(cpu) * 1000:.0f} ms, max {max(cpu) * 1000:.0f} ms)")


def _ratio(samples: dict[str, list[Sample]], side: str, which: int) -> float:
    return statistics.median(x[which] for x in samples[side]) / statistics.median(x[which] for x in samples["direct"])


def measure(case: Prepared, home: Path, runs: int, before: Path | None) -> None:
    sides = {"verify": cli_run(case, home), "direct": direct_run(case)}
    if before is not None:
        sides["before"] = cli_run(case, home, before)
    for once in sides.values():  # warm: bytecode written, caches filled
        once()
    times: dict[str, list[Sample]] = {name: [] for name in sides}
    load = os.getloadavg()[0]
    for _ in range(runs):
        for name, once in sides.items():
            times[name].append(once())
    print(f"case {case.name} (load average {load:.1f} -> {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores)")
    for name, samples in times.items():
        print(_line(name, samples))
    print(f"  ratio {_ratio(times, 'verify', 0):.2f} (signoff repair verify / three direct pytest runs in sequence, "
          f"medians of {runs} alternating runs); CPU ratio {_ratio(times, 'verify', 1):.2f}")
    if before is not None:
        print(f"  before ratio {_ratio(times, 'before', 0):.2f}, CPU ratio {_ratio(times, 'before', 1):.2f} "
              f"(the same command from {before})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--case", action="append", help="coupon and/or thefuck-5 (default: coupon, and thefuck-5 "
                                                    "when --mirrors is given)")
    ap.add_argument("--mirrors", type=Path, help="folder of clones named owner+name (for the real project's case)")
    ap.add_argument("--before", type=Path, help="a src folder of another revision of signoff to measure alongside")
    ap.add_argument("--workspace", help="the folder the CLI sides make their workspaces in (SIGNOFF_REPAIR_WORKSPACE)")
    args = ap.parse_args()
    if args.workspace:
        WORKSPACE.append(args.workspace)
    names = args.case or (["coupon", "thefuck-5"] if args.mirrors else ["coupon"])
    with tempfile.TemporaryDirectory(prefix="signoff-bench-repair-") as tmp_:
        tmp = Path(tmp_)
        home = tmp / ".signoff"
        settings = Settings.load(home=home, env={})
        for name in names:
            if name == "coupon":
                case = _coupon(tmp, settings)
            elif args.mirrors is None:
                raise SystemExit(f"{name} needs --mirrors DIR (a folder holding nvbn+thefuck)")
            else:
                case = _real(name, tmp, settings, args.mirrors)
            measure(case, home, args.runs, args.before)
        shutil.rmtree(home, ignore_errors=True)
    print("SYNKAI reported 13.1 s for its container verification (single run)")


if __name__ == "__main__":
    main()
