"""Export a revision clean: exactly its committed blobs, byte for byte, nothing else.

The tree under test holds no `.git`, no other history and no uncommitted file, which keeps the code
under test from reading later commits. It is written object by object from one `git cat-file
--batch`, never with `git archive` or a checkout: those honour the tree's own `.gitattributes`
(`export-subst` writes the commit message into a file, `export-ignore` hides files, `ident`, `eol`,
`text`, `working-tree-encoding` and filters rewrite bytes). Attributes play no part here, and every
object is hashed again on arrival, so what is exported is what the commit id names, whatever the
repository's config, replace refs or object files say.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from signoff.git.command import current, popen
from signoff.git.repo import is_full_id
from signoff.kernel.errors import IntegrityError, UsageError

_FILE, _EXECUTABLE, _LINK, _TREE, _GITLINK = "file", "executable", "link", "tree", "gitlink"


class ExportError(Exception):
    """A revision could not be exported completely and safely (it is untrusted input)."""


def export(repo: Path, commit: str, dest: Path, like: Path | None = None) -> Path:
    """Write the committed tree of `commit` into the empty folder `dest`, world-readable.

    Regular files keep git's two modes (0644, or 0755 when committed executable); symbolic links are
    written as links and refused when they point outside the tree; a submodule (gitlink) becomes an
    empty folder, as `git archive` writes it. Paths git itself would never check out (`..`, `.git`,
    an absolute path, a file inside a link) are refused, so a hostile commit cannot write outside `dest`.

    `like`: an earlier export of this git session (the base beside the candidate). Each file with the
    same blob and mode is a hard link to the one written there instead of a second copy, and its bytes
    are not read again: a candidate shares most files with its base, and creating a file costs far
    more than linking one on some filesystems. The caller must not have changed that export since (the
    verifier writes into it only new files, and mounts both read-only).
    """
    if not is_full_id(commit):
        raise UsageError(f"export needs a full commit id, got {commit!r}", "resolve the revision first")
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise UsageError(f"export folder is not empty: {dest}", "export into a fresh folder")
    dest.chmod(0o755)
    try:
        with _session_objects(repo) or _Objects(repo) as objects:
            kind, body = objects.read(commit)
            if kind != "commit" or not body.startswith(b"tree "):
                raise ExportError(f"{commit[:12]} is not a commit")
            entries = list(_walk(objects, body[5:body.index(b"\n")].decode("ascii"), b""))
            written = _write(os.fsencode(dest), entries, objects, _written_by_session(like))
    except OSError as exc:
        raise ExportError(f"revision {commit[:12]} cannot be exported: {exc}") from exc
    active = current()
    if active is not None:
        active.kept[("export", str(dest.resolve()))] = written
    return dest


# (kind, blob id) -> the absolute path (bytes) of the regular file an export wrote with those bytes
_Written = dict[tuple[str, str], bytes]


def _written_by_session(like: Path | None) -> _Written:
    """What an earlier export of this session wrote into `like` ({} when it was none)."""
    active = current()
    if like is None or active is None:
        return {}
    found = active.kept.get(("export", str(like.resolve())))
    return found if isinstance(found, dict) else {}


@dataclass
class _Shared:
    """A session's reader lent to one export: kept open after it, dropped from the session (and
    ended) when the export fails, since its stream may be cut in the middle of an answer."""

    repo: Path
    objects: _Objects

    def __enter__(self) -> _Objects:
        return self.objects

    def __exit__(self, failed: type[BaseException] | None, *_: object) -> None:
        if failed is not None:
            _drop_reader(self.repo, self.objects)


def _session_objects(repo: Path) -> _Shared | None:
    """The session's `git cat-file --batch` for `repo` (started on first use), or None outside a session."""
    active = current()
    if active is None:
        return None
    objects = active.kept.get(("objects", str(repo)))
    if not isinstance(objects, _Objects):
        objects = _Objects(repo).__enter__()
        active.kept[("objects", str(repo))] = objects
        active.closers.append(objects.close)
    return _Shared(repo, objects)


def read_soon(repo: Path) -> None:
    """Start the session's `git cat-file --batch` for `repo` now (it starts on first use otherwise),
    so that git's start overlaps the caller's other work. Nothing outside a session."""
    _session_objects(repo)


def _drop_reader(repo: Path, objects: _Objects) -> None:
    active = current()
    if active is not None and active.kept.get(("objects", str(repo))) is objects:
        del active.kept[("objects", str(repo))]
    if objects.proc is not None:
        objects.proc.kill()


