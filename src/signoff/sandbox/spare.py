"""Spares: the next run's keeper and launcher, started ahead of time and already inside fresh cgroups.

Attaching a process to v1 cgroups costs 8-11 ms after an idle moment (the kernel waits for an RCU
grace period on the cgroup thread-group lock). A spare pays it between runs instead of inside one:
after a thread's second run, one keeper + launcher pair is forked for that thread; the launcher joins
a fresh set of cgroups and waits. The next run of the same thread writes its limits into those
cgroups and its parameters (command line, rlimits, timeout) into two pipes, and the pair continues
exactly as a freshly started one would. Nothing of the sandbox starts before the parameters arrive,
and the launcher cannot exec before it is inside the cgroups.

A spare belongs to the thread that forked it, and to the process (a forked child never uses its
parent's spares). The keeper's parent-death signal follows the forking *thread*: when that thread
ends, the kernel kills the keeper. So a spare is filed under the thread object, never under
`threading.get_ident()`: the ident of a finished thread is handed to the next thread started (a
thread pool per call does it all the time), and a spare filed under it was taken by a thread that
did not fork it, whose keeper the kernel then killed in the middle of the run ("the keeper ended
without a report", and a bubblewrap left running with no wall clock). Spares of finished threads
are discarded by the next run of any thread; `release_all()` discards every spare at once (and
runs at exit).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import resource
import shlex
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from signoff.kernel.ids import new_id
from signoff.sandbox import bwrap
from signoff.sandbox.access import blocker
from signoff.sandbox.cgroups import CgroupSet
from signoff.sandbox.model import Limits
from signoff.sandbox.supervise import Launch, Outcome, Tree, finish_tree, memfd, start_tree


@dataclass
class Spare:
    owner: int  # pid of the process that made it
    thread: threading.Thread  # the forking thread: the keeper dies with it
    tree: Tree
    cg: CgroupSet
    limits: Limits  # what its cgroups were configured with
    memfds: dict[str, int]
    go_launcher: int
    go_keeper: int


_lock = threading.Lock()
# Keyed by the Thread object itself (held strongly, so it cannot be freed and its id reused).
_spares: dict[threading.Thread, Spare] = {}
_runs: dict[threading.Thread, int] = {}


def _fill(fd: int, data: bytes) -> None:
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)


def make(uid: int, gid: int, output_limit: int, limits: Limits) -> Spare | None:
    """Fork a waiting keeper + launcher inside fresh cgroups configured with `limits` (root only), or None."""
    cg = CgroupSet.create(f"signoff-{os.getpid()}-{new_id()}", limits)
    if cg is None:
        return None
    passwd, group, hosts = bwrap.passwd_data(uid, gid)
    opened: list[int] = []  # closed again if the spare cannot be made (out of descriptors)
    try:
        memfds: dict[str, int] = {}
        for name, data in (("seccomp", b""), ("passwd", passwd), ("group", group), ("hosts", hosts),
                           ("args", b""), ("collect", b"")):
            memfds[name] = memfd(name, data)
            opened.append(memfds[name])
        pipes: list[tuple[int, int]] = []
        for _ in range(6):
            pipes.append(os.pipe())
            opened += pipes[-1]
    except OSError:
        for fd in opened:
            os.close(fd)
        cg.remove()
        return None
    (status_r, status_w), (collect_r, collect_w), (out_r, out_w), (err_r, err_w), \
        (go_launcher_r, go_launcher_w), (go_keeper_r, go_keeper_w) = pipes
    fds = [memfds["seccomp"], memfds["passwd"], memfds["group"], memfds["hosts"], status_w, memfds["args"],
           collect_w, memfds["collect"]]
    launch = Launch(exec_target=bwrap.binary_fd(), argv=["bwrap"], env={}, timeout=0.0, pass_fds=fds,
                    cgroup_files=cg.join_files, drop_to=(uid, gid), output_limit=output_limit,
                    channels={"status": status_r, "collect": collect_r},
                    go_fd=go_launcher_r, keeper_go_fd=go_keeper_r, waiter=_waiter(uid, gid))
    try:
        tree = start_tree(launch, out_w, err_w, out_r, err_r, [status_w, collect_w])
    except OSError:
        for fd in (*memfds.values(), go_launcher_w, go_keeper_w):
            os.close(fd)
        cg.remove()
        return None
    return Spare(os.getpid(), threading.current_thread(), tree, cg, limits, memfds, go_launcher_w, go_keeper_w)


def take(output_limit: int) -> Spare | None:
    """This thread's spare, if it has a live one made for the same output bound."""
    with _lock:
        spare = _spares.pop(threading.current_thread(), None)
    if spare is None:
        return None
    if spare.owner != os.getpid() or spare.tree.launch.output_limit != output_limit or not _alive(spare):
        discard(spare)
        return None
    return spare


