"""Files a harness file names through its own location go with the harness (alembic's conftest, blind12)."""

import pytest

from signoff.repair.harness_paths import named_beside

CONFTEST = b'''
import os
from pathlib import Path
TEST_DIR = os.path.dirname(os.path.abspath(__file__))
SRC_DIR = os.path.abspath(os.path.join(TEST_DIR, "../pkg/"))
bootstrap_file = os.path.join(os.path.dirname(__file__), "..", "pkg", "testing", "bootstrap.py")
README = Path(__file__).resolve().parent.parent / "README.rst"
CFG = Path(__file__).parents[1].joinpath("setup.cfg")
away = os.path.join(os.path.dirname(__file__), "..", "..", "..", "etc", "passwd")
rooted = os.path.join(os.path.dirname(__file__), "/etc/passwd")
text = ",".join(["a", "b"])
'''


def test_literal_paths_from_the_files_own_place_are_read_relative_to_the_repository() -> None:
    named = named_beside("tests/conftest.py", CONFTEST)
    assert "pkg/testing/bootstrap.py" in named  # alembic's: tests/../pkg/testing/bootstrap.py
    assert {"README.rst", "setup.cfg", "pkg"} <= set(named)
    # Never outside the repository, never an absolute path, nothing but paths from __file__.
    assert not [n for n in named if "passwd" in n or n.startswith(("/", "..")) or "," in n]


def test_nothing_is_named_by_code_that_is_not_python() -> None:
    assert named_beside("tests/conftest.py", b"def (:") == []
    assert named_beside("tests/conftest.py", None) == []


# blind13's alembic, the same case: files a conftest or test module names by a path relative to its own file,
# only literal paths, resolved from the module's folder.
READ_SOURCE = b'''
import os
from pathlib import Path

bootstrap_file = os.path.join(os.path.dirname(__file__), "..", "alembic", "testing", "plugin", "bootstrap.py")
data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "a.txt")
readme = Path(__file__).parent.parent / "README.rst"
sql = Path(__file__).resolve().parent / "files" / "b.sql"
cfg = os.path.join(os.path.dirname(os.path.dirname(__file__)), "setup.cfg")
elsewhere = os.path.join(somewhere, "x")
itself = os.path.join(__file__, "x")
named = os.path.join(os.path.dirname(__file__), name)
outside = os.path.join(os.path.dirname(__file__), "..", "..", "x")
'''


def test_literal_paths_relative_to_the_modules_own_file() -> None:
    found = named_beside("tests/conftest.py", READ_SOURCE)
    assert found[:5] == ["alembic/testing/plugin/bootstrap.py", "tests/data/a.txt", "README.rst", "tests/files/b.sql",
                         "setup.cfg"]
    # Never a path that leaves the repository, one built from names, or the file itself taken as a folder.
    assert not [p for p in found if p.startswith("..") or p.endswith("/x") or p == "x"]


def test_a_module_that_does_not_parse_names_nothing_either() -> None:
    assert named_beside("tests/conftest.py", b"def (") == []


def test_a_file_that_never_says_file_is_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    """xarray (blind15b): most of the 75 files its harness stages never name `__file__`; walking their syntax trees
    took half of the staging. Such a file names no path beside itself and is not parsed."""
    import ast

    def refuse(*_a: object, **_k: object) -> ast.Module:
        raise AssertionError("parsed")

    monkeypatch.setattr(ast, "parse", refuse)
    assert named_beside("xarray/tests/test_x.py", b"import os\nDATA = os.path.join('a', 'b')\n") == []
