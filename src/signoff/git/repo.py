"""Repository plumbing: resolve revisions, ancestry, changed paths, file contents, commits of whole files."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from signoff.git.command import Identity, current, output, run, run_soon
from signoff.kernel.errors import NotFoundError, UsageError

_HEX40 = re.compile(r"^[0-9a-f]{40}$")
SUPERVISOR = Identity("signoff supervisor", "supervisor@signoff.invalid")


def is_full_id(sha: str) -> bool:
    return bool(_HEX40.match(sha or ""))


def open_repo(path: Path) -> Path:
    """`path` resolved, when it is inside a git work tree or a bare repository; UsageError when not."""
    if not path.exists():
        raise NotFoundError(f"repository not found: {path}", "pass --repo the folder of a git repository")
    if run(path, "rev-parse", "--git-dir", check=False).returncode != 0:
        raise UsageError(f"not a git repository: {path}", "pass --repo the folder of a git repository")
    return path.resolve()


def resolve(repo: Path, rev: str) -> str:
    """The full commit id a revision names; UsageError naming the revision when it does not exist."""
    if not rev or rev.startswith("-"):
        raise UsageError(f"invalid revision {rev!r}", "pass a commit id, branch or tag")
    proc = run(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
    out = proc.stdout.decode().strip()
    if proc.returncode != 0 or not _HEX40.match(out):
        raise UsageError(f"revision {rev!r} is not a commit in {repo}", "pass a commit id, branch or tag")
    return out


def has_commit(repo: Path, sha: str) -> bool:
    """True when `sha` is a full commit id present in `repo`."""
    if not is_full_id(sha):
        return False
    return run(repo, "cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0


def compare_soon(repo: Path, base: str, candidate: str) -> None:
    """Start the three comparisons of two full commit ids that a verification's policy makes
    (`changed_paths`, `is_ancestor`, `diff_text`) now, inside the caller's session, so that they run
    beside its other work; each of those functions collects its own answer (command.run_soon)."""
    if is_full_id(base) and is_full_id(candidate):
        for args in (_changed_args(base, candidate), _ancestor_args(base, candidate), _diff_args(base, candidate)):
            run_soon(repo, *args)


def _ancestor_args(base: str, candidate: str) -> tuple[str, ...]:
    return ("merge-base", "--is-ancestor", base, candidate)


def _changed_args(base: str, candidate: str) -> tuple[str, ...]:
    return ("diff", "--name-status", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-relative",
            "--ignore-submodules=none", base, candidate)


def _diff_args(base: str, candidate: str) -> tuple[str, ...]:
    return ("diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-relative", "--text",
            "--ignore-submodules=none", "--src-prefix=a/", "--dst-prefix=b/", base, candidate)


def is_ancestor(repo: Path, base: str, candidate: str) -> bool:
    """True when `candidate` descends from `base` (or is it)."""
    proc = run(repo, *_ancestor_args(base, candidate), check=False)
    if proc.returncode not in (0, 1):
        raise UsageError(f"git could not compare {base[:12]} and {candidate[:12]}: "
                         f"{proc.stderr.decode(errors='replace').strip()}", "check both revisions exist")
    return proc.returncode == 0


@dataclass(frozen=True)
class Change:
    status: str  # A, M, D, T (renames are listed as a deletion and an addition)
    path: str


def changed_paths(repo: Path, base: str, candidate: str) -> list[Change]:
    """Paths the candidate changes relative to base (NUL-separated, so any file name is safe)."""
    proc = run(repo, *_changed_args(base, candidate))
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


def diff_text(repo: Path, base: str, candidate: str, limit: int = 200_000) -> str:
    """The patch from base to candidate as committed: no external diff, no textconv driver, and no
    attribute may hide a file's lines (`-diff`, `binary`): only content decides what is binary."""
    proc = run(repo, *_diff_args(base, candidate))
    text = _binary_by_content(proc.stdout).decode("utf-8", errors="replace")
    return text if len(text) <= limit else text[:limit] + "\n[diff truncated]\n"


_FILE_HEADER = re.compile(rb"(?m)^(?=diff --git )")


