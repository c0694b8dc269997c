"""Live proofs of each guarantee, from the attacker's side: `signoff sandbox check`.

Each proof runs a small hostile program in a real sandbox and checks the kernel said no. Programs
that need more than sh use the distribution's /usr/bin/python3, which the sandbox mounts with /usr.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from signoff.kernel.checks import Check
from signoff.kernel.errors import SignoffError
from signoff.sandbox.model import Limits, Mount
from signoff.sandbox.run import run

PY = "/usr/bin/python3"


class Listener:
    """A TCP listener on the host that records who connected."""

    def __init__(self, srv: socket.socket) -> None:
        self._srv = srv
        self.port: int = srv.getsockname()[1]
        self._accepted: list[tuple[str, int]] = []
        self._probes: set[tuple[str, int]] = set()
        self._changed = threading.Condition()

    def record(self, addr: tuple[str, int]) -> None:
        with self._changed:
            self._accepted.append(addr)
            self._changed.notify_all()

    def peers(self) -> list[str]:
        """Everyone whose connection was established before this call. A probe connection joins the
        same accept queue, which is served in order: once the probe is accepted, so is every earlier
        connection (no waiting for a while and hoping)."""
        host = self._srv.getsockname()[0]
        with socket.create_connection(("127.0.0.1" if host == "0.0.0.0" else host, self.port), 5) as probe:  # noqa: S104
            mine = probe.getsockname()[:2]
            with self._changed:
                self._probes.add(mine)
                if not self._changed.wait_for(lambda: mine in self._accepted, timeout=30):
                    raise RuntimeError("the listener did not accept its own probe connection")
                return [f"{a}:{p}" for a, p in self._accepted if (a, p) not in self._probes]


@contextlib.contextmanager
def listener(host: str = "127.0.0.1") -> Iterator[Listener]:
    """A TCP listener on `host` for the duration of the block."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, 0))
    srv.listen(16)
    srv.settimeout(0.2)  # how often the accept loop looks at `stop`
    found = Listener(srv)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, addr = srv.accept()
            except (TimeoutError, OSError):
                continue
            found.record((addr[0], addr[1]))
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        stop.set()
        thread.join(timeout=2)
        srv.close()


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    """A world-readable scratch directory (bubblewrap resolves mounts as the sandbox uid)."""
    d = Path(tempfile.mkdtemp(prefix="signoff-proof-"))
    os.chmod(d, 0o755)  # noqa: S103 - the sandbox uid must traverse it; it holds only probe files
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def processes_with(marker: str) -> list[int]:
    """Host pids whose command line contains `marker` (leftovers of a killed tree)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
    return found


def _network() -> tuple[bool, str]:
    with listener() as srv:
        port = srv.port
        ex = run([PY, "-c", f"import socket\ntry:\n socket.create_connection(('127.0.0.1',{port}),2)\n"
                  " print('CONNECTED')\nexcept OSError as e:\n print(type(e).__name__)"])
        ok = "CONNECTED" not in ex.stdout and not srv.peers() and ex.exit_code == 0
        return ok, f"connect to the host's 127.0.0.1:{port}: {ex.stdout.strip() or ex.stderr.strip()[:80]}"


def _files_hidden() -> tuple[bool, str]:
    with scratch() as d:
        secret = d / "secret.txt"
        secret.write_text("s3cret\n")
        os.chmod(secret, 0o644)
        ex = run(["sh", "-c", f"cat {secret} 2>&1; ls /root /home 2>&1"])
        ok = "s3cret" not in ex.stdout and ex.exit_code != 0
        return ok, f"world-readable host file {secret.name}: {ex.stdout.strip().splitlines()[0][:80]}"


def _read_only() -> tuple[bool, str]:
    with scratch() as d:
        (d / "mod.py").write_text("x = 1\n")
        ex = run(["sh", "-c", "for p in /src/pwned /usr/pwned /pwned /etc/pwned; do "
                  "if echo x > $p 2>/dev/null; then echo WROTE $p; else echo refused $p; fi; done"],
                 [Mount(d, "/src")])
        leaked = list(d.iterdir())
        ok = "WROTE" not in ex.stdout and ex.stdout.count("refused") == 4 and len(leaked) == 1
        return ok, "writes to /src, /usr, / and /etc: " + ("all refused" if ok else ex.stdout.strip()[:120])


def _pids() -> tuple[bool, str]:
    script = ("import os,time\nn=0\nfor _ in range(40):\n try:\n  if os.fork()==0:\n   time.sleep(3); os._exit(0)\n"
              "  n+=1\n except OSError:\n  pass\nprint(n)")
    ex = run([PY, "-c", script], limits=Limits(pids=16, memory_mb=256, tmpfs_mb=64), timeout=20)
    started = int(ex.stdout.strip() or "0") if ex.stdout.strip().isdigit() else 0
    ok = ex.pids_limit_hit and started < 16
    return ok, f"40 forks under pids=16: {started} started, limit hit={ex.pids_limit_hit}"


def _memory() -> tuple[bool, str]:
    script = "import subprocess,sys\nsubprocess.run([sys.executable,'-c','b=[bytearray(8<<20) for _ in range(40)]'])"
    ex = run([PY, "-c", script], limits=Limits(memory_mb=96, tmpfs_mb=16), timeout=30)
    ok = ex.oom_killed
    return ok, f"320 MB allocated under memory=96 MB: oom_killed={ex.oom_killed}, exit={ex.exit_code}"


# Writes `count` x `mb` MB to each path given, and prints per path how the writes ended.
FLOOD = """import errno, sys
count, mb = int(sys.argv[1]), int(sys.argv[2])
for path in sys.argv[3:]:
    written = 0
    try:
        for i in range(count):
            with open(f"{path}.{i}", "wb") as fh:
                for _ in range(mb):
                    fh.write(bytes(1 << 20))
                    fh.flush()
                    written += 1
        print(path, "WROTE", written)
    except OSError as e:
        print(path, errno.errorcode.get(e.errno, e.errno), written)
