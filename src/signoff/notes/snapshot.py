"""Snapshot: the commits of a range and their file changes, read from real git and streamed to disk.

One `git log --numstat -z` process feeds a parser that yields one commit at a time, and each commit
is written as soon as it is parsed, so memory stays flat however long the history is. Reading the
snapshot back (`iter_commits`) streams the same way.

The numbers are exactly what `git log --numstat` reports: rename detection on (git's default), a
binary file is listed with `-` for both counts (kept as `binary: true`, 0 lines), merge commits carry
no file list (git log shows no diff for merges by default). Merge commits are read by default (a
pull request's number and title are often only in its merge commit); `merges=False` leaves them out.

The header also carries the repository's tags (`tags`: name, commit, date; the tagger date of an
annotated tag, the commit date of a lightweight one), so versions and release dates can be checked,
and for an `A..B` range the authors of the history before it (`authors_before`: emails and names),
so "new contributors" can be counted.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from signoff import git
from signoff.kernel.errors import NotFoundError, UnavailableError, UsageError
from signoff.kernel.progress import Progress, silent
from signoff.notes.documents import SNAPSHOT, StreamedDoc, StreamWriter, dumps_line, is_int, need

# Record separator starts a commit header; unit separator splits its fields. Git forbids NUL in
# commit messages, so a header is always exactly one NUL-terminated token of the -z stream.
_FORMAT = "%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%cn%x1f%ce%x1f%cI%x1f%s%x1f%b%x1f"
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_REV = re.compile(r"^[A-Za-z0-9_./@^~{}:+-]+$")
# Read a chunk well under the pipe's size (`git.popen` widens it to 1 MB): git keeps printing into
# the pipe while a chunk is parsed, so the two overlap; with 1 MB chunks git waited for each one.
_CHUNK = 1 << 16


@dataclass
class SnapshotSummary:
    path: Path
    commits: int
    head: str | None
    range: str
    digest: str
    extra: dict[str, Any] = field(default_factory=dict)


def check_range(repo: Path, rev_range: str | None, drivers: git.Config | None = None) -> tuple[str, str | None]:
    """Validate the repository and the range; returns (range, resolved tip commit or None).

    One `git rev-parse` resolves every side when all is well; only a failure is looked into
    further, to say which side (or the repository) is wrong."""
    if not repo.exists():
        raise NotFoundError(f"repository not found: {repo}", "pass --repo with the path of a git work tree")
    rng = rev_range or "HEAD"
    sides = rng.split("..")
    if len(sides) > 2 or rng.startswith("-") or "..." in rng:
        raise UsageError(f"range {rng!r} is not A..B or a single revision",
                         "pass --range v1.0..v1.1 (or one revision for its whole history)")
    names = [side or "HEAD" for side in sides]
    for name in names:
        if not _REV.match(name) or name.startswith("-"):
            raise UsageError(f"revision {name!r} in range {rng!r} is not a revision name",
                             "use tags, branch names or commit hashes")
    out = git.run(repo, "rev-parse", "--end-of-options", *(f"{name}^{{commit}}" for name in names), check=False,
                  drivers=drivers)
    # Without --verify (which takes one name), git 2.39 echoes `--end-of-options` among the ids.
    resolved = [h for h in out.stdout.decode().split() if _HEX40.match(h)]
    if out.returncode == 0 and len(resolved) == len(names):
        return rng, resolved[-1]
    _explain_range(repo, rng, names, drivers)
    raise UsageError(f"range {rng!r} does not resolve in {repo}: {out.stderr.decode(errors='replace').strip()[:200]}",
                     "check the names with `git log --oneline`")


def _explain_range(repo: Path, rng: str, names: list[str], drivers: git.Config | None) -> None:
    """Raise the error that says what is wrong with a range that did not resolve."""
    if git.run(repo, "rev-parse", "--git-dir", check=False, drivers=drivers).returncode != 0:
        raise UsageError(f"{repo} is not a git repository", "pass --repo with the path of a git work tree")
    for name in names:
        out = git.run(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}",
                      check=False, drivers=drivers)
        if out.returncode != 0:
            if name == "HEAD" and git.run(repo, "rev-parse", "--verify", "--quiet", "HEAD", check=False,
                                          drivers=drivers).returncode != 0:
                raise UsageError(f"{repo} has no commits yet", "commit something first, or pass another --repo")
            raise UsageError(f"revision {name!r} does not name a commit in {repo}",
                             "check the name with `git log --oneline` (tags must be fetched)")


def _tokens(stream: IO[bytes]) -> Iterator[str]:
    """The NUL-separated tokens of the stream, decoded a chunk at a time (up to its last NUL): no
    NUL byte is ever part of a multi-byte UTF-8 sequence, so this decodes exactly as token by token
    would, with one decode per chunk instead of three per commit. Non-UTF-8 bytes in names or
    messages are shown (backslash escapes), never dropped; JSON cannot hold raw bytes."""
    rest = b""
    while chunk := stream.read(_CHUNK):
        data = rest + chunk
        cut = data.rfind(b"\0") + 1
        rest = data[cut:]
        if cut:
            parts = data[:cut - 1].decode("utf-8", "backslashreplace").split("\0")
            yield from parts
    if rest:
        yield rest.decode("utf-8", "backslashreplace")


def parse_log(stream: IO[bytes]) -> Iterator[dict[str, Any]]:
    """Parse `git log --format=_FORMAT --numstat -z` output one commit at a time.

    This runs once per token of a long history while git is still printing it, so it keeps to
    local names and works on text decoded a chunk at a time (`_tokens`); keys are created in
    sorted order, the order in which `dumps_line` writes them."""
    commit: dict[str, Any] | None = None
    files: list[dict[str, Any]] = []
    tokens = _tokens(stream)
    after_header = False
    for raw in tokens:
        if raw[:1] == "\x1e":
            if commit is not None:
                yield commit
            fields = raw[1:].split("\x1f", 9)
            if len(fields) != 10 or not _HEX40.match(fields[0]):
                raise UnavailableError("git log printed a commit header signoff cannot parse",
                                       "report this with the output of `git --version`")
            body = fields[9]
            body = body[:-1] if body.endswith("\x1f") else body
            files = []
            commit = {
                "author": {"date": fields[4], "email": fields[3], "name": fields[2]},
                "body": body.rstrip("\n"),
                "committer": {"date": fields[7], "email": fields[6], "name": fields[5]},
                "files": files,
                "hash": fields[0],
                "parents": fields[1].split() if fields[1] else [],
                "subject": fields[8],
            }
            after_header = True
            continue
        if after_header:
            after_header = False
            if raw[:1] == "\n":
                raw = raw[1:]
        if not raw:
            continue
        if commit is None:
            raise UnavailableError("git log printed file changes before any commit",
                                   "report this with the output of `git --version`")
        added, deleted, new = raw.split("\t", 2)
        old: str | None = None
        if not new:  # a rename: the old and the new path follow as two tokens
            old = next(tokens, "")
            new = next(tokens, "")
        if added == "-":
            files.append({"added": 0, "binary": True, "deleted": 0, "old_path": old, "path": new})
        else:
            files.append({"added": int(added), "binary": False, "deleted": int(deleted), "old_path": old,
                          "path": new})
    if commit is not None:
        yield commit


_TAG_FORMAT = ("--format=%(refname:strip=2)%00%(objecttype)%00%(objectname)%00%(*objecttype)%00%(*objectname)"
               "%00%(taggerdate:iso-strict)%00%(committerdate:iso-strict)%00%(*committerdate:iso-strict)")


def read_tags(repo: Path, drivers: git.Config | None = None) -> list[dict[str, str]]:
    """Every tag naming a commit, sorted by name: `name`, `commit` and `date` (the tagger date of an
    annotated tag, the commit date of a lightweight one, strict ISO 8601)."""
    out = git.run(repo, "for-each-ref", _TAG_FORMAT, "refs/tags", drivers=drivers)
    tags: list[dict[str, str]] = []
    for line in out.stdout.decode("utf-8", "backslashreplace").splitlines():
        parts = line.split("\0")
        if len(parts) != 8:
            continue
        name, kind, obj, peeled_kind, peeled, tagger, committer, peeled_committer = parts
        if kind == "commit":
            tags.append({"commit": obj, "date": committer, "name": name})
        elif kind == "tag" and peeled_kind == "commit":
            tags.append({"commit": peeled, "date": tagger or peeled_committer, "name": name})
    return sorted(tags, key=lambda t: t["name"])


def authors_before(repo: Path, rng: str, drivers: git.Config | None = None) -> dict[str, list[str]] | None:
    """Emails and names of the authors of the history before an `A..B` range (None for one revision,
    whose whole history is the range)."""
    if ".." not in rng or not rng.split("..")[0]:
        return None
    base = rng.split("..")[0]
    out = git.run(repo, "log", "--format=%ae%x00%an", "--end-of-options", base, "--", drivers=drivers)
    emails: set[str] = set()
    names: set[str] = set()
    for line in out.stdout.decode("utf-8", "backslashreplace").splitlines():
        email, _, name = line.partition("\0")
        emails.add(email.lower())
        names.add(name)
    return {"emails": sorted(emails), "names": sorted(names)}


def log_args(rng: str, merges: bool) -> list[str]:
    cmd = ["-c", "core.quotepath=off", "log", f"--format={_FORMAT}", "--numstat", "-z",
           "-M", "--no-color", "--no-ext-diff", "--no-textconv", "--encoding=UTF-8", "--no-show-signature",
           "--no-relative"]
    if not merges:
        cmd.append("--no-merges")
    cmd += ["--end-of-options", rng, "--"]
    return cmd


PROGRESS_EVERY = 1000  # commits between two progress reports: a long history shows it is moving


class Reading:
    """A range being read from git: its checked name and tip, the snapshot's header, and the
    commits as `git log` prints them.

    `git log` is started first, so the history is already being walked (into a 1 MB pipe) while
    the tags and the earlier authors are read; the repository's driver overrides are enumerated
    once for all of these commands (`git.neutral_drivers`), not once per command. Leaving the
    `with` block ends a `git log` that is still running."""

    def __init__(self, repo: Path, rev_range: str | None, merges: bool, progress: Progress = silent) -> None:
        self.repo, self.merges, self.progress = repo, merges, progress
        drivers = git.neutral_drivers(repo) if repo.exists() else ()
        self.rng, self.head = check_range(repo, rev_range, drivers)
        self._err = tempfile.TemporaryFile()
        self._proc = git.popen(repo, *log_args(self.rng, merges), stdout=subprocess.PIPE, stderr=self._err,
                               drivers=drivers)
        try:
            self.header: dict[str, Any] = {"schema": SNAPSHOT, "range": self.rng, "head": self.head,
                                           "merges": merges, "tags": read_tags(repo, drivers)}
            before = authors_before(repo, self.rng, drivers)
            if before is not None:
                self.header["authors_before"] = before
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Reading:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        proc = self._proc
        if proc.poll() is None:
            proc.kill()
        if proc.stdout is not None:
            proc.stdout.close()
        proc.wait()
        self._err.close()

    def commits(self) -> Iterator[dict[str, Any]]:
        """The range's commits, newest first, reporting progress as they stream by."""
        proc, progress = self._proc, self.progress
        assert proc.stdout is not None
        progress("reading commits", done=0)
        n = 0
        for n, commit in enumerate(parse_log(proc.stdout), 1):
            yield commit
            if n % PROGRESS_EVERY == 0:
                progress("reading commits", done=n)
        if n % PROGRESS_EVERY:
            progress("reading commits", done=n)
        proc.stdout.close()
        if proc.wait() != 0:
            self._err.seek(0)
            message = self._err.read().decode("utf-8", "replace").strip()
            raise UsageError(f"git log failed on {self.repo} ({self.rng}): {message}",
                             "check the repository and the range")

    def writer(self, out: Path) -> StreamWriter:
        """The snapshot file being written: its header, and the content digest seeded with it."""
        digest = hashlib.sha256(dumps_line(self.header).encode() + b"\n")
        return StreamWriter(out, self.header, "commits", digest)


