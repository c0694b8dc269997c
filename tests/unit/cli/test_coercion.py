"""The CLI's direct option conversion gives exactly what typer's own (pydantic) conversion gives."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
import typer
from typer._click.exceptions import BadParameter
from typer._coercion import build_runtime_param
from typer.testing import CliRunner

from signoff.cli import coercion


def _sample_command() -> Any:
    app = typer.Typer()

    @app.command()
    def probe(
        text: Annotated[str, typer.Option("--text")] = "x",
        maybe: Annotated[str | None, typer.Option("--maybe")] = None,
        flag: Annotated[bool, typer.Option("--flag")] = False,
        path: Annotated[Path, typer.Option("--path")] = Path("."),
        existing: Annotated[Path | None, typer.Option("--existing", exists=True)] = None,
        names: Annotated[list[str] | None, typer.Option("--name")] = None,
        paths: Annotated[list[Path] | None, typer.Option("--paths")] = None,
        count: Annotated[int, typer.Option("--count")] = 1,
        bounded: Annotated[int, typer.Option("--bounded", min=1, max=5)] = 1,
        seconds: Annotated[float, typer.Option("--seconds")] = 120.0,
        role: Annotated[Literal["user", "agent"], typer.Option("--role")] = "user",
    ) -> None:
        pass

    command = typer.main.get_command(app)
    coercion.install(command)
    return command


SAMPLES: dict[str, list[Any]] = {
    "text": ["", "plain", " spaced ", "a\0b", 3],
    "maybe": [None, "x"],
    "names": [(), ("a", "b"), ["c"], "single"],
    "path": ["", "a", " a ", "a\0b", "./a/", "a//b", "/", "~/x", Path("p")],
    "existing": ["/", "/no/such/path/at/all"],
    "paths": [("a", "./b/"), ("a\0",)],
    "count": ["3", " 3", "+3", "-3", "03", "1_000", "3.0", "٣", "0x10", "", "x", 7, 7.5, True],
    "bounded": ["0", "3", "9"],
    "seconds": ["1", "1.5", " 1.5", "1e3", "-0", "nan", "1_0", ".5", "5.", "", "x", 2, 2.5],
    "role": ["user", "agent", "nobody"],
    "flag": [True, False, "yes"],
}


def _outcome(convert: Any, value: Any) -> tuple[str, str, str]:
    try:
        got = convert(value)
    except BadParameter as exc:
        return "error", "", exc.format_message()
    return "value", type(got).__name__, repr(got)  # repr: nan is not equal to itself


@pytest.mark.parametrize("name", list(SAMPLES))
def test_each_value_converts_as_typer_converts_it(name: str) -> None:
    command = _sample_command()
    ctx = command.make_context("probe", [], resilient_parsing=True)
    param = next(p for p in command.params if p.name == name)
    assert isinstance(param._runtime_param, coercion._Direct)
    typers = build_runtime_param(param.type_descriptor)
    for value in SAMPLES[name]:
        direct = _outcome(lambda v: param._runtime_param.coerce(v, param=param, ctx=ctx), value)
        assert direct == _outcome(lambda v: typers.coerce(v, param=param, ctx=ctx), value), value


def test_a_command_line_gets_the_same_values_and_the_same_errors() -> None:
    seen: list[dict[str, Any]] = []
    app = typer.Typer()

    @app.command()
    def probe(count: Annotated[int, typer.Option("--count")] = 1,
              where: Annotated[list[Path] | None, typer.Option("--where")] = None) -> None:
        seen.append({"count": count, "where": where})

    def invoke(command: Any, *args: str) -> tuple[Any, str]:
        with CliRunner().isolation() as (out, err, _):
            try:
                command.main(list(args), prog_name="probe")
            except SystemExit as exc:
                return exc.code, out.getvalue().decode() + err.getvalue().decode()
        raise AssertionError("a command run as a program exits")

    for installed in (False, True):
        command = typer.main.get_command(app)
        if installed:
            coercion.install(command)
        assert invoke(command, "--count", "4", "--where", "a", "--where", "b/") == (0, "")
        seen.append({"bad": invoke(command, "--count", "four"), "help": invoke(command, "--help")})
    assert seen[0] == seen[2] == {"count": 4, "where": [Path("a"), Path("b")]}
    # Rich wraps the error in a box as wide as the terminal (COLUMNS=40 in CI): read it as one line.
    said = " ".join(re.sub(r"[\u2500-\u257f]", " ", seen[1]["bad"][1]).split())
    assert seen[1] == seen[3] and seen[1]["bad"][0] == 2 and "Input should be a valid integer" in said
    assert seen[1]["help"][0] == 0 and "--where" in seen[1]["help"][1]
