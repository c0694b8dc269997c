"""Path checks for proposals: a model may name files, never escape the places its role allows.

A path is accepted only if it is a plain relative POSIX path of conservative characters, has no
`..`, `.` or empty component, does not enter `.git` or `.signoff`, matches the role's allowlist and
no deny pattern, and -- when the caller names the working tree it will be applied to -- no component
of it is a symlink and it resolves inside that tree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from signoff.kernel.pathglob import matches

_SAFE = re.compile(r"^[A-Za-z0-9._@+\-/]+$")
_FORBIDDEN_PARTS = {".git", ".signoff", ".hg", ".svn"}
MAX_PATH = 300


def path_problem(
    path: object,
    allowed: list[str] | None,
    denied: Iterable[str] = (),
    root: Path | None = None,
) -> str | None:
    """The reason `path` may not appear in a proposal, or None when it may."""
    if allowed is None:
        return "this role may not name any paths"
    if not isinstance(path, str) or not path:
        return "path is empty or not a string"
    shown = repr(path[:80])
    if len(path) > MAX_PATH:
        return f"path {shown} is longer than {MAX_PATH} characters"
    if "\\" in path:
        return f"path {shown} contains a backslash"
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path) or path.startswith("~"):
        return f"path {shown} is absolute"
    if not _SAFE.match(path):
        return f"path {shown} contains characters outside A-Z a-z 0-9 . _ @ + - /"
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return f"path {shown} has an empty, '.' or '..' component (path traversal)"
    if any(p.lower() in _FORBIDDEN_PARTS for p in parts):
        return f"path {shown} enters a repository or signoff control folder"
    if not matches(path, allowed):
        return f"path {shown} is outside the allowed paths ({', '.join(allowed) or 'none'})"
    if matches(path, denied):
        return f"path {shown} is a protected path for this role"
    if root is not None:
        return _symlink_problem(path, root)
    return None


def _symlink_problem(path: str, root: Path) -> str | None:
    base = root.resolve()
    current = base
    for part in path.split("/"):
        current = current / part
        if current.is_symlink():
            return f"path {path!r} goes through a symlink ({current.relative_to(base)})"
    try:
        (base / path).resolve().relative_to(base)
    except ValueError:
        return f"path {path!r} resolves outside the working tree"
    return None


def diff_paths(diff: str) -> tuple[list[str], str | None]:
    """Paths a unified diff touches, and a reason to refuse it outright (symlink or binary content)."""
    found: list[str] = []
    for line in diff.splitlines():
        if line.startswith(("--- ", "+++ ")):
            target = line[4:].split("\t", 1)[0].strip()
            if target == "/dev/null":
                continue
            if target.startswith(("a/", "b/")):
                target = target[2:]
            found.append(target)
        elif line.startswith(("rename from ", "rename to ", "copy from ", "copy to ")):
            found.append(line.split(" ", 2)[2].strip())
        elif line.startswith("diff --git "):
            continue
        elif re.match(r"^(new file mode|new mode|old mode|deleted file mode) 120000", line):
            return found, "the diff creates or changes a symlink"
        elif line.startswith(("GIT binary patch", "Binary files ")):
            return found, "the diff carries binary content"
    return found, None
