"""Checks on what a caller passes to `run()`: each bad value is a UsageError that names its fix,
raised before anything starts."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from signoff.kernel.errors import UsageError
from signoff.sandbox.bwrap import RESERVED
from signoff.sandbox.model import Mount

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def default_env(workdir: str) -> dict[str, str]:
    """What every sandboxed command gets unless the caller overrides it: nothing secret."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": workdir, "TMPDIR": "/tmp", "LANG": "C.UTF-8"}  # noqa: S108


def check_command(command: Sequence[str]) -> list[str]:
    if isinstance(command, str) or not command:
        raise UsageError("the sandbox command must be a non-empty list of arguments",
                         'pass e.g. ["python", "-m", "pytest"], not a shell string')
    for arg in command:
        if not isinstance(arg, str) or "\0" in arg:
            raise UsageError(f"sandbox command argument {arg!r} is not a string without NUL bytes",
                             "pass every argument as a str")
    return list(command)


def check_dst(dst: str, what: str) -> str:
    if not isinstance(dst, str) or not dst.startswith("/") or "\0" in dst or "\n" in dst:
        raise UsageError(f"{what} {dst!r} must be an absolute path inside the sandbox", "e.g. /src or /work")
    norm = str(PurePosixPath(os.path.normpath(dst)))
    if norm == "/" or ".." in PurePosixPath(dst).parts:
        raise UsageError(f"{what} {dst!r} is not allowed", "use a directory such as /src, /harness or /work")
    for r in RESERVED:
        if norm == r or norm.startswith(r + "/") or r.startswith(norm + "/"):
            raise UsageError(f"{what} {dst!r} overlaps {r}, which the sandbox provides itself",
                             "mount it elsewhere, e.g. under /src, /harness or /opt")
    return norm


def check_mounts(mounts: Sequence[Mount], workdir: str, unsafe: bool = False) -> list[Mount]:
    out: list[Mount] = []
    seen: set[str] = set()
    for m in mounts:
        if not isinstance(m, Mount):
            raise UsageError(f"{m!r} is not a Mount", "pass Mount(src=Path(...), dst='/src')")
        dst = str(m.dst) if unsafe else check_dst(m.dst, "mount destination")
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


def check_env(env: dict[str, str]) -> dict[str, str]:
    for key, value in env.items():
        if not isinstance(key, str) or not _ENV_NAME.match(key):
            raise UsageError(f"environment name {key!r} is not valid", "use letters, digits and _")
        if not isinstance(value, str) or "\0" in value:
            raise UsageError(f"environment value of {key} must be a string without NUL bytes", "pass a str")
    return dict(env)


def check_collect(names: Sequence[str]) -> list[str]:
    out = []
    for name in names:
        p = PurePosixPath(name) if isinstance(name, str) else None
        if (p is None or not name or p.is_absolute() or ".." in p.parts or any(c in name for c in "\n\t\0")):
            raise UsageError(f"collect entry {name!r} must be a relative path inside the work area",
                             "e.g. 'report.xml' or 'out/result.json'")
        out.append(str(p))
    return out


def check_timeout(timeout: float) -> float:
    if not (0 < timeout <= 24 * 3600):
        raise UsageError(f"timeout {timeout!r} is out of range", "pass a timeout in seconds, > 0 and <= 86400")
    return timeout