def take_snapshot(repo: Path, rev_range: str | None, out: Path, merges: bool = True,
                  progress: Progress = silent) -> SnapshotSummary:
    with Reading(repo, rev_range, merges, progress) as reading, reading.writer(out) as snap:
        for commit in reading.commits():
            snap.add(commit)
        trailer = snap.close()
    return SnapshotSummary(out, trailer["count"], reading.head, reading.rng, trailer["digest"])


def _commit_ok(c: Any) -> bool:
    """The fast path of `_check_commit`: True when the commit is well formed."""
    try:
        if not (type(c["hash"]) is str and len(c["hash"]) == 40 and _HEX40.match(c["hash"])
                and type(c["parents"]) is list and type(c["subject"]) is str and type(c["body"]) is str):
            return False
        for role in (c["author"], c["committer"]):
            if not (type(role["name"]) is str and type(role["email"]) is str and type(role["date"]) is str):
                return False
        for f in c["files"]:
            a, d = f["added"], f["deleted"]
            if not (type(f["path"]) is str and f["path"] and type(a) is int and type(d) is int and a >= 0
                    and d >= 0 and type(f["binary"]) is bool
                    and (f.get("old_path") is None or type(f["old_path"]) is str)):
                return False
        return type(c["files"]) is list
    except (KeyError, TypeError):
        return False


