"""Facts equal what `git log --numstat` reports, parsed independently from its human-readable output."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from signoff.kernel.errors import UsageError
from signoff.notes.facts import FactsFile, build_facts, snapshot_and_facts
from signoff.notes.snapshot import Snapshot, take_snapshot
from tests.support.gitrepo import Repo

_BRACE = re.compile(r"\{([^{}]*) => ([^{}]*)\}")


def _new_path(name: str) -> str:
    # `git log --numstat` shows renames as `old => new` or `dir/{old => new}/rest`.
    if _BRACE.search(name):
        return re.sub(r"//+", "/", _BRACE.sub(lambda m: m.group(2), name))
    return name.split(" => ")[-1]


def numstat_baseline(repo: Path, rng: str = "HEAD", merges: bool = False) -> dict[str, Any]:
    args = ["git", "-C", str(repo), "-c", "core.quotepath=off", "log", "--numstat", "--format=tformat:@@%H %ae"]
    if not merges:
        args.append("--no-merges")
    out = subprocess.run([*args, rng], capture_output=True, check=True, text=True).stdout
    commits, emails, paths, added, deleted = [], set(), set(), 0, 0
    per_author: dict[str, dict[str, Any]] = {}
    email = ""
    for line in out.splitlines():
        if line.startswith("@@"):
            sha, email = line[2:].split(" ", 1)
            commits.append(sha)
            emails.add(email)
            per_author.setdefault(email, {"commits": 0, "paths": set(), "added": 0, "deleted": 0})
            per_author[email]["commits"] += 1
        elif line.strip():
            a, d, name = line.split("\t", 2)
            path = _new_path(name)
            paths.add(path)
            per_author[email]["paths"].add(path)
            if a != "-":
                added += int(a)
                deleted += int(d)
                per_author[email]["added"] += int(a)
                per_author[email]["deleted"] += int(d)
    return {"commits": commits, "contributors": len(emails), "files_changed": len(paths), "paths": paths,
            "lines_added": added, "lines_deleted": deleted, "per_author": per_author}


def _counts(facts_path: Path) -> dict[tuple[str, str], int]:
    return {(f["metric"], f["scope"]): f["value"] for f in FactsFile(facts_path).facts() if f["kind"] == "count"}


@pytest.mark.parametrize("merges", [False, True])
@pytest.mark.parametrize("rng", ["HEAD", "v0.1.0..v0.2.0", "v0.1.0..HEAD~2"])
def test_counts_equal_git_log_numstat(history: Repo, tmp_path: Path, rng: str, merges: bool) -> None:
    take_snapshot(history.path, rng, tmp_path / "s.json", merges=merges)
    build_facts(tmp_path / "s.json", tmp_path / "f.json")
    base = numstat_baseline(history.path, rng, merges)
    counts = _counts(tmp_path / "f.json")
    for metric in ("commits", "files_changed", "lines_added", "lines_deleted", "contributors"):
        expected = len(base["commits"]) if metric == "commits" else base[metric]
        assert counts[(metric, "range")] == expected, metric
    for email, tally in base["per_author"].items():
        scope = f"author:{email}"
        assert counts[("commits", scope)] == tally["commits"]
        assert counts[("files_changed", scope)] == len(tally["paths"])
        assert counts[("lines_added", scope)] == tally["added"]
        assert counts[("lines_deleted", scope)] == tally["deleted"]
    commit_facts = [f["hash"] for f in FactsFile(tmp_path / "f.json").facts() if f["kind"] == "commit"]
    assert commit_facts == base["commits"]
    files = {f["path"] for f in FactsFile(tmp_path / "f.json").facts() if f["kind"] == "file"}
    assert files == base["paths"]


@pytest.mark.parametrize("merges", [False, True])
@pytest.mark.parametrize("rng", ["HEAD", "v0.1.0..v0.2.0"])
def test_one_pass_writes_the_files_of_the_two_steps(history: Repo, tmp_path: Path, rng: str, merges: bool) -> None:
    take_snapshot(history.path, rng, tmp_path / "s.json", merges=merges)
    build_facts(tmp_path / "s.json", tmp_path / "f.json")
    snap, facts = snapshot_and_facts(history.path, rng, tmp_path / "s1.json", tmp_path / "f1.json", merges=merges)
    assert (tmp_path / "s1.json").read_bytes() == (tmp_path / "s.json").read_bytes()
    assert (tmp_path / "f1.json").read_bytes() == (tmp_path / "f.json").read_bytes()
    assert snap.digest == facts.snapshot_digest == json.loads((tmp_path / "s.json").read_text())["digest"]
    assert facts.commits == snap.commits == len(numstat_baseline(history.path, rng, merges)["commits"])
    build_facts(tmp_path / "s1.json", tmp_path / "f2.json")  # the snapshot written in one pass verifies
    assert (tmp_path / "f2.json").read_bytes() == (tmp_path / "f1.json").read_bytes()


def test_one_pass_that_fails_midway_leaves_neither_file(history: Repo, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from signoff.notes import snapshot

    def progress(step: str, done: int | None = None, total: int | None = None) -> None:
        if done:
            raise KeyboardInterrupt  # an interrupt after git has printed two commits

    monkeypatch.setattr(snapshot, "PROGRESS_EVERY", 2)
    with pytest.raises(KeyboardInterrupt):
        snapshot_and_facts(history.path, None, tmp_path / "s.json", tmp_path / "f.json", progress=progress)
    assert list(tmp_path.iterdir()) == []


def test_snapshot_records_renames_binary_empty_merges_and_unicode(history: Repo, built: tuple[Path, Path]) -> None:
    commits = {c["subject"]: c for c in Snapshot(built[0]).commits()}
    rename = commits["Rename app.py to core.py"]["files"]
    assert rename == [{"path": "src/core.py", "old_path": "src/app.py", "added": 0, "deleted": 0, "binary": False}]
    logo = commits["Add binary logo"]["files"][0]
    assert logo["binary"] is True and logo["added"] == 0 and logo["deleted"] == 0
    assert commits["Empty commit to trigger CI"]["files"] == []
    assert {f["path"] for f in commits["Add docs with non-ASCII names"]["files"]} == {"docs/naïve café.md",
                                                                                       "docs/日本語.txt"}
    assert commits["Add docs with non-ASCII names"]["author"]["name"] == "Bob Ü"
    assert len(commits["Merge branch 'feature'"]["parents"]) == 2  # merges are read by default
    assert commits["Merge branch 'feature'"]["files"] == []
    assert all(len(c["hash"]) == 40 for c in commits.values())
    assert commits["Initial import of app and readme"]["parents"] == []


def test_merges_left_out_when_asked(history: Repo, tmp_path: Path) -> None:
    take_snapshot(history.path, None, tmp_path / "s.json", merges=False)
    commits = list(Snapshot(tmp_path / "s.json").commits())
    assert commits and all(len(c["parents"]) <= 1 for c in commits)


def test_snapshot_streams_one_commit_per_line(built: tuple[Path, Path]) -> None:
    lines = built[0].read_text(encoding="utf-8").splitlines()
    assert lines[0].endswith('"commits":[')
    n = sum(1 for _ in Snapshot(built[0]).commits())
    assert len(lines) == n + 2
    doc = json.loads(built[0].read_text(encoding="utf-8"))  # still one ordinary JSON document
    assert doc["count"] == n and doc["schema"] == "signoff/snapshot@1"


def test_pretty_printed_snapshot_still_reads(built: tuple[Path, Path], tmp_path: Path) -> None:
    doc = json.loads(built[0].read_text(encoding="utf-8"))
    (tmp_path / "pretty.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    build_facts(tmp_path / "pretty.json", tmp_path / "f.json")
    assert _counts(tmp_path / "f.json") == _counts(built[1])


def test_derived_facts_recompute(built: tuple[Path, Path]) -> None:
    facts = {f["id"]: f for f in FactsFile(built[1]).facts()}
    derived = [f for f in facts.values() if f["kind"] == "derived"]
    assert {f["op"] for f in derived} == {"ratio", "pct_change"}
    for f in derived:
        a, b = (facts[x]["value"] for x in f["of"])
        expected = a / b if f["op"] == "ratio" else (b - a) / a * 100
        assert abs(f["value"] - expected) < 0.01


@pytest.mark.parametrize("rng, message", [
    ("--output=/tmp/pwned", "is not A..B"),
    ("v9.9.9..HEAD", "does not name a commit"),
    ("a...b", "is not A..B"),
    ("HEAD;rm -rf", "is not a revision name"),
])
def test_bad_ranges_are_refused(history: Repo, tmp_path: Path, rng: str, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        take_snapshot(history.path, rng, tmp_path / "s.json")
    assert not (tmp_path / "s.json").exists()
    assert not Path("/tmp/pwned").exists()


def test_not_a_repository_and_empty_repository(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(UsageError, match="not a git repository"):
        take_snapshot(tmp_path / "plain", None, tmp_path / "s.json")
    Repo(tmp_path / "empty")
    with pytest.raises(UsageError, match="no commits yet"):
        take_snapshot(tmp_path / "empty", None, tmp_path / "s.json")


class _CountingStream:
    """A pipe stand-in that records how much has been read."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def read(self, n: int = -1) -> bytes:
        n = len(self.data) - self.pos if n < 0 else n
        chunk = self.data[self.pos:self.pos + n]
        self.pos += len(chunk)
        return chunk