"""


def _dev_bounded() -> tuple[bool, str]:
    limits = Limits()
    # /dev/shm here is the sandbox's own, not the host's
    ex = run([PY, "-c", FLOOD, "3", "200", "/dev/shm/flood", "/dev/flood"], limits=limits, timeout=60)  # noqa: S108
    ended = dict(line.split(" ", 1) for line in ex.stdout.splitlines() if " " in line)
    shm = ended.get("/dev/shm/flood", "").split()  # noqa: S108
    dev = ended.get("/dev/flood", "").split()
    ok = (not ex.oom_killed and ex.exit_code == 0 and shm[:1] == ["ENOSPC"] and int(shm[1]) <= limits.shm_mb
          and dev[:1] in (["EROFS"], ["ENOSPC"]))
    return ok, (f"3 x 200 MB into /dev/shm: {' '.join(shm) or ex.stderr.strip()[:60]} MB "
                f"(bound {limits.shm_mb} MB); into /dev: {' '.join(dev[:1]) or '?'}; oom_killed={ex.oom_killed}")


def _cpu() -> tuple[bool, str]:
    script = ("import os,time\nfor _ in range(2):\n if os.fork()==0:\n  t=time.time()\n"
              "  while time.time()-t<1.5: pass\n  os._exit(0)\nos.wait(); os.wait()")
    ex = run([PY, "-c", script], limits=Limits(cpus=0.25), timeout=30)
    share = ex.cpu_time / ex.duration if ex.duration else 0.0
    ok = ex.exit_code == 0 and share <= 0.25 * 1.4 + 0.05
    return ok, f"two busy processes under cpus=0.25 used {share:.2f} CPUs ({ex.cpu_time:.2f} s in {ex.duration:.2f} s)"


def _timeout_tree() -> tuple[bool, str]:
    marker = "signoff-" + secrets.token_hex(6)
    script = (f"sleep 1000 & setsid sh -c 'sleep 1001; echo {marker}' & "
              f"sh -c \"setsid sh -c 'sleep 1002; echo {marker}' &\" ; exec sleep 999")
    ex = run(["sh", "-c", script], timeout=1.0)
    left = processes_with(marker)  # the keeper reaps the whole tree before the run returns
    ok = ex.timed_out and not left
    return ok, f"timeout with setsid'd and double-forked children: timed_out={ex.timed_out}, {len(left)} left"


def _uid() -> tuple[bool, str]:
    with scratch() as d:
        secret = d / "root-only.txt"
        secret.write_text("r00t\n")
        os.chmod(secret, 0o600)
        ex = run(["sh", "-c", "id -u; cat /src/root-only.txt 2>&1"], [Mount(d, "/src")])
        # Started by root, the file is root's and must stay unreadable; started by a user, it is
        # that user's own file, and only the uid itself can be checked.
        ok = ex.isolation.get("uid") not in (0, None) and ("r00t" not in ex.stdout or os.geteuid() != 0)
        return ok, f"host uid {ex.isolation.get('uid')}; root-only file in a mount: {ex.stdout.splitlines()[-1][:60]}"


def _capabilities() -> tuple[bool, str]:
    ex = run(["sh", "-c", "grep -E '^(CapEff|CapBnd|CapAmb|NoNewPrivs)' /proc/self/status"])
    fields = dict(re.findall(r"^(\w+):\s+(\S+)", ex.stdout, re.MULTILINE))
    ok = (fields.get("CapEff") == fields.get("CapBnd") == "0000000000000000" and fields.get("NoNewPrivs") == "1")
    return ok, " ".join(f"{k}={v}" for k, v in fields.items())


def _seccomp() -> tuple[bool, str]:
    script = ("import ctypes,os\nlibc=ctypes.CDLL(None,use_errno=True)\nres={}\n"
              "for name,call in [('unshare',lambda:libc.unshare(0x04000000)),"
              "('mount',lambda:libc.mount(b'none',b'/work',b'tmpfs',0,None)),"
              "('ptrace',lambda:libc.ptrace(0,0,None,None))]:\n"
              " r=call(); res[name]=os.strerror(ctypes.get_errno()) if r!=0 else 'ALLOWED'\n"
              "print(open('/proc/self/status').read().split('Seccomp:')[1].split()[0], res)")
    ex = run([PY, "-c", script])
    ok = ex.stdout.startswith("2 ") and "ALLOWED" not in ex.stdout
    return ok, ex.stdout.strip()[:160] or ex.stderr.strip()[:160]


def _environment() -> tuple[bool, str]:
    token = "leak-" + secrets.token_hex(6)
    os.environ["SIGNOFF_PROOF_SECRET"] = token
    try:
        ex = run(["sh", "-c", "tr '\\0' '\\n' < /proc/1/environ; echo ---; env"], env={"ONLY": "1"})
    finally:
        del os.environ["SIGNOFF_PROOF_SECRET"]
    pid1 = ex.stdout.split("---")[0].strip()
    ok = token not in ex.stdout and pid1 == "" and "ONLY=1" in ex.stdout
    entries = len(pid1.split()) if pid1 else 0
    return ok, f"pid 1 environment has {entries} entries; host secret visible={token in ex.stdout}"


PROOFS: list[tuple[str, Callable[[], tuple[bool, str]]]] = [
    ("network", _network),
    ("outside files hidden", _files_hidden),
    ("read-only root and checkout", _read_only),
    ("process limit", _pids),
    ("memory limit", _memory),
    ("/dev and /dev/shm bounded", _dev_bounded),
    ("CPU share", _cpu),
    ("timeout kills the tree", _timeout_tree),
    ("unprivileged uid", _uid),
    ("no capabilities", _capabilities),
    ("seccomp", _seccomp),
    ("clean environment", _environment),
]

_NEED_ROOT = {"process limit", "memory limit", "CPU share"}


def prove_all() -> list[Check]:
    """Run every proof; a SignoffError (no backend) fails that proof with its fix."""
    checks: list[Check] = []
    for name, proof in PROOFS:
        try:
            ok, detail = proof()
            fix = None if ok else ("run as root for cgroup limits" if name in _NEED_ROOT and os.geteuid() != 0
                                   else "see docs/sandbox.md")
        except SignoffError as exc:
            ok, detail, fix = False, exc.message, exc.fix
        checks.append(Check(name, ok, detail, fix, required=True))
    return checks
