"""`signoff sandbox`: prove the isolation guarantees live, or run one command inside them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from signoff.cli.context import console, print_json
from signoff.cli.output import add_data_row, data_table
from signoff.kernel.errors import UsageError

app = typer.Typer(no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def parse_size_mb(text: str, what: str) -> int:
    """'384m', '1g', '512' (MB) -> megabytes."""
    m = re.fullmatch(r"\s*(\d+)\s*([kmgKMG]?)[bB]?\s*", text)
    if not m:
        raise UsageError(f"{what} {text!r} is not a size", "write it like 384m or 1g")
    n, unit = int(m.group(1)), m.group(2).lower()
    mb = n // 1024 if unit == "k" else n * 1024 if unit == "g" else n
    if mb <= 0:
        raise UsageError(f"{what} {text!r} is too small", "give at least 1m")
    return mb


def parse_mount(text: str) -> tuple[Path, str, bool]:
    parts = text.split(":")
    if len(parts) not in (2, 3) or not parts[0] or not parts[1] or (len(parts) == 3 and parts[2] not in ("ro", "rw")):
        raise UsageError(f"--mount {text!r} is not SRC:DST[:rw]", "e.g. --mount ./checkout:/src or --mount out:/out:rw")
    return Path(parts[0]).expanduser(), parts[1], len(parts) == 3 and parts[2] == "rw"


@app.command("check")
def check(as_json: JsonOpt = False) -> None:
    """Prove each guarantee live with a hostile program; exit 0 only if all required ones hold."""
    from signoff.sandbox.proofs import prove_all

    checks = prove_all()
    ok = all(c.ok for c in checks if c.required)
    if as_json:
        print_json({"ok": ok, "checks": [c.as_json() for c in checks]})
    else:
        table = data_table("guarantee", "held", "evidence", "fix")
        for c in checks:
            add_data_row(table, c.name, Text.from_markup("[green]yes[/]" if c.ok else "[red]NO[/]"), c.detail,
                         "" if c.ok else (c.fix or ""))
        console.print(table)
    raise typer.Exit(0 if ok else 1)


@app.command("run", context_settings={"allow_interspersed_args": False})
def run_command(
    command: Annotated[list[str], typer.Argument(help="The command and its arguments (after --).")],
    mount: Annotated[list[str] | None, typer.Option("--mount", help="SRC:DST[:rw], read-only unless :rw.")] = None,
    memory: Annotated[str, typer.Option(help="Memory limit, e.g. 384m.")] = "384m",
    pids: Annotated[int, typer.Option(help="Process limit.")] = 96,
    cpus: Annotated[float, typer.Option(help="CPU share.")] = 0.75,
    tmpfs: Annotated[str, typer.Option(help="Size of the writable work area.")] = "256m",
    timeout: Annotated[float, typer.Option(help="Wall-clock limit in seconds.")] = 30.0,
    env: Annotated[list[str] | None, typer.Option("--env", help="NAME=VALUE passed inside.")] = None,
    workdir: Annotated[str, typer.Option(help="Writable work area and working directory.")] = "/work",
    unsafe_no_sandbox: Annotated[bool, typer.Option("--unsafe-no-sandbox",
                                                    help="Run WITHOUT isolation (recorded).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Run one command in the sandbox and print its Execution. Exit status: the command's,
    124 on timeout, 128+N for signal N."""
    from signoff.sandbox import Limits, Mount, run

    mounts = [Mount(*parse_mount(m)) for m in (mount or [])]
    env_map: dict[str, str] = {}
    for item in env or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--env {item!r} is not NAME=VALUE", "e.g. --env PYTHONHASHSEED=0")
        env_map[key] = value
    limits = Limits(memory_mb=parse_size_mb(memory, "--memory"), pids=pids, cpus=cpus,
                    tmpfs_mb=parse_size_mb(tmpfs, "--tmpfs"))
    ex = run(command, mounts, limits, env_map, timeout=timeout, workdir=workdir, unsafe_no_sandbox=unsafe_no_sandbox)
    if as_json:
        print_json({**ex.as_json(), "digest": ex.digest()})
    else:
        if ex.stdout:
            typer.echo(ex.stdout, nl=not ex.stdout.endswith("\n"))
        if ex.stderr:
            typer.echo(ex.stderr, err=True, nl=not ex.stderr.endswith("\n"))
        iso = ex.isolation
        held = [k for k, v in iso.get("guarantees", {}).items() if v]
        missing = [k for k, v in iso.get("guarantees", {}).items() if not v]
        console.print(
            f"[bold]{ex.outcome}[/] exit={ex.exit_code} signal={ex.signal} timed_out={ex.timed_out} "
            f"oom={ex.oom_killed} pids_limit={ex.pids_limit_hit} {ex.duration:.3f}s cpu={ex.cpu_time:.3f}s "
            f"peak={ex.peak_memory_bytes}", highlight=False)
        console.print(f"backend {iso.get('backend')} {iso.get('version') or ''}; held: {', '.join(held)}",
                      highlight=False)
        if missing:
            console.print(f"[yellow]not held:[/] {', '.join(missing)}", highlight=False)
        if iso.get("unsafe"):
            console.print("[bold red]UNSAFE: ran without any isolation (--unsafe-no-sandbox)[/]")
        console.print(f"digest {ex.digest()}", highlight=False)
    if ex.timed_out:
        raise typer.Exit(124)
    raise typer.Exit(ex.exit_code if ex.exit_code is not None else 128 + (ex.signal or 0))
