"""The fixtures' files in examples/ and their git repositories: `examples_root` finds the folder,
`build` makes a fixture's repository (examples/coupon, examples/coupon-js), `shoplite_source` is the
ShopLite shop the desk demo puts in its forge, `init_repo` a one-commit repository from given files.

A fixture folder holds `repo/` (the base revision's files), `harness/` (the approved tests) and
`candidates/<name>/` (files each candidate replaces, committed on top of the base). Commits get a
fixed author and date, so the same files always give the same commit ids.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

from signoff import git
from signoff.kernel.errors import NotFoundError, UsageError

_IDENTITY = git.Identity("signoff fixture", "fixture@signoff.invalid", "2026-11-06T12:00:00+00:00")


@dataclass
class FixtureRepo:
    path: Path
    harness: Path
    base: str
    candidates: dict[str, str] = field(default_factory=dict)


def installed_examples() -> Path:
    """Where an installed signoff keeps its examples: <prefix>/share/signoff/examples (the wheel's
    data files; pyproject.toml lists them)."""
    return Path(sysconfig.get_path("data")) / "share" / "signoff" / "examples"


def examples_candidates() -> list[Path]:
    """Where the examples may be, in order: SIGNOFF_EXAMPLES, the source checkout this module is in
    (`make demo`), the installed copy, ./examples."""
    named = os.environ.get("SIGNOFF_EXAMPLES")
    candidates = [Path(named)] if named else []
    candidates += [Path(__file__).resolve().parents[3] / "examples", installed_examples(), Path.cwd() / "examples"]
    return candidates


def examples_root() -> Path:
    """The examples folder: a source checkout's (where `make demo` runs), the installed copy, or
    SIGNOFF_EXAMPLES."""
    for c in examples_candidates():
        if (c / "coupon" / "harness").is_dir():
            return c
    raise NotFoundError("the examples folder (with examples/coupon) was not found",
                        "reinstall signoff (its wheel carries them), or set SIGNOFF_EXAMPLES to an examples folder")


SHOPLITE = {"python": "shoplite", "node": "shoplite-ts"}


def shoplite_source(stack: str = "python") -> Path:
    """The files of the ShopLite repository the desk demo fixes: examples/shoplite/repo (Python), or
    examples/shoplite-ts/repo (TypeScript: Vitest, Prettier, ESLint, tsc) for the node stack."""
    if stack not in SHOPLITE:
        raise UsageError(f"no ShopLite for the stack {stack!r}", f"use one of: {', '.join(SHOPLITE)}")
    path = examples_root() / SHOPLITE[stack] / "repo"
    if not path.is_dir():
        raise NotFoundError(f"examples/{SHOPLITE[stack]}/repo was not found", "run from a source checkout of signoff")
    return path


def _git(repo: Path, *args: str) -> str:
    return git.output(repo, *args, env=_IDENTITY.env(), timeout=60, fix="check that git is installed")


def _copy_files(src: Path, dst: Path) -> None:
    for path in sorted(src.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            target = dst / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


def init_repo(dest: Path, files: dict[str, str], message: str = "base") -> str:
    """A new repository at `dest` whose one commit (on main) holds `files`; returns its id."""
    for rel, text in files.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_text(text)
    _git(dest, "init", "-q", "-b", "main")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", message)
    return _git(dest, "rev-parse", "HEAD")


def build(fixture: Path, dest: Path) -> FixtureRepo:
    """Create the fixture's repository at `dest`: main = base, one branch per candidate."""
    if not (fixture / "repo").is_dir() or not (fixture / "harness").is_dir():
        raise NotFoundError(f"{fixture} is not a fixture folder (needs repo/ and harness/)", "pass a fixture folder")
    if dest.exists() and any(dest.iterdir()):
        raise UsageError(f"{dest} is not empty", "pass a new folder for the fixture repository")
    dest.mkdir(parents=True, exist_ok=True)
    _git(dest, "init", "-q", "-b", "main")
    _copy_files(fixture / "repo", dest)
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "checkout: apply percentage coupons")
    base = _git(dest, "rev-parse", "HEAD")
    out = FixtureRepo(dest, fixture / "harness", base)
    cands = fixture / "candidates"
    for cand in sorted(p for p in cands.iterdir() if p.is_dir()) if cands.is_dir() else []:
        name = cand.name.replace("_", "-")
        _git(dest, "checkout", "-q", "-b", name, base)
        _copy_files(cand, dest)
        _git(dest, "add", "-A")
        _git(dest, "commit", "-q", "-m", f"candidate: {name}")
        out.candidates[name] = _git(dest, "rev-parse", "HEAD")
    _git(dest, "checkout", "-q", "main")
    return out
