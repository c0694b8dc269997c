"""Files a conftest or test module names by a path relative to its own file (alembic's conftest exec()s
`../alembic/testing/plugin/bootstrap.py`): only literal paths, resolved from the module's folder."""

from __future__ import annotations

from signoff.repair.read_paths import paths_read

SOURCE = b'''
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
    found = paths_read("tests/conftest.py", SOURCE)
    assert found[:5] == ["alembic/testing/plugin/bootstrap.py", "tests/data/a.txt", "README.rst", "tests/files/b.sql",
                         "setup.cfg"]
    # Never a path that leaves the repository, one built from names, or the file itself taken as a folder.
    assert not [p for p in found if p.startswith("..") or p.endswith("/x") or p == "x"]


def test_a_module_that_does_not_parse_names_nothing() -> None:
    assert paths_read("tests/conftest.py", b"def (") == []