@dataclass
class _Objects:
    """One `git cat-file --batch` process: object ids in, verified (type, bytes) out."""

    repo: Path
    proc: subprocess.Popen[bytes] | None = field(default=None, init=False)

    def __enter__(self) -> _Objects:
        self.proc = popen(self.repo, "cat-file", "--batch", stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL)
        return self

    def __exit__(self, failed: type[BaseException] | None, *_: object) -> None:
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        if failed is not None:
            self.proc.kill()  # it may be blocked on a pipe nobody reads any more
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except (BrokenPipeError, ValueError):
                pass
        if self.proc.wait(timeout=60) != 0 and failed is None:
            raise ExportError("git cat-file failed while exporting")

    def close(self) -> None:
        """End the process of a session's reader (whatever it answered is already checked)."""
        with contextlib.suppress(ExportError, OSError, subprocess.TimeoutExpired):
            self.__exit__(None, None, None)

    def read(self, oid: str) -> tuple[str, bytes]:
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(oid.encode() + b"\n")
        self.proc.stdin.flush()
        return _answer(self.proc.stdout, oid)

    def read_many(self, oids: list[str], kind: str) -> Iterator[bytes]:
        """Each object's bytes in order; the ids are written by a thread while the answers are read,
        so neither pipe can fill up and stall the other side."""
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        stdin = self.proc.stdin

        def feed() -> None:
            try:
                stdin.write(b"".join(oid.encode() + b"\n" for oid in oids))
                stdin.flush()
            except (BrokenPipeError, ValueError):
                pass

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        for oid in oids:
            got, body = _answer(self.proc.stdout, oid)
            if got != kind:
                raise ExportError(f"object {oid[:12]} is a {got}, the tree lists it as a {kind}")
            yield body
        writer.join()  # every answer has been read, so the writer is done (on an error, `__exit__` kills git)

    def read_path(self, commit: str, path: str) -> bytes | None:
        """The blob at `commit:path`, checked against the id git names for it; None when the
        revision has no file there (nothing, a folder, a submodule)."""
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{commit}:{path}\n".encode("utf-8", errors="surrogateescape"))
        self.proc.stdin.flush()
        header = self.proc.stdout.readline()
        if header.endswith(b" missing\n") or header.endswith(b" ambiguous\n"):
            return None
        kind, body = _answer(self.proc.stdout, None, header)
        return body if kind == "blob" else None


def read_at(repo: Path, commit: str, path: str) -> bytes | None:
    """`git.read_file_at` inside a `git.session`: the file's bytes through the session's one
    `git cat-file --batch` for `repo` (not a process per file), kept for the rest of the session
    (a full commit id names the same bytes for good)."""
    active = current()
    assert active is not None and is_full_id(commit) and "\n" not in path
    key = ("blob", str(repo), commit, path)
    if key not in active.kept:
        shared = _session_objects(repo)
        assert shared is not None
        try:
            active.kept[key] = shared.objects.read_path(commit, path)
        except (ExportError, OSError, ValueError) as exc:
            # The reader's stream can no longer be trusted: the next read starts another one.
            _drop_reader(repo, shared.objects)
            raise IntegrityError(f"{path} at {commit[:12]} cannot be read: {exc}",
                                 "check the repository with `git fsck`") from exc
    found = active.kept[key]
    assert found is None or isinstance(found, bytes)
    return found


def _answer(out: IO[bytes], oid: str | None, line: bytes | None = None) -> tuple[str, bytes]:
    """One `--batch` answer, checked: it must be the object asked for (`oid`; any one for a path,
    whose `line` was read already), and its bytes must hash to its id."""
    header = (out.readline() if line is None else line).split()
    if len(header) != 3 or (oid is not None and header[0].decode(errors="replace") != oid):
        raise ExportError(f"object {(oid or b' '.join(header[:1]).decode(errors='replace'))[:12]} is missing from "
                          "the repository (signoff never fetches one on demand: in a partial clone, fetch the "
                          "revision's files first)")
    oid = header[0].decode(errors="replace")
    kind, size = header[1].decode(), int(header[2])
    body = out.read(size)
    if len(body) != size or out.read(1) != b"\n":
        raise ExportError(f"git cat-file stopped while reading {oid[:12]}")
    digest = (hashlib.sha1 if len(oid) == 40 else hashlib.sha256)(b"%s %d\0" % (kind.encode(), size) + body)
    if digest.hexdigest() != oid:
        # A replace ref, graft or edited object file would hand over other bytes under this id.
        raise ExportError(f"object {oid[:12]} does not hash to its id")
    return kind, body


def _mode(mode: bytes) -> str | None:
    if mode == b"40000":
        return _TREE
    if mode == b"160000":
        return _GITLINK
    if mode == b"120000":
        return _LINK
    if mode.startswith(b"100"):  # git's own rule: the owner's execute bit decides (old trees hold 100664)
        return _EXECUTABLE if int(mode, 8) & 0o100 else _FILE
    return None


