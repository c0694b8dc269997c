"""Path patterns with git's semantics: the one matcher for path policies (CODEOWNERS, the desk's
fixer, documentation and sensitive paths, repair's allowlist).

A pattern is read as GitHub reads a CODEOWNERS line, which is gitignore's syntax (via `pathspec`):

- `*` and `?` never cross `/`; `**` spans folders (`**/logs`, `docs/**`, `a/**/b`);
- a pattern without a slash (other than a trailing one) matches at any depth (`*.js`, `CODEOWNERS`);
- a pattern with a slash elsewhere is anchored at the repository's root (`src/*.py`, `/docs/`);
- a pattern that names a folder matches everything below it (`apps/`, `/build/logs`);
- except GitHub's rule that a trailing `/*` matches the folder's direct children only
  (`docs/*` matches `docs/a.md`, not `docs/build/b.md`).

`fnmatch` is not used: its `*` crosses `/`, so `src/*.py` also matched `src/payments/charge.py`,
which widens an allowlist and hands a file to the wrong code owner.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from pathspec.patterns.gitignore import GitIgnorePatternError
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from signoff.kernel.errors import UsageError

# GitHub's CODEOWNERS does not support these parts of gitignore's syntax (a line using them is
# skipped there); here they are refused rather than guessed at.
UNSUPPORTED = re.compile(r"^!|[\[\]\\]")


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str]:
    if not pattern or UNSUPPORTED.search(pattern):
        raise UsageError(f"path pattern {pattern!r} uses syntax that is not supported",
                         "write it without '!' negation, '[...]' ranges or '\\' escapes")
    try:
        compiled = GitIgnoreSpecPattern(pattern).regex
    except GitIgnorePatternError as exc:
        raise UsageError(f"path pattern {pattern!r} is not valid: {exc}", "use gitignore / CODEOWNERS syntax") from exc
    if compiled is None:  # a comment or blank line matches nothing
        raise UsageError(f"path pattern {pattern!r} matches nothing", "use gitignore / CODEOWNERS syntax")
    return compiled


def valid(pattern: str) -> bool:
    """Whether `pattern` can be used (the CODEOWNERS reader skips a line that cannot, as GitHub does)."""
    try:
        _compiled(pattern)
    except UsageError:
        return False
    return True


def match(pattern: str, path: str) -> bool:
    """Whether the repository-relative `path` (a file, `/`-separated) matches `pattern`."""
    m = _compiled(pattern).match(path)
    if m is None:
        return False
    # A match through a folder (`docs/*` matching `docs/build/` of `docs/build/b.md`) counts,
    # except for a trailing `/*`, which GitHub limits to the folder's direct children.
    through_folder = m.groupdict().get("ps_d") is not None
    return not (through_folder and pattern.endswith("/*"))


def matches(path: str, patterns: Iterable[str]) -> bool:
    """Whether `path` matches any of `patterns`."""
    return any(match(p, path) for p in patterns)
