"""Attacks from inside the sandbox, each with a control showing the same attack works outside it."""

from __future__ import annotations

import errno
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from signoff.sandbox import Limits, Mount, run
from signoff.sandbox.proofs import FLOOD as FLOOD_PATHS
from signoff.sandbox.proofs import listener, processes_with
from tests.support.requires import require

PY = "/usr/bin/python3"
CONNECT = """import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), 3)
    print('CONNECTED')
except OSError as e:
    print('REFUSED', e.errno, type(e).__name__)
"""


def host_python(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=60)


def sandbox_uid_python(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The same program as the sandbox's uid on the host, with no sandbox."""
    return subprocess.run(["setpriv", "--reuid=10001", "--regid=10001", "--clear-groups", PY, "-c", script, *args],
                          capture_output=True, text=True, timeout=60)


def test_host_loopback_listener_gets_no_connection(sandbox: None) -> None:
    with listener() as srv:
        control = host_python(CONNECT, "127.0.0.1", str(srv.port))
        assert "CONNECTED" in control.stdout
        assert len(srv.peers()) == 1
        ex = run([PY, "-c", CONNECT, "127.0.0.1", str(srv.port)])
        assert ex.exit_code == 0, ex.stderr
        assert "REFUSED" in ex.stdout and "ConnectionRefusedError" in ex.stdout  # the namespace alone
        assert len(srv.peers()) == 1
        assert ex.isolation["guarantees"]["network_isolated"] is True


def test_seccomp_socket_rule_alone_blocks_the_network(sandbox: None) -> None:
    """With the host network shared (network=True) only the seccomp layer stands: it still refuses."""
    with listener() as srv:
        shared = run([PY, "-c", CONNECT, "127.0.0.1", str(srv.port)], network=True)
        assert "CONNECTED" in shared.stdout  # control: without either layer the connection succeeds
        ex = run([PY, "-c", CONNECT, "127.0.0.1", str(srv.port)], network=True, deny_inet=True)
        assert "REFUSED 13 PermissionError" in ex.stdout
        assert len(srv.peers()) == 1


def test_name_resolution_fails(sandbox: None) -> None:
    script = ("import socket, sys\ntry:\n    print(socket.getaddrinfo(sys.argv[1], 443)[0][4][0])\n"
              "except OSError as e:\n    print('NORESOLVE', e)")
    # A public name when the host has a resolver; else the host's own name (its /etc/hosts or DNS).
    candidates = ["pypi.org", socket.gethostname()]
    name = next((n for n in candidates if "NORESOLVE" not in host_python(script, n).stdout), None)
    require("name resolution", name is not None, "a resolver or /etc/hosts entry for pypi.org or this host's name")
    assert name is not None
    ex = run([PY, "-c", script, name])
    assert "NORESOLVE" in ex.stdout


def _host_address() -> str | None:
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent; this only picks the outgoing interface
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


def test_outside_address_unreachable(sandbox: None) -> None:
    address = _host_address()
    require("network interface", address is not None, "a non-loopback IPv4 address on this machine")
    assert address is not None
    with listener("0.0.0.0") as srv:
        control = host_python(CONNECT, address, str(srv.port))
        assert "CONNECTED" in control.stdout
        ex = run([PY, "-c", CONNECT, address, str(srv.port)])
        assert f"REFUSED {errno.ENETUNREACH}" in ex.stdout
        assert len(srv.peers()) == 1


def test_world_readable_secret_outside_the_mounts_is_invisible(world_dir: Path) -> None:
    secret = world_dir / "secret.txt"
    secret.write_text("outside-secret\n")
    os.chmod(secret, 0o644)
    control = sandbox_uid_python(f"print(open({str(secret)!r}).read())")
    assert "outside-secret" in control.stdout
    ex = run(["cat", str(secret)])
    assert ex.exit_code != 0 and "No such file" in ex.stderr and "outside-secret" not in ex.stdout


def test_root_only_file_inside_a_mount_is_unreadable(checkout: Path) -> None:
    control = run(["cat", str(checkout / "root-only.txt")], [Mount(checkout, str(checkout))], unsafe_no_sandbox=True)
    assert "root-only-content" in control.stdout  # what bwrap started by root would have allowed
    ex = run(["cat", "/src/root-only.txt"], [Mount(checkout, "/src")])
    assert "Permission denied" in ex.stderr and "root-only-content" not in ex.stdout


@pytest.mark.parametrize("target", ["/src/pwned.py", "/usr/pwned", "/pwned", "/etc/pwned"])
def test_writes_outside_the_work_area_are_refused(checkout: Path, target: str) -> None:
    host_path = checkout / "pwned.py" if target.startswith("/src") else Path(target)
    assert os.access(host_path.parent, os.W_OK)  # control: writable on the host
    ex = run(["sh", "-c", f"echo pwned > {target}"], [Mount(checkout, "/src")])
    assert ex.exit_code != 0 and "Read-only file system" in ex.stderr
    assert not (checkout / "pwned.py").exists()
    ok = run(["sh", "-c", "echo fine > /work/ok.txt && cat /work/ok.txt"], [Mount(checkout, "/src")])
    assert ok.stdout == "fine\n"


FORK_40 = ("import os,time\nn=0\nfor _ in range(40):\n try:\n  if os.fork()==0:\n   time.sleep(1); os._exit(0)\n"
           "  n+=1\n except OSError:\n  pass\nprint(n)")


def test_process_limit(sandbox: None) -> None:
    control = host_python(FORK_40)
    assert control.stdout.strip() == "40"
    ex = run([PY, "-c", FORK_40], limits=Limits(pids=16))
    assert int(ex.stdout.strip()) < 16
    assert ex.pids_limit_hit and not ex.timed_out


def test_fork_bomb_is_contained_and_killed(sandbox: None) -> None:
    marker = "bomb-" + secrets.token_hex(6)
    bomb = f"import os\n# {marker}\nwhile True:\n try:\n  os.fork()\n except OSError:\n  pass"
    ex = run([PY, "-c", bomb, marker], limits=Limits(pids=32), timeout=3)
    assert ex.timed_out and ex.pids_limit_hit and ex.outcome == "timeout"
    assert ex.signal == signal.SIGKILL and ex.exit_code is None
    assert processes_with(marker) == []


HOG = """import subprocess, sys
r = subprocess.run([sys.executable, '-c', 'b = [bytearray(16 << 20) for _ in range(25)]'])
print('child', r.returncode)
"""


def test_memory_hog_is_oom_killed(sandbox: None) -> None:
    control = host_python(HOG)
    assert "child 0" in control.stdout  # 400 MB is fine on the host
    ex = run([PY, "-c", HOG], limits=Limits(memory_mb=192, tmpfs_mb=64))
    assert ex.oom_killed and ex.outcome == "oom"
    assert "child -9" in ex.stdout  # the hog died; its parent went on
    assert ex.peak_memory_bytes is not None and ex.peak_memory_bytes <= 192 << 20


FLOOD = """import sys
try:
    with open(sys.argv[1], 'wb') as f:
        for _ in range(128):
            f.write(bytes(1 << 20))
            f.flush()
    print('WROTE')
except OSError as e:
    print('STOPPED', e.errno)
"""


def test_tmpfs_flood_gets_a_clean_error(world_dir: Path) -> None:
    control = host_python(FLOOD, str(world_dir / "flood.bin"))
    assert "WROTE" in control.stdout
    ex = run([PY, "-c", FLOOD, "/work/flood.bin"], limits=Limits(memory_mb=192, tmpfs_mb=64, fsize_mb=256))
    assert f"STOPPED {errno.ENOSPC}" in ex.stdout
    assert not ex.oom_killed and ex.exit_code == 0


def _until(condition: Callable[[], bool], within: float = 30.0) -> bool:
    """Wait for a state the test can observe (not for a length of time); False if it never came."""
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _proc(pid: int, name: str) -> str:
    """/proc/<pid>/<name>, or "" once the process is gone."""
    try:
        return Path(f"/proc/{pid}/{name}").read_text(errors="replace")
    except OSError:
        return ""


def _session(pid: int) -> int | None:
    fields = _proc(pid, "stat").rsplit(")", 1)[-1].split()
    return int(fields[3]) if len(fields) > 3 else None


def test_dev_and_dev_shm_floods_end_in_enospc_not_an_oom_kill(sandbox: None) -> None:
    """The reported attack: 3 x 200 MB into /dev/shm (then the same into /dev itself) under the
    default 384 MB memory limit. It used to end in an OOM kill; it must stop at the bound, cleanly."""
    limits = Limits()
    # control: the host's /dev/shm takes twice the bound
    target = Path("/dev/shm") / f"signoff-control-{secrets.token_hex(4)}"
    try:
        control = host_python(FLOOD_PATHS, "1", str(limits.shm_mb * 2), str(target))
    finally:
        for leftover in target.parent.glob(f"{target.name}*"):
            leftover.unlink()
    assert f"WROTE {limits.shm_mb * 2}" in control.stdout, control.stdout
    ex = run([PY, "-c", FLOOD_PATHS, "3", "200", "/dev/shm/flood", "/dev/flood"], limits=limits, timeout=60)
    assert not ex.oom_killed and ex.exit_code == 0, (ex.stdout, ex.stderr)
    ended = dict(line.split(" ", 1) for line in ex.stdout.splitlines())
    errname, written = ended["/dev/shm/flood"].split()
    assert errname == "ENOSPC" and int(written) <= limits.shm_mb
    assert ended["/dev/flood"].split()[0] == "EROFS"  # the rest of /dev takes nothing at all
    assert ex.isolation["limits"]["shm_mb"] == limits.shm_mb


DAEMONS = ("sleep 1000 & setsid sh -c 'sleep 1001; : {m}' & sh -c \"setsid sh -c 'sleep 1002; : {m}' &\"; "
           "{py} -c 'import os,time\nif os.fork(): os._exit(0)\nos.setsid()\n"
           "if os.fork(): os._exit(0)\ntime.sleep(1003)' {m}; "
           "exec sleep 999")


def test_timeout_kills_the_whole_tree(sandbox: None) -> None:
    marker = "tree-" + secrets.token_hex(6)
    script = DAEMONS.format(m=marker, py=PY)
    control = subprocess.Popen(["sh", "-c", script], start_new_session=True)
    try:
        # Started when the shell has reached its last step (`exec sleep 999`) and the double-forked
        # Python daemon exists: the one marked process in a session that is neither its own nor the shell's.
        def daemons_started() -> bool:
            if _proc(control.pid, "cmdline") != "sleep\x00999\x00":
                return False
            return any(_session(pid) not in (pid, control.pid, None) for pid in processes_with(marker)
                       if _proc(pid, "cmdline").startswith(PY))

        assert _until(daemons_started)
        control.kill()
        control.wait()
        left = processes_with(marker)
        assert len(left) >= 2  # control: plain kill leaves the detached children running
    finally:
        for pid in processes_with(marker):
            os.kill(pid, signal.SIGKILL)
    ex = run(["sh", "-c", script], timeout=1.5)
    assert ex.timed_out and ex.exit_code is None
    assert processes_with(marker) == []
    assert ex.isolation["guarantees"]["tree_killed"] is True


def test_pid1_environment_holds_no_host_secret(sandbox: None, monkeypatch: pytest.MonkeyPatch) -> None:
    token = "host-secret-" + secrets.token_hex(6)
    monkeypatch.setenv("SIGNOFF_TEST_SECRET", token)
    control = host_python("print(open('/proc/self/environ', 'rb').read())")
    assert token in control.stdout  # control: a process started from the host carries it
    ex = run(["sh", "-c", "cat /proc/1/environ; echo; env"], env={"GIVEN": "yes"})
    assert token not in ex.stdout and "SIGNOFF_TEST_SECRET" not in ex.stdout
    assert "GIVEN=yes" in ex.stdout
    env_lines = {line.split("=", 1)[0] for line in ex.stdout.splitlines()[1:] if "=" in line}
    assert env_lines <= {"GIVEN", "PATH", "HOME", "TMPDIR", "LANG", "PWD", "SHLVL", "_"}


SYSCALLS = ("import ctypes,os\nlibc=ctypes.CDLL(None,use_errno=True)\n"
            "def attempt(name, call):\n r=call(); print(name, 'OK' if r==0 else os.strerror(ctypes.get_errno()))\n"
            "attempt('unshare', lambda: libc.unshare(0x04000000))\n"
            "attempt('mount', lambda: libc.mount(b'none', b'/tmp', b'tmpfs', 0, None))\n"
            "attempt('ptrace', lambda: libc.ptrace(0, 0, None, None))\n"
            "attempt('unshare-user', lambda: libc.unshare(0x10000000))\n")


def test_ptrace_mount_unshare_are_refused(sandbox: None) -> None:
    control = subprocess.run(["unshare", "--mount", sys.executable, "-c", SYSCALLS], capture_output=True, text=True)
    for name in ("unshare", "mount", "ptrace", "unshare-user"):
        assert f"{name} OK" in control.stdout, control.stdout
    ex = run([PY, "-c", SYSCALLS])
    for name in ("unshare", "unshare-user", "mount", "ptrace"):
        assert f"{name} Operation not permitted" in ex.stdout, ex.stdout


def test_cannot_kill_a_process_outside(sandbox: None) -> None:
    victim = subprocess.Popen(["setpriv", "--reuid=10001", "--regid=10001", "--clear-groups", "sleep", "60"])
    other = subprocess.Popen(["setpriv", "--reuid=10001", "--regid=10001", "--clear-groups", "sleep", "60"])
    try:
        script = (f"import os\ntry:\n os.kill({victim.pid}, 9); print('KILLED')\n"
                  "except OSError as e:\n print('NO', e.errno)")
        ex = run([PY, "-c", script])
        assert f"NO {errno.ESRCH}" in ex.stdout
        assert victim.poll() is None
        control = sandbox_uid_python(script.replace(str(victim.pid), str(other.pid)))
        assert "KILLED" in control.stdout  # the same uid outside the sandbox can
    finally:
        for p in (victim, other):
            p.kill()
            p.wait()


def test_pid1_command_line_hides_host_paths_and_values(checkout: Path) -> None:
    value = "given-" + secrets.token_hex(6)
    ex = run(["sh", "-c", "tr '\\000' ' ' < /proc/1/cmdline; echo; tr '\\000' ' ' < /proc/self/cmdline"],
             [Mount(checkout, "/src")], env={"TOKEN": value})
    pid1 = ex.stdout.splitlines()[0]
    assert pid1.startswith("bwrap --args")
    assert str(checkout) not in ex.stdout and value not in ex.stdout  # options went through a descriptor