def test_parse_log_yields_commits_while_the_stream_is_still_being_read() -> None:
    from signoff.notes import snapshot as snap

    record = ("\x1e" + "ab" * 20 + "\x1f\x1fA\x1fa@x\x1f2026-01-01T00:00:00+00:00\x1fA\x1fa@x\x1f"
              "2026-01-01T00:00:00+00:00\x1fsubject\x1fbody\x1f\x00\n3\t1\tsrc/f.py\x00-\t-\tlogo.bin\x00")
    data = record.encode() * 20_000  # about 3 MB of `git log --numstat -z`
    stream = _CountingStream(data)
    commits = snap.parse_log(stream)  # type: ignore[arg-type]
    first = next(commits)
    assert first["files"] == [
        {"path": "src/f.py", "old_path": None, "added": 3, "deleted": 1, "binary": False},
        {"path": "logo.bin", "old_path": None, "added": 0, "deleted": 0, "binary": True}]
    assert stream.pos < len(data) // 2  # streamed: most of the output is not read yet
    assert sum(1 for _ in commits) == 19_999


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1 << 20])
def test_tokens_decode_as_token_by_token_across_any_chunk_boundary(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stream is decoded a chunk at a time; a chunk may end inside a multi-byte character or an
    invalid sequence, and the tokens must still be those of decoding each token on its own."""
    from signoff.notes import snapshot

    raw = [b"\x1eabc\x1fd\xc3\xa9f", "é€😀".encode(), b"bad \xff\xfe here", b"cut \xe2\x82", b"", b"tail \xf0\x9f"]
    monkeypatch.setattr(snapshot, "_CHUNK", chunk)
    got = list(snapshot._tokens(io.BytesIO(b"\0".join(raw))))
    assert got == [t.decode("utf-8", "backslashreplace") for t in raw]
    assert "bad \\xff\\xfe here" in got and "cut \\xe2\\x82" in got


def test_tags_and_their_dates_are_part_of_the_snapshot(tmp_path: Path) -> None:
    """An annotated tag is dated by its tagger, a lightweight one by its commit; the authors before
    an A..B range are kept so new contributors can be counted."""
    r = Repo(tmp_path / "repo")
    r.write("a.txt", "1\n")
    first = r.commit("First")
    r.git("tag", "v1.0.0")  # lightweight: the commit's date
    r.write("a.txt", "2\n")
    second = r.commit("Second", author=("New Person", "new@example.org"))
    env = {"GIT_COMMITTER_DATE": "2030-01-02T03:04:05+02:00"}
    subprocess.run(["git", "-C", str(r.path), "tag", "-a", "v1.1.0", "-m", "release"], check=True,
                   env={**os.environ, **env, "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.org",
                        "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"})
    take_snapshot(r.path, "v1.0.0..v1.1.0", tmp_path / "s.json")
    snap = Snapshot(tmp_path / "s.json")
    commits = {c["hash"]: c for c in snap.commits()}
    tags = {t["name"]: t for t in snap.tags}
    assert tags["v1.0.0"]["commit"] == first and tags["v1.1.0"]["commit"] == second
    assert tags["v1.1.0"]["date"] == "2030-01-02T03:04:05+02:00"  # the tagger's date, not the commit's
    assert first not in commits and commits[second]["author"]["email"] == "new@example.org"
    assert snap.authors_before == {"emails": ["ada@example.org"], "names": ["Ada Lovelace"]}
    assert r.git("log", "-1", "--format=%cI", first).strip() == tags["v1.0.0"]["date"]


def test_a_snapshot_with_a_malformed_tag_list_is_refused(built: tuple[Path, Path], tmp_path: Path) -> None:
    doc = json.loads(built[0].read_text(encoding="utf-8"))
    doc["tags"] = [{"name": "v1", "commit": 3}]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(UsageError, match="tags"):
        Snapshot(bad)
