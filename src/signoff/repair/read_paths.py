"""Files a conftest or test module reads by a path written relative to its own file, outside its test folder.

alembic's `tests/conftest.py` reads `os.path.join(os.path.dirname(__file__), "..", "alembic", "testing",
"plugin", "bootstrap.py")` and exec()s it: from the frozen harness at `/harness/tests/`, that path names
`/harness/alembic/...`, which held nothing, and pytest could not start. Such a file is the harness's own
input, read as data, so it is frozen with the harness from the base revision at its place (never with the
`__init__.py` files above it: the folder stays no package and never shadows the checkout's).

Only literal paths are followed: `os.path.join(<dirname(__file__)...>, "a", "b")` and
`Path(__file__).parent / "a" / "b"` (each `dirname`/`.parent` beyond the first goes one folder up)."""

from __future__ import annotations

import ast
import posixpath
from pathlib import PurePosixPath


def _name(func: ast.expr) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _place(node: ast.AST) -> int | None:
    """Where `node` points relative to the module's own file: -1 for the file itself (`__file__`,
    `Path(__file__)`), 0 for its folder (`dirname(__file__)`, `Path(__file__).parent`), one more per folder
    above; None when it is no such expression. `abspath`, `realpath`, `.resolve()` and `.absolute()` keep it."""
    if isinstance(node, ast.Name) and node.id == "__file__":
        return -1
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _place(node.value)
        return None if inner is None else inner + 1
    if not isinstance(node, ast.Call):
        return None
    name = _name(node.func)
    if name in ("resolve", "absolute") and isinstance(node.func, ast.Attribute) and not node.args:
        return _place(node.func.value)
    if name in ("Path", "PurePath", "abspath", "realpath") and len(node.args) == 1:
        return _place(node.args[0])
    if name == "dirname" and len(node.args) == 1:
        inner = _place(node.args[0])
        return None if inner is None else inner + 1
    return None


def _literal_parts(nodes: list[ast.expr]) -> list[str] | None:
    parts = []
    for n in nodes:
        if not (isinstance(n, ast.Constant) and isinstance(n.value, str)):
            return None
        parts.append(n.value)
    return parts


def paths_read(rel: str, source: bytes) -> list[str]:
    """The repository paths (relative to its root, normalised) the module at `rel` names relative to itself."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    folder = PurePosixPath(rel).parent
    found: list[str] = []
    for node in ast.walk(tree):
        start: ast.AST | None = None
        tail: list[ast.expr] = []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join" \
                and len(node.args) > 1:
            start, tail = node.args[0], list(node.args[1:])
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            chain: list[ast.expr] = []
            left: ast.expr = node
            while isinstance(left, ast.BinOp) and isinstance(left.op, ast.Div):
                chain.insert(0, left.right)
                left = left.left
            start, tail = left, chain
        up = _place(start) if start is not None else None
        parts = _literal_parts(tail) if up is not None and up >= 0 else None
        if up is None or not parts:
            continue
        base = folder
        for _ in range(up):
            base = base.parent
        path = posixpath.normpath(posixpath.join(str(base), *parts))
        if not path.startswith("../") and path not in (".", "..") and path not in found:
            found.append(path)
    return found
