"""Faces reach the incident through its facade only: `signoff.incident` or `signoff.incident.service`."""

from __future__ import annotations

import ast
from pathlib import Path

import signoff

FACES = ("cli", "web", "mcp", "bridges")
FACADE = frozenset({"signoff.incident", "signoff.incident.service"})


def _inner_incident_modules(path: Path) -> list[str]:
    """Every inner incident module `path` imports, or names as a module to import (a string)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names if node.module == "signoff.incident"]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value] if node.value.startswith("signoff.incident.") else []
        found += [f"{path.name}: {n}" for n in names
                  if (n == "signoff.incident" or n.startswith("signoff.incident.")) and n not in FACADE]
    return found


def test_no_face_imports_an_inner_incident_module() -> None:
    root = Path(signoff.__file__).parent
    files = [p for face in FACES for p in sorted((root / face).rglob("*.py"))]
    assert len(files) > 20  # the faces are there to check
    assert [hit for p in files for hit in _inner_incident_modules(p)] == []


def test_the_check_sees_imports_from_and_module_names(tmp_path: Path) -> None:
    face = tmp_path / "face.py"
    face.write_text("import signoff.incident.guard\nfrom signoff.incident.workspace import Workspace\n"
                    "from signoff.incident import console, service\nMODULES = ('signoff.incident.doctor',)\n"
                    "from signoff.incident.service import Workspace as W\nimport signoff.incident\n")
    assert _inner_incident_modules(face) == [
        "face.py: signoff.incident.guard", "face.py: signoff.incident.workspace",
        "face.py: signoff.incident.console", "face.py: signoff.incident.doctor"]
