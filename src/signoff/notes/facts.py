"""Facts: the numbered statements (`F1..Fn`) a sentence may cite, computed from a snapshot.

Kinds:
- `commit`  one per commit: hash, subject, author, email, date (author date).
- `file`    one per distinct path touched: lines added and deleted over the range, binary, commits.
- `count`   exactly five metrics over the range (`scope: "range"`) and per author
            (`scope: "author:<email>"`): commits, files_changed (distinct paths), lines_added,
            lines_deleted (as `git log --numstat` counts them; binary files count as changed with 0
            lines) and contributors (distinct author emails; range scope only).
- `derived` `ratio` (a / b) or `pct_change` ((b - a) / a * 100) of two count facts.

The same `Aggregate` that builds facts recomputes them for the verifier, from the snapshot alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

from signoff.kernel.errors import UsageError
from signoff.kernel.progress import Progress, silent
from signoff.notes.documents import FACTS, StreamedDoc, StreamWriter, is_int, is_num, need, write_streamed
from signoff.notes.snapshot import Reading, Snapshot, SnapshotSummary

METRICS = ("commits", "files_changed", "lines_added", "lines_deleted", "contributors")
AUTHOR_METRICS = ("commits", "files_changed", "lines_added", "lines_deleted")
OPS = ("ratio", "pct_change")
FACT_ID = re.compile(r"^F[1-9][0-9]*$")


def round_half_up(value: float, places: int) -> float:
    q = Decimal(1).scaleb(-places)
    return float(Decimal(repr(value)).quantize(q, rounding=ROUND_HALF_UP))


def derive(op: str, a: float, b: float) -> float | None:
    """The value of a derived fact, or None when it is undefined (division by zero)."""
    if op == "ratio":
        return None if b == 0 else round_half_up(a / b, 4)
    if op == "pct_change":
        return None if a == 0 else round_half_up((b - a) / a * 100, 2)
    return None


@dataclass
class _Tally:
    commits: int = 0
    paths: set[str] = field(default_factory=set)
    added: int = 0
    deleted: int = 0

    def metric(self, name: str) -> int:
        return {"commits": self.commits, "files_changed": len(self.paths), "lines_added": self.added,
                "lines_deleted": self.deleted}[name]


@dataclass
class _PathTally:
    added: int = 0
    deleted: int = 0
    binary: bool = False
    commits: int = 0
    last: int = 0  # the last commit (by number) that touched the path: counted once per commit


class Aggregate:
    """Everything a count or file fact says, accumulated one commit at a time."""

    def __init__(self) -> None:
        self.range = _Tally()
        self.authors: dict[str, _Tally] = {}
        self.names: dict[str, str] = {}
        self.paths: dict[str, _PathTally] = {}

    def add(self, commit: dict[str, Any]) -> None:
        # One pass over the files feeds the range, the author and each path: this runs per commit
        # over histories of 100,000 commits.
        email = commit["author"]["email"]
        rng = self.range
        author = self.authors.get(email)
        if author is None:
            author = self.authors[email] = _Tally()
            self.names[email] = commit["author"]["name"]
        # The range's own totals are sums over the paths, taken when asked (`count`), not per file.
        rng.commits += 1
        n = rng.commits
        author.commits += 1
        paths = self.paths
        author_paths = author.paths
        for f in commit["files"]:
            path, added, deleted = f["path"], f["added"], f["deleted"]
            author_paths.add(path)
            author.added += added
            author.deleted += deleted
            p = paths.get(path)
            if p is None:
                p = paths[path] = _PathTally()
            p.added += added
            p.deleted += deleted
            if f["binary"]:
                p.binary = True
            if p.last != n:
                p.commits += 1
                p.last = n

    def count(self, metric: str, scope: str) -> int | None:
        if scope == "range":
            if metric == "contributors":
                return len(self.authors)
            if metric == "commits":
                return self.range.commits
            if metric == "files_changed":
                return len(self.paths)
            if metric == "lines_added":
                return sum(p.added for p in self.paths.values())
            if metric == "lines_deleted":
                return sum(p.deleted for p in self.paths.values())
            return None
        if scope.startswith("author:") and metric in AUTHOR_METRICS:
            tally = self.authors.get(scope[len("author:"):])
            return tally.metric(metric) if tally is not None else 0
        return None

    def file_fact(self, path: str) -> dict[str, Any] | None:
        p = self.paths.get(path)
        if p is None:
            return None
        return {"path": path, "added": p.added, "deleted": p.deleted, "binary": p.binary, "commits": p.commits}


_DOCS = ("docs/", "doc/", "documentation/", "website/", "site/")
_TESTS = ("tests/", "test/", "testing/", "__tests__/", "spec/", "benchmarks/", "bench/")
_CI = (".github/", ".circleci/", ".gitlab", ".azure", "ci/", ".ci/", ".travis.yml", ".pre-commit-config.yaml",
       "tox.ini", "noxfile.py", ".readthedocs.yaml", ".readthedocs.yml", ".gitignore", ".editorconfig",
       ".git-blame-ignore-revs", "codecov.yml", ".coveragerc", "renovate.json", ".husky/")
_DEPS = ("requirements", "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "uv.lock", "pdm.lock",
         "Pipfile.lock", "Cargo.lock", "go.sum", "constraints")
# Tests and builds where other ecosystems keep them: Go's `context_test.go`, Gradle and Maven's
# `src/test/`, Kotlin multiplatform's `src/jvmTest/` and `src/androidDeviceTest/`, JUnit's
# `CacheTest.kt`, RSpec's `client_spec.rb` (square/okhttp parent-5.3.0..parent-5.4.0 listed "Fix
# CacheTest on Windows" as a change: its test files were read as code)
_TEST_PATH = re.compile(r"(?:^|/)(?:src/(?:test\w*|[a-z]\w*Test\w*)|spec|test|tests|testdata|__tests__)/|"
                        r"(?:^|/)[\w.-]*[-_]test(?:ing)?[-_]support/|(?:^|/)testFixtures/|_test\.go$|_spec\.rb$|"
                        r"[a-z0-9]Tests?\.(?:java|kt|kts|scala|groovy|swift|cs)$")
# Build and lint configuration: the tools that make a release, not what users run
_BUILD_PATH = re.compile(r"(?:^|/)(?:build\.gradle(?:\.kts)?|settings\.gradle(?:\.kts)?|gradle\.properties|"
                         r"gradlew(?:\.bat)?|\.golangci\.ya?ml|\.rubocop\.yml|\.eslintrc[\w.]*|clippy\.toml|"
                         r"rustfmt\.toml|Makefile)$|^(?:gradle|buildSrc|build-logic|\.idea|\.vscode|\.devcontainer)/")
_DEP_FILES = re.compile(r"(?:^|/)(?:go\.mod|Gemfile(?:\.lock)?|libs\.versions\.toml)$")
_MERGE_PR = re.compile(r"^Merge pull request #(\d+)")
_OWN_NUMBER = re.compile(r"\(#(\d+)\)\s*$")
# A rebase-merged commit's pull request, stated on a line of its own at the end of its message ("PR #2684",
# ripgrep's habit; `PR-URL: https://github.com/o/r/pull/12`, node's; `PR-479: https://github.com/o/r/pull/479`,
# the trailer git-changelog reads, griffe's)
PR_TRAILER = re.compile(r"^\s*(?:PR|pull request)\s*#(\d+)\s*$|^PR-URL:\s*\S+/pull/(\d+)\s*$|"
                        r"^PR-(\d+):\s*\S+/pull/\3\s*$", re.IGNORECASE | re.MULTILINE)
_BREAKING = re.compile(r"^BREAKING[ -]CHANGE:", re.MULTILINE)


@lru_cache(maxsize=65536)
def area_of(path: str) -> str:
    """What a file is: `docs`, `tests`, `ci`, `deps` or `code` (cached: a history touches the same
    paths again and again)."""
    low = path.lower()
    name = low.rsplit("/", 1)[-1]
    if low.startswith(_DOCS) or ("/" not in low and low.endswith((".md", ".rst", ".txt"))
                                 and not name.startswith("requirements")):
        return "docs"
    if low.startswith(_TESTS) or "/tests/" in low or name.startswith("test_") or ".test." in name \
            or ".spec." in name or _TEST_PATH.search(path):
        return "tests"
    if _DEP_FILES.search(path):
        return "deps"
    if low.startswith(_CI) or _BUILD_PATH.search(path):
        return "ci"
    if name.startswith(_DEPS):
        return "deps"
    return "code"


def areas(files: list[dict[str, Any]]) -> list[str]:
    """The areas a commit's files touch, sorted, each once."""
    if len(files) < 2:
        return [area_of(f["path"]) for f in files]
    return sorted({area_of(f["path"]) for f in files})


