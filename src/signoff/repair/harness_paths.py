"""Files of the repository a harness file names through its own location.

A conftest.py or test file that reads a file of the project by a path built from `__file__`
(alembic's conftest execs `os.path.join(os.path.dirname(__file__), "..", "alembic", "testing",
"plugin", "bootstrap.py")`; others read `../README.rst` or `Path(__file__).parent.parent / "setup.cfg"`)
finds nothing in the sandbox, where the harness sits apart from the checkout. Such files go with the
harness, from the base revision, as its helpers do. Only literal paths are read, from the syntax tree:
nothing is run.
"""

from __future__ import annotations

import ast
import posixpath
from pathlib import PurePosixPath

_FILE = "<__file__>"
_SAME = {"abspath", "realpath", "normpath", "resolve", "absolute", "Path", "PurePath", "PosixPath"}


def named_beside(rel: str, source: bytes | None) -> list[str]:
    """Repository paths (relative to its root) of the files `source`, the file at `rel`, names by a
    literal path built from its own location; never one outside the repository."""
    if b"__file__" not in (source or b""):
        # Every such path starts at `__file__`: a file that never says it names none, and is not parsed (xarray's
        # harness stages 75 files, most never name it; walking them all took half of its staging).
        return []
    try:
        tree = ast.parse(source or b"")
    except (SyntaxError, ValueError):
        return []
    names: dict[str, str] = {}
    for stmt in tree.body:  # module-level names bound to a place: TEST_DIR = os.path.dirname(__file__)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            place = _place(stmt.value, names)
            if place is not None:
                names[stmt.targets[0].id] = place
    folder = PurePosixPath(rel).parent
    out: list[str] = []
    for node in ast.walk(tree):
        place = _joined(node, names)
        if place is None:
            continue
        path = posixpath.normpath(str(folder / place))
        if path not in out and path != "." and not path.startswith(("../", "/")) and path != "..":
            out.append(path)
    return out


def _place(node: ast.AST, names: dict[str, str]) -> str | None:
    """Where `node` points relative to the file's folder ("." the folder, _FILE the file itself)."""
    if isinstance(node, ast.Name):
        return _FILE if node.id == "__file__" else names.get(node.id)
    joined = _joined(node, names)
    if joined is not None:
        return joined
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        return _up(_place(node.value, names), 1)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
        index = node.slice
        if isinstance(index, ast.Constant) and isinstance(index.value, int) and index.value >= 0:
            return _up(_place(node.value.value, names), index.value + 1)
        return None
    if isinstance(node, ast.Call):
        name = _called(node.func)
        if name == "dirname" and len(node.args) == 1:
            return _up(_place(node.args[0], names), 1)
        if name in _SAME:
            inner = node.args[0] if node.args else (node.func.value if isinstance(node.func, ast.Attribute) else None)
            if name in ("resolve", "absolute") and isinstance(node.func, ast.Attribute):
                inner = node.func.value
            return _place(inner, names) if inner is not None else None
    return None


def _joined(node: ast.AST, names: dict[str, str]) -> str | None:
    """A place joined with literal parts: os.path.join(P, "a", "b"), P / "a", P.joinpath("a")."""
    parts: list[ast.expr]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        start, parts = node.left, [node.right]
    elif isinstance(node, ast.Call) and _called(node.func) == "join" and node.args:
        start, parts = node.args[0], node.args[1:]
    elif isinstance(node, ast.Call) and _called(node.func) == "joinpath" and isinstance(node.func, ast.Attribute):
        start, parts = node.func.value, list(node.args)
    else:
        return None
    if not parts or not all(isinstance(p, ast.Constant) and isinstance(p.value, str) and p.value for p in parts):
        return None
    literals = [str(p.value) for p in parts if isinstance(p, ast.Constant)]
    if any(lit.startswith("/") for lit in literals):
        return None
    place = _place(start, names)
    if place is None or place == _FILE:
        return None
    return posixpath.join(place, *literals)


def _up(place: str | None, levels: int) -> str | None:
    if place is None:
        return None
    if place == _FILE:
        return posixpath.join(".", *[".."] * (levels - 1)) if levels > 1 else "."
    return posixpath.join(place, *[".."] * levels)


def _called(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None
