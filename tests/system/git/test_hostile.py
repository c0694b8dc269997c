"""signoff.git from the attacker's side: a hostile environment, user config or inspected repository
must neither run a program nor redirect git to another repository."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from signoff import git
from tests.support.requires import require

_PLAIN = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
          "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


def _plain_git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], env=_PLAIN, capture_output=True, check=True,
                          text=True).stdout.strip()


def _program(path: Path, marker: Path) -> str:
    """An executable that leaves `marker` behind when anything runs it (then passes stdin through)."""
    path.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    path.chmod(0o755)
    return str(path)


def _repo(root: Path, name: str, text: str) -> tuple[Path, str, str]:
    repo = root / name
    repo.mkdir()
    _plain_git(repo, "init", "-q", "-b", "main")
    (repo / ".gitattributes").write_text("* diff=evil filter=evil\n")
    (repo / "f.txt").write_text("first\n")
    _plain_git(repo, "add", "-A")
    _plain_git(repo, "commit", "-q", "-m", "one")
    first = _plain_git(repo, "rev-parse", "HEAD")
    (repo / "f.txt").write_text(text)
    _plain_git(repo, "commit", "-q", "-am", "two")
    return repo, first, _plain_git(repo, "rev-parse", "HEAD")


def _hostile_repo_config(repo: Path, program: str) -> None:
    """What a repository's own .git may hold: drivers, a filesystem monitor and hooks that run `program`."""
    for key, value in (("diff.evil.textconv", program), ("diff.external", program), ("filter.evil.smudge", program),
                       ("filter.evil.process", program), ("filter.evil.required", "true"),
                       ("core.fsmonitor", program)):
        _plain_git(repo, "config", key, value)
    hooks = repo / ".git" / "hooks"
    for hook in ("reference-transaction", "post-index-change", "pre-commit", "post-commit"):
        (hooks / hook).write_text(f"#!/bin/sh\nexec {program} </dev/null\n")
        (hooks / hook).chmod(0o755)


def _every_operation(repo: Path, first: str, second: str, out: Path) -> dict[str, object]:
    return {
        "head": git.resolve(repo, "HEAD"),
        "ancestor": git.is_ancestor(repo, first, second),
        "changed": [c.path for c in git.changed_paths(repo, first, second)],
        "diff": git.diff_text(repo, first, second),
        "file": git.read_file_at(repo, second, "f.txt"),
        "tracked": git.tracked_paths(repo, second),
        "export": (git.export(repo, second, out) / "f.txt").read_bytes(),
        "commit": git.commit_files(repo, second, {"g.txt": "g\n"}, "signoff commit", ref="refs/signoff/probe"),
        "status": git.run(repo, "status", "--porcelain").returncode,
    }


def test_the_repository_own_config_and_hooks_run_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    repo, first, second = _repo(tmp_path, "r", "second\n")
    _hostile_repo_config(repo, _program(tmp_path / "evil", marker))
    # The attack is real: plain git on this repository runs the programs.
    subprocess.run(["git", "-C", str(repo), "diff", first, second], env=_PLAIN, capture_output=True, check=False)
    assert marker.exists()
    marker.unlink()

    got = _every_operation(repo, first, second, tmp_path / "export")
    assert not marker.exists(), "a program named in the inspected repository's config ran"
    assert got["export"] == b"second\n" and got["file"] == b"second\n"  # committed bytes, no smudge
    assert "-first\n+second\n" in str(got["diff"])  # the patch itself, not a textconv rendering
    assert got["changed"] == ["f.txt"] and got["ancestor"] is True
    assert _plain_git(repo, "rev-parse", "refs/signoff/probe") == got["commit"]


