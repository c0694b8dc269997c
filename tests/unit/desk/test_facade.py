"""Faces reach the desk through its facade only: `signoff.desk` or `signoff.desk.service`, never an
inner module, so the rules stay in the workflow and a face cannot route around them."""

from __future__ import annotations

import ast
from pathlib import Path

import signoff

FACES = ("cli", "web", "mcp", "bridges")
FACADE = frozenset({"signoff.desk", "signoff.desk.service"})
# Face modules that may still import an inner desk module, and why (keep this short).
ALLOWED: dict[str, str] = {}


def _inner_desk_modules(path: Path) -> list[str]:
    """Every inner desk module `path` imports, or names as a module to import (a string)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names
                                     if node.module == "signoff.desk" and _is_module(a.name)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value] if node.value.startswith("signoff.desk.") else []
        found += [f"{path.name}: {n}" for n in names
                  if (n == "signoff.desk" or n.startswith("signoff.desk.")) and n not in FACADE]
    return found


def _is_module(name: str) -> bool:
    """`from signoff.desk import X` imports an inner module when X is one (not a name the facade exports)."""
    desk = Path(signoff.__file__).parent / "desk"
    return (desk / f"{name}.py").is_file() or (desk / name / "__init__.py").is_file()


def test_no_face_imports_an_inner_desk_module() -> None:
    root = Path(signoff.__file__).parent
    files = [p for face in FACES for p in sorted((root / face).rglob("*.py"))]
    assert len(files) > 20  # the faces are there to check
    assert [hit for p in files if str(p.relative_to(root)) not in ALLOWED for hit in _inner_desk_modules(p)] == []


def test_every_allowed_exception_is_still_needed() -> None:
    root = Path(signoff.__file__).parent
    assert [name for name in ALLOWED if not _inner_desk_modules(root / name)] == []


def test_the_check_sees_imports_from_and_module_names(tmp_path: Path) -> None:
    face = tmp_path / "face.py"
    face.write_text("import signoff.desk.crew\nfrom signoff.desk.workflow import open_desk\n"
                    "from signoff.desk import crew, service, Desk\nMODULES = ('signoff.desk.doctor',)\n"
                    "from signoff.desk.service import Desk as D\nimport signoff.desk\n"
                    "def later() -> None:\n    from signoff.desk.crew.status import crew_view\n")
    assert sorted(_inner_desk_modules(face)) == [
        "face.py: signoff.desk.crew", "face.py: signoff.desk.crew", "face.py: signoff.desk.crew.status",
        "face.py: signoff.desk.doctor", "face.py: signoff.desk.workflow"]
