"""`signoff ledger`: verify the audit chain, back it up and restore it, list cases, show a case, inspect the
outbox."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from signoff.cli.context import console, print_json, settings
from signoff.cli.output import add_data_row, data_table
from signoff.kernel.errors import IntegrityError
from signoff.ledger import (
    Outbox,
    SigningPolicy,
    SqlLedger,
    Witness,
    sign_checkpoint,
    signing_problem,
    verify_chain,
)
from signoff.ledger.backup import Manifest, backup, restore
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


@app.command("backup")
def backup_cmd(
    dest: Annotated[Path, typer.Argument(help="The backup file to write (its manifest goes beside it, as FILE.json).")],
    as_json: JsonOpt = False,
) -> None:
    """Copy the ledger database while it runs (SQLite's online backup; PostgreSQL: pg_dump in one snapshot)
    with a manifest of its SHA-256, event count and head; the copy's chain is walked (SQLite) before it
    is kept. Exit 1 when the chain it holds does not verify (the copy is kept, for a look)."""
    s = settings()
    manifest, report = backup(s.db_url, dest, KeyStore(s.keys_dir).trusted())
    if as_json:
        print_json({"ok": report.ok, "file": str(dest), "manifest": str(Manifest.path_for(dest)),
                    "format": manifest.format, "count": manifest.count, "head": manifest.head,
                    "sha256": manifest.sha256, "problem": report.problem})
        raise typer.Exit(0 if report.ok else 1)
    console.print(f"backup written: {dest} ({manifest.format}), {manifest.count} events, head {manifest.head}",
                  highlight=False)
    console.print(f"manifest: {Manifest.path_for(dest)}", highlight=False)
    if not report.ok:
        raise IntegrityError(f"the backed-up chain does not verify: {report.problem}",
                             "run `signoff ledger verify` on the live database; the backup was kept as written")


@app.command("restore")
def restore_cmd(
    src: Annotated[Path, typer.Argument(
        help="A backup file `signoff ledger backup` wrote (with FILE.json beside it).")],
    force: Annotated[bool, typer.Option("--force", help="Replace a ledger that already holds events (it is "
                                        "backed up beside it first). Stop servers and workers before.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Restore a backup as the configured ledger: the file is checked against its manifest, and the restored
    chain must verify (hashes and signed checkpoints) and end at the manifest's head."""
    s = settings()
    done = restore(src, s.db_url, KeyStore(s.keys_dir).trusted(), force=force)
    if as_json:
        print_json({"ok": True, "count": done.report.count, "head": done.report.head_hash,
                    "last_checkpoint": done.report.last_checkpoint,
                    "kept": str(done.kept) if done.kept else None})
        return
    console.print(f"restored: {done.report.count} events, head {done.report.head_hash} (verified)", highlight=False)
    if done.report.last_checkpoint is not None:
        console.print(f"last signed checkpoint: seq {done.report.last_checkpoint}", highlight=False)
    if done.kept is not None:
        console.print(f"the ledger it replaced was kept as {done.kept}", highlight=False)


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