def _check_commit(c: Any, i: int, path: Path) -> None:
    what = "snapshot"
    need(isinstance(c, dict), f"commits[{i}]", "an object", what, path)
    need(isinstance(c.get("hash"), str) and bool(_HEX40.match(c["hash"])), f"commits[{i}].hash",
         "40 lowercase hex characters", what, path)
    need(isinstance(c.get("parents"), list), f"commits[{i}].parents", "a list", what, path)
    for role in ("author", "committer"):
        who = c.get(role)
        need(isinstance(who, dict) and all(isinstance(who.get(k), str) for k in ("name", "email", "date")),
             f"commits[{i}].{role}", "an object with name, email and date strings", what, path)
    need(isinstance(c.get("subject"), str), f"commits[{i}].subject", "a string", what, path)
    need(isinstance(c.get("body"), str), f"commits[{i}].body", "a string", what, path)
    files = c.get("files")
    need(isinstance(files, list), f"commits[{i}].files", "a list", what, path)
    for j, f in enumerate(files):
        where = f"commits[{i}].files[{j}]"
        need(isinstance(f, dict) and isinstance(f.get("path"), str) and bool(f["path"]), f"{where}.path",
             "a non-empty string", what, path)
        need(is_int(f.get("added")) and f["added"] >= 0, f"{where}.added", "a count >= 0", what, path)
        need(is_int(f.get("deleted")) and f["deleted"] >= 0, f"{where}.deleted", "a count >= 0", what, path)
        need(isinstance(f.get("binary"), bool), f"{where}.binary", "true or false", what, path)
        need(f.get("old_path") is None or isinstance(f["old_path"], str), f"{where}.old_path",
             "a string or null", what, path)


