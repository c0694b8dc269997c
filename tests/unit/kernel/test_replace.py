"""Files replaced whole: concurrent writers of one file, a block that fails, private files."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

import pytest

from signoff.kernel.replace import replace_text, staged


def test_writers_of_one_file_at_once_never_rename_each_others_staged_file(tmp_path: Path) -> None:
    # The class of CI's failure: two notifiers of one home both staged `notified.tmp`, and the
    # second rename found it gone. Every writer here finishes and the file holds one whole write.
    target = tmp_path / "state" / "seen.json"
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def write(n: int) -> None:
        start.wait()
        try:
            for i in range(50):
                replace_text(target, f"writer {n} write {i}\n" * 100)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    lines = set(target.read_text(encoding="utf-8").splitlines())
    assert len(lines) == 1 and next(iter(lines)).startswith("writer ")
    assert sorted(p.name for p in target.parent.iterdir()) == ["seen.json"]


def test_a_block_that_raises_leaves_the_old_file_and_no_staged_file(tmp_path: Path) -> None:
    target = tmp_path / "doc.json"
    replace_text(target, "old\n")
    with pytest.raises(RuntimeError), staged(target) as fh:
        fh.write(b"half of the n")
        raise RuntimeError("cut")
    assert target.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["doc.json"]


def test_private_files_are_owner_only_and_others_are_readable(tmp_path: Path) -> None:
    replace_text(tmp_path / "secret.json", "{}", private=True)
    replace_text(tmp_path / "plain.json", "{}")
    assert stat.S_IMODE((tmp_path / "secret.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "plain.json").stat().st_mode) == 0o644


def test_a_link_at_the_target_is_replaced_not_written_through(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("untouched", encoding="utf-8")
    (tmp_path / "target.txt").symlink_to(elsewhere)
    replace_text(tmp_path / "target.txt", "new")
    assert elsewhere.read_text(encoding="utf-8") == "untouched"
    assert not (tmp_path / "target.txt").is_symlink()
    assert (tmp_path / "target.txt").read_text(encoding="utf-8") == "new"
