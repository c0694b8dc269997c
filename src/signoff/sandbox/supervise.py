"""Start one process tree under a watchful parent, bound its output, and leave nothing behind.

Layout (three processes, no interpreter start-up on the path):

    caller ──fork──> keeper ──fork──> launcher ──execve──> bwrap (or the command, unsafe mode)

- The *launcher* runs as root only between fork and exec: it joins the execution's cgroups, lowers
  rlimits, places the file descriptors bubblewrap reads, drops the capability bounding set, takes
  the unprivileged uid, sets no_new_privs and a parent-death signal, and execs with an empty
  environment (bubblewrap's pid 1 keeps the environment it was started with, and the sandbox can
  read it at /proc/1/environ).
- The *keeper* is a child subreaper: everything the tree orphans is re-parented to it, and it
  enforces the wall clock, kills the whole tree and reaps every process before it reports.
  Being a separate process keeps the subreaper role (and its reaping) away from the caller, whose
  other children we must not steal.
- The *caller* reads stdout, stderr and the side channels with a bound, and marks truncation.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import fcntl
import json
import os
import resource
import selectors
import signal
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

# No line (the spare was discarded): end quietly. PWD is the one variable a POSIX shell started
# with an empty environment exports; bubblewrap's pid 1 must see an empty environment.
# Arguments with newlines arrive as quoted pieces joined by "$nl" (the line holds no newline).
WAITER_SCRIPT = 'IFS= read -r line || exit 0; unset PWD; nl="\n"; eval "$line"'

_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38

_libc = ctypes.CDLL(None, use_errno=True)
_prctl_fn = _libc.prctl
_prctl_fn.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_prctl_fn.restype = ctypes.c_int


def _fork() -> int:
    """os.fork, without Python 3.12's warning about forking a multi-threaded process: the child runs
    only this module's code (no locks of other threads) and then execs or exits."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return os.fork()


