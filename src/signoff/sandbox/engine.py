"""Docker / Podman backend, used when bubblewrap is absent and an engine answers.

It applies the reference flags (no network, read-only root, all capabilities dropped,
no-new-privileges, an unprivileged user, memory / CPU / pids limits, a size-capped tmpfs work area)
and the image named by SIGNOFF_SANDBOX_IMAGE (default python:3.11-slim) must already be present:
the engine is never asked to pull.
"""

# ruff: noqa: S108 -- /tmp here is the sandbox's own private tmpfs, not the host's

from __future__ import annotations

import functools
import os
import shutil
import subprocess

from signoff.kernel.ids import new_id
from signoff.sandbox.backend import Request
from signoff.sandbox.model import Execution, Limits, Mount, SandboxUnavailable
from signoff.sandbox.record import GUARANTEES, execution, guarantees
from signoff.sandbox.supervise import Launch, run_tree

DEFAULT_IMAGE = "python:3.11-slim"


@functools.lru_cache(maxsize=4)
def engine_version(engine: str) -> str | None:
    """The server version when `engine`'s CLI exists and its engine answers, else None."""
    exe = shutil.which(engine)
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "version", "--format", "{{.Server.Version}}"], capture_output=True,
                             text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = out.stdout.strip()
    return text if out.returncode == 0 and text else None


def engine_answers(engine: str) -> bool:
    return engine_version(engine) is not None


def engine_argv(engine: str, name: str, image: str, cmd: list[str], mounts: list[Mount], limits: Limits,
                env: dict[str, str], workdir: str, network: bool) -> list[str]:
    argv = [engine, "run", "--rm", "--name", name, "--pull", "never",
            "--network", "bridge" if network else "none", "--read-only", "--cap-drop", "ALL",
            "--security-opt", "no-new-privileges", "--user", "10001:10001",
            "--memory", f"{limits.memory_mb}m", "--memory-swap", f"{limits.memory_mb}m",
            "--cpus", str(limits.cpus), "--pids-limit", str(limits.pids),
            "--ulimit", f"fsize={limits.fsize_mb << 20}", "--ulimit", f"nofile={limits.nofile}",
            "--ulimit", "core=0",
            "--tmpfs", f"{workdir}:rw,size={limits.tmpfs_mb}m,mode=1777",
            "--tmpfs", f"/tmp:rw,size={limits.tmp_mb}m,mode=1777", "--shm-size", f"{limits.shm_mb}m",
            "--workdir", workdir]
    for m in mounts:
        argv += ["--volume", f"{m.src}:{m.dst}:{'rw' if m.writable else 'ro'}"]
    for key, value in env.items():
        argv += ["--env", f"{key}={value}"]
    return [*argv, image, *cmd]


class Engine:
    """Docker or Podman, whichever `name` says."""

    def __init__(self, name: str) -> None:
        self.name = name

    def available(self) -> bool:
        return engine_answers(self.name)

    def run(self, request: Request) -> Execution:
        return _run(self.name, request)


def _run(engine: str, req: Request) -> Execution:
    cmd, mounts, limits, env, network = req.command, req.mounts, req.limits, req.env, req.network
    if req.deny_inet:
        # The engine's seccomp profile is its own; replacing it to add the socket rule would drop the rest.
        raise SandboxUnavailable(f"refusing IP sockets (deny_inet) is not supported by the {engine} backend",
                                 "use the bwrap backend, or run without deny_inet")
    version = engine_version(engine)
    exe = shutil.which(engine)
    if version is None or exe is None:
        raise SandboxUnavailable(f"the {engine} engine does not answer here",
                                 f"start the {engine} engine, or use the bwrap backend")
    if req.collect:
        raise SandboxUnavailable(f"collecting files is not supported by the {engine} backend",
                                 "use the bwrap backend, or print results on stdout")
    if req.meanwhile is not None:
        req.meanwhile()  # first: the engine's run is started and awaited in one call
    image = os.environ.get("SIGNOFF_SANDBOX_IMAGE", DEFAULT_IMAGE)
    name = f"signoff-{new_id()}"
    argv = engine_argv(engine, name, image, cmd, mounts, limits, env, req.workdir, network)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    launch = Launch(exec_target=exe, argv=argv, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                    timeout=req.timeout, output_limit=req.output_limit)
    outcome = run_tree(launch, out_w, err_w, out_r, err_r, [])
    removed = True
    if outcome.timed_out:  # the CLI died; the container lives in the engine until removed
        removed = _remove(exe, name)
    weaker = ["peak memory, OOM and pids-limit events are not read back from the engine"]
    if not removed:
        weaker.append(f"the timed-out container {name} could not be removed: it may still run")
    isolation = {
        "backend": engine, "version": version, "unsafe": False, "uid": 10001, "image": image,
        "limits": limits.as_json(), "enforced": {"engine": True}, "cgroups": "engine",
        "network": "host" if network else "none", "mounts": [m.as_json() for m in mounts],
        "workdir": req.workdir, "env_keys": sorted(env),
        "guarantees": guarantees(dict.fromkeys(GUARANTEES, True) | {
            "network_isolated": not network, "read_only_mounts": all(not m.writable for m in mounts),
            "tree_killed": removed}),
        "mechanisms": {"engine": f"{engine} run with the reference flags; the engine's default seccomp profile"},
        "weaker": weaker, "escaped_processes_killed": 0, "reaped_after_exit": outcome.reaped_after,
    }
    return execution(cmd, outcome, {}, isolation, [], {})


def _remove(exe: str, name: str) -> bool:
    """`rm --force` the container; True only when the engine says it is gone."""
    try:
        done = subprocess.run([exe, "rm", "--force", name], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0