def test_a_hostile_caller_environment_neither_redirects_nor_reconfigures(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "ran"
    program = _program(tmp_path / "evil", marker)
    repo, first, second = _repo(tmp_path, "r", "second\n")
    other, _, other_head = _repo(tmp_path, "other", "other\n")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "reference-transaction").write_text(f"#!/bin/sh\nexec {program} </dev/null\n")
    (hooks / "reference-transaction").chmod(0o755)
    stray_index = tmp_path / "stray-index"
    # Every way the environment could point git elsewhere or hand it config.
    for key, value in {
        "GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(other), "GIT_INDEX_FILE": str(stray_index),
        "GIT_OBJECT_DIRECTORY": str(other / ".git" / "objects"), "GIT_NAMESPACE": "evil",
        "GIT_CONFIG_COUNT": "3", "GIT_CONFIG_KEY_0": "core.hooksPath", "GIT_CONFIG_VALUE_0": str(hooks),
        "GIT_CONFIG_KEY_1": "diff.evil.textconv", "GIT_CONFIG_VALUE_1": program,
        "GIT_CONFIG_KEY_2": "filter.evil.smudge", "GIT_CONFIG_VALUE_2": program,
        "GIT_CONFIG_PARAMETERS": f"'core.fsmonitor'='{program}'", "GIT_EXTERNAL_DIFF": program,
        "GIT_CONFIG": str(tmp_path / "cfg"), "GIT_CONFIG_SYSTEM": str(tmp_path / "cfg"),
    }.items():
        monkeypatch.setenv(key, value)
    (tmp_path / "cfg").write_text(f"[core]\n\thooksPath = {hooks}\n[filter \"evil\"]\n\tsmudge = {program}\n")
    # The user's own config and attributes file are not read either.
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".gitconfig").write_text(f"[core]\n\thooksPath = {hooks}\n\tfsmonitor = {program}\n"
                                     f"[diff \"evil\"]\n\ttextconv = {program}\n"
                                     f"[filter \"evil\"]\n\tsmudge = {program}\n")
    (home / ".config" / "git" / "attributes").write_text("* filter=evil diff=evil\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))

    got = _every_operation(repo, first, second, tmp_path / "export")
    assert got["head"] == second != other_head
    assert not marker.exists(), "config from the caller's environment or the user's files ran a program"
    assert got["export"] == b"second\n"
    assert not stray_index.exists()
    # The commit landed in the repository we named, not in the one GIT_DIR pointed at.
    assert _plain_git(repo, "rev-parse", "refs/signoff/probe") == got["commit"]
    assert subprocess.run(["git", "-C", str(other), "rev-parse", "--verify", "--quiet", "refs/signoff/probe"],
                          env=_PLAIN, capture_output=True).returncode != 0


def test_a_repository_owned_by_someone_else_is_trusted_alone_and_still_runs_nothing(tmp_path: Path) -> None:
    require("root", os.geteuid() == 0, "run the tests as root (the repository must be chown'ed to another uid)")
    marker = tmp_path / "ran"
    program = _program(tmp_path / "evil", marker)
    repo, first, second = _repo(tmp_path, "r", "second\n")
    _hostile_repo_config(repo, program)
    inner = repo / "sub"
    inner.mkdir()
    for path in (repo, *repo.rglob("*")):
        os.lchown(path, 65534, 65534)
    tmp_path.chmod(tmp_path.stat().st_mode | stat.S_IXOTH)
    # Plain git refuses a repository owned by another user; signoff trusts exactly the one it names.
    refused = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], env=_PLAIN, capture_output=True,
                             text=True)
    assert refused.returncode != 0 and "dubious ownership" in refused.stderr
    assert git.resolve(repo, "HEAD") == second
    assert git.read_file_at(repo, second, "f.txt") == b"second\n"
    assert (git.export(repo, second, tmp_path / "export") / "f.txt").read_bytes() == b"second\n"
    assert git.diff_text(repo, first, second).count("+second") == 1
    assert not marker.exists()
    # A folder inside it is not the repository that was named: git's ownership check still applies.
    with pytest.raises(Exception, match="dubious ownership"):
        git.output(inner, "rev-parse", "HEAD")
