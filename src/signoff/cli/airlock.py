"""`signoff airlock scan`: run the airlock over a file or stdin.

Exit 0 and the redacted dossier for a clean text; exit 1 and the families that fired (never the
text) for a quarantined one; exit 2 for input the airlock refuses (too large, binary, unreadable)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from signoff.airlock import MAX_BYTES, scan
from signoff.airlock.families import DESCRIPTIONS
from signoff.airlock.limits import too_large
from signoff.cli.context import console, print_json
from signoff.kernel.errors import NotFoundError, UsageError

app = typer.Typer(no_args_is_help=True)


def _read(source: str) -> bytes:
    if source == "-":
        data = sys.stdin.buffer.read(MAX_BYTES + 1)
    else:
        path = Path(source)
        if not path.exists():
            raise NotFoundError(f"no such file: {source}", "give the path of a text file, or - for stdin")
        if not path.is_file():
            raise UsageError(f"not a regular file: {source}", "give the path of a text file, or - for stdin")
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_BYTES + 1)
        except OSError as exc:
            raise UsageError(f"cannot read {source}: {exc.strerror}", "check the file's permissions") from None
    if len(data) > MAX_BYTES:
        raise too_large(len(data) if source == "-" else Path(source).stat().st_size)
    return data


@app.command("scan")
def scan_command(
    source: Annotated[str, typer.Argument(metavar="[FILE|-]", help="A text file, or - for stdin.")] = "-",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Normalise, scan and redact one report: exit 0 with its dossier, or exit 1 if quarantined."""
    verdict = scan(_read(source))
    if as_json:
        print_json(verdict.to_dict())
    elif verdict.quarantined:
        console.print("[bold red]quarantined[/]: the text was discarded; nothing of it is shown or stored")
        for hit in verdict.hits:
            console.print(f"  {hit.family}: {DESCRIPTIONS[hit.family]} [dim]({hit.where})[/]")
        console.print(f"raw sha256: {verdict.raw_sha256}")
        console.print(verdict.message, highlight=False)
    else:
        assert verdict.dossier is not None
        console.print(escape(verdict.dossier.render()), highlight=False)
    raise typer.Exit(1 if verdict.quarantined else 0)
