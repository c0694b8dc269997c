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


def _root_help(monkeypatch: pytest.MonkeyPatch, loaded: bool) -> str:
    group = typer.main.get_command(main.app)
    if loaded:  # every command made and listed from itself, as typer's own help would
        monkeypatch.setattr(main, "_listed", lambda name: group.commands[name])  # type: ignore[attr-defined]
    with CliRunner().isolation() as (out, _err, _):
        with pytest.raises(SystemExit):
            group.main(["--help"], prog_name="signoff")
        return out.getvalue().decode()


def test_the_root_help_lists_each_command_as_the_loaded_command_would(monkeypatch: pytest.MonkeyPatch) -> None:
    listed = _root_help(monkeypatch, loaded=False)
    assert all(f" {name} " in listed for name in main.COMMANDS)
    assert listed == _root_help(monkeypatch, loaded=True)

