"""Option values in the shapes every signoff command uses, converted without building pydantic adapters.

Typer converts each parameter's value through a pydantic `TypeAdapter` it builds on first use, and
it builds one for every parameter of the command that runs, given or not: importing pydantic and
building two dozen adapters cost `signoff repair verify` about 0.1 s of CPU per run, more than the
rest of its own work. `install(command)` gives each parameter of a command (and of its
subcommands) a converter that handles the plain cases directly (a `str`, an ASCII integer or
decimal, a path without a NUL byte, a list of those) with the same result typer's adapter gives,
and hands every other value (a bad number, an enum, a file, a value from the environment) to
typer's own converter, built then: its result and its error messages are typer's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args, get_origin

from typer._coercion import RuntimeParam, build_runtime_param  # Typer 0.29's per-parameter converter

_INT = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?[0-9]+(\.[0-9]*)?")
_MISS = object()


class _Direct:
    """A parameter's converter: the plain cases here, anything else by typer's own (`RuntimeParam`)."""

    def __init__(self, param: Any) -> None:
        self.param = param
        self.typer: RuntimeParam | None = None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        desc = self.param.type_descriptor
        multiple = param.multiple or param.nargs == -1
        if value is None:
            return () if multiple else None
        if not (multiple and isinstance(value, str)):
            got = _direct(desc.annotation, desc.parameter_info, value, param, ctx)
            if got is not _MISS:
                return got
        if self.typer is None:
            self.typer = build_runtime_param(desc)
        return self.typer.coerce(value, param=param, ctx=ctx)


def _direct(annotation: Any, info: Any, value: Any, param: Any, ctx: Any) -> Any:
    """`value` converted as typer's adapter converts it, or _MISS where that is typer's to decide."""
    if get_origin(annotation) is list:
        (item,) = get_args(annotation)
        if not isinstance(value, (list, tuple)):
            return _MISS
        items = [_direct(item, info, v, param, ctx) for v in value]
        return _MISS if any(v is _MISS for v in items) else items
    if info.parser is not None or getattr(info, "min", None) is not None or getattr(info, "max", None) is not None:
        return _MISS
    kind = type(value)
    if annotation is str:
        return value if kind is str else _MISS
    if annotation is bool:
        return value if kind is bool else _MISS
    if annotation is int:
        if kind is int:
            return value
        return int(value) if kind is str and _INT.fullmatch(value) else _MISS
    if annotation is float:
        if kind is float:
            return value
        return float(value) if kind is str and _DECIMAL.fullmatch(value) else _MISS
    if isinstance(annotation, type) and issubclass(annotation, Path) and info.path_type is None:
        if kind is str and "\0" not in value:
            from typer._param_types import coerce_cli_path

            # What typer's adapter does once pydantic has made the Path: the checks the option asks for.
            return coerce_cli_path(annotation(value), info, path_type=annotation, param=param, ctx=ctx)
        return _MISS
    return _MISS


def install(command: Any) -> None:
    """Give every typer parameter of `command`, and of the subcommands it already holds, the direct
    converter. A parameter typer no longer shapes this way keeps typer's own converter."""
    for param in getattr(command, "params", ()):
        _install_param(param)
    help_option = getattr(command, "get_help_option", None)
    if help_option is not None:
        # `--help` is made on first use (from the context's option names), then kept.
        def get_help_option(ctx: Any) -> Any:
            option = help_option(ctx)
            _install_param(option)
            return option

        command.get_help_option = get_help_option
    commands = getattr(command, "commands", None)
    if isinstance(commands, dict):  # a lazy group's mapping would import every command
        for sub in commands.values():
            install(sub)


def _install_param(param: Any) -> None:
    if getattr(param, "_runtime_param", _MISS) is None and hasattr(param, "type_descriptor"):
        param._runtime_param = _Direct(param)
