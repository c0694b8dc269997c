"""The nouns of the sandbox: what is mounted, which limits apply, and what one execution recorded."""

# ruff: noqa: S108 -- /tmp here is the sandbox's own private tmpfs, not the host's

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signoff.kernel.canonical import canonical_digest
from signoff.kernel.errors import UnavailableError, UsageError


class SandboxUnavailable(UnavailableError):
    """No backend can isolate untrusted code here; the message names the cause and the fix."""


@dataclass(frozen=True)
class Mount:
    """A host path made visible inside the sandbox at `dst`; read-only unless `writable`."""

    src: Path
    dst: str
    writable: bool = False

    def as_json(self) -> dict[str, Any]:
        return {"src": str(self.src), "dst": self.dst, "writable": self.writable}


@dataclass(frozen=True)
class Limits:
    """Hard limits of one execution. The writable tmpfs (`tmpfs_mb`, plus the private /tmp, which
    gets a quarter of it) must stay below `memory_mb`, so that a flood of files ends with a clean
    "no space" error rather than an OOM kill of the test runner."""

    memory_mb: int = 384
    pids: int = 96
    cpus: float = 0.75
    tmpfs_mb: int = 256
    fsize_mb: int = 256
    nofile: int = 1024

    @property
    def tmp_mb(self) -> int:
        """The private /tmp: a quarter of the work area (at least 16 MB together with /dev/shm)."""
        return self._tmp_share - self.shm_mb

    @property
    def shm_mb(self) -> int:
        """/dev/shm (POSIX shared memory, semaphores), a quarter of the /tmp share; the rest of /dev
        is read-only. Without a bound it was a tmpfs as large as the host's RAM."""
        return max(4, self._tmp_share // 4)

    @property
    def _tmp_share(self) -> int:
        return max(16, self.tmpfs_mb // 4)

    def validate(self) -> None:
        for name in ("memory_mb", "pids", "tmpfs_mb", "fsize_mb", "nofile"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise UsageError(f"sandbox limit {name}={value!r} must be a positive whole number",
                                 f"pass Limits({name}=<n>) with n > 0")
        if not (0.01 <= float(self.cpus) <= 1024):
            raise UsageError(f"sandbox limit cpus={self.cpus!r} is out of range",
                             "pass a CPU share between 0.01 and the number of cores, e.g. 0.75")
        if self.pids < 4:
            raise UsageError(f"sandbox limit pids={self.pids} leaves no room for the sandbox's own processes",
                             "pass pids >= 4 (the sandbox itself uses two)")
        # tmpfs pages are charged to the memory cgroup: keep room for the processes themselves.
        headroom = min(64, self.memory_mb // 4)
        writable = self.tmpfs_mb + self.tmp_mb + self.shm_mb
        if writable > self.memory_mb - headroom:
            raise UsageError(
                f"the writable areas ({self.tmpfs_mb} MB work + {self.tmp_mb} MB /tmp + {self.shm_mb} MB "
                f"/dev/shm) are not smaller than the memory limit ({self.memory_mb} MB) by {headroom} MB: "
                "a file flood would end in an OOM kill",
                f"raise memory_mb to at least {writable + headroom} or lower tmpfs_mb",
            )

    def as_json(self) -> dict[str, Any]:
        return {"memory_mb": self.memory_mb, "pids": self.pids, "cpus": float(self.cpus),
                "tmpfs_mb": self.tmpfs_mb, "tmp_mb": self.tmp_mb, "shm_mb": self.shm_mb, "fsize_mb": self.fsize_mb,
                "nofile": self.nofile}


@dataclass
class Execution:
    """One run, as evidence: what ran, how it ended, what it used, and which guarantees held."""

    command: list[str]
    exit_code: int | None
    signal: int | None
    timed_out: bool
    oom_killed: bool
    pids_limit_hit: bool
    duration: float
    cpu_time: float
    peak_memory_bytes: int | None
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    files: dict[str, bytes] = field(default_factory=dict)
    isolation: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """The command ran to completion and exited 0 within every limit."""
        return (self.exit_code == 0 and not self.timed_out and not self.oom_killed
                and not self.pids_limit_hit and self.signal is None)

    @property
    def outcome(self) -> str:
        """One word for how it ended: timeout, oom, pids-limit, signal, exit."""
        if self.timed_out:
            return "timeout"
        if self.oom_killed:
            return "oom"
        if self.pids_limit_hit and self.exit_code != 0:
            return "pids-limit"
        if self.signal is not None:
            return "signal"
        return "exit"

    def as_json(self) -> dict[str, Any]:
        return {
            "command": list(self.command),
            "exit_code": self.exit_code,
            "signal": self.signal,
            "timed_out": self.timed_out,
            "oom_killed": self.oom_killed,
            "pids_limit_hit": self.pids_limit_hit,
            "outcome": self.outcome,
            "duration": round(self.duration, 6),
            "cpu_time": round(self.cpu_time, 6),
            "peak_memory_bytes": self.peak_memory_bytes,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "stdout_truncated": self.stdout_truncated,
            "stderr_truncated": self.stderr_truncated,
            "files": {name: {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
                      for name, data in sorted(self.files.items())},
            "isolation": self.isolation,
        }

    def digest(self) -> str:
        """SHA-256 of the canonical JSON of `as_json()`: the execution's fingerprint input."""
        return canonical_digest(self.as_json())


@dataclass(frozen=True)
class PythonEnv:
    """A virtual environment the sandbox's unprivileged uid can read, and where it appears inside."""

    digest: str
    host_path: Path
    python: str
    mounts: list[Mount]
    python_version: str
    requirements: list[str]
    installed: list[dict[str, Any]] = field(default_factory=list)  # what pip installed: name, version, hashes

    def env(self, workdir: str = "/work") -> dict[str, str]:
        """The environment a Python test run wants inside: the venv first on PATH, no bytecode
        writes into read-only mounts, caches under the writable work area."""
        bin_dir = self.python.rsplit("/", 1)[0]
        return {
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "HOME": workdir,
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1",
            "HYPOTHESIS_STORAGE_DIRECTORY": f"{workdir}/.hypothesis",
        }

    def pytest_command(self, *args: str) -> list[str]:
        """`python -m pytest` with the cache plugin off (the checkout is read-only)."""
        return [self.python, "-m", "pytest", "-p", "no:cacheprovider", *args]
