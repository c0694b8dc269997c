"""Export a revision clean: exactly its committed files, nothing from history or anyone's work tree.

A revision is exported with `git archive`, so the tree under test holds no `.git`, no other
history and no uncommitted file, which keeps the code under test from reading later commits.
"""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

from signoff.git.command import run
from signoff.git.repo import is_full_id, tracked_paths
from signoff.kernel.errors import UsageError


class ExportError(Exception):
    """A revision could not be exported completely and safely (it is untrusted input)."""


def export(repo: Path, commit: str, dest: Path) -> Path:
    """Write the committed tree of `commit` into the empty folder `dest`, world-readable.

    Members are extracted with tarfile's "data" filter: absolute paths, `..`, links leaving the tree
    and device files are refused, so a hostile commit cannot write outside `dest`. `run` switches off
    the filter drivers the repository's config defines, so the bytes are the committed bytes.
    """
    if not is_full_id(commit):
        raise UsageError(f"export needs a full commit id, got {commit!r}", "resolve the revision first")
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise UsageError(f"export folder is not empty: {dest}", "export into a fresh folder")
    proc = run(repo, "archive", "--format=tar", commit)
    try:
        with tarfile.open(fileobj=io.BytesIO(proc.stdout), mode="r:") as tar:
            tar.extractall(dest, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise ExportError(f"revision {commit[:12]} cannot be exported safely: {exc}") from exc
    # `git archive` honours the tree's own .gitattributes: a revision could mark files export-ignore
    # and so hide them from the test run. Every committed path must be in the export.
    missing = [p for p in tracked_paths(repo, commit) if not os.path.lexists(dest / p)]
    if missing:
        raise ExportError(f"revision {commit[:12]} hides committed files from export: {', '.join(missing[:5])}")
    _make_readable(dest)
    return dest


def _make_readable(root: Path) -> None:
    # The sandbox reads the export as an unprivileged uid: folders need r-x and files r for others.
    root.chmod(0o755)
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            p = Path(dirpath, d)
            if not p.is_symlink():
                p.chmod(0o755)
        for f in filenames:
            p = Path(dirpath, f)
            if not p.is_symlink():
                p.chmod(0o755 if p.stat().st_mode & 0o111 else 0o644)
