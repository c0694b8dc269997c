"""`signoff incident`: the PayCo/ShopCo fixture, the outbound guard, the signed ledgers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from signoff.cli.context import console, print_json, settings
from signoff.cli.progress import reporting
from signoff.demo.incident_walkthrough import run_incident
from signoff.incident import service
from signoff.incident.service import ORGS, SHARED_ROOM, Workspace
from signoff.kernel.errors import NotFoundError, UsageError
from signoff.trust import KeyStore

app = typer.Typer(no_args_is_help=True)
guard_app = typer.Typer(no_args_is_help=True)
app.add_typer(guard_app, name="guard", help="Run an organisation's outbound guard on any text.")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
FixtureOpt = Annotated[Path | None, typer.Option("--fixture", help="The payco-shopco fixture folder.")]
RootOpt = Annotated[Path | None, typer.Option("--root", help="Incident state folder (default: <home>/incident).")]


def _workspace(root: Path | None) -> Workspace:
    s = settings()
    return service.workspace(root or s.home / "incident", KeyStore(s.keys_dir))


@app.command("simulate")
def simulate(
    fixed_payco: Annotated[bool, typer.Option("--fixed-payco", help="PayCo sends raw UTF-8, no \\u escapes.")] = False,
    fixed_shopco: Annotated[bool, typer.Option("--fixed-shopco", help="ShopCo verifies the raw bytes.")] = False,
    out: Annotated[Path | None, typer.Option("--out", help="Folder for the capture files.")] = None,
    fixture: FixtureOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run ShopCo (node) and PayCo (Python) on loopback, send the 60 events, report accepted and rejected."""
    result = service.simulate(service.Simulate(out or settings().home / "incident" / "captures", fixed_payco,
                                               fixed_shopco, fixture))
    if as_json:
        print_json(result.as_json())
        return
    console.print(f"sent {len(result.accepted) + len(result.rejected)} events to ShopCo on port {result.shopco_port}: "
                  f"{len(result.accepted)} accepted, {len(result.rejected)} rejected (401)")
    if result.rejected:
        console.print("rejected: " + ", ".join(result.rejected))


@app.command("setup")
def setup(root: RootOpt = None, fixture: FixtureOpt = None, as_json: JsonOpt = False) -> None:
    """Build both guards' configurations from the fixture and pin them, with the playbooks and the
    settings; create the approver keys."""
    ws = _workspace(root)
    pins = service.setup(ws, settings(), fixture)
    if as_json:
        print_json({"root": str(ws.root), "pins": pins})
    else:
        for name, pin in pins.items():
            what = "guard" if name in ORGS else name
            console.print(f"{name}: {what} pinned at {pin[:16]}", highlight=False)


@app.command("run")
def run(root: RootOpt = None, fixture: FixtureOpt = None, as_json: JsonOpt = False) -> None:
    """The whole of part 1: reproduce, fingerprint, disclose with approvals, compare, verify, fix."""
    ws = _workspace(root)
    with reporting("incident run") as progress:
        if not ws.is_set_up():
            progress("setting up the guards")
            service.setup(ws, settings(), fixture)  # pinned with the settings, as `incident setup` pins them
        summary = run_incident(ws, fixture, progress)
    if as_json:
        print_json(summary)
    else:
        _print_run(summary)
    raise typer.Exit(0 if summary["ok"] else 1)


def _print_run(s: dict[str, Any]) -> None:
    console.print(f"bug: {len(s['bug']['rejected'])} of {s['bug']['events']} events rejected: "
                  f"{', '.join(s['bug']['rejected'])}")
    console.print(s["notary_table"], highlight=False, markup=False)
    console.print(f"disclosures signed and posted: {', '.join(s['disclosures'])}")
    for label, message in {**s["refused"], **s["blocked"]}.items():
        console.print(f"refused {label}: {message}", highlight=False, markup=False)
    ledger = s["ledger"]
    console.print(f"ledgers: {'ok' if ledger['ok'] else 'FAIL'} ({ledger['disclosures_crossed']} disclosures crossed)")
    console.print(f"fixed ({s['fixed']['fix']}): {len(s['fixed']['rejected'])} rejected")
    console.print("[green]ok[/]" if s["ok"] else "[bold red]FAIL[/]")


@app.command("verify-ledger")
def verify_ledger_cmd(root: RootOpt = None, as_json: JsonOpt = False) -> None:
    """Check both organisations' chains and that every disclosure that crossed has a valid signed approval."""
    report = service.verify(_workspace(root))
    if as_json:
        print_json(report.as_json())
    else:
        for chain in report.chains:
            console.print(f"{'ok  ' if chain.ok else 'FAIL'} {chain.name}: {len(chain.records)} records")
        for problem in report.all_problems():
            console.print(f"  [bold red]problem[/] {problem}", highlight=False)
        console.print(f"{report.disclosures_crossed} disclosures crossed to the shared room; "
                      f"{'all signed and intact' if report.ok else 'ledger does NOT verify'}")
    raise typer.Exit(0 if report.ok else 1)


@guard_app.command("check")
def guard_check(
    file: Annotated[Path, typer.Argument(help="Text to check ('-' for stdin).")],
    org: Annotated[str, typer.Option("--org", help=f"Whose guard: {', '.join(ORGS)}.")],
    room: Annotated[str, typer.Option("--room", help="Room the text would be posted to.")] = SHARED_ROOM,
    root: RootOpt = None,
    fixture: FixtureOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Exit 0 when the text may pass, 1 when blocked (naming the rules that fired). Logs rules and counts only."""
    if org not in ORGS:  # before reading the text
        raise UsageError(f"unknown organisation {org!r}", f"use --org with one of: {', '.join(ORGS)}")
    if str(file) == "-":
        text = typer.get_text_stream("stdin").read()
    else:
        try:
            text = file.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise NotFoundError(f"no such file: {file}", "pass a text file, or - for stdin") from exc
        except (IsADirectoryError, UnicodeDecodeError) as exc:
            raise UsageError(f"{file} is not a UTF-8 text file", "pass a text file") from exc
    verdict = service.check_guard(_workspace(root), service.CheckGuard(org, text, room, fixture), settings())
    if as_json:
        print_json({"org": org, "room": room, **verdict.as_json()})
    elif verdict.allowed:
        console.print(f"pass: {org}'s guard lets this post into {room} ({verdict.lines} lines)")
    else:
        console.print(f"[bold red]blocked[/] by {org}'s guard: " +
                      ", ".join(f"{rule} ({n})" for rule, n in verdict.counts.items()), highlight=False)
    raise typer.Exit(0 if verdict.allowed else 1)


# Part 2 (the incident in rooms): demo, grade, replay, redteam.
from signoff.cli.incident_workflow import register as _register_workflow  # noqa: E402

_register_workflow(app)
