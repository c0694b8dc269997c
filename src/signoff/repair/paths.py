"""Which changed paths a candidate may touch: the allowlist and the repository's own tests.

The changes themselves come from git (`signoff.git.changed_paths`); this module only judges them.
"""

from __future__ import annotations

import fnmatch

from signoff.git import Change
from signoff.kernel import pathglob

# Paths that are the repository's own tests. A candidate that edits them is reported (a tamper
# signal); the verdict never depends on them because it uses only the frozen harness.
TEST_PATH_GLOBS = (
    "test/*", "tests/*", "*/test/*", "*/tests/*", "__tests__/*", "*/__tests__/*", "spec/*", "*/spec/*",
    "test_*.py", "*/test_*.py", "*_test.py", "conftest.py", "*/conftest.py",
    "*.test.js", "*.test.mjs", "*.test.cjs", "*.test.ts", "*.spec.js", "*.spec.ts",
    "pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml",
)


def matches(path: str, globs: list[str] | tuple[str, ...]) -> bool:
    """fnmatch against the whole path and, for patterns without a slash, the file name too."""
    name = path.rsplit("/", 1)[-1]
    for g in globs:
        if fnmatch.fnmatchcase(path, g):
            return True
        if g.endswith("/**") and (path == g[:-3] or path.startswith(g[:-2])):
            return True
        if "/" not in g and fnmatch.fnmatchcase(name, g):
            return True
    return False


def disallowed(changes: list[Change], allow: list[str]) -> list[str]:
    """Changed paths outside the allowlist (empty when no allowlist was given). The allowlist is read
    with git's semantics (`*` stays inside a folder); `matches`, where `*` crosses `/`, only widens
    the test-edit signal, never what a candidate may change."""
    if not allow:
        return []
    return sorted({c.path for c in changes if not pathglob.matches(c.path, allow)})


def test_edits(changes: list[Change]) -> list[str]:
    """Changed paths that belong to the repository's own tests or test configuration."""
    return sorted({c.path for c in changes if matches(c.path, TEST_PATH_GLOBS)})
