"""`signoff incident`: set an incident up (your organisations, or the PayCo/ShopCo demo's), the
outbound guard, the signed ledgers, the fixture's simulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from signoff.cli.context import console, print_json, settings
from signoff.cli.progress import reporting
from signoff.demo.incident_walkthrough import run_incident
from signoff.demo.payco_shopco.fixture import parties as demo_parties
from signoff.incident import service
from signoff.incident.service import SHARED_ROOM, Parties, Workspace
from signoff.kernel.errors import NotFoundError, UsageError
from signoff.trust import KeyStore

app = typer.Typer(no_args_is_help=True)
guard_app = typer.Typer(no_args_is_help=True)
app.add_typer(guard_app, name="guard", help="Run an organisation's outbound guard on any text.")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
FixtureOpt = Annotated[Path | None, typer.Option("--fixture", help="The payco-shopco fixture folder.")]
RootOpt = Annotated[Path | None, typer.Option("--root", help="Incident state folder (default: <home>/incident).")]
NotaryDb = Annotated[str, typer.Option("--notary-db", help="The ledger holding the notary's salts (a URL).")]
NotaryId = Annotated[str, typer.Option("--notary-id", help="The notary's id in that ledger.")]
ConfigOpt = Annotated[Path | None, typer.Option("--config", help=(
    "Your incident configuration (TOML: one \\[org.<key>] table per organisation). Without it: the "
    "PayCo/ShopCo demo's organisations."))]


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
    from signoff.demo.payco_shopco.simulate import simulate as run_simulation

    result = run_simulation(out or settings().home / "incident" / "captures", fixed_payco, fixed_shopco, fixture)
    if as_json:
        print_json(result.as_json())
        return
    console.print(f"sent {len(result.accepted) + len(result.rejected)} events to ShopCo on port {result.shopco_port}: "
                  f"{len(result.accepted)} accepted, {len(result.rejected)} rejected (401)")
    if result.rejected:
        console.print("rejected: " + ", ".join(result.rejected))


def _parties(ws: Workspace, config: Path | None, fixture: Path | None) -> Parties:
    """The organisations: from `config`, or the demo's (their captures where `simulate` writes them)."""
    if config is not None:
        return service.load_parties(config)
    return demo_parties(fixture, ws.root / "captures")


@app.command("setup")
def setup(root: RootOpt = None, config: ConfigOpt = None, fixture: FixtureOpt = None,
          org: Annotated[list[str] | None, typer.Option("--org", help=(
              "Set up only this organisation's guard and keys (repeat for more): on an organisation's own "
              "machine, its own. Default: every one."))] = None,
          as_json: JsonOpt = False) -> None:
    """Build each organisation's guard from its configuration (code, secret patterns, protected values,
    hashed) and pin them with the organisations, the playbooks and the settings; create the keys."""
    ws = _workspace(root)
    parties = _parties(ws, config, fixture)
    pins = service.setup(ws, settings(), parties, tuple(org) if org else None)
    if as_json:
        print_json({"root": str(ws.root), "pins": pins, "orgs": list(parties.keys)})
    else:
        for name, pin in pins.items():
            what = "guard" if name in parties.keys else name
            console.print(f"{name}: {what} pinned at {pin[:16]}", highlight=False)


@app.command("run")
def run(root: RootOpt = None, fixture: FixtureOpt = None, as_json: JsonOpt = False) -> None:
    """The whole of part 1: reproduce, fingerprint, disclose with approvals, compare, verify, fix."""
    ws = _workspace(root)
    with reporting("incident run") as progress:
        if not ws.is_set_up():
            progress("setting up the guards")
            # Pinned with the settings, as `incident setup` pins them.
            service.setup(ws, settings(), demo_parties(fixture, ws.root / "captures"))
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


@app.command("approver")
def approver_cmd(
    org: Annotated[str, typer.Option("--org", help="Whose approver: the organisation's key.")],
    notary_db: NotaryDb,
    notary_id: NotaryId,
    token: Annotated[str, typer.Option("--token", envvar="SIGNOFF_APPROVER_TOKEN", show_default=False,
                                       help="The caller's token (the room server's or bridge's); better from "
                                            "SIGNOFF_APPROVER_TOKEN than on the command line.")],
    root: RootOpt = None,
    keys: Annotated[Path | None, typer.Option("--keys", help=(
        "The key store holding the organisation's approver key (default: the home's). On the organisation's "
        "host, one no other service reads."))] = None,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port (0 picks a free one).")] = 8790,
) -> None:
    """Run one organisation's approver as a process of its own, holding its key: it signs a disclosure
    or a fix only for the organisation's named approver, with the digest of what they were shown."""
    s = settings()
    ws = service.workspace(root or s.home / "incident", KeyStore(keys or s.keys_dir))
    running = service.approver_process(ws, service.RunAlone(org, token, notary_db, notary_id))
    try:
        _serve_alone(host, port, "approver", running.app, running.describe())
    finally:
        running.close()
        ws.close()


