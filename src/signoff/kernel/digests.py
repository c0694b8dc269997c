"""SHA-256 digests of bytes, files and directory trees.

A tree digest covers the sorted relative paths, each entry's type and mode, and its content (for a
symlink, its target text). Symlinks are recorded, never followed, so a link pointing out of the tree
cannot pull outside content into the digest.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Any

from signoff.kernel.canonical import canonical_bytes
from signoff.kernel.errors import NotFoundError, UsageError

_CHUNK = 1 << 20


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                h.update(chunk)
    except FileNotFoundError as exc:
        raise NotFoundError(f"file not found: {path}", "check the path") from exc
    return h.hexdigest()


def tree_manifest(root: str | os.PathLike[str], exclude: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Entries of a tree, sorted by relative POSIX path: {path, type, mode, sha256 | target}.

    `exclude` names top-level or nested directory names to skip entirely (e.g. "__pycache__").
    """
    base = Path(root)
    if not base.is_dir():
        raise NotFoundError(f"not a directory: {base}", "pass the folder to digest")
    entries: list[dict[str, Any]] = []
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in exclude)
        here = Path(dirpath)
        # os.walk lists symlinks to directories among dirnames; record them as links, never descend.
        for name in list(dirnames):
            full = here / name
            if full.is_symlink():
                dirnames.remove(name)
                entries.append(_entry(base, full))
        for name in sorted(filenames):
            if name in exclude:
                continue
            entries.append(_entry(base, here / name))
    entries.sort(key=lambda e: e["path"])
    return entries


def _entry(base: Path, full: Path) -> dict[str, Any]:
    rel = full.relative_to(base).as_posix()
    st = full.lstat()
    if stat.S_ISLNK(st.st_mode):
        return {"path": rel, "type": "symlink", "target": os.readlink(full)}
    if stat.S_ISREG(st.st_mode):
        # Only the executable bit matters across machines; umask differences must not change digests.
        mode = "755" if st.st_mode & 0o111 else "644"
        return {"path": rel, "type": "file", "mode": mode, "sha256": sha256_file(full)}
    raise UsageError(f"unsupported file type in tree: {rel}", "remove sockets, fifos and devices from the folder")


def tree_digest(root: str | os.PathLike[str], exclude: tuple[str, ...] = ()) -> str:
    """SHA-256 over the canonical JSON of the tree manifest."""
    return hashlib.sha256(canonical_bytes(tree_manifest(root, exclude))).hexdigest()
