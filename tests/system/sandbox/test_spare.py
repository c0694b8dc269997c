"""Spares: a thread's next launcher, started ahead of time inside fresh cgroups."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from signoff.sandbox import Limits, bwrap, run
from signoff.sandbox import spare as spare_mod
from signoff.sandbox.cgroups import CgroupSet

PY = "/usr/bin/python3"


def _warm() -> None:
    for _ in range(2):
        run(["true"])


def test_third_run_of_a_thread_uses_a_spare_with_its_own_limits(sandbox: None) -> None:
    _warm()
    fork_40 = ("import os,time\nn=0\nfor _ in range(40):\n try:\n  if os.fork()==0:\n   time.sleep(1); os._exit(0)\n"
               "  n+=1\n except OSError:\n  pass\nprint(n)")
    ex = run([PY, "-c", fork_40], limits=Limits(pids=16, memory_mb=200, tmpfs_mb=64))
    assert ex.isolation["launch"] == "spare"
    assert ex.isolation["enforced"]["pids"] == 16 and ex.isolation["enforced"]["memory_bytes"] == 200 << 20
    assert int(ex.stdout) < 16 and ex.pids_limit_hit
    again = run(["sh", "-c", "id -u; echo $X"], env={"X": "y"})
    assert again.isolation["launch"] == "spare" and again.stdout.split() == ["10001", "y"]


def test_a_spare_made_with_the_limits_of_the_next_run_enforces_them(sandbox: None) -> None:
    """The spare a run leaves behind is configured with that run's limits; the next run with the same
    limits does not write them again, and they hold all the same."""
    tight = Limits(pids=12, memory_mb=150, tmpfs_mb=64)
    fork_30 = ("import os,time\nn=0\nfor _ in range(30):\n try:\n  if os.fork()==0:\n   time.sleep(1); os._exit(0)\n"
               "  n+=1\n except OSError:\n  pass\nprint(n)")
    runs = [run([PY, "-c", fork_30], limits=tight) for _ in range(3)]
    assert [ex.isolation["launch"] for ex in runs][2] == "spare"
    for ex in runs:
        assert ex.isolation["enforced"]["pids"] == 12 and ex.isolation["enforced"]["memory_bytes"] == 150 << 20
        assert int(ex.stdout) < 12 and ex.pids_limit_hit


def test_groups_made_ahead_take_a_larger_or_smaller_memory_limit(sandbox: None) -> None:
    """On v1 the kernel refuses memory > memory+swap at any step, so raising the limit of groups made
    with a smaller one must write memory+swap first (it once failed, and the run fell back to fresh)."""
    cg = CgroupSet.create(f"signoff-{os.getpid()}-test-raise", Limits(memory_mb=150))
    assert cg is not None  # the sandbox fixture requires cgroups
    try:
        for mb in (384, 120, 384):
            cg.configure(Limits(memory_mb=mb))
            assert cg.enforced["memory_bytes"] == mb << 20
            if cg.version == "v1" and (cg.dirs["memory"] / "memory.memsw.limit_in_bytes").exists():
                assert int((cg.dirs["memory"] / "memory.memsw.limit_in_bytes").read_text()) == mb << 20
    finally:
        cg.remove()


def test_a_forked_copy_of_the_caller_does_not_hold_the_spare(sandbox: None) -> None:
    """A child forked without exec keeps copies of the spare's pipes and lives until this run has
    returned: were the run waiting for those copies to close, it would never return."""
    _warm()
    release_r, release_w = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the forked copy sits there holding every descriptor
        try:
            os.read(release_r, 1)
        finally:
            os._exit(0)
    os.close(release_r)
    try:
        ex = run(["sh", "-c", "echo fine"], timeout=20)
        assert ex.stdout == "fine\n" and not ex.timed_out and ex.isolation["launch"] == "spare"
    finally:
        os.write(release_w, b"x")
        os.close(release_w)
        os.waitpid(child, 0)


def test_spares_of_finished_threads_are_discarded(sandbox: None) -> None:
    def two_runs() -> None:
        _warm()
        run(["true"])

    worker = threading.Thread(target=two_runs)
    worker.start()
    worker.join()
    ident = worker.ident
    run(["true"])  # the main thread's next run sweeps spares of threads that are gone
    assert worker not in spare_mod._spares and not any(t.ident == ident for t in spare_mod._spares)
    mine = [p for p in Path("/sys/fs/cgroup/pids").rglob(f"signoff-{os.getpid()}-*")]
    assert len(mine) <= 1  # at most the main thread's own spare


def test_a_thread_not_started_by_threading_gets_no_spare(sandbox: None) -> None:
    """Such a thread is known to `threading` only through a stand-in object that is never dropped and
    is handed to the next foreign thread with the same ident: a spare filed under it could be taken
    by a thread that did not fork it."""
    import _thread

    launches: list[str] = []
    done = threading.Event()

    def foreign() -> None:
        try:
            launches.extend(run(["true"]).isolation["launch"] for _ in range(3))
        finally:
            done.set()

    _thread.start_new_thread(foreign, ())
    assert done.wait(120)
    assert launches == ["fresh", "fresh", "fresh"]
    assert not any(isinstance(t, threading._DummyThread) for t in spare_mod._spares)


def test_a_spare_waiting_in_a_shell_passes_every_argument_rlimit_and_no_environment(sandbox: None) -> None:
    """A spare's launcher waits in a small shell (no copy of this interpreter left to tear down
    during the run). Arguments reach the command byte for byte, newlines and shell syntax included;
    the rlimits hold; bubblewrap's pid 1 and the command's stdin carry nothing of the spare's pipes."""
    _warm()
    tricky = ["a b", "line1\nline2\n", "$HOME `id` $(id) \\ \"q\" 'q'", "", "*", ";exit 3", "é\t\r"]
    script = ("import json,os,resource,sys\nprint(json.dumps({'argv': sys.argv[1:], "
              "'pid1': open('/proc/1/environ','rb').read().decode(), 'stdin': os.readlink('/proc/self/fd/0'), "
              "'nofile': resource.getrlimit(resource.RLIMIT_NOFILE), "
              "'fsize': resource.getrlimit(resource.RLIMIT_FSIZE), "
              "'core': resource.getrlimit(resource.RLIMIT_CORE)}))")
    limits = Limits(nofile=321, fsize_mb=7)
    ex = run([PY, "-c", script, *tricky], limits=limits)
    assert ex.isolation["launch"] == "spare"
    # where there is a dash, the shell path was the one taken
    assert spare_mod._waiter(bwrap.SANDBOX_UID, bwrap.SANDBOX_GID) is not None or not Path("/usr/bin/dash").exists()
    got = json.loads(ex.stdout)
    assert got["argv"] == tricky
    assert got["pid1"] == ""
    assert got["stdin"] == "/dev/null"
    assert got["nofile"] == [321, 321] and got["fsize"] == [7 << 20, 7 << 20] and got["core"] == [0, 0]


