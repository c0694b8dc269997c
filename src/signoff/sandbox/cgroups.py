"""Per-execution control groups: memory, process count and CPU share enforced by the kernel, read
back for the record, and used as a second path to kill everything that is left.

Our machines run cgroup v1 (memory, pids, cpu, cpuacct as separate hierarchies; the v2 mount has no
controllers), so v1 is the main path. A pure v2 machine is used when our own cgroup can delegate
memory and pids to a child. Each execution's groups nest under the caller's own groups, so limits
placed around the caller also bound the sandbox.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from signoff.sandbox.model import Limits

_V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct")
_PERIOD_US = 100_000
# A group named for its creator's pid (`signoff-<pid>-<id>`, `signoff-doctor-<pid>`) that outlived
# it: the creator was killed (SIGKILL, a crash) before it removed the group. Groups never go away by
# themselves, so each new one sweeps its siblings whose creator is gone.
_CREATOR = re.compile(r"signoff-(?:doctor-)?(\d+)(?:-[0-9A-Za-z]+)?")
_STALE_AFTER_S = 60.0  # younger groups are left alone: a creator in another pid namespace may be filling it


@functools.lru_cache(maxsize=1)
def _mounts() -> tuple[dict[str, Path], Path | None]:
    """v1 controller -> mount point, and the cgroup2 mount point (if any); read once per process."""
    v1: dict[str, Path] = {}
    v2: Path | None = None
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return v1, None
    for line in lines:
        left, _, right = line.partition(" - ")
        parts, rparts = left.split(), right.split()
        if len(parts) < 5 or len(rparts) < 3 or parts[3] != "/":
            continue
        if rparts[0] == "cgroup2":
            v2 = Path(parts[4])
        elif rparts[0] == "cgroup":
            for opt in rparts[2].split(","):
                if opt in _V1_CONTROLLERS:
                    v1[opt] = Path(parts[4])
    return v1, v2


def _own_paths() -> dict[str, str]:
    """controller (or "" for v2) -> this process's cgroup path."""
    own: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return own
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            own[""] = path
        for c in controllers.split(","):
            own[c] = path
    return own


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write(path: Path, value: str) -> None:
    with open(path, "w") as fh:
        fh.write(value)


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _read_keyed(path: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            with contextlib.suppress(ValueError):
                out[key] = int(value)
    except OSError:
        pass
    return out


@dataclass
class CgroupSet:
    """The groups of one execution. `join_files` are written with the child's pid before it execs."""

    version: str
    dirs: dict[str, Path] = field(default_factory=dict)
    enforced: dict[str, object] = field(default_factory=dict)

    @property
    def join_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in dict.fromkeys(self.dirs.values())]

    @classmethod
    def create(cls, name: str, limits: Limits) -> CgroupSet | None:
        """Create and configure the groups, or None when this process cannot (not root, no
        controllers). Limits are read back from the kernel into `enforced`."""
        if os.geteuid() != 0:
            return None
        v1, v2 = _mounts()
        own = _own_paths()
        if all(c in v1 for c in ("memory", "pids", "cpu")):
            made = cls("v1")
            by_mount: dict[Path, Path] = {}  # co-mounted controllers (cpu,cpuacct) share one group
            try:
                for c in _V1_CONTROLLERS:
                    if c not in v1:
                        continue
                    if v1[c] not in by_mount:
                        d = v1[c] / own.get(c, "/").lstrip("/") / name
                        cls.sweep(d.parent)
                        d.mkdir()
                        by_mount[v1[c]] = d
                    made.dirs[c] = by_mount[v1[c]]
                made._configure_v1(limits)
            except OSError:
                made.remove()
                return None
            return made
        if v2 is not None:
            return cls._create_v2(v2, own.get("", "/"), name, limits)
        return None

    @classmethod
    def _create_v2(cls, mount: Path, own: str, name: str, limits: Limits) -> CgroupSet | None:
        parent = mount / own.lstrip("/")
        try:
            available = (parent / "cgroup.controllers").read_text().split()
        except OSError:
            return None
        if not {"memory", "pids"} <= set(available):
            return None
        wanted = [c for c in ("memory", "pids", "cpu") if c in available]
        made = cls("v2")
        try:
            enabled = (parent / "cgroup.subtree_control").read_text().split()
            missing = [c for c in wanted if c not in enabled]
            if missing:
                _write(parent / "cgroup.subtree_control", " ".join(f"+{c}" for c in missing))
            d = parent / name
            cls.sweep(parent)
            d.mkdir()
            made.dirs = {"unified": d}
            _write(d / "memory.max", str(limits.memory_mb << 20))
            with contextlib.suppress(OSError):
                _write(d / "memory.swap.max", "0")
            _write(d / "pids.max", str(limits.pids))
            if "cpu" in wanted:
                _write(d / "cpu.max", f"{int(limits.cpus * _PERIOD_US)} {_PERIOD_US}")
            made.enforced = {"memory_bytes": _read_int(d / "memory.max"),
                             "pids": _read_int(d / "pids.max"),
                             "cpu_quota": (d / "cpu.max").read_text().strip() if "cpu" in wanted else None}
        except OSError:
            made.remove()
            return None
        return made

    def configure(self, limits: Limits) -> None:
        """(Re)write the limits, e.g. on groups made ahead of time; read them back into `enforced`."""
        if self.version == "v1":
            self._configure_v1(limits)
            return
        d = self.dirs["unified"]
        _write(d / "memory.max", str(limits.memory_mb << 20))
        _write(d / "pids.max", str(limits.pids))
        if (d / "cpu.max").exists():
            _write(d / "cpu.max", f"{int(limits.cpus * _PERIOD_US)} {_PERIOD_US}")
        self.enforced = {"memory_bytes": _read_int(d / "memory.max"), "pids": _read_int(d / "pids.max"),
                         "cpu_quota": (d / "cpu.max").read_text().strip() if (d / "cpu.max").exists() else None}

    def _configure_v1(self, limits: Limits) -> None:
        mem, pids, cpu = self.dirs["memory"], self.dirs["pids"], self.dirs["cpu"]
        # The kernel keeps memory <= memory+swap at every step: a raised limit (groups made ahead of
        # time with a smaller one) goes to memsw first, a lowered one to memory first.
        files = [mem / "memory.limit_in_bytes"]
        if (mem / "memory.memsw.limit_in_bytes").exists():
            current = _read_int(files[0])
            raising = current is not None and limits.memory_mb << 20 > current
            files.insert(0 if raising else 1, mem / "memory.memsw.limit_in_bytes")
        for f in files:
            _write(f, str(limits.memory_mb << 20))
        _write(pids / "pids.max", str(limits.pids))
        _write(cpu / "cpu.cfs_period_us", str(_PERIOD_US))
        _write(cpu / "cpu.cfs_quota_us", str(int(limits.cpus * _PERIOD_US)))
        self.enforced = {
            "memory_bytes": _read_int(mem / "memory.limit_in_bytes"),
            "pids": _read_int(pids / "pids.max"),
            "cpu_quota": f"{_read_int(cpu / 'cpu.cfs_quota_us')} {_read_int(cpu / 'cpu.cfs_period_us')}",
        }

    # -- after the run ---------------------------------------------------------------------------

    def stats(self) -> dict[str, int | None]:
        """peak_memory, oom_kills, pids_max_hits, cpu_ns (None where the kernel does not say)."""
        if self.version == "v1":
            mem = self.dirs["memory"]
            cpu_ns = _read_int(self.dirs["cpuacct"] / "cpuacct.usage") if "cpuacct" in self.dirs else None
            return {
                "peak_memory": _read_int(mem / "memory.max_usage_in_bytes"),
                "oom_kills": _read_keyed(mem / "memory.oom_control").get("oom_kill"),
                "pids_max_hits": _read_keyed(self.dirs["pids"] / "pids.events").get("max"),
                "cpu_ns": cpu_ns,
            }
        d = self.dirs["unified"]
        usage = _read_keyed(d / "cpu.stat").get("usage_usec")
        return {
            "peak_memory": _read_int(d / "memory.peak"),
            "oom_kills": _read_keyed(d / "memory.events").get("oom_kill"),
            "pids_max_hits": _read_keyed(d / "pids.events").get("max"),
            "cpu_ns": usage * 1000 if usage is not None else None,
        }

    def pids(self) -> list[int]:
        d = self.dirs.get("pids") or self.dirs.get("unified")
        if d is None:
            return []
        try:
            return [int(p) for p in (d / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def kill_all(self, within: float = 5.0) -> int:
        """SIGKILL every process still in the group until none is left; returns how many were seen."""
        if self.version == "v2" and "unified" in self.dirs:
            with contextlib.suppress(OSError):
                _write(self.dirs["unified"] / "cgroup.kill", "1")
        seen: set[int] = set()
        deadline = time.monotonic() + within
        while True:
            left = self.pids()
            if not left or time.monotonic() > deadline:
                return len(seen)
            for pid in left:
                seen.add(pid)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.002)

    @staticmethod
    def sweep(parent: Path) -> int:
        """Remove the groups under `parent` left by creators that are gone; returns how many. The
        kernel refuses to remove a group that still holds a process or a child group (EBUSY), so a
        group in use is never removed, whatever its name says."""
        removed = 0
        try:
            entries = list(parent.iterdir())
        except OSError:
            return 0
        now = time.time()
        for d in entries:
            found = _CREATOR.fullmatch(d.name)
            if found is None or _alive(int(found.group(1))):
                continue
            with contextlib.suppress(OSError):
                if now - d.stat().st_mtime >= _STALE_AFTER_S:
                    d.rmdir()
                    removed += 1
        return removed

    def remove(self) -> None:
        """Remove the groups; a group still busy (a zombie being reaped) is retried briefly."""
        for d in reversed(list(dict.fromkeys(self.dirs.values()))):
            for _ in range(200):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY:
                        break
                    self.kill_all(within=0.05)
                    time.sleep(0.005)
