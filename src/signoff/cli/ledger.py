"""`signoff ledger`: verify the audit chain, list cases, show a case, inspect the outbox."""

from __future__ import annotations

from typing import Annotated

import typer

from signoff.cli.context import console, print_json, settings
from signoff.cli.output import add_data_row, data_table
from signoff.ledger import (
    Outbox,
    SigningPolicy,
    SqlLedger,
    Witness,
    sign_checkpoint,
    signing_problem,
    verify_chain,
)
from signoff.ledger.checkpoints import KEY_NAME
from signoff.trust import KeyStore

app = typer.Typer(no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


WitnessOpt = Annotated[list[str] | None, typer.Option(
    "--witness", help="A witness: a JSON-lines file a second party keeps, or a second database URL.")]


@app.command("verify")
def verify(
    witness: Annotated[str | None, typer.Option(
        "--witness", help="Also check every checkpoint this witness (file or database URL) holds.")] = None,
    require_signed: Annotated[bool, typer.Option(
        "--require-signed", help="Fail (exit 1) when any event after the last signed checkpoint is "
                                 "unsigned (by default \\[ledger] unsigned_tail_limit of them may be).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Walk the hash chain and check signed checkpoints (and a witness); name the first broken entry (exit 1),
    fail (exit 1) when a non-empty ledger has no signed checkpoint or more unsigned events than
    \\[ledger] unsigned_tail_limit, else print count, head, the last signed checkpoint and the unsigned tail."""
    s = settings()
    limit = 0 if require_signed else SigningPolicy.load(s).unsigned_tail_limit
    ledger = SqlLedger.open(s)
    report = verify_chain(ledger, trusted=KeyStore(s.keys_dir).trusted(),
                          witness=Witness(witness) if witness else None)
    unsigned = signing_problem(report, limit)
    ok = report.ok and unsigned is None
    if as_json:
        print_json({"ok": ok, "count": report.count, "head": report.head_hash,
                    "problem": report.problem or (unsigned.message if unsigned else None),
                    "fix": unsigned.fix if unsigned else None, "broken_seq": report.broken_seq,
                    "last_checkpoint": report.last_checkpoint, "unsigned_tail": report.unsigned_tail,
                    "unsigned_tail_limit": limit, "witnessed": report.witnessed})
        raise typer.Exit(0 if ok else 1)
    if not report.ok:
        console.print(f"[bold red]ledger broken:[/] {report.problem}")
        raise typer.Exit(1)
    console.print(f"ledger ok: {report.count} events, head {report.head_hash}")
    if report.last_checkpoint is not None:
        console.print(f"last signed checkpoint: seq {report.last_checkpoint}; "
                      f"unsigned tail: {report.unsigned_tail} event(s) (limit {limit})")
    if report.witnessed is not None:
        console.print(f"witness agrees: {report.witnessed} checkpoint(s)")
    if unsigned is not None:
        raise unsigned  # error: / fix: on standard error, exit 1


@app.command("checkpoint")
def checkpoint(witness: WitnessOpt = None, as_json: JsonOpt = False) -> None:
    """Sign the chain's head with the `ledger` key (kept outside the database) and store it; copy it to each
    witness."""
    s = settings()
    cp = sign_checkpoint(SqlLedger.open(s), KeyStore(s.keys_dir).ensure(KEY_NAME), witness or [])
    if as_json:
        print_json({"seq": cp.seq, "head": cp.head_hash, "signed_at": cp.signed_at, "keyid": cp.keyid,
                    "witnesses": witness or []})
        return
    console.print(f"checkpoint signed: seq {cp.seq}, head {cp.head_hash}")
    for w in witness or []:
        console.print(f"witness: {w}")


@app.command("cases")
def list_cases(prefix: Annotated[str, typer.Option(help="Only ids starting with this.")] = "",
               as_json: JsonOpt = False) -> None:
    """List case ids with their versions."""
    ledger = SqlLedger.open(settings())
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
    ledger = SqlLedger.open(settings())
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
    outbox = Outbox(SqlLedger.open(settings()))
    states = outbox.jobs(status=status)
    if as_json:
        print_json([s.__dict__ for s in states])
        return
    table = data_table("job", "topic", "status", "attempts", "last error")
    for s in states:
        add_data_row(table, s.job_id, s.topic, s.status, f"{s.attempts}/{s.max_attempts}", (s.last_error or "")[:80])
    console.print(table)
