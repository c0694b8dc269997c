"""A git bundle of chosen commits, written without touching the repository they come from.

A bundle names its commits by refs, so they are given refs in a scratch bare repository that
borrows the source's objects (`objects/info/alternates`) and is bundled from there: nothing is
written to the source repository, its refs or its config. The bundle carries each commit with its
whole history, so it needs nothing else to be cloned or verified (`git bundle verify`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path

from signoff.git.command import output, run
from signoff.git.repo import is_full_id
from signoff.kernel.errors import UsageError
from signoff.kernel.replace import staging_file

_FIX = "check the repository and the revisions, and that the bundle's folder is writable"


def bundle(repo: Path, refs: Mapping[str, str], dest: Path) -> Path:
    """Write `dest`: a bundle whose refs `refs/heads/<name>` point at each full commit id of `refs`
    (`{"base": ..., "candidate": ...}`), with their history. Returns `dest`."""
    if not refs or any(not is_full_id(sha) or not name.isidentifier() for name, sha in refs.items()):
        raise UsageError(f"a bundle names full commit ids by simple names, got {dict(refs)!r}", "resolve them first")
    objects = Path(output(repo, "rev-parse", "--path-format=absolute", "--git-common-dir")) / "objects"
    dest = dest.resolve()
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="signoff-bundle-") as scratch:
        bare = Path(scratch) / "repo.git"
        run(Path(scratch), "init", "--quiet", "--bare", str(bare))
        (bare / "objects" / "info" / "alternates").write_text(f"{objects}\n")
        for name, sha in refs.items():
            run(bare, "update-ref", f"refs/heads/{name}", sha, fix=_FIX)
        partial = staging_file(dest, ".tmp")  # git replaces it through its own lock file
        try:
            run(bare, "bundle", "create", "--quiet", str(partial), *(f"refs/heads/{name}" for name in refs),
                fix=_FIX)
            partial.replace(dest)
        finally:
            partial.unlink(missing_ok=True)
    return dest


def verify_bundle(repo: Path, path: Path) -> str:
    """`git bundle verify` of `path` from `repo` (UsageError when it does not verify): the refs it holds,
    as git lists them."""
    proc = run(repo, "bundle", "verify", str(Path(path).resolve()), check=False)
    if proc.returncode != 0:
        raise UsageError(f"{path} is not a complete git bundle: {proc.stderr.decode(errors='replace').strip()[:300]}",
                         "write the bundle again")
    return proc.stdout.decode(errors="replace").strip()
