"""What every Execution records, bounded output, collected files, and refusals of bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from signoff.kernel.canonical import canonical_digest
from signoff.kernel.errors import UsageError
from signoff.sandbox import Limits, Mount, SandboxUnavailable, run
from signoff.sandbox.diagnose import namespace_failure
from signoff.sandbox.record import GUARANTEES, guarantees


def test_record_carries_outcome_usage_and_isolation(sandbox: None) -> None:
    ex = run(["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert (ex.exit_code, ex.signal, ex.timed_out, ex.oom_killed, ex.pids_limit_hit) == (3, None, False, False, False)
    assert ex.stdout == "out\n" and ex.stderr == "err\n"
    assert ex.duration > 0 and ex.cpu_time >= 0 and ex.peak_memory_bytes
    iso = ex.isolation
    assert iso["backend"] == "bwrap" and iso["version"].startswith("bubblewrap") and iso["unsafe"] is False
    assert iso["uid"] == 10001 and iso["cgroups"] in ("v1", "v2")
    assert iso["enforced"]["memory_bytes"] == 384 << 20 and iso["enforced"]["pids"] == 96
    assert iso["limits"]["cpus"] == 0.75 and iso["network"] == "none"
    assert all(iso["guarantees"].values()), iso["guarantees"]
    assert tuple(iso["guarantees"]) == GUARANTEES
    record = ex.as_json()
    json.dumps(record)
    assert ex.digest() == canonical_digest(record)
    assert not ex.ok and ex.outcome == "exit"


def test_signal_death_is_reported(sandbox: None) -> None:
    ex = run(["sh", "-c", "kill -SEGV $$"])
    assert ex.signal == 11 and not ex.ok and ex.outcome == "signal"


def test_output_is_bounded_and_truncation_marked(sandbox: None) -> None:
    ex = run(["sh", "-c", "head -c 300000 /dev/zero | tr '\\0' a; echo done >&2"], output_limit=1000)
    assert len(ex.stdout) == 1000 and ex.stdout_truncated
    assert ex.stderr == "done\n" and not ex.stderr_truncated


def test_collect_returns_files_and_record_holds_digests(sandbox: None) -> None:
    # The content is made inside, so it is not in the (recorded) command line.
    ex = run(["sh", "-c", "mkdir -p out && head -c 12 /dev/urandom | base64 > out/r.txt && printf x > x.bin"],
             collect=["out/r.txt", "x.bin", "absent.txt"])
    assert sorted(ex.files) == ["out/r.txt", "x.bin"] and ex.files["x.bin"] == b"x"
    content = ex.files["out/r.txt"].decode().strip()
    assert len(content) == 16
    assert ex.as_json()["files"]["x.bin"]["size"] == 1
    assert content not in json.dumps(ex.as_json())  # contents are digested, not copied, into the record
    assert ex.exit_code == 0


def test_collect_keeps_the_command_exit_status(sandbox: None) -> None:
    ex = run(["sh", "-c", "echo r > r.txt; exit 5"], collect=["r.txt"])
    assert ex.exit_code == 5 and ex.files == {"r.txt": b"r\n"}


def test_writable_mount_and_workdir_choice(world_dir: Path) -> None:
    out = world_dir / "out"
    out.mkdir()
    out.chmod(0o777)
    ex = run(["sh", "-c", "pwd; echo hi > /out/f"], [Mount(out, "/out", writable=True)], workdir="/scratch")
    assert ex.stdout == "/scratch\n" and (out / "f").read_text() == "hi\n"
    assert ex.isolation["guarantees"]["read_only_mounts"] is False


def test_unsafe_mode_is_recorded(sandbox: None) -> None:
    ex = run(["sh", "-c", "id -u"], unsafe_no_sandbox=True)
    assert ex.isolation["unsafe"] is True and ex.isolation["backend"] == "none"
    assert ex.isolation["guarantees"]["network_isolated"] is False
    assert tuple(ex.isolation["guarantees"]) == GUARANTEES
    assert ex.stdout.strip() == "0"  # it really ran as us: no isolation


def test_a_backend_cannot_leave_out_or_invent_a_guarantee() -> None:
    held = dict.fromkeys(GUARANTEES, True)
    assert guarantees(held) == held
    with pytest.raises(ValueError, match=r"missing.*tree_killed"):
        guarantees({k: v for k, v in held.items() if k != "tree_killed"})
    with pytest.raises(ValueError, match=r"unknown.*isolated_enough"):
        guarantees(held | {"isolated_enough": True})


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"command": []}, "non-empty list"),
        ({"command": "echo hi"}, "non-empty list"),
        ({"command": ["true"], "mounts": [Mount(Path("/usr"), "/proc")]}, "overlaps /proc"),
        ({"command": ["true"], "mounts": [Mount(Path("/usr"), "relative")]}, "absolute path"),
        ({"command": ["true"], "mounts": [Mount(Path("/nonexistent-signoff"), "/src")]}, "does not exist"),
        ({"command": ["true"], "mounts": [Mount(Path("/usr"), "/src"), Mount(Path("/etc"), "/src")]}, "share"),
        ({"command": ["true"], "limits": Limits(memory_mb=128, tmpfs_mb=128)}, "not smaller than"),
        ({"command": ["true"], "limits": Limits(pids=0)}, "positive"),
        ({"command": ["true"], "env": {"BAD=NAME": "x"}}, "not valid"),
        ({"command": ["true"], "collect": ["../etc/passwd"]}, "relative path"),
        ({"command": ["true"], "timeout": 0}, "out of range"),
        ({"command": ["true"], "workdir": "/"}, "not allowed"),
        ({"command": ["true"], "backend": "chroot"}, "unknown sandbox backend"),
    ],
)
def test_bad_input_is_refused_clearly(sandbox: None, kwargs: dict[str, object], needle: str) -> None:
    with pytest.raises(UsageError) as info:
        run(**kwargs)  # type: ignore[arg-type]
    assert needle in info.value.message and info.value.fix


def test_no_backend_refuses_with_cause_and_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    import signoff.sandbox.bwrap as bwrap_mod
    import signoff.sandbox.engine as engine_mod

    monkeypatch.setattr(bwrap_mod, "locate", lambda: None)
    monkeypatch.setattr(engine_mod, "engine_answers", lambda engine: False)
    with pytest.raises(SandboxUnavailable) as info:
        run(["true"])
    assert "no sandbox backend" in info.value.message and "--unsafe-no-sandbox" in (info.value.fix or "")
    with pytest.raises(SandboxUnavailable) as named:
        run(["true"], backend="bwrap")  # asked for by name, it is not replaced by another backend
    assert "bubblewrap (bwrap) is not installed" in named.value.message and named.value.fix


def test_namespace_failure_names_apparmor(monkeypatch: pytest.MonkeyPatch) -> None:
    import signoff.sandbox.diagnose as diag

    real = diag._sysctl
    monkeypatch.setattr(diag, "_sysctl", lambda name: "1" if "apparmor" in name else real(name))
    err = namespace_failure("bwrap: setting up uid map: Permission denied\n", None)
    assert "AppArmor" in err.message and "bwrap: setting up uid map" in err.message
    assert err.fix and "bubblewrap" in err.fix


def test_concurrent_runs_do_not_hold_each_other(sandbox: None) -> None:
    """Each run's keeper drops the caller's other descriptors: a short run in one thread ends while a
    long run in another thread is still going (the order of completion is the proof)."""
    import threading

    order: list[str] = []
    release = threading.Event()

    def long_run() -> None:
        run(["sleep", "30"], timeout=3)  # ends at its timeout
        order.append("long")

    def short_run() -> None:
        run(["true"])
        order.append("short")
        release.set()

    threads = [threading.Thread(target=long_run), threading.Thread(target=short_run)]
    for t in threads:
        t.start()
    assert release.wait(15)
    assert order == ["short"]
    for t in threads:
        t.join()
    assert order == ["short", "long"]


def test_missing_command_is_recorded_as_a_sandbox_error(sandbox: None) -> None:
    ex = run(["no-such-command-signoff"])
    assert ex.exit_code != 0 and not ex.ok
    assert "execvp no-such-command-signoff" in ex.isolation["sandbox_error"]
    assert "sandbox_error" not in run(["true"]).isolation


def test_caller_ignoring_sigchld_still_gets_a_status(sandbox: None) -> None:
    import signal as sig

    previous = sig.signal(sig.SIGCHLD, sig.SIG_IGN)
    try:
        ex = run(["sh", "-c", "exit 7"])
    finally:
        sig.signal(sig.SIGCHLD, previous)
    assert ex.exit_code == 7


def test_interrupted_caller_leaves_nothing_running(sandbox: None) -> None:
    import secrets
    import signal as sig

    from signoff.sandbox.proofs import processes_with

    marker = "intr-" + secrets.token_hex(6)

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = sig.signal(sig.SIGALRM, interrupt)
    try:
        sig.setitimer(sig.ITIMER_REAL, 0.5)
        with pytest.raises(KeyboardInterrupt):
            run(["sh", "-c", "setsid sh -c 'sleep 1000' \"$0\" & sleep 999", marker], timeout=60)
    finally:
        sig.setitimer(sig.ITIMER_REAL, 0)
        sig.signal(sig.SIGALRM, previous)
    import time

    deadline = time.monotonic() + 10
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker) == []


def test_a_lookup_started_ahead_is_the_one_locate_returns(sandbox: None) -> None:
    # A verification starts `bwrap --version` in a thread while it prepares; locate() joins that thread
    # (so nothing of it runs when a sandbox forks) and returns what a lookup of its own would.
    import signoff.sandbox.bwrap as bwrap_mod

    looked_up = bwrap_mod.locate()
    bwrap_mod._locate.cache_clear()
    bwrap_mod.locate_soon()
    (thread,) = bwrap_mod._looking
    assert bwrap_mod.locate() == looked_up and not thread.is_alive() and not bwrap_mod._looking
    bwrap_mod.locate_soon()  # looked up already: nothing is started
    assert not bwrap_mod._looking


def test_the_callers_work_meanwhile_runs_once_while_the_command_runs(sandbox: None) -> None:
    done: list[str] = []
    ex = run(["sh", "-c", "echo ran"], meanwhile=lambda: done.append("meanwhile"))
    assert ex.exit_code == 0 and ex.stdout == "ran\n" and done == ["meanwhile"]

    def fails() -> None:
        raise RuntimeError("the caller's own work failed")

    with pytest.raises(RuntimeError, match="the caller's own work failed"):
        run(["sleep", "30"], meanwhile=fails, timeout=60)  # stopped at once, not after its 30 s