def _binary_by_content(patch: bytes) -> bytes:
    """`--text` prints every file's lines whatever the attributes say; a file whose lines hold a NUL
    byte is binary by git's own content rule and is shown the way git shows it, in one line."""
    if b"\0" not in patch:
        return patch
    out = []
    for part in _FILE_HEADER.split(patch):
        if b"\0" in part:
            header = part.split(b"\n@@", 1)[0].split(b"\n")
            sides = {line[:4]: line[4:] for line in header if line.startswith((b"--- ", b"+++ "))}
            kept = [line for line in header if line and not line.startswith((b"--- ", b"+++ "))]
            part = b"\n".join([*kept, b"Binary files %s and %s differ\n" % (sides.get(b"--- ", b"/dev/null"),
                                                                              sides.get(b"+++ ", b"/dev/null"))])
        out.append(part)
    return b"".join(out)


def read_file_at(repo: Path, commit: str, path: str) -> bytes | None:
    """The bytes of `path` at `commit`, or None when that revision has no such file."""
    if current() is not None and is_full_id(commit) and "\n" not in path:
        from signoff.git.export import read_at  # export builds on this module

        return read_at(repo, commit, path)
    proc = run(repo, "cat-file", "blob", f"{commit}:{path}", check=False)
    return proc.stdout if proc.returncode == 0 else None


def tracked_paths(repo: Path, commit: str, under: str | None = None) -> list[str]:
    """Every file path committed at `commit` (only those below the folder `under`, when given).
    Inside a `git.session`, a full commit id's whole listing is read once and each folder's taken
    from it (a verification asks for the test folder's, its helpers' and the whole tree's)."""
    return [path for _, path in _entries(repo, commit, under)]


def links_at(repo: Path, commit: str, under: str | None = None) -> list[str]:
    """The symbolic links committed at `commit` (below the folder `under`, when given), from the same
    listing as `tracked_paths`: inside a session, no other git runs for them."""
    return [path for mode, path in _entries(repo, commit, under) if mode == "120000"]


def _entries(repo: Path, commit: str, under: str | None) -> list[tuple[str, str]]:
    active = current()
    if active is None or not is_full_id(commit) or (under and not _PLAIN_FOLDER.fullmatch(under)):
        return _ls_tree(repo, commit, under)
    key = ("entries", str(repo), commit)
    if key not in active.kept:
        active.kept[key] = tuple(_ls_tree(repo, commit, None))
    every = active.kept[key]
    assert isinstance(every, tuple)
    if not under:
        return list(every)
    prefix = under.rstrip("/") + "/"
    return [entry for entry in every if entry[1].startswith(prefix)]


# A folder named plainly (no pathspec magic, `.` or `..` part, leading or doubled slash): git's
# ls-tree matches such a path as a literal prefix, so the whole listing answers it exactly.
_PLAIN_FOLDER = re.compile(r"(?!:)(?!\.{1,2}(/|$))(?!.*/\.{1,2}(/|$))(?!.*//)[^/\n][^\n]*")


def list_soon(repo: Path, commit: str) -> None:
    """Start the whole listing `tracked_paths` reads of a full commit id now, inside the caller's
    session, so that it runs beside the caller's other work; the first `tracked_paths` of that
    commit collects it (command.run_soon)."""
    if current() is not None and is_full_id(commit):
        run_soon(repo, "ls-tree", "-r", "-z", commit)


def _ls_tree(repo: Path, commit: str, under: str | None) -> list[tuple[str, str]]:
    """(mode, path) of every file committed at `commit` below `under`: `ls-tree -r` lists blobs, links
    (120000) and submodules (160000), never folders."""
    proc = run(repo, "ls-tree", "-r", "-z", commit, *(("--", under.rstrip("/") + "/") if under else ()))
    out = []
    for entry in proc.stdout.decode("utf-8", errors="surrogateescape").split("\0"):
        meta, tab, path = entry.partition("\t")
        if tab:
            out.append((meta.split(" ", 1)[0], path))
    return out


def mode_at(repo: Path, commit: str, path: str) -> str | None:
    """The tree entry mode of `path` at `commit` (`100644`, `120000` for a link, ...), None when absent."""
    out = output(repo, "ls-tree", commit, "--", path)
    return out.split()[0] if out else None


def commit_files(repo: Path, parent: str, files: dict[str, str], message: str,
                 author: Identity = SUPERVISOR, ref: str | None = None) -> str:
    """Create a commit on top of `parent` replacing whole files, without touching any work tree.

    Used by the supervisor to turn a fixer's full-file proposal into a candidate revision. The index
    is a private temporary file, so a user's staged changes and checkout are left alone.
    """
    with tempfile.TemporaryDirectory(prefix="signoff-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index"), **author.env()}
        fix = "check the repository is writable"

        def git(*args: str, data: bytes | None = None) -> str:
            return output(repo, *args, input_=data, env=env, timeout=60, fix=fix)

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