def commit_fact(commit: dict[str, Any]) -> dict[str, Any]:
    """A commit as a fact: its identity, and what a writer needs to list it: whether it is a merge,
    the pull request it names as its own (`pr`: `(#N)` at the end of a squash subject, a merge's
    `Merge pull request #N`, or a rebased commit's trailer line, `PR-479: .../pull/479`), the title to
    list (a merged pull request's title is the first line of the merge's body), a `BREAKING CHANGE:`
    trailer, the areas its files touch, and its parents (which commits a maintainer pushed onto the main
    line, beside the branches merged into it)."""
    a = commit["author"]
    subject, body = commit["subject"], commit["body"]
    merge = len(commit["parents"]) > 1
    m = _MERGE_PR.match(subject) or _OWN_NUMBER.search(subject)
    title = body.split("\n", 1)[0].strip() if merge and m and body.strip() else subject
    # (a rebased pull request whose message states its number on a trailer line, griffe's "PR-479: .../pull/479")
    stated = None if m or merge else PR_TRAILER.search(body)
    pr = m.group(1) if m else next((g for g in stated.groups() if g), None) if stated else None
    return {"kind": "commit", "hash": commit["hash"], "subject": subject, "author": a["name"],
            "email": a["email"], "date": a["date"], "merge": merge, "pr": pr,
            "title": title, "breaking": "BREAKING" in body and bool(_BREAKING.search(body)),
            "areas": areas(commit["files"]), "parents": list(commit["parents"])}


