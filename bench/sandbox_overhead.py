"""Overhead of the sandbox on a small pytest suite: the same two tests run directly and in the
sandbox, interleaved in one run, with the same interpreter and virtual environment.

    python bench/sandbox_overhead.py [--runs 20] [--cpus N]

The CPU share defaults to the machine's core count, so the number is the sandbox's cost and not the
quota working (a 0.75-CPU quota slows CPU-bound work by design; pass --cpus 0.75 to see that).
Prints medians, spread and a final line `ratio <x>`, and CPU time beside wall time (this process and
every process it waited for: pytest directly, or the keeper, launcher, bubblewrap and pytest), which a
busy machine bends less. Needs root for cgroups, like the sandbox.
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
from pathlib import Path

from signoff.sandbox import Limits, Mount, prepare_python_env, run, spare
from signoff.sandbox.cgroups import CgroupSet

SUITE = """
def add(a, b):
    return a + b


def test_add():
    assert add(2, 3) == 5


def test_add_negative():
    assert add(-2, -3) == -5
"""


def cpu_now() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--cpus", type=float, default=float(os.cpu_count() or 1))
    parser.add_argument("--breakdown", action="store_true",
                        help="also time the sandbox with cgroups off (limits not enforced; breakdown only)")
    args = parser.parse_args()

    cache = Path(os.environ.get("SIGNOFF_BENCH_CACHE", tempfile.gettempdir())) / "signoff-bench-cache"
    env = prepare_python_env(None, cache)
    suite_dir = Path(tempfile.mkdtemp(prefix="signoff-bench-"))
    os.chmod(suite_dir, 0o755)  # the sandbox uid reads the suite
    (suite_dir / "test_two.py").write_text(SUITE)
    (suite_dir / "test_two.py").chmod(0o644)
    direct_python = str(env.host_path / "bin" / "python")
    args_common = ["-m", "pytest", "-q", "-p", "no:cacheprovider"]
    direct_env = {**env.env(), "PATH": f"{env.host_path}/bin:/usr/bin:/bin", "HOME": str(suite_dir),
                  "HYPOTHESIS_STORAGE_DIRECTORY": str(suite_dir / ".hypothesis")}
    limits = Limits(cpus=args.cpus)
    mounts = [Mount(suite_dir, "/src"), *env.mounts]

    cpu: dict[str, list[float]] = {"direct": [], "sandboxed": []}

    def direct() -> float:
        c0, t0 = cpu_now(), time.perf_counter()
        out = subprocess.run([direct_python, *args_common, str(suite_dir)], cwd=suite_dir, env=direct_env,
                             capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - t0
        cpu["direct"].append(cpu_now() - c0)
        assert out.returncode == 0, out.stdout + out.stderr
        return elapsed

    def sandboxed(cpu_into: list[float] = cpu["sandboxed"]) -> float:
        # The CPU of a run includes the spare it makes for the next one (its keeper is waited for
        # when that spare is used), so in steady state each run pays for exactly one spare.
        c0, t0 = cpu_now(), time.perf_counter()
        ex = run([env.python, *args_common, "/src"], mounts, limits, env=env.env())
        elapsed = time.perf_counter() - t0
        cpu_into.append(cpu_now() - c0)
        assert ex.exit_code == 0, ex.stdout + ex.stderr
        return elapsed

    def no_cgroups() -> float:
        # Breakdown only: the same run without cgroups (and without touching the spare kept for
        # the next sandboxed run), to show what the cgroups cost.
        real = (CgroupSet.create, spare.take, spare.replenish)
        CgroupSet.create = classmethod(lambda cls, *a, **k: None)  # type: ignore[method-assign,assignment]
        spare.take = lambda *a, **k: None  # type: ignore[assignment]
        spare.replenish = lambda *a, **k: None  # type: ignore[assignment]
        try:
            return sandboxed([])
        finally:
            CgroupSet.create, spare.take, spare.replenish = real  # type: ignore[method-assign,assignment]

    load = [" ".join(f"{x:.2f}" for x in os.getloadavg())]
    try:
        for _ in range(args.warmup):
            direct()
            sandboxed()
        cpu["direct"].clear()
        cpu["sandboxed"].clear()
        d: list[float] = []
        s: list[float] = []
        n: list[float] = []
        for i in range(args.runs):
            # interleave, alternating which goes first, so drift hits both alike
            if i % 2:
                d.append(direct())
                s.append(sandboxed())
            else:
                s.append(sandboxed())
                d.append(direct())
            if args.breakdown:
                n.append(no_cgroups())
    finally:
        shutil.rmtree(suite_dir, ignore_errors=True)

    def show(name: str, xs: list[float]) -> str:
        q = statistics.quantiles(xs, n=4)
        return (f"{name:9s} median {statistics.median(xs) * 1000:7.1f} ms  "
                f"IQR {q[0] * 1000:.1f}-{q[2] * 1000:.1f} ms  min {min(xs) * 1000:.1f} ms  runs {len(xs)}")

    print(f"pytest, 2 tests, python {env.python_version}, cpus={args.cpus}, interleaved, {args.warmup} warm-up")
    print(show("direct", d))
    print(show("sandboxed", s))
    if n:
        print(show("no-cgroup", n) + "  (limits off: breakdown only)")
    cd, cs = statistics.median(cpu["direct"]), statistics.median(cpu["sandboxed"])
    print(f"cpu time  direct median {cd * 1000:.1f} ms, sandboxed median {cs * 1000:.1f} ms, cpu ratio {cs / cd:.3f}")
    print(f"load average before/after: {load[0]} / {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    ratio = statistics.median(s) / statistics.median(d)
    print(f"overhead {(statistics.median(s) - statistics.median(d)) * 1000:.1f} ms (median difference)")
    print(f"ratio of minimums {min(s) / min(d):.3f} (less sensitive to other load on the machine)")
    print(f"ratio {ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
