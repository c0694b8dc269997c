"""A copied interpreter (pyenv's under /root, which the sandbox's uid cannot read) gets its C headers beside the copy,
so that extension modules built in the sandbox find `Python.h` (markupsafe under --python 3.12, repairenv)."""

from __future__ import annotations

import stat
from pathlib import Path

from signoff.sandbox import pyenv


def test_the_headers_join_a_copy_once_and_readable_by_all(tmp_path: Path) -> None:
    headers = tmp_path / "pyenv" / "include" / "python3.12"
    (headers / "cpython").mkdir(parents=True)
    (headers / "Python.h").write_text("#include <cpython/x.h>\n")
    (headers / "cpython" / "x.h").write_text("")
    (headers / "Python.h").chmod(0o600)
    dest = tmp_path / "cache" / "python-0123"
    dest.mkdir(parents=True)
    pyenv._copy_headers(tmp_path / "cache", dest, headers)
    copied = dest / "include" / "python3.12" / "Python.h"
    assert copied.read_text() == "#include <cpython/x.h>\n" and (dest / "include" / "python3.12" / "cpython" / "x.h")
    assert copied.stat().st_mode & stat.S_IROTH
    copied.write_text("kept")
    pyenv._copy_headers(tmp_path / "cache", dest, headers)  # a copy that has them keeps them as they are
    assert copied.read_text() == "kept"
    pyenv._copy_headers(tmp_path / "cache", tmp_path / "cache" / "python-none", tmp_path / "nothing")  # no headers
    assert not (tmp_path / "cache" / "python-none").exists()
