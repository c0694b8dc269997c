"""`signoff evidence`: verify evidence files offline; export and trust public keys."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from signoff.cli.context import console, print_json, settings
from signoff.kernel.errors import NotFoundError
from signoff.trust import KeyStore, PublicKey, TrustPolicy, verify_file

app = typer.Typer(no_args_is_help=True)
key_app = typer.Typer(no_args_is_help=True)
app.add_typer(key_app, name="key", help="Export this machine's public keys or trust another party's.")


def _load_workflow_checks() -> None:
    # Predicate checks live with their workflows; importing them registers the checks. A workflow
    # that is not installed simply has no check, and its statements are verified generically.
    import importlib

    for module in ("signoff.repair.evidence", "signoff.incident", "signoff.notes"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError:
            continue


@app.command("verify")
def verify(
    files: Annotated[list[Path], typer.Argument(help="Evidence files (.intoto.json).")],
    key: Annotated[list[Path] | None, typer.Option("--key", help="Also trust this public key file (hex).")] = None,
    subjects: Annotated[Path | None, typer.Option(
        "--subjects", help="Recheck subject files under this folder (default: each evidence file's own folder)."
    )] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Check signatures against trusted keys and the trust policy, the statement's shape and its subjects'
    digests. Subject files are read only inside the subjects folder, never through an absolute path, `..`
    or a link that leads out of it."""
    _load_workflow_checks()
    if subjects is not None and not subjects.is_dir():
        raise NotFoundError(f"--subjects names {subjects}, which is not a folder",
                            "pass the folder that holds the files the evidence names")
    s = settings()
    policy = TrustPolicy.from_config(s.section("trust", "signers"))
    store = KeyStore(s.keys_dir)
    trusted = store.trusted()
    for extra in key or []:
        if not extra.is_file():
            raise NotFoundError(
                f"key file not found: {extra}", "pass a .pub file exported by `signoff evidence key export`"
            )
        pub = PublicKey.from_hex(extra.read_text(), extra.stem)
        trusted[pub.keyid] = pub
    reports = [verify_file(f, trusted, policy, subjects) for f in files]
    if as_json:
        print_json([r.as_json() for r in reports])
    else:
        for r in reports:
            if r.ok:
                console.print(f"[green]ok[/]   {r.path}  ({r.kind or 'unlabelled'}, {r.predicate_type}, "
                              f"signed by {', '.join(r.signers)})")
                for note in r.notes:
                    console.print(f"       note: {note}")
            else:
                console.print(f"[bold red]FAIL[/] {r.path}: {r.problem}")
    raise typer.Exit(0 if all(r.ok for r in reports) else 1)


@key_app.command("export")
def export(name: Annotated[str, typer.Argument(help="Key name.")] = "verifier") -> None:
    """Print a public key (hex), creating the key pair on first use."""
    key = KeyStore(settings().keys_dir).ensure(name)
    typer.echo(key.public.hex())


@key_app.command("trust")
def trust(name: str, file: Path) -> None:
    """Trust another party's public key (a file holding the hex key)."""
    if not file.is_file():
        raise NotFoundError(f"key file not found: {file}", "pass the .pub file the other party exported")
    path = KeyStore(settings().keys_dir).trust(PublicKey.from_hex(file.read_text(), name), name)
    console.print(f"trusted {name}: {path}")
