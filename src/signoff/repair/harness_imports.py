"""What a run of the harness imports from outside it: the top-level modules reached from the test files
the run selects, their conftest.py files and the harness's own modules those import in turn.

A folder harness holds a whole test suite (gunicorn's tests/: 80 files, some importing its optional C
parser `gunicorn_h1c`, published as source only); what matters for a run is what the selected tests reach,
not every file beside them."""

from __future__ import annotations

import ast
from pathlib import Path, PurePosixPath


def _parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_bytes())
    except (SyntaxError, ValueError, OSError):
        return None


def _own_module(harness: Path, importer: Path, dotted: str, level: int) -> Path | None:
    """The harness file (or folder) a module name reaches from `importer`: relative to the importer's package for a
    relative import, else by the name or any tail of it (`tests.fixtures.x` when the harness is tests/)
    under the harness or beside the importer."""
    parts = [p for p in dotted.split(".") if p]
    if level:
        folder = importer.parent
        for _ in range(level - 1):
            folder = folder.parent
        roots, tails = [folder], [parts]
    else:
        roots, tails = [importer.parent, harness], [parts[k:] for k in range(len(parts))]
    for root in roots:
        for tail in tails:
            stem = root.joinpath(*tail) if tail else root
            for candidate in (stem.with_suffix(".py") if tail else None, stem / "__init__.py"):
                if candidate is not None and candidate.is_file() and harness in candidate.parents:
                    return candidate
            if tail and stem.is_dir() and harness in stem.parents:
                return stem  # a folder without __init__.py (a namespace package): the harness's own
    return None


def _conftests(harness: Path, test: Path) -> list[Path]:
    folders = [test.parent, *[p for p in test.parent.parents if harness in p.parents or p == harness]]
    return [f / "conftest.py" for f in folders if (f / "conftest.py").is_file()]


def imported_by(harness: Path, tests: list[str]) -> set[str]:
    """The top-level names of the modules outside the harness that the run of `tests` (ids inside the
    harness, `file.py::name`) imports, as written (not normalised). Every file of the harness counts
    when no id names one of its files."""
    files = [harness / PurePosixPath(t.split("::", 1)[0]) for t in tests]
    start = [f for f in dict.fromkeys(files) if f.suffix == ".py" and f.is_file()]
    if not start:
        start = sorted(harness.rglob("*.py"))
    pending = [*start, *[c for f in start for c in _conftests(harness, f)]]
    seen: set[Path] = set()
    out: set[str] = set()
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        tree = _parse(path)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Import):
                names = [(a.name, 0) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                names = [(module, node.level), *((f"{module}.{a.name}", node.level) for a in node.names)]
            else:
                continue
            for dotted, level in names:
                own = _own_module(harness, path, dotted, level)
                if own is not None:
                    pending.append(own)
                elif not level and dotted and (isinstance(node, ast.Import) or dotted == node.module):
                    out.add(dotted.split(".", 1)[0])
    return out