def _walk(objects: _Objects, tree: str, prefix: bytes) -> Iterator[tuple[str, str, bytes]]:
    """(kind, object id, path) for every entry below `tree`, trees descended into."""
    kind, body = objects.read(tree)
    if kind != "tree":
        raise ExportError(f"object {tree[:12]} is a {kind}, its parent lists it as a tree")
    size = 20 if len(tree) == 40 else 32
    i = 0
    while i < len(body):
        space = body.index(b" ", i)
        nul = body.index(b"\0", space)
        mode, name, oid = _mode(body[i:space]), body[space + 1:nul], body[nul + 1:nul + 1 + size].hex()
        i = nul + 1 + size
        path = prefix + name
        if mode is None or not _checkout_safe(name):
            raise ExportError(f"committed path {path.decode(errors='replace')!r} is not one git would check out")
        if mode == _TREE:
            yield from _walk(objects, oid, path + b"/")
        else:
            yield mode, oid, path


def _checkout_safe(name: bytes) -> bool:
    return name not in (b"", b".", b"..") and b"/" not in name and name.lower() != b".git"


def _write(root: bytes, entries: list[tuple[str, str, bytes]], objects: _Objects, like: _Written) -> _Written:
    """Folders first, then each blob as it arrives (to every path that holds it), links last: no
    file is ever written through a link, and no link is kept that resolves outside the tree. A file
    `like` holds (same blob, same mode) is a hard link to it instead. What was written is returned."""
    taken = {path for _, _, path in entries}
    made: set[bytes] = set()
    holders: dict[str, list[tuple[str, bytes]]] = {}
    for kind, oid, path in entries:
        parent = path.rpartition(b"/")[0]
        if parent in taken or any(parent[:i] in taken for i in range(len(parent)) if parent[i:i + 1] == b"/"):
            raise ExportError(f"committed path {path.decode(errors='replace')!r} lies inside another committed file")
        _folders(root, parent, made)
        if kind == _GITLINK:
            os.mkdir(os.path.join(root, path), 0o755)
            os.chmod(os.path.join(root, path), 0o755)  # noqa: S103 (the sandbox's unprivileged uid reads the export)
        else:
            holders.setdefault(oid, []).append((kind, path))
    links: list[tuple[bytes, bytes]] = []
    written: _Written = {}
    for oid in list(holders):
        rest = []
        for kind, path in holders[oid]:
            if kind != _LINK and _link_to(like, kind, oid, root, path):
                written.setdefault((kind, oid), os.path.join(root, path))
            else:
                rest.append((kind, path))
        if rest:
            holders[oid] = rest
        else:
            del holders[oid]  # nothing of it to read from git
    oids = sorted(holders)
    try:
        for oid, content in zip(oids, objects.read_many(oids, "blob"), strict=True):
            for kind, path in holders[oid]:
                if kind == _LINK:
                    links.append((path, content))
                    continue
                fd = os.open(os.path.join(root, path), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(content)
                    os.fchmod(f.fileno(), 0o755 if kind == _EXECUTABLE else 0o644)
                written.setdefault((kind, oid), os.path.join(root, path))
    except ExportError as exc:
        # Name the file a person can look for (a large file a shallow or partial copy left out), not only its id.
        missing = next((o for o in oids if str(exc).startswith(f"object {o[:12]} is missing")), None)
        if missing is None:
            raise
        where = holders[missing][0][1].decode(errors="replace")
        raise ExportError(str(exc).replace(f"object {missing[:12]} ", f"object {missing[:12]} ({where}) ", 1)) from exc
    for path, pointed in links:
        if os.path.isabs(pointed) or not pointed:
            raise ExportError(f"committed link {path.decode(errors='replace')!r} points outside the tree")
        os.symlink(pointed, os.path.join(root, path))
    # Checked once every link exists: a link may lead through another one created after it.
    real_root = os.path.realpath(root)
    for path, _ in links:
        resolved = os.path.realpath(os.path.join(root, path))
        if os.path.commonpath([real_root, resolved]) != real_root:
            raise ExportError(f"committed link {path.decode(errors='replace')!r} points outside the tree")
    return written


def _link_to(like: _Written, kind: str, oid: str, root: bytes, path: bytes) -> bool:
    """Whether `path` became a hard link to the file `like` wrote with this blob and mode. Only a
    regular file with that mode is linked (never a symbolic link, never through one); anything else
    is written from git as usual."""
    source = like.get((kind, oid))
    if source is None:
        return False
    try:
        seen = os.lstat(source)
    except OSError:
        return False
    if not stat.S_ISREG(seen.st_mode) or stat.S_IMODE(seen.st_mode) != (0o755 if kind == _EXECUTABLE else 0o644):
        return False
    try:
        os.link(source, os.path.join(root, path), follow_symlinks=False)
    except OSError:  # a filesystem without hard links (or at its link limit): written from git instead
        return False
    return True


def _folders(root: bytes, parent: bytes, made: set[bytes]) -> None:
    if not parent or parent in made:
        return
    _folders(root, parent.rpartition(b"/")[0], made)
    target = os.path.join(root, parent)
    if not os.path.isdir(target) or os.path.islink(target):
        os.mkdir(target, 0o755)
    os.chmod(target, 0o755)  # noqa: S103 (the sandbox's unprivileged uid reads the export)
    made.add(parent)