class Snapshot:
    """A snapshot file opened for streaming; `commits()` checks each commit's shape as it goes and,
    once the stream is exhausted, that the content digest still matches (`digest`)."""

    def __init__(self, path: Path) -> None:
        self.doc = StreamedDoc(path, SNAPSHOT, "commits", "snapshot")
        h = self.doc.header
        need(isinstance(h.get("range"), str), "range", "a string", "snapshot", path)
        need(isinstance(h.get("merges"), bool), "merges", "true or false", "snapshot", path)
        self.path = path
        self.range: str = h["range"]
        self.head: str | None = h.get("head")
        tags = h.get("tags", [])
        need(isinstance(tags, list) and all(isinstance(t, dict) and all(isinstance(t.get(k), str)
                                                                        for k in ("name", "commit", "date"))
                                            for t in tags), "tags", "a list of {name, commit, date}",
             "snapshot", path)
        self.tags: list[dict[str, str]] = tags
        before = h.get("authors_before")
        need(before is None or (isinstance(before, dict) and all(
            isinstance(before.get(k), list) and all(isinstance(x, str) for x in before[k])
            for k in ("emails", "names"))), "authors_before", "{emails: [...], names: [...]}", "snapshot", path)
        self.authors_before: dict[str, list[str]] | None = before
        self.digest: str | None = None

    def commits(self) -> Iterator[dict[str, Any]]:
        base = {k: v for k, v in self.doc.header.items() if k not in ("count", "digest", "commits")}
        digest = hashlib.sha256(dumps_line(base).encode() + b"\n")
        for i, c in enumerate(self.doc.items(digest)):
            if not _commit_ok(c):
                _check_commit(c, i, self.path)  # names the first bad field
            yield c
        computed = "sha256:" + digest.hexdigest()
        stated = (self.doc.trailer or {}).get("digest")
        if stated is not None and stated != computed:
            raise UsageError(f"snapshot {self.path} was changed after it was taken (content digest differs)",
                             "take the snapshot again with `signoff notes snapshot`")
        self.digest = computed