def memfd(name: str, data: bytes = b"") -> int:
    """An anonymous file holding `data`, positioned at its start (what bubblewrap reads from a descriptor)."""
    fd = os.memfd_create(name)
    if data:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _prctl(option: int, arg: int) -> None:
    if _prctl_fn(option, arg, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl({option}, {arg}): {os.strerror(err)}")


def _cap_last() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as fh:
            return int(fh.read())
    except (OSError, ValueError):
        return 40


_CAP_LAST = _cap_last()


@dataclass
class Launch:
    """Everything the launcher does between fork and exec, decided in advance by the caller."""

    exec_target: str | int  # a path, or an open fd of the binary (fexecve needs no path traversal)
    argv: list[str]
    env: dict[str, str]
    timeout: float
    pass_fds: list[int] = field(default_factory=list)  # placed at 3, 4, 5, ... in order
    cgroup_files: list[str] = field(default_factory=list)
    rlimits: list[tuple[int, int]] = field(default_factory=list)
    drop_to: tuple[int, int] | None = None  # (uid, gid)
    cwd: str | None = None
    search_path: bool = False  # resolve argv[0] through env PATH (unsafe mode)
    output_limit: int = 1 << 20
    channels: dict[str, int] = field(default_factory=dict)  # name -> read end of an extra pipe
    channel_limit: int = 8 << 20
    # A tree started ahead of time (see spare.py) waits on these until the run's parameters arrive:
    # the launcher reads {"argv", "rlimits"} on `go_fd`, the keeper {"timeout"} on `keeper_go_fd`.
    go_fd: int | None = None
    keeper_go_fd: int | None = None
    # With a spare: a POSIX shell the launcher execs once everything but the command line is done
    # (cgroups, descriptors, capabilities, uid), so that this copy of the caller's interpreter is
    # torn down before the run instead of during it. It reads one line of shell words on stdin
    # (the go pipe): the rlimits and the exec of bubblewrap (see spare.waiter_line).
    waiter: str | None = None


@dataclass
class Outcome:
    status: int | None
    timed_out: bool
    launch_error: str | None
    duration: float
    cpu_time: float
    max_rss: int
    reaped_after: int
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    channels: dict[str, bytes]
    channels_truncated: dict[str, bool]


@dataclass
class Tree:
    """A started keeper, and the caller's ends of its pipes."""

    keeper: int
    launch: Launch
    streams: dict[str, int]
    limits: dict[str, int]


def run_tree(launch: Launch, stdout_w: int, stderr_w: int, stdout_r: int, stderr_r: int,
             child_ends: list[int]) -> Outcome:
    """Fork the keeper, collect output until every writer is gone, and return what happened.
    `child_ends` are the caller's copies of write ends that only the tree may hold."""
    return finish_tree(start_tree(launch, stdout_w, stderr_w, stdout_r, stderr_r, child_ends))


def start_tree(launch: Launch, stdout_w: int, stderr_w: int, stdout_r: int, stderr_r: int,
               child_ends: list[int]) -> Tree:
    status_r, status_w = os.pipe()
    parent = os.getpid()
    waiting = [fd for fd in (launch.go_fd, launch.keeper_go_fd) if fd is not None]
    try:
        keeper = _fork()
    except OSError:  # e.g. EAGAIN at the caller's own process limit: leave no descriptor behind
        for fd in (status_r, status_w, stdout_w, stderr_w, stdout_r, stderr_r, *child_ends,
                   *launch.channels.values(), *waiting):
            with contextlib.suppress(OSError):
                os.close(fd)
        raise
    if keeper == 0:  # pragma: no cover - runs in the forked keeper
        os.close(status_r)
        for fd in (stdout_r, stderr_r, *launch.channels.values()):
            with contextlib.suppress(OSError):
                os.close(fd)
        _keeper(launch, stdout_w, stderr_w, child_ends, status_w, parent)
    os.close(status_w)
    for fd in (stdout_w, stderr_w, *child_ends, *waiting):
        os.close(fd)
    streams = {"stdout": stdout_r, "stderr": stderr_r, **launch.channels, "_status": status_r}
    limits = {name: (launch.output_limit if name in ("stdout", "stderr") else launch.channel_limit)
              for name in streams}
    limits["_status"] = 1 << 20
    return Tree(keeper, launch, streams, limits)


def finish_tree(tree: Tree, timeout: float | None = None, meanwhile: Callable[[], None] | None = None) -> Outcome:
    """Collect the tree's output until every writer is gone, reap the keeper, read its report.
    `meanwhile` runs first, while the tree runs; if it raises, the tree is ended as on an interrupt."""
    launch, streams, keeper = tree.launch, tree.streams, tree.keeper
    wall = launch.timeout if timeout is None else timeout
    try:
        if meanwhile is not None:
            meanwhile()
        data, truncated = _collect(streams, tree.limits, backstop=wall + 60.0, keeper=keeper)
    except BaseException:
        # Interrupted (^C, an exception in a signal handler): the keeper's death takes the launcher
        # and bubblewrap with it (parent-death signals), and the pid namespace with them.
        with contextlib.suppress(ProcessLookupError):
            os.kill(keeper, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):  # the caller may ignore SIGCHLD (auto-reaping)
            os.waitpid(keeper, 0)
        raise
    finally:
        for fd in streams.values():
            os.close(fd)
    _reap_later(keeper)
    try:
        report: dict[str, Any] = json.loads(data["_status"].decode() or "{}")
    except ValueError:
        report = {}
    if not report:
        report = {"launch_error": "the sandbox keeper ended without a report"}
    return Outcome(
        status=report.get("status"),
        timed_out=bool(report.get("timed_out")),
        launch_error=report.get("launch_error"),
        duration=float(report.get("duration", 0.0)),
        cpu_time=float(report.get("cpu_time", 0.0)),
        max_rss=int(report.get("max_rss", 0)),
        reaped_after=int(report.get("reaped_after", 0)),
        stdout=data["stdout"], stderr=data["stderr"],
        stdout_truncated=truncated["stdout"], stderr_truncated=truncated["stderr"],
        channels={k: data[k] for k in launch.channels}, channels_truncated={k: truncated[k] for k in launch.channels},
    )


_exited_lock = threading.Lock()
_exiting: list[int] = []  # keepers that reported and closed their pipes, possibly still exiting


def _reap_later(keeper: int) -> None:
    """Reap a keeper that has reported, without waiting for its exit: once its status pipe is
    closed, all that is left of it is the kernel freeing its copy of the caller's memory (a few ms
    for a large interpreter). It is reaped now if already gone, else by a later run or at exit.
    Its pid stays ours until reaped, so no other process can be mistaken for it."""
    with _exited_lock:
        _exiting.append(keeper)
        pending = list(_exiting)
        _exiting.clear()
    left = []
    for pid in pending:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # reaped already (the caller ignores SIGCHLD)
            continue
        if not done:
            left.append(pid)
    with _exited_lock:
        _exiting.extend(left)


@atexit.register
def reap_exited() -> None:
    """Wait for every keeper not yet reaped (they have reported; they are only exiting)."""
    with _exited_lock:
        pending = list(_exiting)
        _exiting.clear()
    for pid in pending:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def _collect(streams: dict[str, int], limits: dict[str, int], backstop: float,
             keeper: int) -> tuple[dict[str, bytes], dict[str, bool]]:
    data = {name: bytearray() for name in streams}
    truncated = dict.fromkeys(streams, False)
    sel = selectors.DefaultSelector()
    for name, fd in streams.items():
        sel.register(fd, selectors.EVENT_READ, name)
    deadline = time.monotonic() + backstop
    killed = False
    while sel.get_map():
        left = deadline - time.monotonic()
        if left <= 0 and not killed:
            # The keeper itself is stuck: killing it kills the launcher and bwrap (parent-death signals).
            with contextlib.suppress(ProcessLookupError):
                os.kill(keeper, signal.SIGKILL)
            killed = True
            deadline = time.monotonic() + 10.0
        elif left <= 0:
            break
        for key, _ in sel.select(timeout=max(0.0, min(left, 1.0))):
            name = key.data
            chunk = os.read(key.fd, 1 << 16)
            if not chunk:
                sel.unregister(key.fd)
                continue
            room = limits[name] - len(data[name])
            if room > 0:
                data[name] += chunk[:room]
            if len(chunk) > max(room, 0):
                truncated[name] = True  # keep draining so the writer never blocks
    sel.close()
    return {k: bytes(v) for k, v in data.items()}, truncated


def _keeper(launch: Launch, stdout_w: int, stderr_w: int, child_ends: list[int], status_w: int,
            parent: int) -> NoReturn:  # pragma: no cover - runs in the forked keeper
    report: dict[str, Any] = {}
    try:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the caller decides; a ^C reaches it, not us
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # an ignored SIGCHLD would make wait4 fail
        # Drop every descriptor the caller had open (other runs' pipes in other threads among them):
        # holding their write ends would delay those runs' end-of-output until we exit.
        keep = {0, 1, 2, status_w, stdout_w, stderr_w, *child_ends, *launch.pass_fds}
        keep |= {fd for fd in (launch.go_fd, launch.keeper_go_fd) if fd is not None}
        if isinstance(launch.exec_target, int):
            keep.add(launch.exec_target)
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            if fd not in keep:
                with contextlib.suppress(OSError):
                    os.close(fd)
        err_r, err_w = os.pipe()
        started = time.monotonic()
        pid = _fork()
        if pid == 0:
            os.close(err_r)
            _launcher(launch, stdout_w, stderr_w, err_w)
        os.close(err_w)
        for fd in (stdout_w, stderr_w, *child_ends):
            os.close(fd)
        if launch.go_fd is not None:
            os.close(launch.go_fd)
        if launch.keeper_go_fd is not None:
            # Started ahead of time: wait for the run. No parameters means the spare was discarded.
            raw = _read_line(launch.keeper_go_fd)
            if not raw:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                os._exit(0)
            launch.timeout = float(json.loads(raw)["timeout"])
            started = time.monotonic()
        failure = _read_all(err_r)
        if failure:
            os.waitpid(pid, 0)
            report = {"launch_error": failure.decode(errors="replace")}
        else:
            report = _watch(pid, started, launch.timeout)
            report["reaped_after"] = _reap_tree()
    except BaseException as exc:
        report = {"launch_error": f"{type(exc).__name__}: {exc}"}
    with contextlib.suppress(OSError):
        os.write(status_w, json.dumps(report).encode())
        # Closed before exiting: the kernel tears down this copy of the caller's address space
        # before it closes descriptors, and the caller need not wait for that (see _reap_later).
        os.close(status_w)
    os._exit(0)


def _watch(pid: int, started: float, timeout: float) -> dict[str, Any]:  # pragma: no cover - keeper
    pidfd = os.pidfd_open(pid)
    sel = selectors.DefaultSelector()
    sel.register(pidfd, selectors.EVENT_READ)
    timed_out = not sel.select(timeout=max(0.0, started + timeout - time.monotonic()))
    sel.close()
    if timed_out:
        # The launcher's process group first (unsafe mode), then bwrap itself: its pid 1 has a
        # parent-death signal, and when a pid namespace's init dies the kernel kills every process in it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    _, status, usage = os.wait4(pid, 0)
    ended = time.monotonic()
    os.close(pidfd)
    return {
        "status": status,
        "timed_out": timed_out,
        "duration": ended - started,
        "cpu_time": usage.ru_utime + usage.ru_stime,
        "max_rss": usage.ru_maxrss * 1024,
    }


def _children() -> list[int]:  # pragma: no cover - keeper
    found: list[int] = []
    me = os.getpid()
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{me}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{me}/task/{tid}/children") as fh:
                found += [int(p) for p in fh.read().split()]
    return found


def _reap_tree(within: float = 10.0) -> int:  # pragma: no cover - keeper
    """Kill and reap every process re-parented to us (we are a subreaper): detached daemons,
    bubblewrap's pid 1 when bwrap went first. Returns how many there were. Waits block (no
    polling); an alarm bounds the whole sweep in case a process cannot die."""
    count = 0
    signal.signal(signal.SIGALRM, signal.SIG_DFL)  # a stuck sweep ends the keeper; the caller copes
    signal.setitimer(signal.ITIMER_REAL, within)
    try:
        while True:
            for child in _children():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, signal.SIGKILL)
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                return count
            count += 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _read_line(fd: int) -> bytes:
    """One newline-terminated message (not end-of-file: a process the caller forked may hold a copy
    of the write end), or b"" when the writer went away without one. Closes `fd`."""
    out = bytearray()
    while not out.endswith(b"\n"):
        chunk = os.read(fd, 65536)
        if not chunk:
            out.clear()
            break
        out += chunk
    os.close(fd)
    return bytes(out)


