"""Freeze a harness folder into a content-addressed store.

The harness is what defines "fixed". It is digested and copied before anything runs; every execution
then mounts the frozen copy read-only, so neither the candidate nor a later edit of the original
folder can change what is judged. The store is keyed by the tree digest, and a stored copy is
re-digested before use: a store that was altered on disk is refused, not trusted.

`shown_files` is the harness as a person reviews it before approving its digest (the case page,
`signoff repair harness`, the contract document): every file's bytes, read from the frozen copy
and checked against the approved digest, so what is shown is exactly what will run.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from signoff.kernel.canonical import canonical_bytes
from signoff.kernel.digests import tree_digest, tree_manifest
from signoff.kernel.errors import IntegrityError, NotFoundError, SignoffError, UsageError

# Caches that tools write next to tests; they are neither digested nor copied.
EXCLUDE = ("__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache", ".DS_Store")
MAX_FILES = 2000
MAX_BYTES = 32 * 1024 * 1024
SHOWN_TEXT = 256 * 1024  # a file up to this size, in UTF-8, is shown whole; others by digest and size


@dataclass(frozen=True)
class FrozenHarness:
    digest: str
    path: Path  # the read-only copy in the store
    files: tuple[str, ...]


def harness_digest(folder: Path) -> str:
    """The digest a harness folder would be frozen under (the same rules as `freeze`)."""
    _check_folder(folder)
    return tree_digest(folder, exclude=EXCLUDE)


def digest_now(folder: Path) -> str:
    """The harness folder's digest as it is now, or "unreadable" (which matches no approved digest)
    when it cannot be digested: what an approval is checked against at the moment it is made."""
    try:
        return harness_digest(folder)
    except SignoffError:
        return "unreadable"


def _check_folder(folder: Path) -> list[dict[str, object]]:
    if not folder.is_dir():
        raise NotFoundError(f"harness folder not found: {folder}", "pass --harness a folder holding the tests")
    manifest = tree_manifest(folder, exclude=EXCLUDE)
    if not manifest:
        raise UsageError(f"harness folder is empty: {folder}", "put the approved test files in it")
    links = [str(e["path"]) for e in manifest if e["type"] == "symlink"]
    if links:
        raise UsageError(f"harness contains symbolic links: {', '.join(links[:5])}",
                         "replace links with the files themselves; a link could point outside the harness")
    if len(manifest) > MAX_FILES:
        raise UsageError(f"harness has {len(manifest)} files (limit {MAX_FILES})", "freeze only the tests")
    size = sum((folder / str(e["path"])).stat().st_size for e in manifest)
    if size > MAX_BYTES:
        raise UsageError(f"harness is {size} bytes (limit {MAX_BYTES})", "freeze only the tests")
    return manifest


def freeze(folder: Path, store: Path) -> FrozenHarness:
    """Digest `folder`, copy it into `store/<digest>` read-only, and return the frozen copy."""
    manifest = _check_folder(folder)
    want = tree_digest(folder, exclude=EXCLUDE)
    target = store / want
    if target.is_dir():
        if tree_digest(target, exclude=EXCLUDE) == want:
            return FrozenHarness(want, target, tuple(str(e["path"]) for e in manifest))
        # A stored copy that no longer matches its name was altered: replace it from the source.
        _remove(target)
    store.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".freeze-", dir=store))
    try:
        for entry in manifest:
            rel = str(entry["path"])
            dst = tmp / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / rel, dst)
            dst.chmod(0o555 if entry.get("mode") == "755" else 0o444)
        got = tree_digest(tmp, exclude=EXCLUDE)
        if got != want:
            raise IntegrityError("the harness changed while it was being frozen",
                                 "stop editing the harness folder and freeze again")
        _seal(tmp)
        try:
            os.replace(tmp, target)
        except OSError:
            # Another process froze the same content first; theirs is identical by construction.
            if not (target.is_dir() and tree_digest(target, exclude=EXCLUDE) == want):
                raise
            _remove(tmp)
    except BaseException:
        _remove(tmp)
        raise
    return FrozenHarness(want, target, tuple(str(e["path"]) for e in manifest))


def load(store: Path, digest: str) -> FrozenHarness:
    """A frozen harness by digest, re-digested so an altered store is caught."""
    target = store / digest
    if not target.is_dir():
        raise NotFoundError(f"no frozen harness {digest[:12]} in {store}", "freeze the harness first")
    got = tree_digest(target, exclude=EXCLUDE)
    if got != digest:
        raise IntegrityError(f"frozen harness {digest[:12]} was altered on disk (now {got[:12]})",
                             "freeze the approved harness again and re-approve it")
    files = tuple(str(e["path"]) for e in tree_manifest(target, exclude=EXCLUDE))
    return FrozenHarness(digest, target, files)


@dataclass(frozen=True)
class HarnessFile:
    """One file of a frozen harness as a face shows it."""

    path: str
    sha256: str
    size: int
    executable: bool
    text: str | None  # None: not UTF-8 text, or longer than SHOWN_TEXT (shown by digest and size only)


def shown_files(store: Path, digest: str) -> list[HarnessFile]:
    """The files of the frozen harness `digest`, each read once and checked: the manifest they were
    read under digests to `digest`, and each file's bytes to its manifest entry (IntegrityError
    otherwise, NotFoundError when this home has no frozen copy)."""
    target = store / digest
    if not target.is_dir():
        raise NotFoundError(f"no frozen harness {digest[:12]} in this home", "freeze the harness with "
                            "`signoff repair freeze`, or view the case where it was frozen")
    manifest = tree_manifest(target, exclude=EXCLUDE)
    if hashlib.sha256(canonical_bytes(manifest)).hexdigest() != digest:
        raise IntegrityError(f"frozen harness {digest[:12]} was altered on disk",
                             "freeze the approved harness again and re-approve it")
    out = []
    for entry in manifest:
        data = (target / str(entry["path"])).read_bytes() if entry["type"] == "file" else b""
        if entry["type"] != "file" or hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise IntegrityError(f"frozen harness {digest[:12]}: {entry['path']} changed while it was read",
                                 "freeze the approved harness again and re-approve it")
        try:
            text: str | None = data.decode("utf-8") if len(data) <= SHOWN_TEXT else None
        except UnicodeDecodeError:
            text = None
        out.append(HarnessFile(str(entry["path"]), str(entry["sha256"]), len(data), entry.get("mode") == "755", text))
    return out


def _seal(root: Path) -> None:
    # Folders readable and enterable by the sandbox's unprivileged uid, but not writable.
    for dirpath, _dirs, _files in os.walk(root):
        Path(dirpath).chmod(0o555)


def _remove(path: Path) -> None:
    if not path.exists():
        return
    for dirpath, _dirs, _files in os.walk(path):
        Path(dirpath).chmod(0o755)
    shutil.rmtree(path, ignore_errors=True)