def _alive(spare: Spare) -> bool:
    """Whether the keeper still waits. It is not reaped here (WNOWAIT): `discard` signals and waits
    for that pid, which must not have been handed to another process meanwhile."""
    try:
        found = os.waitid(os.P_PID, spare.tree.keeper, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return found is None


def launch(spare: Spare, *, argv: list[str], options: list[str], seccomp_filter: bytes, collect_list: bytes,
           limits: Limits, rlimits: list[tuple[int, int]], timeout: float) -> bool:
    """Hand the run to the spare; False if it died meanwhile (then it is discarded)."""
    try:
        _fill(spare.memfds["seccomp"], seccomp_filter)
        _fill(spare.memfds["args"], b"".join(o.encode() + b"\0" for o in options))
        _fill(spare.memfds["collect"], collect_list)
        if _cgroup_limits(limits) != _cgroup_limits(spare.limits):
            spare.cg.configure(limits)  # else the groups already hold these values (read back when made)
        spare.tree.launch.timeout = timeout
        _send(spare.go_keeper, {"timeout": timeout})
        os.close(spare.go_keeper)
        spare.go_keeper = -1
        if spare.tree.launch.waiter is not None:
            _send_line(spare.go_launcher, waiter_line(argv, rlimits))
        else:
            _send(spare.go_launcher, {"argv": argv, "rlimits": rlimits})
        os.close(spare.go_launcher)
        spare.go_launcher = -1
    except OSError:
        discard(spare)
        return False
    return True


def _send(fd: int, message: dict[str, object]) -> None:
    """One JSON line (the reader stops at the newline, not at end-of-file)."""
    _send_line(fd, json.dumps(message))


def _send_line(fd: int, line: str) -> None:
    data = line.encode() + b"\n"
    while data:
        data = data[os.write(fd, data):]


# How a POSIX shell's `ulimit` names each rlimit, and the unit it counts in.
_ULIMIT = {resource.RLIMIT_CORE: ("-c", 512), resource.RLIMIT_FSIZE: ("-f", 512),
           resource.RLIMIT_NOFILE: ("-n", 1), resource.RLIMIT_CPU: ("-t", 1),
           resource.RLIMIT_DATA: ("-d", 1024), resource.RLIMIT_NPROC: ("-p", 1)}


def waiter_line(argv: list[str], rlimits: list[tuple[int, int]]) -> str:
    """The one line of shell words the waiting shell runs: lower each rlimit (soft and hard, never
    above the current hard limit, as the launcher does), then exec bubblewrap with `argv`."""
    words = []
    for res, value in rlimits:
        flag, unit = _ULIMIT[res]
        hard = resource.getrlimit(res)[1]  # the launcher was forked from us: the same limits
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        words.append(f"ulimit {flag} {cap // unit}")
    binary = bwrap.locate()
    assert binary is not None
    # stdin is the go pipe until here; bubblewrap gets /dev/null, as from the launcher
    # Found through the shell's PATH (not exported: the environment stays empty) so that its
    # argv[0] is plain "bwrap": pid 1's command line names no host path.
    words.append("PATH=" + shlex.quote(os.path.dirname(binary.path)))
    words.append("exec " + " ".join(_shell_word(a) for a in ["bwrap", *argv[1:]]) + " </dev/null")
    return "; ".join(words)


def _shell_word(arg: str) -> str:
    """`arg` as one shell word on one line: newlines come from the waiting shell's $nl."""
    return '"$nl"'.join(shlex.quote(part) for part in arg.split("\n"))


@functools.lru_cache(maxsize=4)
def _waiter(uid: int, gid: int) -> str | None:
    """The shell a spare's launcher waits in, or None (it then waits in Python): the shell must
    be dash-like (it exports nothing but PWD when started with no environment), and the sandbox uid
    must be able to execute bubblewrap by its path, a file named bwrap."""
    binary = bwrap.locate()
    shell = next((p for p in ("/usr/bin/dash", "/bin/dash") if os.access(p, os.X_OK)), None)
    if shell is None or binary is None or os.path.basename(binary.path) != "bwrap" or ":" in binary.path:
        return None
    try:
        if blocker(Path(binary.path), uid, gid) is not None or os.stat(binary.path).st_mode & 0o001 == 0:
            return None
    except OSError:
        return None
    return shell


def finish(spare: Spare, timeout: float, meanwhile: Callable[[], None] | None = None) -> Outcome:
    try:
        return finish_tree(spare.tree, timeout, meanwhile)
    finally:
        for fd in spare.memfds.values():
            with contextlib.suppress(OSError):
                os.close(fd)


def discard(spare: Spare) -> None:
    """Stop an unused spare: closing its pipes unblocks and ends it; the cgroups are removed."""
    if spare.owner != os.getpid():
        return  # a forked copy of the owner's state: the owner cleans up
    for fd in (spare.go_keeper, spare.go_launcher, *spare.memfds.values()):
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)
    with contextlib.suppress(ProcessLookupError):
        os.kill(spare.tree.keeper, signal.SIGKILL)
    with contextlib.suppress(Exception):
        finish_tree(spare.tree, 0.0)
    spare.cg.kill_all()
    spare.cg.remove()


