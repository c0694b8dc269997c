"""The dependency rule of DESIGN.md, enforced: imports point down the layers only."""

from __future__ import annotations

import ast
import functools
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
    "demo": 4,
}
ROOT = Path(signoff.__file__).parent
# Imports across one layer are allowed only where a workflow is declared to build on another:
# the desk reuses repair's sandboxed execution and assertion-failure rules (issue: Desk). The CLI is
# the one entry point of every face: it starts the MCP face (`signoff mcp`) and registers
# `signoff bridge` (issue: Matrix bridge); both stay importable without the CLI. The demos are CLI
# commands (`signoff demo`, `signoff serve --demo`, `signoff incident run`) built on the CLI's console
# and settings, and the CLI loads them (issue 35: demo and fixture code out of product packages).
ACROSS = {("desk", "repair"), ("cli", "mcp"), ("cli", "bridges"), ("cli", "demo"), ("demo", "cli")}


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for all the rules here (parsing every module is their cost)."""
    return ast.parse(path.read_text(), filename=str(path))


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = _tree(path)
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



# Demo and fixture code lives in `signoff.demo`, a face: the product packages below the faces must run
# on a real project with none of it (issue 35). Imports of the demo are caught above; this pins the
# rest: no product module looks for the examples/ folder, and only the packages that own offline
# default agents fill the scripted-agent registry (the desk's ShopLite scripts and the incident's
# scripted responder are the demo's).
FIXTURE_NAMES = {"examples_root", "shoplite_source", "register_script"}
FIXTURE_NAMES_ALLOWED = {
    ("agents", "register_script"): "the agents' own offline default scripts (agents.scripts)",
    ("notes", "register_script"): "the notes writer's and editor's deterministic defaults",
}


def _names_used(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.ImportFrom):
            found.update(alias.name for alias in node.names)
    return found


def test_product_packages_hold_no_fixture_code() -> None:
    violations = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        own = rel.parts[0]
        if len(rel.parts) < 2 or LAYERS.get(own, 4) >= LAYERS["demo"]:
            continue
        violations += [f"{rel} uses {name}" for name in sorted(_names_used(_tree(path)) & FIXTURE_NAMES)
                       if (own, name) not in FIXTURE_NAMES_ALLOWED]
    assert not violations, "demo or fixture code in a product package (move it to signoff.demo):\n" + \
        "\n".join(violations)


def test_the_fixture_check_sees_calls_and_imports() -> None:
    source = "from signoff.agents import register_script\nimport x\nx.examples_root()\nshoplite_source()\n"
    assert _names_used(ast.parse(source)) & FIXTURE_NAMES == FIXTURE_NAMES


def _module_name(path: Path) -> str:
    parts = ("signoff", *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    relative = Path(*name.split(".")[1:])
    return (ROOT / relative).with_suffix(".py").is_file() or (ROOT / relative / "__init__.py").is_file()


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_uses(source: str, own: str) -> list[str]:
    """Private names (`_x`) module `own` takes from another: imported by name, or read as an
    attribute of an imported module."""
    tree = ast.parse(source)
    modules: dict[str, str] = {}  # local name -> the signoff module it is bound to
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("signoff.") and alias.asname:
                    modules[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and \
                node.module.split(".")[0] == "signoff" and node.module != own:
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"from {node.module} import {alias.name}")
                elif _is_module(f"{node.module}.{alias.name}"):
                    modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _private(node.attr):
            module = modules.get(node.value.id)
            if module is not None and module != own:
                found.append(f"{node.value.id}.{node.attr} ({module}), line {node.lineno}")
    return found


# Known uses still to be made public; empty since issue 14.
PRIVATE_PENDING: set[str] = set()


def test_no_module_takes_another_modules_private_names() -> None:
    found = {f"{path.relative_to(ROOT)}: {use}" for path in sorted(ROOT.rglob("*.py"))
             for use in _private_uses(path.read_text(), _module_name(path))}
    violations = sorted(found - PRIVATE_PENDING)
    assert not violations, "private names used across modules:\n" + "\n".join(violations)


def test_the_private_name_check_sees_imports_and_module_attributes() -> None:
    source = ("from signoff.desk import forge\nimport signoff.ledger.store as store\n"
              "from signoff.rooms.domain.service import _loads, RoomService\n"
              "forge._git('status')\nstore._with_retry\nforge.push\nRoomService._cached\n")
    assert sorted(_private_uses(source, "signoff.cli.x")) == [
        "forge._git (signoff.desk.forge), line 4", "from signoff.rooms.domain.service import _loads",
        "store._with_retry (signoff.ledger.store), line 5"]
    assert _private_uses("from signoff.cli.x import _own\n", "signoff.cli.x") == []


# Demo fixtures (issues 35 and 41): the workflows take their organisations and evidence as data, so
# only the faces that run demos (`signoff demo`, the CLI that wires them in) import a fixture.
FIXTURES = ("signoff.demo.payco_shopco",)
FIXTURE_USERS = frozenset({"demo", "cli"})


def _fixture_imports(path: Path) -> list[str]:
    return [f"{path.relative_to(ROOT)}:{lineno} imports {module}" for lineno, module in _imports(path)
            if any(module == f or module.startswith(f"{f}.") for f in FIXTURES)]


def test_only_the_demo_faces_import_a_demo_fixture() -> None:
    found = [hit for path in sorted(ROOT.rglob("*.py")) if path.relative_to(ROOT).parts[0] not in FIXTURE_USERS
             for hit in _fixture_imports(path)]
    assert not found, "product code importing a demo fixture:\n" + "\n".join(found)
    assert any(_fixture_imports(p) for p in (ROOT / "cli").rglob("*.py"))  # the check sees the imports there are

