"""Can the sandbox's unprivileged uid reach a host path? bubblewrap resolves bind sources with that
uid's rights, so a checkout or venv under a 0700 directory (like /root) cannot be mounted."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def _allows(st: os.stat_result, uid: int, gid: int, bits: tuple[int, int, int]) -> bool:
    user_bit, group_bit, other_bit = bits
    if st.st_uid == uid:
        return bool(st.st_mode & user_bit)
    if st.st_gid == gid:
        return bool(st.st_mode & group_bit)
    return bool(st.st_mode & other_bit)


_SEARCH = (stat.S_IXUSR, stat.S_IXGRP, stat.S_IXOTH)
_READ = (stat.S_IRUSR, stat.S_IRGRP, stat.S_IROTH)
_WRITE = (stat.S_IWUSR, stat.S_IWGRP, stat.S_IWOTH)


def blocker(path: Path, uid: int, gid: int, write: bool = False) -> tuple[Path, str] | None:
    """The first path component that stops `uid` from reaching (and reading, or writing) `path`,
    with the reason; None when nothing does. Checks both the given and the resolved path."""
    if uid == os.geteuid():
        return None
    target = Path(os.path.abspath(path))
    for candidate in dict.fromkeys((target, target.resolve())):
        for ancestor in reversed(candidate.parents):
            st = os.stat(ancestor)
            if not _allows(st, uid, gid, _SEARCH):
                return ancestor, f"mode {stat.S_IMODE(st.st_mode):04o}, owner uid {st.st_uid}: not searchable"
    st = os.stat(target)
    need = [_READ] + ([_SEARCH] if stat.S_ISDIR(st.st_mode) else []) + ([_WRITE] if write else [])
    for bits in need:
        if not _allows(st, uid, gid, bits):
            what = "writable" if bits is _WRITE else "readable"
            return target, f"mode {stat.S_IMODE(st.st_mode):04o}, owner uid {st.st_uid}: not {what}"
    return None
