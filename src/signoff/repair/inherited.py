"""Tests whose code the revision itself defines: a harness class that inherits its test methods from the
project's package (webargs' `TestBottleParser(CommonTestCase)`, whose `test_invalid_json` lives in
`src/webargs/testing.py`). The frozen harness holds only the subclass, so the test's body is the
candidate's code; the verdict may rest on it only where the candidate leaves it as the base has it.

The guard records where such a test's function is defined (`defined`: `path::qualname`, relative to the
revision's root); the bodies are compared here from git, as syntax trees (formatting never counts)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from signoff import git


def defined_in_revision(runs: list[Any]) -> set[str]:
    """`path::qualname` of every test the runs' guard saw defined by the revision's code."""
    out: set[str] = set()
    for run in runs:
        for seen in ((run.guard or {}).get("observed") or {}).values():
            if isinstance(seen, dict) and isinstance(seen.get("defined"), str) and "::" in seen["defined"]:
                out.add(seen["defined"])
    return out


def function_tree(source: bytes | None, qualname: str) -> str | None:
    """The syntax tree of the function `qualname` (`Class.method`) in `source`, as text without positions;
    None when the module or the function is not there (a `<locals>` name is never found)."""
    if source is None:
        return None
    try:
        scope: list[ast.stmt] = ast.parse(source).body
    except (SyntaxError, ValueError):
        return None
    node: ast.stmt | None = None
    for part in qualname.split("."):
        node = next((n for n in scope if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                     and n.name == part), None)
        if node is None:
            return None
        scope = node.body
    return ast.dump(node) if node is not None else None


def changed_by_candidate(repo: Path, base: str, cand: str, defined: set[str]) -> list[str]:
    """The tests among `defined` whose function the candidate removes or changes (as `path::qualname`)."""
    out = []
    for entry in sorted(defined):
        path, qualname = entry.split("::", 1)
        before = function_tree(git.read_file_at(repo, base, path), qualname)
        after = function_tree(git.read_file_at(repo, cand, path), qualname)
        if before != after:
            out.append(f"{entry}{' (removed)' if after is None else ''}")
    return out
