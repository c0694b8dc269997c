"""`signoff demo`: every workflow end to end, offline, on embedded defaults.

`signoff demo` alone runs each demo in turn; `signoff demo NAME` runs one. Workflows add their demo
as a subcommand of `app` (see DEMOS for the order they run in).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

from signoff.cli.context import print_json, settings
from signoff.cli.output import heading
from signoff.cli.progress import reporting
from signoff.kernel.progress import Progress
from signoff.kernel.settings import Settings

app = typer.Typer(invoke_without_command=True)

# name -> runner(as_json, progress, **options) returning a JSON-able summary; registered in the order
# they run (`signoff demo` alone runs each with its default options).
DemoFn = Callable[..., dict[str, Any]]
DEMOS: dict[str, DemoFn] = {}
EVERY: list[str] = []  # the demos `signoff demo` alone runs, in order (the others run by name only)


def run_demo(name: str, as_json: bool, **options: Any) -> dict[str, Any]:
    """One demo with its progress on standard error (its result and story go to standard output)."""
    with reporting(f"demo {name}") as progress:
        progress("running")
        summary = DEMOS[name](as_json, progress, **options)
        leave_checkpoint(settings())
        return summary


def leave_checkpoint(s: Settings) -> None:
    """Every demo ends with the head of the home's ledger signed: checkpoints are the default, and
    `signoff ledger verify` fails on a ledger that has none."""
    from signoff.ledger import SqlLedger, checkpointer

    ledger = SqlLedger.open(s)
    try:
        checkpointer(ledger, s).sign_if_moved()
    finally:
        ledger.close()


def finish(summary: dict[str, Any], as_json: bool) -> None:
    """A demo command's ending: its summary as JSON when asked, and exit 1 when it did not hold."""
    if as_json:
        print_json(summary)
    if summary.get("ok") is False:
        raise typer.Exit(1)


def register(name: str, help_text: str, command: Callable[..., None] | None = None,
             every: bool = True) -> Callable[[DemoFn], DemoFn]:
    """Add a demo; `command` is its own `signoff demo NAME` when it takes options besides --json;
    `every=False` leaves it out of `signoff demo` alone."""
    def wrap(fn: DemoFn) -> DemoFn:
        DEMOS[name] = fn
        if every:
            EVERY.append(name)

        def plain(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
            finish(run_demo(name, as_json), as_json)

        chosen = command or plain
        chosen.__doc__ = help_text
        app.command(name, help=help_text)(chosen)
        return fn

    return wrap


@app.callback()
def all_demos(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Run every demo in turn (or name one)."""
    if ctx.invoked_subcommand is not None:
        return
    results = {}
    for name in EVERY:
        if not as_json:
            heading(f"demo {name}")
        results[name] = run_demo(name, as_json)
    if as_json:
        print_json(results)
    if any(r.get("ok") is False for r in results.values()):
        raise typer.Exit(1)


@register("ledger", "The foundation: ledger events, an outbox delivery, signed evidence verified offline.")
def demo_ledger(as_json: bool, progress: Progress) -> dict[str, Any]:
    from signoff.demo.ledger import run

    return run(settings(), quiet=as_json)


# Demos register themselves on import, so every one is there by name in any process (`signoff demo
# agents` was missing unless `signoff.cli.agents` had been imported first); each import is optional
# until its workflow lands.
def _load_workflow_demos() -> None:
    import importlib

    for module in ("signoff.demo.repair", "signoff.demo.notes", "signoff.demo.incident",
                   "signoff.demo.desk", "signoff.demo.agents"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


_load_workflow_demos()
