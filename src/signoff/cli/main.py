"""Entry point: `signoff`. Each command group lives in its own module, listed in COMMANDS and imported
only when that command runs: every group pulls in a different stack (FastAPI, SQLAlchemy and
Alembic, Git, the sandbox), and importing them all cost each `signoff` process about a second."""

from __future__ import annotations

import copy
import functools
import importlib
import sys
from collections.abc import Callable, Iterator, MutableMapping
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:  # Typer's own copy of Click (0.29 vendors it), whose types its groups use
    from typer._click import Command, Context

from signoff.cli import coercion, context
from signoff.kernel.errors import SignoffError

# name -> (module, attribute, help), in the order `signoff --help` lists them (single commands first,
# as Typer lists them). An attribute that is a typer.Typer becomes a group, a function a command.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "doctor": ("signoff.cli.doctor", "doctor",
               "Check what signoff needs on this machine and print the fix for anything missing."),
    "serve": ("signoff.cli.serve", "serve", "Run the rooms server (Switch agent protocol + user endpoints)."),
    "mcp": ("signoff.cli.mcp", "mcp", "Serve signoff's sign-off tools to MCP clients (stdio or streamable HTTP)."),
    "demo": ("signoff.demo.commands", "app", "Run the workflows end to end offline on embedded defaults."),
    "evidence": ("signoff.cli.evidence", "app", "Sign, export keys for and verify evidence files offline."),
    "ledger": ("signoff.cli.ledger", "app", "Inspect the durable ledger and verify its hash chain."),
    "airlock": ("signoff.cli.airlock", "app", "Scan untrusted text: quarantine it or redact it into a dossier."),
    "sandbox": ("signoff.cli.sandbox", "app", "Run untrusted code isolated; prove each guarantee live."),
    "bridge": ("signoff.cli.bridge", "app", "Bridge signoff rooms to the chat people use (Matrix)."),
    "rooms": ("signoff.cli.rooms", "app", "Room server identities: init, users, agents, rooms."),
    "incident": ("signoff.cli.incident", "app", "Salted fingerprints, a notary, signed disclosures, a guard."),
    "notes": ("signoff.cli.notes", "app", "Release notes whose every number and hash is recomputed from git."),
    "repair": ("signoff.cli.repair", "app", "Verify an agent's fix against a frozen, approved harness."),
    "desk": ("signoff.cli.desk", "app",
             "Bug desk: reports, reproductions, fixes, merges, releases, reporters' word."),
    "agents": ("signoff.cli.agents", "app", "Agent roles and providers, spend and rate limits, recorded calls."),
}


def _load(name: str) -> Command:
    module, attribute, help_text = COMMANDS[name]
    target = getattr(importlib.import_module(module), attribute)
    if isinstance(target, typer.Typer):
        command: Command = _group(target)
        command.name, command.help = name, help_text
    else:
        single = typer.Typer(add_completion=False)
        single.command(name, help=help_text)(target)
        command = typer.main.get_command(single)
    coercion.install(command)
    return command


def _group(target: typer.Typer) -> Command:
    """The group typer makes of `target`, except that each of its commands is made on first lookup:
    typer makes every command of a group (reading each one's annotations, building its options)
    when any one of them runs, which cost `signoff repair verify` its group's other eleven."""
    style: dict[str, Any] = {"pretty_exceptions_short": target.pretty_exceptions_short,
                             "rich_markup_mode": target.rich_markup_mode}
    makers: dict[str, Callable[[], Command]] = {}
    for info in target.registered_commands:
        assert info.callback is not None, "a command has a callback"
        makers[info.name or typer.main.get_command_name(info.callback.__name__)] = functools.partial(
            typer.main.get_command_from_info, info, **style)
    for sub in target.registered_groups:
        if not isinstance(sub.name, str) or not sub.name:
            return typer.main.get_group(target)  # typer merges a nameless group's commands into this one
        makers[sub.name] = functools.partial(typer.main.get_group_from_info, sub,
                                             suggest_commands=target.suggest_commands, **style)
    bare = copy.copy(target)
    bare.registered_commands, bare.registered_groups = [], []
    group = typer.main.get_group(bare)
    group.commands = _Commands(makers)
    return group


