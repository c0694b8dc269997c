"""What every command shares: settings (with the root --home option applied), output helpers and
the one place errors become messages and exit codes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

from rich.markup import escape

from signoff.cli.output import console, err_console
from signoff.kernel.errors import SignoffError
from signoff.kernel.settings import Settings

__all__ = ["console", "err_console", "fail", "print_json", "report_error", "set_home", "settings"]

_state: dict[str, Any] = {"home": None, "settings": None}


def set_home(home: str | None) -> None:
    _state["home"] = home
    _state["settings"] = None


def settings() -> Settings:
    cached = _state["settings"]
    if cached is None:
        cached = Settings.load(home=_state["home"])
        _state["settings"] = cached
    assert isinstance(cached, Settings)
    return cached


def used_home() -> Path | None:
    """The home this command read its settings for, or None when it used none."""
    cached = _state["settings"]
    return cached.home if isinstance(cached, Settings) else None


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def fail(message: str, fix: str | None = None, code: int = 2) -> NoReturn:
    raise SignoffError(message, fix) if code == 2 else _coded(message, fix, code)


def _coded(message: str, fix: str | None, code: int) -> SignoffError:
    error = SignoffError(message, fix)
    error.exit_code = code
    return error


def report_error(exc: SignoffError) -> int:
    # The message and the fix are data (they quote paths and input): escaped, never read as markup.
    err_console.print(f"[bold red]error:[/] {escape(exc.message)}", highlight=False)
    if exc.fix:
        err_console.print(f"[bold]fix:[/] {escape(exc.fix)}", highlight=False)
    return exc.exit_code