def test_a_run_prepared_ahead_is_the_threads_first_run_and_leaves_no_spare_behind(sandbox: None) -> None:
    """prepare_run: a verification's one execution gets its keeper and launcher started while the host
    still exports; that run then starts from the spare, with its limits, and a thread with a single
    run keeps no spare after it."""
    from signoff.sandbox import prepare_run

    limits = Limits(pids=20, memory_mb=200, tmpfs_mb=64)
    seen: dict[str, object] = {}

    def one_verification() -> None:
        prepare_run(limits, backend="docker")  # another backend: nothing is started
        with spare_mod._lock:
            seen["other backend"] = threading.current_thread() in spare_mod._spares
        prepare_run(limits)
        prepare_run(limits)  # one spare per thread: the second call finds it
        with spare_mod._lock:
            seen["spares"] = sum(1 for t in spare_mod._spares if t is threading.current_thread())
        ex = run(["sh", "-c", "id -u"], limits=limits)
        seen.update(launch=ex.isolation["launch"], stdout=ex.stdout, pids=ex.isolation["enforced"]["pids"])
        with spare_mod._lock:
            seen["left"] = threading.current_thread() in spare_mod._spares

    def recorded() -> None:
        try:
            one_verification()
        except Exception as exc:  # reported by the assertion below, not lost in the thread
            seen["error"] = repr(exc)

    worker = threading.Thread(target=recorded)
    worker.start()
    worker.join()
    assert seen == {"other backend": False, "spares": 1, "launch": "spare", "stdout": "10001\n", "pids": 20,
                    "left": False}