def _cgroup_limits(limits: Limits) -> tuple[int, int, float]:
    return limits.memory_mb, limits.pids, limits.cpus


def prepare(uid: int, gid: int, output_limit: int, limits: Limits) -> None:
    """Make this thread's spare now when it has none: its keeper's and launcher's start and its
    cgroups' attach then happen while the caller still prepares its first run (a verification
    exports its revisions meanwhile) instead of inside that run."""
    me = threading.current_thread()
    if isinstance(me, threading._DummyThread):
        return  # as in replenish
    with _lock:
        if me in _spares:
            return
    made = make(uid, gid, output_limit, limits)
    if made is not None:
        with _lock:
            _spares[me] = made


def replenish(uid: int, gid: int, output_limit: int, limits: Limits) -> None:
    """After this thread's second run, keep one spare ready for its next run, its cgroups configured
    with this run's limits (a thread's next run most often asks for the same)."""
    me = threading.current_thread()
    if isinstance(me, threading._DummyThread):
        return  # a thread not started by `threading`: its stand-in object outlives it and is reused
    with _lock:
        _runs[me] = _runs.get(me, 0) + 1
        wanted = _runs[me] >= 2 and me not in _spares
        for ended in [t for t in _runs if not t.is_alive()]:
            del _runs[ended]
        gone = [_spares.pop(t) for t in list(_spares) if not t.is_alive()]
    for spare in gone:
        discard(spare)
    if not wanted:
        return
    made = make(uid, gid, output_limit, limits)
    if made is not None:
        with _lock:
            _spares[me] = made


@atexit.register
def release_all() -> None:
    """Discard every spare of this process (its descriptors, processes and cgroups)."""
    with _lock:
        left = list(_spares.values())
        _spares.clear()
    for spare in left:
        with contextlib.suppress(Exception):
            discard(spare)
