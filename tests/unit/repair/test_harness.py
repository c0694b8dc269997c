"""Harness freezing: content-addressed, read-only, and an altered store is caught."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from signoff.kernel.errors import IntegrityError, NotFoundError, UsageError
from signoff.repair.harness import freeze, harness_digest, load


def _harness(tmp_path: Path) -> Path:
    # The files' contents are data to freeze and digest; these tests never run them.
    h = tmp_path / "h"
    (h / "sub").mkdir(parents=True)
    (h / "test_a.py").write_text("def test_a(): assert True\n")
    (h / "sub" / "test_b.py").write_text("def test_b(): assert True\n")
    (h / "__pycache__").mkdir()
    (h / "__pycache__" / "junk.pyc").write_bytes(b"\0")
    return h


def test_freeze_copies_by_digest_read_only(tmp_path: Path) -> None:
    src = _harness(tmp_path)
    store = tmp_path / "store"
    frozen = freeze(src, store)
    assert frozen.path == store / frozen.digest
    assert frozen.files == ("sub/test_b.py", "test_a.py")
    assert not (frozen.path / "__pycache__").exists()
    assert harness_digest(src) == frozen.digest == harness_digest(frozen.path)
    assert oct((frozen.path / "test_a.py").stat().st_mode & 0o777) == "0o444"
    # Freezing the same content again is a no-op returning the same copy.
    assert freeze(src, store).path == frozen.path
    # Editing the source afterwards does not change the frozen copy; it freezes under a new digest.
    (src / "test_a.py").write_text("def test_a(): assert False\n")
    again = freeze(src, store)
    assert again.digest != frozen.digest
    assert load(store, frozen.digest).digest == frozen.digest


def test_altered_store_is_refused_and_repaired(tmp_path: Path) -> None:
    src = _harness(tmp_path)
    store = tmp_path / "store"
    frozen = freeze(src, store)
    target = frozen.path / "test_a.py"
    os.chmod(frozen.path, 0o755)
    target.chmod(0o644)
    target.write_text("def test_a(): pass  # weakened\n")
    with pytest.raises(IntegrityError, match="altered"):
        load(store, frozen.digest)
    # Freezing from the approved source replaces the altered copy.
    assert load(store, freeze(src, store).digest).digest == frozen.digest


def test_bad_harness_folders(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        freeze(tmp_path / "absent", tmp_path / "store")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UsageError, match="empty"):
        freeze(empty, tmp_path / "store")
    linked = _harness(tmp_path)
    (linked / "escape.py").symlink_to("/etc/passwd")
    with pytest.raises(UsageError, match="symbolic links"):
        freeze(linked, tmp_path / "store")
    with pytest.raises(NotFoundError):
        load(tmp_path / "store", "0" * 64)
