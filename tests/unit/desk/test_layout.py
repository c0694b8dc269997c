"""The desk's house rules: modules of one responsibility, and no private name used across modules
(a helper another module needs is public API)."""

from __future__ import annotations

import ast
from pathlib import Path

import signoff.desk
from tests.support import paths

DESK = Path(signoff.desk.__file__).parent
SRC = DESK.parent
MAX_LINES = 500


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _desk_users() -> list[Path]:
    # the desk's tests, in every tier
    return [*DESK.glob("*.py"), *SRC.glob("cli/*desk*.py"), *paths.TESTS.glob("*/desk/*.py")]


def test_no_desk_module_is_over_the_limit() -> None:
    long = {p.name: n for p in DESK.glob("*.py") if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"desk modules over {MAX_LINES} lines: {long}"


def test_no_private_name_is_imported_from_another_desk_module() -> None:
    found = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("signoff.desk"):
                found += [f"{path.relative_to(SRC)}:{node.lineno} {a.name}" for a in node.names if _private(a.name)]
    assert not found, f"private desk names imported: {found}"


def test_no_private_member_of_a_desk_object_is_used_from_outside() -> None:
    # `self._x` inside a class is its own business; `desk._x`, `w.desk._x` or `self.desk._x` is not.
    found = []
    for path in _desk_users():
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Attribute) and _private(node.attr)):
                continue
            owner = node.value
            name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
            if name in ("desk", "concierge", "engineering", "forge"):
                found.append(f"{path.name}:{node.lineno} {name}.{node.attr}")
    assert not found, f"private members used across modules: {found}"
