"""A command group whose commands are made on first lookup shows and parses exactly as typer's own."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from signoff.cli import main


def _outputs(group: Any, name: str) -> dict[tuple[str, ...], tuple[Any, str]]:
    def invoke(*args: str) -> tuple[Any, str]:
        with CliRunner().isolation() as (out, err, _):
            try:
                group.main(list(args), prog_name=f"signoff {name}")
            except SystemExit as exc:
                return exc.code, out.getvalue().decode() + err.getvalue().decode()
        raise AssertionError("a group run as a program exits")

    seen: dict[tuple[str, ...], tuple[Any, str]] = {("--help",): invoke("--help"),
                                                    ("no-such-command",): invoke("no-such-command")}
    for sub in list(group.commands):
        seen[(sub, "--help")] = invoke(sub, "--help")
        seen[(sub, "--no-such-option")] = invoke(sub, "--no-such-option")
    return seen


@pytest.mark.parametrize("name", ["repair", "evidence"])  # evidence holds a group of its own (key)
def test_a_lazy_group_shows_and_refuses_exactly_what_typer_shows(name: str) -> None:
    module, attribute, help_text = main.COMMANDS[name]
    eager = typer.main.get_group(getattr(importlib.import_module(module), attribute))
    eager.name, eager.help = name, help_text
    lazy = main._load(name)
    assert list(lazy.commands) == list(eager.commands)  # type: ignore[attr-defined]
    assert _outputs(lazy, name) == _outputs(eager, name)
