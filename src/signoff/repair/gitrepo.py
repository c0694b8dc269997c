"""Git handling for the verifier: resolve revisions, export them clean, check ancestry and paths.

Everything goes through the system `git` CLI. A revision is exported with `git archive`, so the tree
under test holds exactly the committed files of that revision: no `.git`, no other history and
nothing from anyone's working tree, which keeps the code under test from reading later commits.
"""

from __future__ import annotations

import fnmatch
import io
import os
import re
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from signoff.kernel.errors import NotFoundError, UnavailableError, UsageError

_HEX40 = re.compile(r"^[0-9a-f]{40}$")

# Paths that are the repository's own tests. A candidate that edits them is reported (a tamper
# signal); the verdict never depends on them because it uses only the frozen harness.
TEST_PATH_GLOBS = (
    "test/*", "tests/*", "*/test/*", "*/tests/*", "__tests__/*", "*/__tests__/*", "spec/*", "*/spec/*",
    "test_*.py", "*/test_*.py", "*_test.py", "conftest.py", "*/conftest.py",
    "*.test.js", "*.test.mjs", "*.test.cjs", "*.test.ts", "*.spec.js", "*.spec.ts",
    "pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml",
)


def _git(repo: Path, *args: str, input_: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    if shutil.which("git") is None:
        raise UnavailableError("git is not installed", "apt-get install -y git")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    proc = subprocess.run(
        ["git", "-c", f"safe.directory={repo}", "-C", str(repo), *args],
        input=input_, capture_output=True, env=env, timeout=120, check=False,
    )
    if check and proc.returncode != 0:
        raise UsageError(f"git {args[0]} failed in {repo}: {proc.stderr.decode(errors='replace').strip()}",
                         "check the repository path and revisions")
    return proc


def open_repo(path: Path) -> Path:
    """The top of the work tree (or the bare repository) at `path`; UsageError if it is not git."""
    if not path.exists():
        raise NotFoundError(f"repository not found: {path}", "pass --repo the folder of a git repository")
    proc = _git(path, "rev-parse", "--git-dir", check=False)
    if proc.returncode != 0:
        raise UsageError(f"not a git repository: {path}", "pass --repo the folder of a git repository")
    return path.resolve()


def resolve(repo: Path, rev: str) -> str:
    """The full commit id a revision names; UsageError naming the revision when it does not exist."""
    if not rev or rev.startswith("-"):
        raise UsageError(f"invalid revision {rev!r}", "pass a commit id, branch or tag")
    proc = _git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
    out = proc.stdout.decode().strip()
    if proc.returncode != 0 or not _HEX40.match(out):
        raise UsageError(f"revision {rev!r} is not a commit in {repo}", "pass a commit id, branch or tag")
    return out


def is_ancestor(repo: Path, base: str, candidate: str) -> bool:
    """True when `candidate` descends from `base` (or is it)."""
    proc = _git(repo, "merge-base", "--is-ancestor", base, candidate, check=False)
    if proc.returncode not in (0, 1):
        raise UsageError(f"git could not compare {base[:12]} and {candidate[:12]}: "
                         f"{proc.stderr.decode(errors='replace').strip()}", "check both revisions exist")
    return proc.returncode == 0


@dataclass(frozen=True)
class Change:
    status: str  # A, M, D, T, R (a rename lists both the old and the new path)
    path: str


def changed_paths(repo: Path, base: str, candidate: str) -> list[Change]:
    """Paths the candidate changes relative to base (NUL-separated, so any file name is safe)."""
    proc = _git(repo, "diff", "--name-status", "-z", "--no-renames", base, candidate)
    parts = proc.stdout.decode("utf-8", errors="surrogateescape").split("\0")
    changes: list[Change] = []
    i = 0
    while i + 1 < len(parts):
        status, path = parts[i], parts[i + 1]
        if not status:
            break
        changes.append(Change(status[0], path))
        i += 2
    return changes


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
    """Changed paths outside the allowlist (empty when no allowlist was given)."""
    if not allow:
        return []
    return sorted({c.path for c in changes if not matches(c.path, allow)})


def test_edits(changes: list[Change]) -> list[str]:
    """Changed paths that belong to the repository's own tests or test configuration."""
    return sorted({c.path for c in changes if matches(c.path, TEST_PATH_GLOBS)})


def diff_text(repo: Path, base: str, candidate: str, limit: int = 200_000) -> str:
    proc = _git(repo, "diff", "--no-color", "--no-ext-diff", base, candidate)
    text = proc.stdout.decode("utf-8", errors="replace")
    return text if len(text) <= limit else text[:limit] + "\n[diff truncated]\n"


def export(repo: Path, commit: str, dest: Path) -> Path:
    """Write the committed tree of `commit` into the empty folder `dest`, world-readable.

    Members are extracted with tarfile's "data" filter: absolute paths, `..`, links leaving the tree
    and device files are refused, so a hostile commit cannot write outside `dest`.
    """
    if not _HEX40.match(commit):
        raise UsageError(f"export needs a full commit id, got {commit!r}", "resolve the revision first")
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise UsageError(f"export folder is not empty: {dest}", "export into a fresh folder")
    proc = _git(repo, "archive", "--format=tar", commit)
    try:
        with tarfile.open(fileobj=io.BytesIO(proc.stdout), mode="r:") as tar:
            tar.extractall(dest, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise ExportError(f"revision {commit[:12]} cannot be exported safely: {exc}") from exc
    # `git archive` honours the tree's own .gitattributes: a revision could mark files export-ignore
    # and so hide them from the test run. Every committed path must be in the export.
    listed = _git(repo, "ls-tree", "-r", "-z", "--name-only", commit).stdout.decode(
        "utf-8", errors="surrogateescape").split("\0")
    missing = [p for p in listed if p and not os.path.lexists(dest / p)]
    if missing:
        raise ExportError(f"revision {commit[:12]} hides committed files from export: {', '.join(missing[:5])}")
    _make_readable(dest)
    return dest


class ExportError(Exception):
    """A revision could not be exported completely and safely (it is untrusted input)."""


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


def read_file_at(repo: Path, commit: str, path: str) -> bytes | None:
    """The bytes of `path` at `commit`, or None when that revision has no such file."""
    proc = _git(repo, "show", f"{commit}:{path}", check=False)
    return proc.stdout if proc.returncode == 0 else None


def commit_files(repo: Path, parent: str, files: dict[str, str], message: str,
                 author: str = "signoff supervisor <supervisor@signoff.invalid>", ref: str | None = None) -> str:
    """Create a commit on top of `parent` replacing whole files, without touching any work tree.

    Used by the supervisor to turn a fixer's full-file proposal into a candidate revision. The index
    is a private temporary file, so a user's staged changes and checkout are left alone.
    """
    import tempfile

    name, _, rest = author.partition("<")
    email = rest.rstrip(">").strip()
    with tempfile.TemporaryDirectory(prefix="signoff-index-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update({
            "GIT_INDEX_FILE": str(Path(tmp) / "index"), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": name.strip(), "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name.strip(), "GIT_COMMITTER_EMAIL": email,
        })

        def git(*args: str, data: bytes | None = None) -> str:
            proc = subprocess.run(["git", "-c", f"safe.directory={repo}", "-C", str(repo), *args], input=data,
                                  capture_output=True, env=env, timeout=60, check=False)
            if proc.returncode != 0:
                raise UsageError(f"git {args[0]} failed: {proc.stderr.decode(errors='replace').strip()}",
                                 "check the repository is writable")
            return proc.stdout.decode().strip()

        git("read-tree", parent)
        for path, content in sorted(files.items()):
            blob = git("hash-object", "-w", "--stdin", data=content.encode())
            git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
        tree = git("write-tree")
        commit = git("commit-tree", tree, "-p", parent, "-m", message)
        if ref is not None:
            # A ref keeps the candidate reachable, so garbage collection cannot prune it.
            git("update-ref", ref, commit)
        return commit
