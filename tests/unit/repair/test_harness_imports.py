"""What a run of a harness imports from outside it (harness_imports)."""

from __future__ import annotations

from pathlib import Path

from signoff.repair.harness_imports import imported_by


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_only_what_the_selected_tests_reach_counts(tmp_path: Path) -> None:
    """gunicorn's tests/ as a folder harness: the corpus tests import the helper treq (which imports gunicorn);
    other files import the optional C parser gunicorn_h1c, which no selected test reaches."""
    harness = _tree(tmp_path / "h", {
        "conftest.py": "import pytest\n",
        "treq.py": "import gunicorn.http\nfrom support import x\n",
        "support.py": "import os.path\n",
        "test_invalid_requests.py": "import treq\nfrom gunicorn.http.errors import E\n",
        "test_valid_requests.py": "from . import treq\n",
        "treq_asgi.py": "import gunicorn_h1c\n",
        "test_asgi.py": "import treq_asgi\n",
        "fixtures/__init__.py": "",
        "fixtures/exceptions/nested.py": "import rich\n",
        "ui/test_trace.py": "from tests.fixtures.exceptions import nested\nfrom ..fixtures import exceptions\n"})
    tests = ["test_invalid_requests.py::test_http_parser", "test_valid_requests.py::test_http_parser"]
    assert imported_by(harness, tests) == {"pytest", "gunicorn", "os"}
    assert imported_by(harness, ["ui/test_trace.py::test_x"]) == {"pytest", "rich"}
    # No id names a file of the harness: every file counts.
    assert "gunicorn_h1c" in imported_by(harness, ["test_gone.py::test_x"])
