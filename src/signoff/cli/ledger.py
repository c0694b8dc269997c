"""`signoff ledger`: verify the audit chain, list cases, show a case, inspect the outbox."""

from __future__ import annotations

from typing import Annotated

import typer

from signoff.cli.context import console, print_json, settings
from signoff.cli.output import add_data_row, data_table
from signoff.ledger import Ledger, Outbox, verify_chain

app = typer.Typer(no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


@app.command("verify")
def verify(as_json: JsonOpt = False) -> None:
    """Walk the hash chain; name the first broken entry (exit 1) or print count and head (exit 0)."""
    ledger = Ledger.open(settings())
    report = verify_chain(ledger)
    if as_json:
        print_json({"ok": report.ok, "count": report.count, "head": report.head_hash,
                    "problem": report.problem, "broken_seq": report.broken_seq})
    elif report.ok:
        console.print(f"ledger ok: {report.count} events, head {report.head_hash}")
    else:
        console.print(f"[bold red]ledger broken:[/] {report.problem}")
    raise typer.Exit(0 if report.ok else 1)


@app.command("cases")
def list_cases(prefix: Annotated[str, typer.Option(help="Only ids starting with this.")] = "",
               as_json: JsonOpt = False) -> None:
    """List case ids with their versions."""
    ledger = Ledger.open(settings())
    rows = [(c, ledger.version(c)) for c in ledger.case_ids(prefix)]
    if as_json:
        print_json([{"case_id": c, "version": v} for c, v in rows])
        return
    table = data_table("case", "version")
    for c, v in rows:
        add_data_row(table, c, str(v))
    console.print(table)


@app.command("show")
def show(case_id: str, as_json: JsonOpt = False) -> None:
    """Print a case's events in order."""
    ledger = Ledger.open(settings())
    events = ledger.read(case_id)
    if not events:
        from signoff.kernel.errors import NotFoundError

        raise NotFoundError(f"no case {case_id!r} in the ledger", "list cases with `signoff ledger cases`")
    if as_json:
        print_json([{"seq": e.seq, "version": e.version, "type": e.type, "payload": e.payload,
                     "recorded_at": e.recorded_at, "hash": e.hash} for e in events])
        return
    table = data_table("v", "type", "recorded", "payload")
    for e in events:
        add_data_row(table, str(e.version), e.type, e.recorded_at, str(e.payload)[:120])
    console.print(table)


@app.command("jobs")
def jobs(status: Annotated[str | None, typer.Option(help="pending, done or dead.")] = None,
         as_json: JsonOpt = False) -> None:
    """List outbox jobs (dead jobs show their last error)."""
    outbox = Outbox(Ledger.open(settings()))
    states = outbox.jobs(status=status)
    if as_json:
        print_json([s.__dict__ for s in states])
        return
    table = data_table("job", "topic", "status", "attempts", "last error")
    for s in states:
        add_data_row(table, s.job_id, s.topic, s.status, f"{s.attempts}/{s.max_attempts}", (s.last_error or "")[:80])
    console.print(table)
