"""Entry point: `signoff`. Each command group lives in its own module and is registered here."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from signoff import __version__
from signoff.cli import context
from signoff.cli.agents import app as agents_app
from signoff.cli.airlock import app as airlock_app
from signoff.cli.bridge import app as bridge_app
from signoff.cli.demo import app as demo_app
from signoff.cli.desk import app as desk_app
from signoff.cli.doctor import doctor
from signoff.cli.evidence import app as evidence_app
from signoff.cli.incident import app as incident_app
from signoff.cli.ledger import app as ledger_app
from signoff.cli.mcp import mcp
from signoff.cli.notes import app as notes_app
from signoff.cli.repair import app as repair_app
from signoff.cli.rooms import app as rooms_app
from signoff.cli.sandbox import app as sandbox_app
from signoff.cli.serve import serve
from signoff.kernel.errors import SignoffError

app = typer.Typer(
    name="signoff",
    help="Agents draft, people sign off, code verifies.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
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


app.add_typer(demo_app, name="demo", help="Run the workflows end to end offline on embedded defaults.")
app.command("doctor", help="Check what signoff needs on this machine and print the fix for anything missing.")(
    doctor
)
app.add_typer(evidence_app, name="evidence", help="Sign, export keys for and verify evidence files offline.")
app.add_typer(ledger_app, name="ledger", help="Inspect the durable ledger and verify its hash chain.")
app.add_typer(airlock_app, name="airlock", help="Scan untrusted text: quarantine it or redact it into a dossier.")
app.add_typer(sandbox_app, name="sandbox", help="Run untrusted code isolated; prove each guarantee live.")
app.add_typer(bridge_app, name="bridge", help="Bridge signoff rooms to the chat people use (Matrix).")
app.add_typer(rooms_app, name="rooms", help="Room server identities: init, users, agents, rooms.")
app.command("serve", help="Run the rooms server (Switch agent protocol + user endpoints).")(serve)
app.command("mcp", help="Serve signoff's sign-off tools to MCP clients (stdio or streamable HTTP).")(mcp)
app.add_typer(incident_app, name="incident", help="Salted fingerprints, a notary, signed disclosures, a guard.")
app.add_typer(notes_app, name="notes", help="Release notes whose every number and hash is recomputed from git.")
app.add_typer(repair_app, name="repair", help="Verify an agent's fix against a frozen, approved harness.")
app.add_typer(desk_app, name="desk", help="Bug desk: reports, reproductions, fixes, merges, releases, reporters' word.")
app.add_typer(agents_app, name="agents", help="Agent roles and providers, spend and rate limits, recorded calls.")


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; SignoffError becomes a two-line message and its exit code, never a traceback."""
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