@dataclass
class FactsSummary:
    path: Path
    count: int
    commits: int
    snapshot_digest: str


def generate_facts(commits: Iterable[dict[str, Any]], agg: Aggregate) -> Iterator[dict[str, Any]]:
    """Number the facts of `commits` (feeding `agg` as they stream by): commits first, newest first,
    then files, counts and derived comparisons, which need the whole range."""
    n = 0

    def numbered(fact: dict[str, Any]) -> dict[str, Any]:
        nonlocal n
        n += 1
        return {"id": f"F{n}", **fact}

    for commit in commits:
        agg.add(commit)
        yield numbered(commit_fact(commit))
    for path in sorted(agg.paths):
        fact = agg.file_fact(path)
        assert fact is not None
        yield numbered({"kind": "file", **fact})
    ids: dict[tuple[str, str], str] = {}
    for metric in METRICS:
        fact = numbered({"kind": "count", "metric": metric, "value": agg.count(metric, "range"), "scope": "range"})
        ids[(metric, "range")] = fact["id"]
        yield fact
    for email in sorted(agg.authors):
        for metric in AUTHOR_METRICS:
            scope = f"author:{email}"
            fact = numbered({"kind": "count", "metric": metric, "value": agg.count(metric, scope),
                             "scope": scope, "author": agg.names[email]})
            ids[(metric, scope)] = fact["id"]
            yield fact
    values = {key: agg.count(*key) or 0 for key in ids}
    pairs: list[tuple[str, tuple[str, str], tuple[str, str]]] = []
    if len(agg.authors) > 1:
        pairs += [("ratio", ("commits", f"author:{e}"), ("commits", "range")) for e in sorted(agg.authors)]
    pairs += [("ratio", ("lines_added", "range"), ("lines_deleted", "range")),
              ("pct_change", ("lines_deleted", "range"), ("lines_added", "range"))]
    for op, a, b in pairs:
        value = derive(op, values[a], values[b])
        if value is not None:
            yield numbered({"kind": "derived", "op": op, "of": [ids[a], ids[b]], "value": value})


def build_facts(snapshot_path: Path, out: Path) -> FactsSummary:
    snap = Snapshot(snapshot_path)
    agg = Aggregate()
    trailer: dict[str, Any] = {"range": snap.range}

    def facts() -> Iterator[dict[str, Any]]:
        yield from generate_facts(snap.commits(), agg)
        trailer["snapshot_digest"] = snap.digest

    header = {"schema": FACTS, "range": snap.range}
    write_streamed(out, header, "facts", facts(), trailer)
    return FactsSummary(out, trailer["count"], agg.range.commits, trailer["snapshot_digest"])


