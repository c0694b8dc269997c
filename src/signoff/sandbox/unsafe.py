"""No isolation, on explicit request only: the command runs on the host as the caller, under the
same keeper (wall clock, tree kill, bounded output) and, as root, the same cgroup limits."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from signoff.kernel.errors import UsageError
from signoff.kernel.ids import new_id
from signoff.sandbox.backend import Request, rlimits
from signoff.sandbox.cgroups import CgroupSet
from signoff.sandbox.model import Execution
from signoff.sandbox.record import GUARANTEES, execution, guarantees
from signoff.sandbox.supervise import Launch, run_tree


class Unsafe:
    """No isolation at all, on explicit request only (`--unsafe-no-sandbox`); the record says so."""

    name = "none"

    def available(self) -> bool:
        return True

    def run(self, request: Request) -> Execution:
        return _run(request)


def _run(req: Request) -> Execution:
    cmd, mounts, limits, env, timeout = req.command, req.mounts, req.limits, req.env, req.timeout
    workdir, names, output_limit = req.workdir, req.collect, req.output_limit
    for m in mounts:
        if str(m.src) != m.dst and str(Path(m.dst).resolve()) != str(m.src):
            raise UsageError(
                f"without a sandbox a mount cannot move {m.src} to {m.dst}",
                "pass Mount(src, dst=str(src)) with the host path, or run with a sandbox backend",
            )
    if req.meanwhile is not None:
        req.meanwhile()  # first: the command is started and awaited in one call
    host_work = Path(tempfile.mkdtemp(prefix="signoff-unsafe-"))
    env = {**env, "HOME": str(host_work)} if env.get("HOME") == workdir else env
    root = os.geteuid() == 0
    cg = CgroupSet.create(f"signoff-{new_id()}", limits) if root else None
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        launch = Launch(exec_target=cmd[0], argv=cmd, env=env, timeout=timeout, cwd=str(host_work),
                        search_path=True, cgroup_files=cg.join_files if cg else [],
                        rlimits=rlimits(limits, timeout, cg is not None), output_limit=output_limit)
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
        "guarantees": guarantees(dict.fromkeys(GUARANTEES, False) | {
            "clean_environment": True, "memory_limit": cg is not None, "pids_limit": cg is not None,
            "cpu_share": cg is not None, "file_size_limit": True, "open_files_limit": True, "wall_clock": True,
            "tree_killed": escaped == 0}),
        "mechanisms": {"isolation": "NONE: --unsafe-no-sandbox was requested explicitly"},
        "weaker": ["no isolation at all: the command saw the host's network, files and processes"],
        "escaped_processes_killed": escaped,
        "reaped_after_exit": outcome.reaped_after,
    }
    return execution(cmd, outcome, stats, isolation, names, files)
