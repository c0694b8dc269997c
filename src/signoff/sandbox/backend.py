"""The one interface every way of running a command sits behind (bubblewrap, Docker/Podman, and the
explicitly requested no-isolation mode): a validated request in, an Execution out."""

from __future__ import annotations

import math
import resource
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from signoff.sandbox.model import Execution, Limits, Mount


@dataclass(frozen=True)
class Request:
    """One execution, already validated by `run()`."""

    command: list[str]
    mounts: list[Mount]
    limits: Limits
    env: dict[str, str]
    timeout: float
    workdir: str
    network: bool
    collect: list[str]
    deny_inet: bool
    output_limit: int
    meanwhile: Callable[[], None] | None = None  # the caller's own work while the command runs (see run())


class Backend(Protocol):
    name: str

    def available(self) -> bool:
        """Whether this backend can run anything on this machine now."""
        ...

    def run(self, request: Request) -> Execution:
        """Run the request, or raise SandboxUnavailable (cause and fix) when it cannot be isolated."""
        ...


def rlimits(limits: Limits, timeout: float, with_cgroups: bool) -> list[tuple[int, int]]:
    """The rlimits a locally launched tree gets; without cgroups they also stand in for memory and pids."""
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