def _serve_alone(host: str, port: int, what: str, app: Any, describe: str) -> None:
    """Serve `app` on host:port, after one flushed line naming the address (whoever started the
    process reads it)."""
    import uvicorn

    from signoff.cli.serve import listen

    listener = listen(host, port)
    shown = f"[{host}]" if ":" in host else host
    print(f"signoff incident {what} serving on http://{shown}:{listener.getsockname()[1]} ({describe})", flush=True)
    # proxy_headers off: uvicorn would otherwise believe X-Forwarded-For from any local process
    uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, proxy_headers=False)
                   ).run(sockets=[listener])


@app.command("evidence")
def evidence_cmd(
    org: Annotated[str, typer.Option("--org", help="Whose evidence: the organisation's key.")],
    notary_db: NotaryDb,
    notary_id: NotaryId,
    token: Annotated[str, typer.Option("--token", envvar="SIGNOFF_EVIDENCE_TOKEN", show_default=False,
                                       help="The token the organisation's agent holds; better from "
                                            "SIGNOFF_EVIDENCE_TOKEN than on the command line.")],
    root: RootOpt = None,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port (0 picks a free one).")] = 8791,
) -> None:
    """Run one organisation's evidence server over its configured captures: counts, lengths and salted
    fingerprints only, at most five events per salt."""
    ws = _workspace(root)
    running = service.evidence_process(ws, service.RunAlone(org, token, notary_db, notary_id))
    try:
        _serve_alone(host, port, "evidence", running.app, running.describe())
    finally:
        running.close()
        ws.close()


@app.command("open")
def open_cmd(notary_db: NotaryDb, notary_id: NotaryId,
             incident: Annotated[str | None, typer.Option("--incident", help="Its name (default: the next "
                                                          "INC-nnnn).")] = None,
             as_json: JsonOpt = False) -> None:
    """Open an incident on the notary: a fresh salt, which every evidence server then fingerprints
    under (and only under it), and which the organisations' agents are given."""
    opened = service.open_incident(service.NotaryAt(notary_db, notary_id), incident)
    if as_json:
        print_json(opened)
    else:
        console.print(f"{opened['incident']} opened; salt {opened['salt']} (id {opened['salt_id']})", highlight=False)


@app.command("fingerprint")
def fingerprint_cmd(
    event: Annotated[str, typer.Argument(help="The event id to fingerprint.")],
    url: Annotated[str, typer.Option("--evidence", help="The organisation's evidence server.")],
    incident: Annotated[str, typer.Option("--incident", help="The notary's current incident.")],
    salt: Annotated[str, typer.Option("--salt", help="Its salt (hex), as `incident open` printed it.")],
    token: Annotated[str, typer.Option("--token", envvar="SIGNOFF_EVIDENCE_TOKEN", show_default=False,
                                       help="The evidence server's token.")],
) -> None:
    """Print one event's salted fingerprint (JSON): lengths, types and salted hashes, never a value."""
    print_json(service.fingerprint_over(url, token, event, incident, salt))


@app.command("compare")
def compare_cmd(
    a: Annotated[Path, typer.Argument(help="One organisation's fingerprint (JSON file).")],
    b: Annotated[Path, typer.Argument(help="The other's.")],
    notary_db: NotaryDb, notary_id: NotaryId, as_json: JsonOpt = False,
) -> None:
    """The notary's byte-level comparison of two fingerprints of one event, under its current salt."""
    fps = []
    for path in (a, b):
        try:
            fps.append(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError as exc:
            raise NotFoundError(f"no such file: {path}", "pass the fingerprint `incident fingerprint` printed") from exc
        except (ValueError, UnicodeDecodeError) as exc:
            raise UsageError(f"{path} is not a fingerprint (JSON)", "pass what `incident fingerprint` printed") from exc
        if not isinstance(fps[-1], dict):
            raise UsageError(f"{path} is not a fingerprint", "pass what `incident fingerprint` printed")
    comparison = service.compare(service.NotaryAt(notary_db, notary_id), fps[0], fps[1])
    if as_json:
        print_json(comparison.as_json())
    else:
        console.print(comparison.table(), highlight=False, markup=False)


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
    org: Annotated[str, typer.Option("--org", help="Whose guard: an organisation's key.")],
    room: Annotated[str, typer.Option("--room", help="Room the text would be posted to.")] = SHARED_ROOM,
    root: RootOpt = None,
    fixture: FixtureOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Exit 0 when the text may pass, 1 when blocked (naming the rules that fired). Logs rules and counts only.
    Without an incident set up, the demo's organisations are."""
    ws = _workspace(root)
    if not ws.is_set_up():
        service.setup(ws, settings(), demo_parties(fixture, ws.root / "captures"))
    if org not in ws.local_orgs:  # before reading the text
        raise UsageError(f"unknown organisation {org!r}", f"use --org with one of: {', '.join(ws.local_orgs)}")
    if str(file) == "-":
        text = typer.get_text_stream("stdin").read()
    else:
        try:
            text = file.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise NotFoundError(f"no such file: {file}", "pass a text file, or - for stdin") from exc
        except (IsADirectoryError, UnicodeDecodeError) as exc:
            raise UsageError(f"{file} is not a UTF-8 text file", "pass a text file") from exc
    verdict = service.check_guard(ws, service.CheckGuard(org, text, room))
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
