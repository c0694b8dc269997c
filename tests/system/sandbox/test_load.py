"""Many sandboxed executions at once, on a machine kept busy: every one starts, none leaks a descriptor.

Each of two processes runs rounds of four new threads. New threads reuse the idents of finished
ones, and each thread runs often enough to make and use spares, which is how a thread once took a
finished thread's spare (whose keeper the kernel kills when the forking thread ends) and the run
came back as "the sandbox could not be started".
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from signoff.sandbox.proofs import processes_with

# A thread's third run is its first on a spare; a new thread's first run is where a finished
# thread's spare used to be taken. 2 x 13 x 4 x 3 = 312 executions.
PROCESSES, ROUNDS, THREADS, RUNS_PER_THREAD = 2, 13, 4, 3

WORKER = r"""
import json, os, sys, threading
from signoff.sandbox import SandboxUnavailable, run, spare

rounds, threads, per_thread = (int(a) for a in sys.argv[1:4])
marker = os.environ["SIGNOFF_STRESS_MARKER"]

def descriptors():
    found = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            found[name] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            pass  # the directory listing's own descriptor, closed by now
    return found

failures, launches, lock = [], {}, threading.Lock()

def one(tag):
    try:
        ex = run(["sh", "-c", 'echo "$1" > out.txt && cat out.txt', "sh", tag], collect=["out.txt"], timeout=60)
    except SandboxUnavailable as exc:
        with lock:
            failures.append(f"{tag}: {exc.message}")
        return
    with lock:
        launches[ex.isolation["launch"]] = launches.get(ex.isolation["launch"], 0) + 1
        if (ex.exit_code, ex.stdout, ex.files) != (0, tag + "\n", {"out.txt": (tag + "\n").encode()}):
            failures.append(f"{tag}: exit {ex.exit_code}, stdout {ex.stdout!r}, stderr {ex.stderr[-300:]!r}")

def worker(r, t):
    for i in range(per_thread):
        one(f"{marker}-{os.getpid()}-{r}-{t}-{i}")

run(["true"])  # opens what a process keeps for good (the bubblewrap binary's descriptor)
before = descriptors()
for r in range(rounds):
    pool = [threading.Thread(target=worker, args=(r, t)) for t in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
spare.release_all()
after = descriptors()
print(json.dumps({
    "runs": rounds * threads * per_thread, "failures": failures, "launches": launches,
    "leaked": sorted(f"{k} -> {v}" for k, v in after.items() if before.get(k) != v),
    "lost": sorted(f"{k} -> {v}" for k, v in before.items() if after.get(k) != v),
}))
"""

BUSY = r"""
import os, sys, time
deadline = time.monotonic() + float(sys.argv[2])
for _ in range(int(sys.argv[1]) - 1):
    if os.fork() == 0:
        break
else:
    print("busy", flush=True)
while time.monotonic() < deadline:
    pass
"""


@pytest.fixture
def busy_machine() -> Iterator[None]:
    """One process (and its forks) spinning on every core, bounded in case this test dies first."""
    cores = os.cpu_count() or 2
    hog = subprocess.Popen([sys.executable, "-c", BUSY, str(cores), "300"], stdout=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        assert hog.stdout is not None and hog.stdout.readline() == "busy\n"
        yield
    finally:
        os.killpg(hog.pid, signal.SIGKILL)
        hog.wait()


@pytest.mark.slow
def test_concurrent_runs_on_a_busy_machine_all_start_and_leak_nothing(sandbox: None, busy_machine: None) -> None:
    marker = "stress-" + secrets.token_hex(6)
    env = {**os.environ, "SIGNOFF_STRESS_MARKER": marker}
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, str(ROUNDS), str(THREADS), str(RUNS_PER_THREAD)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
               for _ in range(PROCESSES)]
    reports = []
    for w in workers:
        out, err = w.communicate(timeout=900)  # a guard against a hang, not a measurement
        assert w.returncode == 0, err[-2000:]
        reports.append(json.loads(out))
    assert sum(r["runs"] for r in reports) >= 300
    for report in reports:
        assert report["failures"] == []
        assert report["leaked"] == [] and report["lost"] == []
        # Both ways of starting were exercised: every thread's first two runs started fresh (none
        # took another thread's spare), and spares served third runs.
        assert report["launches"].get("fresh", 0) >= ROUNDS * THREADS * 2
        assert report["launches"].get("spare", 0) >= ROUNDS * THREADS // 2
        assert sum(report["launches"].values()) == report["runs"]
    assert processes_with(marker) == []
