"""Where a verification's workspace is made: the documented rule, its refusals and the fallback of a
full memory filesystem (repair/workspace.py; docs/repair.md, Speed)."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from signoff.git.export import ExportError
from signoff.kernel.errors import UsageError
from signoff.repair import workspace


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "temp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    folder = tmp_path / "shm"
    folder.mkdir()
    folder.chmod(0o1777)
    return folder


def test_a_roomy_memory_filesystem_comes_first_then_the_temporary_folder(temp: Path, memory: Path) -> None:
    assert workspace.places(None, env={}, memory=memory) == [memory, temp]


def test_a_chosen_temporary_folder_is_kept(temp: Path, memory: Path) -> None:
    assert workspace.places(None, env={"TMPDIR": str(temp)}, memory=memory) == [temp]


def test_the_memory_filesystem_is_left_when_missing_small_noexec_or_open_to_all(
        temp: Path, memory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert workspace.places(None, env={}, memory=memory / "absent") == [temp]
    memory.chmod(0o777)  # writable by everyone without the sticky bit
    assert workspace.places(None, env={}, memory=memory) == [temp]
    memory.chmod(0o1777)
    real = os.statvfs(memory)
    monkeypatch.setattr(workspace, "MIN_FREE", real.f_bavail * real.f_frsize + (1 << 40))
    assert workspace.places(None, env={}, memory=memory) == [temp]
    monkeypatch.undo()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    noexec = SimpleNamespace(f_flag=os.ST_NOEXEC, f_bavail=real.f_bavail, f_frsize=real.f_frsize)
    monkeypatch.setattr(workspace.os, "statvfs", lambda _p: noexec)
    assert workspace.places(None, env={}, memory=memory) == [temp]


def test_a_configured_folder_is_the_only_place_and_a_bad_one_is_refused(temp: Path, memory: Path,
                                                                         tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    assert workspace.places(None, env={"SIGNOFF_REPAIR_WORKSPACE": str(mine)}, memory=memory) == [mine]
    assert workspace.places(str(mine), env={"TMPDIR": str(temp)}, memory=memory) == [mine]
    with pytest.raises(UsageError) as missing:
        workspace.places(str(tmp_path / "nowhere"), env={}, memory=memory)
    assert "does not exist" in missing.value.message and "SIGNOFF_REPAIR_WORKSPACE" in (missing.value.fix or "")
    mine.chmod(0o777)
    with pytest.raises(UsageError, match="without the sticky bit"):
        workspace.places(None, env={"SIGNOFF_REPAIR_WORKSPACE": str(mine)}, memory=memory)
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="is not a folder"):
        workspace.places(str(tmp_path / "file"), env={}, memory=memory)


def test_the_workspace_is_private_then_opened_to_the_sandbox_and_skips_a_place_it_cannot_use(
        temp: Path, memory: Path, tmp_path: Path) -> None:
    made = workspace.Workspace([tmp_path / "absent", memory])
    assert made.path.parent == memory and made.path.name.startswith("signoff-verify-")
    assert made.path.stat().st_mode & 0o777 == 0o755
    staging = workspace.make_folder([memory], "signoff-harness-")
    assert staging.stat().st_mode & 0o777 == 0o700


def test_a_full_filesystem_moves_the_workspace_to_the_next_place(memory: Path, temp: Path) -> None:
    made = workspace.Workspace([memory, temp])
    first = made.path
    (first / "base").mkdir()
    try:
        raise OSError(errno.ENOSPC, "No space left on device")
    except OSError as cause:
        full = ExportError(f"revision abc cannot be exported: {cause}")
        full.__cause__ = cause
    assert made.move_on(ExportError("git cat-file failed while exporting")) is False  # not a full disk
    assert made.path == first
    assert made.move_on(full) is True
    assert not first.exists() and made.path.parent == temp and not any(made.path.iterdir())
    assert made.move_on(full) is False  # no place left: the export's error stands
