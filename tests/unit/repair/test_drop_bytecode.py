"""Committed bytecode is taken out of an export before any run (verifier._drop_bytecode): every .pyc
and .pyo file or link, at any depth; sources and folders stay."""

from __future__ import annotations

import os
from pathlib import Path

from signoff.repair.verifier import _drop_bytecode


def test_every_committed_bytecode_file_goes_and_nothing_else(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "pkg" / "__pycache__").mkdir(parents=True)
    (tree / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    (tree / "old.pyo").write_bytes(b"\0")
    (tree / "pkg" / "mod.py").write_text("x = 1\n")
    (tree / "data.pyc.txt").write_text("not bytecode\n")
    (tree / "folder.pyc").mkdir()  # a folder by that name is no bytecode Python loads
    (tree / "folder.pyc" / "inside.py").write_text("")
    os.symlink("pkg", tree / "linked.pyc")  # a link by that name goes, its target stays
    _drop_bytecode(tree)
    left = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*"))
    assert left == ["data.pyc.txt", "folder.pyc", "folder.pyc/inside.py", "pkg", "pkg/__pycache__", "pkg/mod.py"]
