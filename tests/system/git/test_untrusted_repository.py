"""Every git config key and attribute that can start a program or change bytes, against every entry
point signoff runs on a repository it does not trust (issue 34's "done means" for `signoff.git`).

One hostile repository is built once: its checked-out `.gitattributes` and `.git/info/attributes`
set every attribute git-attributes(5) lists as rewriting bytes or choosing a driver, its hooks run a
program, and its newest commit is signed. Each case copies it and adds one setting from
git-config(1) (or one piece of repository state: replace refs, grafts, a lazily fetched object),
then runs every entry point: the `signoff.git` plumbing, the export, `signoff notes snapshot`, the
MCP `check_claims` function, the supervisor's commit and the repair evidence's git bundle. No case
may leave the marker behind, and every output must equal what the same commits give in a pristine
bare copy (the export must equal the committed blobs as `git cat-file` prints them).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from signoff import git
from signoff.cli.main import main
from signoff.mcp.server import _check_claims
from signoff.notes.snapshot import Snapshot
from signoff.repair.signals import ATTRIBUTES, scan

_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.org", "GIT_COMMITTER_NAME": "Dev",
        "GIT_COMMITTER_EMAIL": "dev@example.org", "GIT_AUTHOR_DATE": "2026-11-01T10:00:00+00:00",
        "GIT_COMMITTER_DATE": "2026-11-01T10:00:00+00:00"}
# Every attribute that makes git rewrite bytes on export or checkout, or pick a driver or a diff style.
ATTRIBUTES_FILE = """\
* diff=evil merge=evil filter=evil ident
*.txt export-subst text eol=crlf
*.py -diff
data.bin export-ignore
sub/** working-tree-encoding=UTF-16LE
.gitattributes export-ignore
"""
MESSAGE = "candidate: café\n\nprint('this line came from the commit message')\n"


def plain(repo: Path, *args: str, input_: bytes | None = None, check: bool = True) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], env=_ENV, input=input_, capture_output=True,
                          check=check).stdout.decode(errors="replace").strip()


@dataclass(frozen=True)
class Origin:
    path: Path  # the hostile checkout, without any hostile config yet
    bare: Path  # a pristine bare copy: the same commits, no attributes, no config
    base: str
    head: str
    other: str  # an unrelated root commit (for grafts)
    program: Path
    marker: Path


def _build(root: Path) -> Origin:
    repo = root / "origin"
    repo.mkdir()
    plain(repo, "init", "-q", "-b", "main")
    files: dict[str, bytes] = {"f.txt": b"first\n", "app.py": b"X = 1\n", "data.bin": b"\x00\x01bin\n",
                               "run.sh": b"#!/bin/sh\necho run\n", "old.txt": b"renamed later\n" * 4,
                               "sub/deep.txt": b"$Id$\ndeep\n"}
    for name, content in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(content)
    (repo / "run.sh").chmod(0o755)
    os.symlink("app.py", repo / "link")
    plain(repo, "add", "-A")
    plain(repo, "commit", "-q", "-m", "base")
    base = plain(repo, "rev-parse", "HEAD")
    (repo / "f.txt").write_bytes(b"second $Format:%B$ $Id$\ncrlf\r\n")
    (repo / "app.py").write_bytes(b"X = 2\n")
    (repo / "data.bin").write_bytes(b"\x00\x02bin\n")
    (repo / "naïve.txt").write_bytes(b"non-ASCII name\n")
    (repo / "old.txt").rename(repo / "new.txt")
    (repo / ".gitattributes").write_text(ATTRIBUTES_FILE)
    plain(repo, "add", "-A")
    plain(repo, "update-index", "--add", "--cacheinfo", f"160000,{base},vendored")  # a submodule (gitlink)
    tree = plain(repo, "write-tree")
    unsigned = plain(repo, "cat-file", "commit", plain(repo, "commit-tree", tree, "-p", base, "-m", MESSAGE))
    # A signed commit: `git log` with log.showSignature runs gpg.program for its `gpgsig` header.
    header, _, body = unsigned.partition("\n\n")
    signed = f"{header}\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n -----END PGP SIGNATURE-----\n\n{body}\n"
    head = plain(repo, "hash-object", "-t", "commit", "-w", "--stdin", input_=signed.encode())
    plain(repo, "update-ref", "refs/heads/main", head)
    plain(repo, "reset", "-q", "--hard")
    other = plain(repo, "commit-tree", plain(repo, "mktree", input_=b""), "-m", "unrelated")
    plain(repo, "update-ref", "refs/heads/other", other)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text(ATTRIBUTES_FILE.replace(".gitattributes export-ignore", ""))
    marker = root / "ran"
    program = root / "evil"
    program.write_text(f"#!/bin/sh\ntouch {marker}\ncat >/dev/null\n")
    program.chmod(0o755)
    for hook in ("reference-transaction", "post-index-change", "pre-commit", "post-commit", "pre-auto-gc",
                 "post-checkout", "post-rewrite"):
        (repo / ".git" / "hooks" / hook).write_text(f"#!/bin/sh\nexec {program} </dev/null\n")
        (repo / ".git" / "hooks" / hook).chmod(0o755)
    bare = root / "pristine.git"
    subprocess.run(["git", "clone", "-q", "--bare", "--no-hardlinks", str(repo), str(bare)], env=_ENV, check=True)
    plain(bare, "update-ref", "refs/heads/other", other)
    return Origin(repo, bare, base, head, other, program, marker)


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Origin:
    return _build(tmp_path_factory.mktemp("untrusted"))


def committed_tree(repo: Path, commit: str) -> dict[str, Any]:
    """What the commit holds, read with plain `git ls-tree` and `git cat-file` (no attribute applies)."""
    out: dict[str, Any] = {}
    for line in plain(repo, "ls-tree", "-r", "-z", commit).split("\0"):
        if not line:
            continue
        meta, path = line.split("\t", 1)
        mode, kind, oid = meta.split()
        if kind == "commit":
            out[path] = ("folder", [])
            continue
        blob = subprocess.run(["git", "-C", str(repo), "cat-file", "blob", oid], env=_ENV, capture_output=True,
                              check=True).stdout
        out[path] = ("link", blob) if mode == "120000" else ("executable" if mode == "100755" else "file", blob)
    return out


def exported_tree(root: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            p = Path(dirpath, name)
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                out[rel] = ("link", os.fsencode(os.readlink(p)))
            elif p.is_dir():
                if not any(p.iterdir()):
                    out[rel] = ("folder", [])
            else:
                out[rel] = ("executable" if p.stat().st_mode & 0o111 else "file", p.read_bytes())
    return out


def observe(repo: Path, o: Origin, work: Path) -> dict[str, Any]:
    """Every entry point signoff runs on a repository it was handed."""
    changes = git.changed_paths(repo, o.base, o.head)
    got: dict[str, Any] = {
        "open": git.open_repo(repo) == repo.resolve(),
        "resolve": git.resolve(repo, "main"),
        "has": git.has_commit(repo, o.head),
        "ancestor": (git.is_ancestor(repo, o.base, o.head), git.is_ancestor(repo, o.other, o.head)),
        "changed": [(c.status, c.path) for c in changes],
        "diff": git.diff_text(repo, o.base, o.head),
        "file": git.read_file_at(repo, o.head, "f.txt"),
        "tracked": git.tracked_paths(repo, o.head),
        "modes": [git.mode_at(repo, o.head, p) for p in ("run.sh", "link", "app.py")],
        "export": exported_tree(git.export(repo, o.head, work / "export")),
        "signals": [s["path"] for s in scan(repo, o.base, o.head, changes) if s["what"] == ATTRIBUTES],
    }
    # A verification's session: the config listed once, the files read through one `cat-file --batch`.
    with git.session():
        got["session"] = ([git.read_file_at(repo, c, p) for c in (o.head, o.base)
                           for p in ("f.txt", "link", "sub/deep.txt", "sub", "vendored", "absent")],
                          exported_tree(git.export(repo, o.head, work / "session-export")),
                          git.diff_text(repo, o.base, o.head))
    # `signoff notes snapshot` and `check_claims`: the commits as read. Line counts are left out: `git log
    # --numstat` counts a file the checkout's attributes mark binary as 0/0, a known limit (docs/security.md).
    assert main(["notes", "snapshot", "--repo", str(repo), "--range", "main", "-o", str(work / "s.json")]) == 0
    got["snapshot"] = [{**c, "files": [(f["path"], f["old_path"]) for f in c["files"]]}
                       for c in Snapshot(work / "s.json").commits()]
    claims = f"Commit {o.head[:9]} is signed. There are 2 commits. Commit deadbeef1 is not."
    got["claims"] = _check_claims(claims, repo, "main")
    # `repair verify --bundle`: the bundle holds the commits themselves, with their real history.
    bundled = git.bundle(repo, {"base": o.base, "candidate": o.head}, work / "published" / "b.bundle")
    plain(work, "clone", "--quiet", "--bare", str(bundled), str(work / "from-bundle"))
    got["bundle"] = (plain(work, "bundle", "list-heads", str(bundled)),
                     plain(work / "from-bundle", "rev-list", "--parents", "candidate"))
    made = git.commit_files(repo, o.head, {"g.txt": "g\n"}, "probe", ref="refs/signoff/probe")
    raw = plain(repo, "cat-file", "commit", made)
    got["commit"] = ([line.split()[0] for line in raw.split("\n\n")[0].splitlines()], raw.split("\n")[0],
                     plain(repo, "rev-parse", "refs/signoff/probe") == made)
    return got


@pytest.fixture(scope="module")
def pristine(origin: Origin, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return observe(origin.bare, origin, tmp_path_factory.mktemp("pristine"))


Setup = Callable[[Path, Origin, Path], None]


def _config(*pairs: tuple[str, str]) -> Setup:
    def setup(repo: Path, o: Origin, work: Path) -> None:
        for key, value in pairs:
            plain(repo, "config", "--add", key, value.format(p=o.program, work=work))
    return setup


def _include(condition: str) -> Setup:
    def setup(repo: Path, o: Origin, work: Path) -> None:
        (work / "included").write_text(f"[diff]\n\texternal = {o.program}\n[filter \"evil\"]\n\tsmudge = {o.program}\n"
                                       f"\tclean = {o.program}\n[core]\n\tfsmonitor = {o.program}\n"
                                       f"[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {o.program}\n")
        plain(repo, "config", condition, str(work / "included"))
    return setup


def _replace(repo: Path, o: Origin, work: Path) -> None:
    blob = plain(repo, "hash-object", "-w", "--stdin", input_=b"replaced\n")
    plain(repo, "replace", plain(repo, "rev-parse", f"{o.head}:f.txt"), blob)
    plain(repo, "replace", "--graft", o.head, o.other)


def _grafts(repo: Path, o: Origin, work: Path) -> None:
    (repo / ".git" / "info" / "grafts").write_text(f"{o.head} {o.other}\n")


def _worktree(repo: Path, o: Origin, work: Path) -> None:
    (work / "elsewhere").mkdir()
    (work / "elsewhere" / ".gitattributes").write_text("* -diff binary filter=evil\n")
    plain(repo, "config", "core.worktree", str(work / "elsewhere"))
    plain(repo, "config", "filter.evil.clean", str(o.program))


def _order(repo: Path, o: Origin, work: Path) -> None:
    (work / "order").write_text("new.txt\nf.txt\n")
    plain(repo, "config", "diff.orderFile", str(work / "order"))


def _mailmap(repo: Path, o: Origin, work: Path) -> None:
    (work / "mailmap").write_text("Mallory <m@evil> Dev <dev@example.org>\n")
    plain(repo, "config", "mailmap.file", str(work / "mailmap"))


P = "{p}"
# git-config(1): keys that start a program, then keys that change the bytes or text git prints.
CASES: dict[str, Setup] = {
    "core.fsmonitor": _config(("core.fsmonitor", P)),
    "core.hooksPath": _config(("core.hooksPath", "{work}/hooks")),
    "core.pager": _config(("core.pager", P)),
    "pager.<command>": _config(("pager.log", P), ("pager.diff", P), ("pager.show", P)),
    "core.editor": _config(("core.editor", P), ("sequence.editor", P)),
    "core.alternateRefsCommand": _config(("core.alternateRefsCommand", P)),
    "diff.external": _config(("diff.external", P)),
    "diff.<driver>.textconv": _config(("diff.evil.textconv", P), ("diff.evil.cachetextconv", "true")),
    "diff.<driver>.command": _config(("diff.evil.command", P)),
    "diff.<driver>.binary": _config(("diff.evil.binary", "true")),
    "filter.<driver>.clean/smudge": _config(("filter.evil.clean", P), ("filter.evil.smudge", P),
                                            ("filter.evil.required", "true")),
    "filter.<driver>.process": _config(("filter.evil.process", P), ("filter.evil.required", "true")),
    "merge.<driver>.driver": _config(("merge.evil.driver", P)),
    "log.showSignature + gpg.program": _config(("log.showSignature", "true"), ("gpg.program", P)),
    "gpg.<format>.program": _config(("log.showSignature", "true"), ("gpg.openpgp.program", P),
                                    ("gpg.x509.program", P), ("gpg.ssh.program", P)),
    "commit.gpgSign": _config(("commit.gpgSign", "true"), ("gpg.program", P)),
    "credential.helper": _config(("credential.helper", P), ("credential.https://github.com.helper", P),
                                 ("core.askPass", P)),
    "include.path": _include("include.path"),
    "includeIf.<condition>.path": _include("includeIf.gitdir:/.path"),
    "core.attributesFile": _config(("core.attributesFile", "{work}/attributes")),
    "core.worktree": _worktree,
    "alias.<builtin>": _config(("alias.log", "!" + P), ("alias.diff", "!" + P), ("alias.cat-file", "!" + P)),
    "gc.auto": _config(("gc.auto", "1"), ("gc.autoDetach", "false"), ("maintenance.auto", "true")),
    # Bytes and text.
    "core.autocrlf/eol/safecrlf": _config(("core.autocrlf", "true"), ("core.eol", "crlf"), ("core.safecrlf", "true")),
    "core.bigFileThreshold": _config(("core.bigFileThreshold", "1")),
    "core.quotePath": _config(("core.quotePath", "false")),
    "color": _config(("color.ui", "always"), ("color.diff", "always"), ("color.diff.meta", "red")),
    "log.showRoot/decorate/follow": _config(("log.showRoot", "false"), ("log.decorate", "full"),
                                            ("log.follow", "true"), ("log.abbrevCommit", "true")),
    "format.pretty": _config(("format.pretty", "oneline"), ("pretty.changelog", "%s")),
    "diff prefixes": _config(("diff.noprefix", "true"), ("diff.mnemonicPrefix", "true")),
    "diff.relative": _config(("diff.relative", "true")),
    "diff.ignoreSubmodules/submodule": _config(("diff.ignoreSubmodules", "all"), ("diff.submodule", "log")),
    "diff.renames": _config(("diff.renames", "false")),
    "diff shape": _config(("diff.context", "0"), ("diff.interHunkContext", "9"), ("diff.algorithm", "patience"),
                          ("diff.indentHeuristic", "false"), ("diff.suppressBlankEmpty", "true")),
    "diff.orderFile": _order,
    "i18n encodings": _config(("i18n.logOutputEncoding", "ISO-8859-1"), ("i18n.commitEncoding", "ISO-8859-1")),
    "mailmap": _mailmap,
    "notes.displayRef": _config(("notes.displayRef", "refs/notes/*"), ("core.notesRef", "refs/notes/evil")),
    # Repository state that rewrites objects or history.
    "core.useReplaceRefs (refs/replace)": _replace,
    "info/grafts": _grafts,
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_setting_runs_nothing_and_changes_no_byte(case: str, origin: Origin, pristine: dict[str, Any],
                                                             tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(origin.path, repo, symlinks=True)
    (tmp_path / "hooks").mkdir()
    shutil.copytree(repo / ".git" / "hooks", tmp_path / "hooks", dirs_exist_ok=True)
    (tmp_path / "attributes").write_text(ATTRIBUTES_FILE)
    CASES[case](repo, origin, tmp_path)
    origin.marker.unlink(missing_ok=True)  # setting up with plain git ran the repository's hooks

    got = observe(repo, origin, tmp_path)
    assert not origin.marker.exists(), f"{case}: a program named by the repository ran"
    assert got == pristine
    # And the export is the commit itself: every blob byte for byte, modes and links kept, nothing left out.
    assert got["export"] == committed_tree(origin.bare, origin.head)
    assert got["session"][0][0] == got["file"] and got["session"][1:] == (got["export"], got["diff"])
    assert got["signals"] == [".gitattributes"]
    # The reviewed diff shows the lines of a file the checkout marks `-diff`; only content makes a file binary.
    assert "-X = 1\n+X = 2\n" in got["diff"] and "Binary files a/data.bin and b/data.bin differ\n" in got["diff"]


def test_the_hostile_repository_is_hostile_to_plain_git(origin: Origin, tmp_path: Path) -> None:
    """The cases are real attacks: plain git on the same repository runs the programs and rewrites bytes."""
    repo = tmp_path / "repo"
    shutil.copytree(origin.path, repo, symlinks=True)
    origin.marker.unlink(missing_ok=True)
    _config(("log.showSignature", "true"), ("gpg.program", P))(repo, origin, tmp_path)
    plain(repo, "log", "-1", "--format=%H", check=False)
    assert origin.marker.exists()
    archived = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", origin.head], env=_ENV,
                              capture_output=True, check=True).stdout
    assert b"this line came from the commit message" in archived and b"\x00\x01bin" not in archived


def _lazy_fetch(url: str, *extra: tuple[str, str]) -> Setup:
    def setup(repo: Path, o: Origin, work: Path) -> None:
        blob = plain(repo, "rev-parse", f"{o.head}:app.py")
        (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
        _config(("core.repositoryFormatVersion", "1"), ("extensions.partialClone", "origin"),
                ("remote.origin.url", url), ("remote.origin.promisor", "true"), *extra)(repo, o, work)
    return setup


# A partial clone fetches a missing object on demand, through whatever transport its remote names.
LAZY: dict[str, Setup] = {
    "ext:: transport": _lazy_fetch(f"ext::{P}", ("protocol.ext.allow", "always"), ("protocol.allow", "always")),
    "core.sshCommand": _lazy_fetch("ssh://example.invalid/r.git", ("core.sshCommand", P), ("ssh.variant", "ssh")),
    "core.gitProxy": _lazy_fetch("git://example.invalid/r.git", ("core.gitProxy", P)),
    "remote.<name>.uploadpack": _lazy_fetch("file://{work}/nowhere", ("remote.origin.uploadpack", P),
                                            ("protocol.file.allow", "always")),
}


@pytest.mark.parametrize("case", list(LAZY))
def test_a_missing_object_is_not_fetched_through_a_program(case: str, origin: Origin, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(origin.path, repo, symlinks=True)
    LAZY[case](repo, origin, tmp_path)
    origin.marker.unlink(missing_ok=True)
    with pytest.raises(git.ExportError, match=r"object \w+ \(app\.py\) is missing"):  # named, for a person
        git.export(repo, origin.head, tmp_path / "export")
    assert git.read_file_at(repo, origin.head, "app.py") is None
    with git.session():
        assert git.read_file_at(repo, origin.head, "app.py") is None
        with pytest.raises(git.ExportError, match="missing"):
            git.export(repo, origin.head, tmp_path / "session-export")
    assert not origin.marker.exists(), f"{case}: a lazy fetch ran a program named by the repository"


def test_each_session_lists_the_repository_config_again(origin: Origin, tmp_path: Path) -> None:
    """A session keeps a repository's driver overrides for one operation only: a driver the config
    defines afterwards is emptied in the next session too (and a file read is read again)."""
    repo = tmp_path / "repo"
    shutil.copytree(origin.path, repo, symlinks=True)

    def effective(key: str) -> str:
        proc = git.popen(repo, "config", "--get", key, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        out, _ = proc.communicate(timeout=60)
        return out.decode().strip()

    with git.session():
        assert git.read_file_at(repo, origin.head, "app.py") == b"X = 2\n"
        assert effective("diff.late.textconv") == ""
    _config(("diff.late.textconv", P), ("filter.late.smudge", P))(repo, origin, tmp_path)
    assert effective("diff.late.textconv") == os.devnull  # outside a session: listed for this command
    with git.session():
        assert (effective("diff.late.textconv"), effective("filter.late.smudge")) == (os.devnull, "")
        assert git.read_file_at(repo, origin.base, "app.py") == b"X = 1\n"


def test_links_may_not_leave_the_tree_even_through_each_other(origin: Origin, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(origin.path, repo, symlinks=True)
    env = {**_ENV, "GIT_INDEX_FILE": str(tmp_path / "index")}

    def commit_with(*entries: tuple[str, bytes]) -> str:
        subprocess.run(["git", "-C", str(repo), "read-tree", origin.head], env=env, check=True)
        for path, target in entries:
            blob = plain(repo, "hash-object", "-w", "--stdin", input_=target)
            subprocess.run(["git", "-C", str(repo), "update-index", "--add", "--cacheinfo", f"120000,{blob},{path}"],
                           env=env, check=True)
        tree = subprocess.run(["git", "-C", str(repo), "write-tree"], env=env, capture_output=True, text=True,
                              check=True).stdout.strip()
        return plain(repo, "commit-tree", tree, "-p", origin.head, "-m", "links")

    # `a` looks inside while `b` does not exist yet; `b` then points at the root, so `a` is its parent.
    for i, entries in enumerate(([("evil", b"/etc/passwd")], [("up", b"../outside")], [("a", b"b/.."), ("b", b".")])):
        with pytest.raises(git.ExportError, match="points outside the tree"):
            git.export(repo, commit_with(*entries), tmp_path / f"x{i}")
    inside = commit_with(("sub/up", b"../f.txt"))
    assert os.readlink(git.export(repo, inside, tmp_path / "ok") / "sub" / "up") == "../f.txt"
