"""`signoff agents`: the configured roles and providers, spend and rate limits, recorded calls, and
one proposal on demand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from signoff.cli.context import console, print_json, settings
from signoff.cli.output import add_data_row, data_table
from signoff.kernel.canonical import canonical_digest
from signoff.kernel.errors import NotFoundError, UsageError

app = typer.Typer(no_args_is_help=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _role_rows() -> list[dict[str, Any]]:
    from signoff.agents import provider_settings, provider_traits, roles, scripts
    from signoff.agents.prompt import system_text

    s = settings()
    known = scripts()
    rows = []
    for spec in roles():
        ps = provider_settings(spec.name, s)
        traits = provider_traits(ps.provider)
        hosted = traits.metered
        rows.append({
            "role": spec.name,
            "provider": ps.provider,
            "model": ps.model if hosted else (f"script:{ps.script}" if ps.provider == "scripted" else ps.replay_path),
            "kind": traits.kind,
            "base_url": ps.base_url if hosted else None,
            "key_env": ps.api_key_env if hosted else None,
            "structured": ps.structured if hosted else None,
            "max_output_tokens": ps.max_output_tokens if hosted else None,
            "usd_per_mtok": [ps.pricing.input_usd_per_mtok, ps.pricing.output_usd_per_mtok] if hosted else None,
            "allowed_paths": spec.allowed_paths,
            "denied_paths": list(spec.denied_paths),
            "max_output_bytes": spec.max_output_bytes,
            "scripts": [n for r, n in known if r == spec.name],
            "prefix_sha256": canonical_digest(system_text(spec)),
            "description": spec.description,
        })
    return rows


@app.command("roles")
def list_roles(as_json: JsonOpt = False) -> None:
    """Each role with the provider and model signoff.toml gives it (scripted unless configured)."""
    rows = _role_rows()
    if as_json:
        print_json(rows)
        return
    table = data_table("role", "provider", "model", "kind", "paths", "scripts")
    for r in rows:
        paths = "none" if r["allowed_paths"] is None else ", ".join(r["allowed_paths"]) or "none"
        add_data_row(table, r["role"], r["provider"], str(r["model"]), r["kind"], paths, ", ".join(r["scripts"]))
    console.print(table)


@app.command("show")
def show(role: str, as_json: JsonOpt = False) -> None:
    """One role in full: provider settings, output schema and the fixed prompt prefix."""
    from signoff.agents import get_role
    from signoff.agents.prompt import system_text

    spec = get_role(role)
    row = next(r for r in _role_rows() if r["role"] == role)
    detail = {**row, "schema": spec.schema, "system_prompt": system_text(spec)}
    if as_json:
        print_json(detail)
        return
    for key, value in row.items():
        if value not in (None, [], ""):
            console.print(f"[bold]{key}[/]: {value}", highlight=False)
    console.print("[bold]system prompt[/]:", highlight=False)
    console.print(detail["system_prompt"], markup=False, highlight=False)


@app.command("budget")
def budget(as_json: JsonOpt = False) -> None:
    """Spend this period (settled, and in flight at worst case), what is left, when it resets, and calls
    in the last hour against the rate limits."""
    from signoff.agents import Budget, limits
    from signoff.ledger import SqlLedger

    s = settings()
    usage = Budget(SqlLedger.open(s), limits(s)).usage()
    data = usage.as_json()
    if as_json:
        print_json(data)
        return
    console.print(f"budget: ${data['spent_usd']:.4f} of ${data['budget_usd']:.2f} this {data['period']} "
                  f"(${data['in_flight_usd']:.4f} in flight at worst case), ${data['remaining_usd']:.4f} left; "
                  f"resets {data['resets_at'] or 'never (raise budget_usd)'}", highlight=False)
    console.print(f"rate: {data['calls_last_hour']} of {data['calls_per_hour']} calls in the last hour; "
                  f"per client limit {data['calls_per_client_per_hour']}", highlight=False)
    for client, count in sorted(data["clients_last_hour"].items()):
        console.print(f"  {client}: {count}", highlight=False)


@app.command("calls")
def calls(
    role: Annotated[str | None, typer.Option(help="Only this role.")] = None,
    limit: Annotated[int, typer.Option(help="At most this many, newest first.")] = 20,
    as_json: JsonOpt = False,
) -> None:
    """Recorded calls (every provider, including scripted) from the ledger, newest first."""
    from signoff.agents.record import EVENT_TYPE
    from signoff.ledger import SqlLedger

    ledger = SqlLedger.open(settings())
    prefix = f"agents/{role}" if role else "agents/"
    found = [e.payload["record"] for e in ledger.stream(prefix=prefix) if e.type == EVENT_TYPE]
    found = found[::-1][: max(0, limit)]
    if as_json:
        print_json(found)
        return
    table = data_table("call", "role", "provider", "model", "kind", "outcome", "cost $", "reason")
    for r in found:
        add_data_row(table, str(r.get("call_id", ""))[:8], r["role"], r["provider"], str(r["model"]), r["kind"],
                     r["outcome"], f"{r['cost_usd']:.4f}", str(r.get("reason", ""))[:60])
    console.print(table)


def _load_json_arg(value: str, what: str) -> Any:
    text = value
    if value.startswith("@"):
        path = Path(value[1:])
        if not path.is_file():
            raise NotFoundError(f"{what} file {path} does not exist", "pass @PATH of an existing file")
        text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{what} is not JSON: {exc.msg}", f"pass {what} as a JSON object or @file.json") from exc


@app.command("try")
def try_role(
    role: str,
    task: Annotated[str, typer.Option(help="The task: a JSON object, or @file.json.")] = "{}",
    untrusted: Annotated[list[str] | None, typer.Option(
        "--untrusted", help="Outside text as NAME=@file or NAME=text (repeatable), given as data.")] = None,
    client: Annotated[str, typer.Option(help="Who is asking (per-client rate limit).")] = "cli",
    script: Annotated[str, typer.Option(help="Script name, when the role is scripted.")] = "default",
    as_json: JsonOpt = False,
) -> None:
    """Ask ROLE for one proposal through its configured provider; print the checked output and the
    record (rejections exit 3 with the reason)."""
    from signoff.agents import agent_for

    task_value = _load_json_arg(task, "--task")
    if not isinstance(task_value, dict):
        raise UsageError("--task must be a JSON object", "wrap it in {...}")
    blocks: dict[str, str] = {}
    for item in untrusted or []:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"--untrusted {item!r} is not NAME=VALUE", "e.g. --untrusted report=@report.txt")
        if value.startswith("@"):
            path = Path(value[1:])
            if not path.is_file():
                raise NotFoundError(f"untrusted file {path} does not exist", "pass NAME=@PATH of a file")
            value = path.read_text(encoding="utf-8", errors="replace")
        blocks[name] = value
    proposal = agent_for(role, settings(), script=script).propose(task_value, blocks or None, client=client)
    if as_json:
        print_json({"output": proposal.output, "provider": proposal.provider, "model": proposal.model,
                    "kind": proposal.kind, "record": proposal.record})
        return
    console.print(f"[bold]{proposal.kind}[/] proposal from {proposal.provider} / {proposal.model}", highlight=False)
    console.print(json.dumps(proposal.output, indent=2, ensure_ascii=False), markup=False, highlight=False)
    r = proposal.record
    console.print(f"cost ${r['cost_usd']:.4f}, {r['duration']}s, evidence {r.get('evidence', '-')}", highlight=False)