class _Commands(MutableMapping[str, "Command"]):
    """A group's subcommands: every name is known up front (for listing, and for the "did you
    mean" of a typo); a command is made (and its module imported) on first lookup."""

    def __init__(self, makers: dict[str, Callable[[], Command]]) -> None:
        self._makers = makers
        self._made: dict[str, Command] = {}

    def __getitem__(self, name: str) -> Command:
        if name not in self._made:
            if name not in self._makers:
                raise KeyError(name)
            command = self._makers[name]()
            coercion.install(command)
            self._made[name] = command
        return self._made[name]

    def __setitem__(self, name: str, command: Command) -> None:
        raise TypeError(f"{name!r}: a command is declared in its module (the root's in COMMANDS in signoff.cli.main)")

    def __delitem__(self, name: str) -> None:
        raise TypeError(f"{name!r}: a command is declared in its module (the root's in COMMANDS in signoff.cli.main)")

    def __iter__(self) -> Iterator[str]:
        return iter(self._makers)

    def __len__(self) -> int:
        return len(self._makers)


class _LazyGroup(TyperGroup):
    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _Commands({name: functools.partial(_load, name) for name in COMMANDS})
        self._listing = False
        coercion.install(self)

    def list_commands(self, ctx: Context) -> list[str]:
        return list(self.commands)  # the names only: TyperGroup's own would import every module

    def format_help(self, ctx: Context, formatter: Any) -> None:
        # `signoff --help` lists each command's name and help, which COMMANDS holds: typer's help
        # asks for every command to read them, which imported every group's stack (about 1.5 s).
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        if self._listing and cmd_name in COMMANDS:
            return _listed(cmd_name)
        return super().get_command(ctx, cmd_name)


@functools.cache
def _listed(name: str) -> Command:
    """What the root's help shows of a command: its name and help, as _load makes them (no group
    sets a panel, a short help, `hidden` or `deprecated`; tests/unit/cli/test_lazy_groups.py holds them
    to the loaded commands)."""
    from typer.core import TyperCommand

    return TyperCommand(name, help=COMMANDS[name][2])


app = typer.Typer(
    name="signoff",
    help="Agents draft, people sign off, code verifies.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=_LazyGroup,
)


def _version(value: bool) -> None:
    if value:
        from signoff import __version__

        typer.echo(f"signoff {__version__}")
        raise typer.Exit(0)


@app.callback()
def root(
    home: Annotated[
        str | None,
        typer.Option(
            "--home", envvar="SIGNOFF_HOME", help="State folder (default: .signoff in the working directory)."
        ),
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Agents draft, people sign off, code verifies."""
    context.set_home(home)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; SignoffError becomes a two-line message and its exit code, never a traceback.
    Run as the program itself (no `argv`), the process ends as soon as the command is done."""
    code = _run(argv)
    if argv is None:
        _exit_now(code)
    return code


def _exit_now(code: int) -> None:
    """End the process without the interpreter's teardown: freeing every module and object one by
    one costs a CLI run a few hundred milliseconds on a busy machine and changes nothing outside it.
    Everything registered to run at exit still runs (logging, temporary folders, the sandbox's
    spares and keepers) and the output is flushed; with another thread still running, the normal
    exit waits for it instead."""
    import atexit
    import os
    import threading

    if threading.active_count() > 1:
        return
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be written anyway
            pass
    os._exit(code)


def _run(argv: list[str] | None) -> int:
    from signoff.kernel import metrics

    metrics.count_for_command()  # a worker's sandbox runs and verdicts reach `signoff serve`'s /metrics
    try:
        return _dispatch(argv)
    finally:
        _keep_counts(metrics)


def _keep_counts(metrics: Any) -> None:
    try:
        metrics.add_command_counts(context.used_home)
    except OSError as exc:  # the count is lost, the command's work is not: say so, do not fail it
        context.err_console.print(f"warning: this command's metrics were not recorded: {exc}", highlight=False)


def _dispatch(argv: list[str] | None) -> int:
    try:
        result = app(args=argv, prog_name="signoff", standalone_mode=False)
    except SignoffError as exc:
        return context.report_error(exc)
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        context.err_console.print("aborted")
        return 130
    except typer.TyperException as exc:
        # usage errors of the command line itself (unknown command, missing argument): the same
        # two lines as any other bad input, pointing at the help of the command that was meant
        ctx = getattr(exc, "ctx", None)
        where = ctx.command_path if ctx is not None else "signoff"
        error = SignoffError(exc.format_message(), f"see `{where} --help`")
        error.exit_code = int(getattr(exc, "exit_code", 2))
        return context.report_error(error)
    return int(result) if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main())