def _read_all(fd: int) -> bytes:
    out = bytearray()
    while chunk := os.read(fd, 4096):
        out += chunk
    os.close(fd)
    return bytes(out)


def _launcher(launch: Launch, stdout_w: int, stderr_w: int, err_w: int) -> NoReturn:  # pragma: no cover
    err = err_w
    try:
        os.setsid()
        me = str(os.getpid())
        for path in launch.cgroup_files:
            with open(path, "w") as fh:
                fh.write(me)
        if launch.go_fd is not None and launch.keeper_go_fd is not None:
            os.close(launch.keeper_go_fd)
        if launch.go_fd is not None and launch.waiter is None:
            # Started ahead of time, already inside the cgroups: the run's command line and rlimits.
            raw = _read_line(launch.go_fd)
            if not raw:
                os._exit(0)
            params = json.loads(raw)
            launch.argv = [str(a) for a in params["argv"]]
            launch.rlimits = [(int(r), int(v)) for r, v in params["rlimits"]]
        err = fcntl.fcntl(err_w, fcntl.F_DUPFD_CLOEXEC, 200)
        # Everything still needed is copied above the low numbers before any of them is overwritten:
        # the binary's descriptor may itself be one of 0..2+len(pass_fds).
        target = launch.exec_target
        if isinstance(target, int):
            target = fcntl.fcntl(target, fcntl.F_DUPFD_CLOEXEC, 200)
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 200) for fd in (stdout_w, stderr_w, *launch.pass_fds)]
        # The waiting shell reads its line on stdin, and gives bubblewrap /dev/null in its place.
        waiting = None
        if launch.waiter is not None and launch.go_fd is not None:
            waiting = fcntl.fcntl(launch.go_fd, fcntl.F_DUPFD_CLOEXEC, 200)
        null = os.open("/dev/null", os.O_RDONLY) if waiting is None else waiting
        os.dup2(null, 0)
        os.dup2(high[0], 1)
        os.dup2(high[1], 2)
        for i, fd in enumerate(high[2:]):
            os.dup2(fd, 3 + i)
        keep = sorted({err, target}) if isinstance(target, int) else [err]
        start = 3 + len(high) - 2
        for fd in keep:
            os.closerange(start, fd)
            start = fd + 1
        os.closerange(start, 1 << 20)
        if launch.cwd:
            os.chdir(launch.cwd)
        for res, value in launch.rlimits:
            _soft, hard = resource.getrlimit(res)
            cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(res, (cap, cap))
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        if launch.drop_to is not None:
            uid, gid = launch.drop_to
            for cap in range(_CAP_LAST + 1):
                _prctl(_PR_CAPBSET_DROP, cap)
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # after setuid: changing credentials clears it
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)
        if waiting is not None and launch.waiter is not None:
            os.execve(launch.waiter, ["sh", "-c", WAITER_SCRIPT], {})  # noqa: S606
        if launch.search_path:
            os.execvpe(launch.argv[0], launch.argv, launch.env)  # noqa: S606
        os.execve(target, launch.argv, launch.env)  # noqa: S606
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.write(err, f"{type(exc).__name__}: {exc}".encode())
    os._exit(127)
