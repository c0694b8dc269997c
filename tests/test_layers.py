"""The dependency rule of DESIGN.md, enforced: imports point down the layers only."""

from __future__ import annotations

import ast
from pathlib import Path

import signoff

LAYERS = {
    "kernel": 0,
    "ledger": 1,
    "trust": 1,
    "rooms": 2,
    "git": 2,
    "sandbox": 2,
    "agents": 2,
    "airlock": 2,
    "github": 2,
    "repair": 3,
    "desk": 3,
    "notes": 3,
    "incident": 3,
    "gate": 3,
    "cli": 4,
    "web": 4,
    "bridges": 4,
    "mcp": 4,
}
ROOT = Path(signoff.__file__).parent
# Imports across one layer are allowed only where a workflow is declared to build on another:
# the desk reuses repair's sandboxed execution and assertion-failure rules (issue: Desk); the CLI
# starts the MCP face (`signoff mcp`), which stays importable without the CLI.
ACROSS = {("desk", "repair"), ("cli", "mcp")}


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def test_every_package_has_a_layer() -> None:
    packages = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages <= set(LAYERS), f"packages without a layer in DESIGN.md: {packages - set(LAYERS)}"


def test_imports_point_down_only() -> None:
    violations: list[str] = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if len(rel.parts) < 2:
            continue  # signoff/__init__.py
        own = rel.parts[0]
        if own not in LAYERS:
            continue
        for lineno, module in _imports(path):
            parts = module.split(".")
            if parts[0] != "signoff" or len(parts) < 2 or parts[1] not in LAYERS:
                continue
            target = parts[1]
            across = LAYERS[target] == LAYERS[own] and target != own and LAYERS[own] >= 2
            if LAYERS[target] > LAYERS[own] or (across and (own, target) not in ACROSS):
                violations.append(f"{rel}:{lineno} ({own}, layer {LAYERS[own]}) imports {module} "
                                  f"(layer {LAYERS[target]})")
    assert not violations, "imports that point up or across the layers:\n" + "\n".join(violations)
