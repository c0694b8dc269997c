"""Where a verification's workspace lives: the two exports, the harness's copy, the runner files.

A verification creates every file of the base's export (hundreds for a real project) and removes
them all after the runs, so the filesystem it does that on is on the path. The rule, in order:

1. `SIGNOFF_REPAIR_WORKSPACE`, else `[repair] workspace` in signoff.toml: that folder, and only it
   (refused with a fix when it is missing, not a writable folder, or writable by all without the
   sticky bit).
2. `TMPDIR` set: the temporary folder the person chose (`tempfile.gettempdir()`), as before.
3. A memory filesystem, `/dev/shm`, when it is a writable folder with the sticky bit, mounted
   without `noexec` (scripts written into an export must run) and with at least `MIN_FREE` free:
   creating and removing files there never waits for a disk or a journal.
4. Otherwise the temporary folder.

In every place the workspace is a fresh folder of its own made by `mkdtemp` (an unguessable name,
0700 until the verifier opens it to the sandbox's unprivileged uid), so a world-writable parent is
as safe as `/tmp` is today. A memory filesystem that fills up during the exports is left for the
next place (`Workspace.move_on`): a full `/dev/shm` costs a second export, never the verification.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from signoff.kernel.errors import UsageError

MEMORY_FS = Path("/dev/shm")  # noqa: S108 -- a candidate only when the checks below hold
MIN_FREE = 1 << 30  # bytes free on the memory filesystem before it is used (1 GiB)
_FULL = (errno.ENOSPC, errno.EDQUOT)


def places(configured: str | None, env: Mapping[str, str] | None = None, memory: Path = MEMORY_FS) -> list[Path]:
    """The folders to make a workspace in, best first (the rule above). `configured` is the
    `[repair] workspace` setting; `env` the environment (os.environ when None)."""
    env = os.environ if env is None else env
    named = env.get("SIGNOFF_REPAIR_WORKSPACE") or configured
    if named:
        folder = Path(named)
        problem = _unusable(folder)
        if problem:
            raise UsageError(f"the repair workspace folder {folder} {problem}",
                             "set SIGNOFF_REPAIR_WORKSPACE (or [repair] workspace) to a writable folder of yours, "
                             "or unset it to let signoff choose")
        return [folder]
    temp = Path(tempfile.gettempdir())
    if env.get("TMPDIR"):
        return [temp]
    if _unusable(memory) is None and _roomy(memory):
        return [memory, temp]
    return [temp]


def _unusable(folder: Path) -> str | None:
    """Why `folder` cannot hold workspaces, or None."""
    try:
        seen = folder.stat()
    except OSError:
        return "does not exist"
    if not stat.S_ISDIR(seen.st_mode):
        return "is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return "is not writable"
    if seen.st_mode & stat.S_IWOTH and not seen.st_mode & stat.S_ISVTX:
        # Anyone could rename our workspace away and put theirs in its place.
        return "is writable by everyone without the sticky bit"
    if os.statvfs(folder).f_flag & os.ST_NOEXEC:
        return "is on a filesystem mounted noexec (scripts in the exports could not run)"
    return None


def _roomy(folder: Path) -> bool:
    fs = os.statvfs(folder)
    return fs.f_bavail * fs.f_frsize >= MIN_FREE


def make_folder(places_: list[Path], prefix: str) -> Path:
    """A fresh private folder (mkdtemp) in the first of `places_` where one can be made; the places
    it could not be made in are taken off the list."""
    while True:
        try:
            return Path(tempfile.mkdtemp(prefix=prefix, dir=places_[0]))
        except OSError:
            if len(places_) == 1:
                raise
            places_.pop(0)


class Workspace:
    """One verification's folder, in the first of `places` where one can be made."""

    def __init__(self, places_: list[Path], prefix: str = "signoff-verify-") -> None:
        self.places, self.prefix = list(places_), prefix
        self.path = self._make()

    def _make(self) -> Path:
        path = make_folder(self.places, self.prefix)
        path.chmod(0o755)  # the sandbox's unprivileged uid reads what is mounted from it
        return path

    def move_on(self, failure: BaseException) -> bool:
        """After `failure` (an export that stopped): when it was the filesystem being full and another
        place is left, remove this folder, make a fresh one there and return True (export again)."""
        cause: BaseException | None = failure
        while cause is not None and not isinstance(cause, OSError):
            cause = cause.__cause__
        if cause is None or cause.errno not in _FULL or len(self.places) == 1:
            return False
        remove(self.path)
        self.places.pop(0)
        self.path = self._make()
        return True


def remove(path: Path) -> None:
    """Remove a workspace, folders the verifier made read-only included."""
    for dirpath, _d, _f in os.walk(path):
        try:
            Path(dirpath).chmod(0o755)
        except OSError:
            pass
    shutil.rmtree(path, ignore_errors=True)
