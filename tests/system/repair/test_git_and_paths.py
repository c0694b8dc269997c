"""Git plumbing (signoff.git) on the coupon fixture, and repair's judgement of changed paths."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from signoff import git
from signoff.demo.fixture import FixtureRepo
from signoff.kernel.errors import NotFoundError, UsageError
from signoff.repair import paths


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def test_resolve_names_and_refuses_unknown(coupon: FixtureRepo) -> None:
    assert git.resolve(coupon.path, "main") == coupon.base
    assert git.resolve(coupon.path, "genuine-fix") == coupon.candidates["genuine-fix"]
    with pytest.raises(UsageError, match="not a commit"):
        git.resolve(coupon.path, "no-such-branch")
    with pytest.raises(UsageError, match="invalid revision"):
        git.resolve(coupon.path, "--output=/tmp/x")


def test_open_repo_refuses_plain_folder(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a git repository"):
        git.open_repo(tmp_path)
    with pytest.raises(NotFoundError):
        git.open_repo(tmp_path / "absent")


def test_export_is_clean_committed_tree_only(coupon: FixtureRepo, tmp_path: Path) -> None:
    # Dirty the work tree and add an untracked file: neither may reach the export.
    (coupon.path / "cart.py").write_text("BROKEN = True\n")
    (coupon.path / "secret_fix.py").write_text("FUTURE = 1\n")
    out = git.export(coupon.path, coupon.base, tmp_path / "export")
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert names == ["README.md", "cart.py", "tests/test_cart.py"]
    assert not (out / ".git").exists()
    assert "discounted * (100 - percent)" in (out / "cart.py").read_text()
    assert oct(out.stat().st_mode & 0o777) == "0o755"
    assert oct((out / "cart.py").stat().st_mode & 0o777) == "0o644"


def test_export_like_an_earlier_one_links_the_files_they_share(coupon: FixtureRepo, tmp_path: Path) -> None:
    # The candidate beside its base: a file of the same blob and mode is a hard link to the base's
    # copy; what differs is written from git; the tree is the same as a plain export's.
    cand = coupon.candidates["genuine-fix"]
    with git.session():
        base = git.export(coupon.path, coupon.base, tmp_path / "base")
        (base / "tests" / "test_cart.py").chmod(0o600)  # no longer as written: not linked
        linked = git.export(coupon.path, cand, tmp_path / "cand", like=base)
    plain = git.export(coupon.path, cand, tmp_path / "plain", like=base)  # outside the session: written
    files = sorted(p.relative_to(plain).as_posix() for p in plain.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(linked).as_posix() for p in linked.rglob("*") if p.is_file())
    for name in files:
        assert (linked / name).read_bytes() == (plain / name).read_bytes()
        assert (linked / name).stat().st_mode == (plain / name).stat().st_mode
    assert (linked / "README.md").stat().st_ino == (base / "README.md").stat().st_ino
    assert (linked / "cart.py").stat().st_ino != (base / "cart.py").stat().st_ino  # the fix changes it
    assert (linked / "tests" / "test_cart.py").stat().st_ino != (base / "tests" / "test_cart.py").stat().st_ino
    assert (plain / "README.md").stat().st_nlink == 1


def test_export_like_an_earlier_one_writes_the_file_where_no_link_can_be_made(
        coupon: FixtureRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a: object, **_k: object) -> None:
        raise PermissionError("no hard links here")

    cand = coupon.candidates["genuine-fix"]
    with git.session():
        base = git.export(coupon.path, coupon.base, tmp_path / "base")
        monkeypatch.setattr("os.link", refuse)
        written = git.export(coupon.path, cand, tmp_path / "cand", like=base)
    assert (written / "README.md").read_bytes() == (base / "README.md").read_bytes()
    assert (written / "README.md").stat().st_ino != (base / "README.md").stat().st_ino


def test_tracked_paths_in_a_session_list_the_commit_once(coupon: FixtureRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    alone = {u: git.tracked_paths(coupon.path, coupon.base, u) for u in (None, "tests", "tests/", "nothing")}
    assert alone[None] == ["README.md", "cart.py", "tests/test_cart.py"] and alone["nothing"] == []
    listings: list[tuple[str, ...]] = []
    ls_tree = git.repo._ls_tree
    monkeypatch.setattr(git.repo, "_ls_tree", lambda *a: listings.append(a) or ls_tree(*a))
    with git.session():
        assert {u: git.tracked_paths(coupon.path, coupon.base, u) for u in alone} == alone
        assert git.tracked_paths(coupon.path, coupon.base, "./tests") == alone["tests"]  # not plain: asks git
    assert listings == [(coupon.path, coupon.base, None), (coupon.path, coupon.base, "./tests")]


def test_answers_started_soon_are_the_same_and_start_no_git_again(
        coupon: FixtureRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    good, false = coupon.candidates["genuine-fix"], coupon.candidates["false-fix"]
    alone = (git.changed_paths(coupon.path, coupon.base, good), git.is_ancestor(coupon.path, false, good),
             git.diff_text(coupon.path, coupon.base, good))
    listed, cart = git.tracked_paths(coupon.path, good), git.read_file_at(coupon.path, good, "cart.py")
    started: list[object] = []

    class Recorded(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, argv: object, *a: object, **k: object) -> None:
            started.append(argv)
            super().__init__(argv, *a, **k)  # type: ignore[arg-type]
    monkeypatch.setattr(subprocess, "Popen", Recorded)
    with git.session():
        git.compare_soon(coupon.path, coupon.base, good)
        git.compare_soon(coupon.path, false, good)
        git.compare_soon(coupon.path, coupon.base, false)  # never asked: ended with the session
        git.list_soon(coupon.path, good)
        git.read_soon(coupon.path)
        before = len(started)
        assert (git.changed_paths(coupon.path, coupon.base, good), git.is_ancestor(coupon.path, false, good),
                git.diff_text(coupon.path, coupon.base, good)) == alone
        assert git.tracked_paths(coupon.path, good) == listed
        assert git.read_file_at(coupon.path, good, "cart.py") == cart
        assert len(started) == before  # each answer came from a process started soon
        assert git.changed_paths(coupon.path, coupon.base, good) == alone[0]  # asked again: git again
        assert len(started) == before + 1
    git.compare_soon(coupon.path, coupon.base, good)  # outside a session: nothing starts
    assert len(started) == before + 1


def test_export_refuses_non_empty_folder_and_short_ids(coupon: FixtureRepo, tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "f").write_text("1")
    with pytest.raises(UsageError, match="not empty"):
        git.export(coupon.path, coupon.base, tmp_path / "x")
    with pytest.raises(UsageError, match="full commit"):
        git.export(coupon.path, "main", tmp_path / "y")


def test_ancestry(coupon: FixtureRepo) -> None:
    good = coupon.candidates["genuine-fix"]
    assert git.is_ancestor(coupon.path, coupon.base, good)
    assert not git.is_ancestor(coupon.path, good, coupon.base)
    # Sibling branches do not descend from each other.
    assert not git.is_ancestor(coupon.path, coupon.candidates["false-fix"], good)


def test_changed_paths_allowlist_and_tamper(coupon: FixtureRepo) -> None:
    false_fix = git.changed_paths(coupon.path, coupon.base, coupon.candidates["false-fix"])
    assert [(c.status, c.path) for c in false_fix] == [("M", "tests/test_cart.py")]
    assert paths.disallowed(false_fix, ["cart.py"]) == ["tests/test_cart.py"]
    assert paths.disallowed(false_fix, []) == []
    assert paths.test_edits(false_fix) == ["tests/test_cart.py"]
    genuine = git.changed_paths(coupon.path, coupon.base, coupon.candidates["genuine-fix"])
    assert paths.disallowed(genuine, ["cart.py"]) == []
    assert paths.test_edits(genuine) == []


@pytest.mark.parametrize(("path", "globs", "ok"), [
    ("src/shop/cart.py", ["src/**"], True),
    ("src/shop/cart.py", ["src/*.py"], True),  # fnmatch * crosses folders, as git pathspecs do not
    ("cart.py", ["*.py"], True),
    ("lib/cart.py", ["cart.py"], True),  # a bare name matches that file name anywhere
    ("tests/test_cart.py", ["src/**", "cart.py"], False),
])
def test_glob_matching(path: str, globs: list[str], ok: bool) -> None:
    assert paths.matches(path, globs) is ok


def test_commit_files_leaves_work_tree_and_index_alone(coupon: FixtureRepo) -> None:
    (coupon.path / "README.md").write_text("local edit\n")
    _git(coupon.path, "add", "README.md")
    commit = git.commit_files(coupon.path, coupon.base, {"cart.py": "X = 1\n"}, "candidate 1",
                                  ref="refs/signoff/test")
    assert git.is_ancestor(coupon.path, coupon.base, commit)
    assert _git(coupon.path, "show", f"{commit}:cart.py") == "X = 1"
    assert _git(coupon.path, "rev-parse", "refs/signoff/test") == commit
    assert _git(coupon.path, "diff", "--cached", "--name-only") == "README.md"
    assert (coupon.path / "README.md").read_text() == "local edit\n"
    assert [c.path for c in git.changed_paths(coupon.path, coupon.base, commit)] == ["cart.py"]


def test_export_writes_what_attributes_would_hide_and_refuses_escaping_links(coupon: FixtureRepo,
                                                                             tmp_path: Path) -> None:
    # Real projects mark files export-ignore for their release archives (issue 37): the export is
    # the commit's blobs whatever the attributes say, never a refusal.
    hide = git.commit_files(coupon.path, coupon.base, {".gitattributes": "cart.py export-ignore\n"}, "hide")
    assert (git.export(coupon.path, hide, tmp_path / "a") / "cart.py").read_bytes() == \
        git.read_file_at(coupon.path, coupon.base, "cart.py")
    # A symlink out of the tree, committed with plumbing (mode 120000).
    blob = subprocess.run(["git", "-C", str(coupon.path), "hash-object", "-w", "--stdin"], input=b"/etc/shadow",
                          capture_output=True, check=True).stdout.decode().strip()
    env = {"GIT_INDEX_FILE": str(tmp_path / "idx"), "PATH": "/usr/bin:/bin"}
    run = lambda *a: subprocess.run(["git", "-C", str(coupon.path), *a], env=env, capture_output=True,  # noqa: E731
                                    check=True, text=True).stdout.strip()
    run("read-tree", coupon.base)
    run("update-index", "--add", "--cacheinfo", f"120000,{blob},evil")
    tree = run("write-tree")
    env.update({"GIT_AUTHOR_NAME": "x", "GIT_AUTHOR_EMAIL": "x@x", "GIT_COMMITTER_NAME": "x",
                "GIT_COMMITTER_EMAIL": "x@x"})
    evil = run("commit-tree", tree, "-p", coupon.base, "-m", "link")
    with pytest.raises(git.ExportError, match="points outside the tree"):
        git.export(coupon.path, evil, tmp_path / "b")


TESTING = '''
class CommonTestCase:
    def test_invalid_json(self, testapp):
        res = testapp.post("/echo_json", "{", expect_errors=True)
        assert res.status_code == 400
'''


def test_the_candidates_change_to_a_test_its_package_defines_is_found_from_git(tmp_path: Path) -> None:
    """webargs' harness class inherits test_invalid_json from the package's CommonTestCase: a candidate that
    leaves it alone passes; one that relaxes or removes it is named (the verdict then rejects)."""
    from signoff.demo.fixture import init_repo
    from signoff.repair.inherited import changed_by_candidate

    base = init_repo(tmp_path, {"src/webargs/testing.py": TESTING, "src/webargs/core.py": "X = 1\n"})
    entry = {"src/webargs/testing.py::CommonTestCase.test_invalid_json"}
    fix = git.commit_files(tmp_path, base, {"src/webargs/core.py": "X = 2\n"}, "fix")
    assert changed_by_candidate(tmp_path, base, fix, entry) == []
    relaxed = git.commit_files(tmp_path, base, {"src/webargs/testing.py": TESTING.replace("== 400", "> 0")}, "relax")
    assert changed_by_candidate(tmp_path, base, relaxed, entry) == sorted(entry)
    removed = git.commit_files(tmp_path, base, {"src/webargs/testing.py": "class CommonTestCase:\n    pass\n"}, "drop")
    assert changed_by_candidate(tmp_path, base, removed, entry) == [f"{e} (removed)" for e in sorted(entry)]