def snapshot_and_facts(repo: Path, rev_range: str | None, snapshot_out: Path, facts_out: Path,
                       merges: bool = True, progress: Progress = silent) -> tuple[SnapshotSummary, FactsSummary]:
    """`take_snapshot` followed by `build_facts`, in one pass: each commit git prints is written to
    the snapshot and counted into the facts at once, so the snapshot is not read back and parsed a
    second time. The two files are byte for byte those of the two steps; neither is left behind if
    either fails."""
    agg = Aggregate()
    with Reading(repo, rev_range, merges, progress) as reading, reading.writer(snapshot_out) as snap, \
            StreamWriter(facts_out, {"schema": FACTS, "range": reading.rng}, "facts") as facts:

        def written() -> Iterator[dict[str, Any]]:
            for commit in reading.commits():
                snap.add(commit)
                yield commit

        for fact in generate_facts(written(), agg):
            facts.add(fact)
        snap_trailer = snap.close()
        trailer = facts.close({"range": reading.rng, "snapshot_digest": snap_trailer["digest"]})
    rng, head = reading.rng, reading.head
    return (SnapshotSummary(snapshot_out, snap_trailer["count"], head, rng, snap_trailer["digest"]),
            FactsSummary(facts_out, trailer["count"], agg.range.commits, snap_trailer["digest"]))


def check_fact(f: Any, i: int, path: Path | str) -> dict[str, Any]:
    what = "facts"
    where = f"facts[{i}]"
    need(isinstance(f, dict), where, "an object", what, path)
    need(isinstance(f.get("id"), str) and bool(FACT_ID.match(f["id"])), f"{where}.id", "an id like F1", what, path)
    kind = f.get("kind")
    if kind == "commit":
        for k in ("hash", "subject", "author", "date"):
            need(isinstance(f.get(k), str), f"{where}.{k}", "a string", what, path)
    elif kind == "file":
        need(isinstance(f.get("path"), str), f"{where}.path", "a string", what, path)
        for k in ("added", "deleted"):
            need(is_int(f.get(k)), f"{where}.{k}", "an integer", what, path)
    elif kind == "count":
        need(f.get("metric") in METRICS, f"{where}.metric", "one of " + ", ".join(METRICS), what, path)
        need(is_int(f.get("value")), f"{where}.value", "an integer", what, path)
        need(isinstance(f.get("scope"), str), f"{where}.scope", "a string (range or author:EMAIL)", what, path)
    elif kind == "derived":
        need(f.get("op") in OPS, f"{where}.op", "ratio or pct_change", what, path)
        of = f.get("of")
        need(isinstance(of, list) and len(of) == 2 and all(isinstance(x, str) for x in of), f"{where}.of",
             "two fact ids", what, path)
        need(is_num(f.get("value")), f"{where}.value", "a number", what, path)
    else:
        need(False, f"{where}.kind", "commit, file, count or derived", what, path)
    fact: dict[str, Any] = f
    return fact


class FactsFile:
    """Facts read from a facts file. Commit and file facts are kept only when wanted (the cited
    ones), so a long history's facts file does not have to fit in memory; counts and derived facts
    are few and always kept."""

    def __init__(self, path: Path, wanted: Iterable[str] | None = None) -> None:
        doc = StreamedDoc(path, FACTS, "facts", "facts")
        keep = set(wanted) if wanted is not None else None
        self.path = path
        self.by_id: dict[str, dict[str, Any]] = {}
        self.ids: set[str] = set()
        for i, f in enumerate(doc.items()):
            check_fact(f, i, path)
            if f["id"] in self.ids:
                raise UsageError(f"facts {path}: id {f['id']} appears twice", "regenerate the facts file")
            self.ids.add(f["id"])
            if keep is None or f["id"] in keep or f["kind"] in ("count", "derived"):
                self.by_id[f["id"]] = f
        trailer = doc.trailer or {}
        self.snapshot_digest: str | None = trailer.get("snapshot_digest")
        self.range: str | None = doc.header.get("range")

    def facts(self) -> list[dict[str, Any]]:
        return list(self.by_id.values())
