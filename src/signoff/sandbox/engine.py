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
from signoff.sandbox.model import Execution, Limits, Mount, SandboxUnavailable
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
            "--tmpfs", f"/tmp:rw,size={limits.tmp_mb}m,mode=1777", "--workdir", workdir]
    for m in mounts:
        argv += ["--volume", f"{m.src}:{m.dst}:{'rw' if m.writable else 'ro'}"]
    for key, value in env.items():
        argv += ["--env", f"{key}={value}"]
    return [*argv, image, *cmd]


def run_engine(engine: str, cmd: list[str], mounts: list[Mount], limits: Limits, env: dict[str, str],
               timeout: float, workdir: str, network: bool, names: list[str], output_limit: int) -> Execution:
    from signoff.sandbox.run import _execution

    version = engine_version(engine)
    exe = shutil.which(engine)
    if version is None or exe is None:
        raise SandboxUnavailable(f"the {engine} engine does not answer here",
                                 f"start the {engine} engine, or use the bwrap backend")
    if names:
        raise SandboxUnavailable(f"collecting files is not supported by the {engine} backend",
                                 "use the bwrap backend, or print results on stdout")
    image = os.environ.get("SIGNOFF_SANDBOX_IMAGE", DEFAULT_IMAGE)
    name = f"signoff-{new_id()}"
    argv = engine_argv(engine, name, image, cmd, mounts, limits, env, workdir, network)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    launch = Launch(exec_target=exe, argv=argv, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                    timeout=timeout, output_limit=output_limit)
    outcome = run_tree(launch, out_w, err_w, out_r, err_r, [])
    if outcome.timed_out:  # the CLI died; the container lives in the engine until removed
        subprocess.run([exe, "rm", "--force", name], capture_output=True, timeout=30, check=False)
    isolation = {
        "backend": engine, "version": version, "unsafe": False, "uid": 10001, "image": image,
        "limits": limits.as_json(), "enforced": {"engine": True}, "cgroups": "engine",
        "network": "host" if network else "none", "mounts": [m.as_json() for m in mounts],
        "workdir": workdir, "env_keys": sorted(env),
        "guarantees": {"network_isolated": not network, "outside_files_hidden": True, "read_only_root": True,
                       "read_only_mounts": all(not m.writable for m in mounts), "private_tmp": True,
                       "pid_namespace": True, "ipc_uts_namespaces": True, "no_capabilities": True,
                       "no_new_privs": True, "seccomp": True, "unprivileged_uid": True,
                       "clean_environment": True, "memory_limit": True, "pids_limit": True,
                       "cpu_share": True, "file_size_limit": True, "open_files_limit": True,
                       "wall_clock": True, "tree_killed": True},
        "mechanisms": {"engine": f"{engine} run with the reference flags; the engine's default seccomp profile"},
        "weaker": ["peak memory, OOM and pids-limit events are not read back from the engine"],
        "escaped_processes_killed": 0, "reaped_after_exit": outcome.reaped_after,
    }
    return _execution(cmd, outcome, {}, isolation, names, workdir, {})
