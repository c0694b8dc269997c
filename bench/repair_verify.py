"""Benchmark: full verification of the coupon case against the same three pytest runs made directly.

Full verification = freeze the harness, check ancestry and paths, export both revisions blob by blob
(one `git cat-file --batch`), run base/expected, candidate/expected and candidate/regression in the
sandbox (concurrently where cores allow), parse the JUnit reports, decide, and sign the evidence. The baseline runs the
same three pytest commands directly on the host, one after another, on plain checkouts (no
sandbox, no export, no evidence), with the same prepared Python environment (pytest only; the
project's own venv would load many more plugins and make the baseline unfairly slow). Both start
warm; runs alternate.

Prints each side's median, spread and run count, then `ratio <x>` = verification / baseline.
Goal: <= 1.0x (concurrency must pay for isolation and evidence); on two cores the floor is ~0.5x.

    python bench/repair_verify.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from signoff import git
from signoff.demo.fixture import build, examples_root
from signoff.kernel.settings import Settings
from signoff.repair.verifier import VerifyRequest, env_cache, verify
from signoff.sandbox import prepare_python_env

EXPECT = "test_coupon.py::test_coupon_applies_once"
REGRESSION = ["test_coupon.py::test_zero_coupon_keeps_total", "test_coupon.py::test_empty_cart_costs_nothing"]


def direct(checkouts: dict[str, Path], harness: Path, python: str) -> float:
    """The three executions as a person would run them: pytest directly, sequentially."""
    start = time.perf_counter()
    for rev, tests in (("base", [EXPECT]), ("candidate", [EXPECT]), ("candidate", REGRESSION)):
        env = {**os.environ, "PYTHONPATH": str(checkouts[rev]), "PYTHONDONTWRITEBYTECODE": "1"}
        subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--rootdir={harness}",
                        *[f"{harness}/{t}" for t in tests]], env=env, capture_output=True, check=False,
                       cwd=harness, timeout=300)
    return time.perf_counter() - start


def full(settings: Settings, repo: Path, harness: Path) -> float:
    start = time.perf_counter()
    result = verify(VerifyRequest(repo=repo, base="main", candidate="genuine-fix", harness=harness, expect=EXPECT,
                                  regression=REGRESSION, allow=["cart.py"]), settings)
    elapsed = time.perf_counter() - start
    if result.verdict != "VERIFIED":
        raise SystemExit(f"verification gave {result.verdict}: {result.reasons}")
    return elapsed


def spread(xs: list[float]) -> str:
    return f"min {min(xs) * 1000:.0f} ms, max {max(xs) * 1000:.0f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="signoff-bench-repair-") as tmp_:
        tmp = Path(tmp_)
        fixture = build(examples_root() / "coupon", tmp / "repo")
        harness = examples_root() / "coupon" / "harness"
        settings = Settings.load(home=tmp / ".signoff", env={})
        checkouts = {"base": git.export(fixture.path, fixture.base, tmp / "base"),
                     "candidate": git.export(fixture.path, fixture.candidates["genuine-fix"], tmp / "cand")}
        full(settings, fixture.path, harness)  # warm: prepares and caches the sandbox's Python environment
        # The baseline uses the very same prepared environment (pytest and nothing else), run on the host.
        python = str(prepare_python_env(None, env_cache(settings)).host_path / "bin" / "python")
        direct(checkouts, harness, python)
        times: dict[str, list[float]] = {"verify": [], "direct": []}
        for _ in range(args.runs):
            times["verify"].append(full(settings, fixture.path, harness))
            times["direct"].append(direct(checkouts, harness, python))
    for name, xs in times.items():
        print(f"{name:<7} median {statistics.median(xs) * 1000:.0f} ms ({spread(xs)}, {len(xs)} runs)")
    print(f"cores {os.cpu_count()}; SYNKAI reported 13.1 s for its container verification (single run)")
    ratio = statistics.median(times["verify"]) / statistics.median(times["direct"])
    print(f"ratio {ratio:.2f} (full sandboxed verification with evidence / three direct pytest runs in sequence, "
          f"medians of {args.runs} alternating runs)")


if __name__ == "__main__":
    main()
