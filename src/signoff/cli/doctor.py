"""`signoff doctor`: what this machine has, and the exact fix for what it lacks."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from typing import Annotated

import typer
from rich.text import Text

from signoff.cli.context import console, print_json, settings
from signoff.cli.output import add_data_row, data_table
from signoff.kernel.checks import Check
from signoff.kernel.errors import SignoffError
from signoff.kernel.settings import Settings

# Packages that contribute their own checks through `doctor_checks(settings) -> list[Check]`.
CHECK_MODULES = ("signoff.sandbox.doctor", "signoff.web.doctor", "signoff.agents.doctor", "signoff.incident.service",
                 "signoff.airlock.doctor", "signoff.desk.service", "signoff.demo.payco_shopco")
# Check modules whose package may be absent from this build (the web face has not landed yet).
OPTIONAL_MODULES = frozenset({"signoff.web.doctor"})


def _version_of(cmd: list[str]) -> str | None:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (out.stdout or out.stderr).strip().splitlines()[0] if out.returncode == 0 else None


def base_checks(s: Settings) -> list[Check]:
    checks: list[Check] = []
    py = sys.version_info
    checks.append(Check("python", py >= (3, 11), f"Python {py.major}.{py.minor}.{py.micro}",
                        "install Python 3.11 or newer"))
    git = _version_of(["git", "--version"]) if shutil.which("git") else None
    checks.append(Check("git", git is not None, git or "git not found", "apt-get install -y git"))
    node = _version_of(["node", "--version"]) if shutil.which("node") else None
    checks.append(Check("node", node is not None, f"Node.js {node}" if node else "node not found",
                        "apt-get install -y nodejs (Node.js 18 or newer)", required=False))
    checks.append(_database_check(s))
    return checks


def _database_check(s: Settings) -> Check:
    from signoff.ledger import SqlLedger

    shown = s.db_url.split("@")[-1] if s.db_url.startswith("postgres") else s.db_url
    try:
        ledger = SqlLedger.open(s)
        count = ledger.count_events()
        ledger.close()
    except SignoffError as exc:
        return Check("database", False, f"{shown}: {exc.message}", exc.fix)
    return Check("database", True, f"{shown} ({count} events)")


def all_checks(s: Settings, modules: tuple[str, ...] = CHECK_MODULES,
               optional: frozenset[str] = OPTIONAL_MODULES) -> list[Check]:
    checks = base_checks(s)
    for module_name in modules:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            # Only an optional check module itself (or its package) may be missing. A dependency
            # missing inside a check module would otherwise drop its checks without a word.
            if module_name in optional and _names_module_or_package(exc.name, module_name):
                continue
            checks.append(Check(module_name, False, f"its checks cannot run: {exc}",
                                "reinstall signoff with its dependencies (make install-dev in a checkout)"))
            continue
        checks.extend(module.doctor_checks(s))
    return checks


def _names_module_or_package(missing: str | None, module_name: str) -> bool:
    return missing is not None and missing != "signoff" and (
        module_name == missing or module_name.startswith(missing + "."))


def doctor(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Check Python, git, Node.js, the database, the sandbox and more; exit 1 if a required check fails."""
    checks = all_checks(settings())
    if as_json:
        print_json({"ok": all(c.ok for c in checks if c.required), "checks": [c.as_json() for c in checks]})
    else:
        table = data_table("check", "status", "detail", "fix")
        for c in checks:
            status = "[green]ok[/]" if c.ok else ("[red]MISSING[/]" if c.required else "[yellow]optional[/]")
            add_data_row(table, c.name, Text.from_markup(status), c.detail, "" if c.ok else (c.fix or ""))
        console.print(table)
    raise typer.Exit(0 if all(c.ok for c in checks if c.required) else 1)
