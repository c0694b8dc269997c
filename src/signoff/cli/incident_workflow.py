"""`signoff incident demo|grade|replay|redteam`: the incident in rooms (Crosswire, part 2).

Registered on `signoff incident` by `register(app)`; runs live under `<home>/incident-runs/`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from signoff.cli.context import console, print_json, settings
from signoff.demo.payco_shopco import scenario
from signoff.incident import service
from signoff.kernel.errors import NotFoundError, UsageError
from signoff.trust import KeyStore

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
FixtureOpt = Annotated[Path | None, typer.Option("--fixture", help="The payco-shopco fixture folder.")]


def runs_dir() -> Path:
    return service.runs_base(settings().home)


def _keys() -> KeyStore:
    return KeyStore(settings().keys_dir)


def resolve_run(run: str) -> Path:
    """A run folder, given as a path or as a run name under <home>/incident-runs."""
    return service.resolve_run(runs_dir(), run)


def print_demo(summary: dict[str, Any]) -> None:
    for step in summary["steps"]:
        console.print(f"  [dim]human:[/] {step}", highlight=False)
    console.print(f"incident {summary['incident']}: {summary['status']}", highlight=False)
    console.print(f"time to root cause {summary['time_to_root_cause_s']} s; "
                  f"time to close {summary['time_to_close_s']} s", highlight=False)
    bug = summary.get("bug") or {}
    console.print(f"before the fixes: {bug.get('rejected')} of {bug.get('events')} webhooks rejected", highlight=False)
    console.print(f"disclosures made {summary['disclosures_made']}; posts blocked by the guards "
                  f"{summary['posts_blocked_by_guards']}; approvals refused {summary['approvals_refused']}",
                  highlight=False)
    e2e = summary["e2e"]
    console.print(f"end-to-end after both fixes: {e2e['rejected']} of {e2e['events']} rejected", highlight=False)
    console.print(f"lines of code that crossed (measured against both repositories): {summary['code_lines_crossed']}",
                  highlight=False)
    grade = summary["grade"]
    passed = sum(1 for c in grade["checks"] if c["ok"])
    console.print(f"grader (through the room server): {passed}/{len(grade['checks'])} checks pass", highlight=False)
    console.print(f"run: {summary['run']}\nreplay: signoff incident replay {summary['recording']}", highlight=False)


def demo_summary(fixture: Path | None = None, base: Path | None = None, cards: bool = True,
                 operator: str | None = None, people: bool = False) -> dict[str, Any]:
    from signoff.rooms.client import RoomsConfig

    # With [rooms] url the run is provisioned there, as the operator (a signoff admin's user token).
    url = RoomsConfig.from_settings(settings()).url
    return service.demo(service.Demo(base or runs_dir(), scenario(fixture), cards, url, operator, people), _keys(),
                        settings())


def print_grade(result: dict[str, Any]) -> None:
    for c in result["checks"]:
        mark = "[green]PASS[/]" if c["ok"] else "[bold red]FAIL[/]"
        console.print(f"{mark} {c['name']}", highlight=False)
        console.print(f"     {c['detail']}", highlight=False, markup=False)
    console.print("[green]all checks pass[/]" if result["ok"] else "[bold red]the run does not pass[/]")


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo(fixture: FixtureOpt = None, as_json: JsonOpt = False,
             no_cards: Annotated[bool, typer.Option("--no-approval-cards", help=(
                 "Decide the fixes as a server without approval cards would (a Switch core): by the "
                 "human's exact command to the approver, checked against the message the server recorded."))]
             = False,
             operator: Annotated[str | None, typer.Option(
                 "--operator", envvar="SIGNOFF_ROOMS_OPERATOR", show_default=False,
                 help="With \\[rooms] url: an admin's user token on that server, to provision the run.")] = None,
             people: Annotated[bool, typer.Option("--people", help=(
                 "Wait for the real people's decisions (approvals, confirmations, fixes) from the console "
                 "(/incident/runs/RUN, as a person bound to their organisation) or their chat, instead of "
                 "scripted ones."))] = False,
             ) -> None:
        """The whole incident in three rooms, offline, with scripted humans; graded through the room
        server (the run's own, or with \\[rooms] url that server)."""
        if people and not as_json:
            console.print("waiting for people: decide on the run's page under /incident", highlight=False)
        summary = demo_summary(fixture, cards=not no_cards, operator=operator, people=people)
        if as_json:
            print_json(summary)
        else:
            print_demo(summary)
        raise typer.Exit(0 if summary["ok"] else 1)

    @app.command("grade")
    def grade_cmd(
        run: Annotated[str, typer.Argument(help="Run folder (or its name under <home>/incident-runs).")],
        as_json: JsonOpt = False,
    ) -> None:
        """Check a run from what the room server says happened; exit 0 only if every check passes."""
        result = service.grade(resolve_run(run), _keys())
        if as_json:
            print_json(result)
        else:
            print_grade(result)
        raise typer.Exit(0 if result["ok"] else 1)

    @app.command("replay")
    def replay_cmd(
        file: Annotated[Path, typer.Argument(help="A recording.jsonl (or the run folder holding one).")],
        as_org: Annotated[str | None, typer.Option("--as", help="Show only what one organisation could see.")] = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Reproduce a recorded run's timeline; `--as payco` shows only what PayCo could see."""
        path = file / "recording.jsonl" if file.is_dir() else file
        if not path.exists():
            raise NotFoundError(f"no recording at {path}", "pass a run's recording.jsonl")
        rows = service.replay(path, as_org)
        if as_json:
            print_json({"as": as_org, "events": rows})
            return
        for line in service.render(rows):
            console.print(line, highlight=False, markup=False)

    @app.command("postmortem")
    def postmortem_cmd(
        run: Annotated[str, typer.Argument(help="Run folder (or its name under <home>/incident-runs).")],
        markdown: Annotated[Path | None, typer.Option("--markdown", help="Write the Markdown here "
                                                      "(default: print it).")] = None,
        evidence: Annotated[Path | None, typer.Option("--evidence", help="Also write it as signed evidence into "
                                                      "this folder (with --org).")] = None,
        org: Annotated[str | None, typer.Option("--org", help="Whose approver key signs the evidence.")] = None,
    ) -> None:
        """A finished run's postmortem, from what both sides approved: as Markdown, and as signed evidence
        that `signoff evidence verify` checks."""
        run_dir = resolve_run(run)
        if evidence is not None and org is None:
            raise UsageError("signed evidence needs the organisation whose key signs it", "add --org payco (say)")
        text = service.postmortem_markdown(run_dir)
        if markdown is None:
            print(text, end="")
        else:
            markdown.write_text(text, encoding="utf-8")
            console.print(f"postmortem: {markdown}", highlight=False)
        if evidence is not None and org is not None:
            path = service.export_postmortem(run_dir, _keys(), org, evidence)
            console.print(f"signed evidence: {path}", highlight=False)

    @app.command("redteam")
    def redteam_cmd(fixture: FixtureOpt = None, as_json: JsonOpt = False) -> None:
        """Attack a live incident through the rooms and at its controls; exit 0 only if all were blocked."""
        result = service.redteam(runs_dir(), _keys(), settings(), scenario(fixture))
        if as_json:
            print_json(result)
        else:
            for a in result["attacks"]:
                mark = "[green]blocked[/]" if a["blocked"] else "[bold red]NOT BLOCKED[/]"
                console.print(f"{mark} \\[{a['kind']}] {escape(a['name'])}", highlight=False)
                console.print(f"     sent: {a['attack']}", highlight=False, markup=False)
                console.print(f"     {a['how']}", highlight=False, markup=False)
            console.print(f"live attacks blocked {result['live']['blocked']}/{result['live']['total']}; forbidden "
                          f"actions blocked {result['forbidden']['blocked']}/{result['forbidden']['total']}; "
                          f"code lines in any room: {result['code_lines_in_rooms']}", highlight=False)
        raise typer.Exit(0 if result["ok"] else 1)

    @app.command("preflight")
    def preflight_cmd(fixture: FixtureOpt = None, as_json: JsonOpt = False) -> None:
        """Before an incident: every control checked (pins, services, tokens, approver, roles, sandbox,
        guards), each pass or fail with its fix; exit 0 only if all pass."""
        checks = service.preflight(settings().home, _keys(), settings(), scenario(fixture))
        ok = all(c.ok for c in checks)
        if as_json:
            print_json({"ok": ok, "checks": [c.as_json() for c in checks]})
        else:
            for c in checks:
                mark = "[green]PASS[/]" if c.ok else "[bold red]FAIL[/]"
                console.print(f"{mark} {escape(c.name)}", highlight=False)
                console.print(f"     {c.detail}", highlight=False, markup=False)
                if not c.ok and c.fix:
                    console.print(f"     fix: {c.fix}", highlight=False, markup=False)
            console.print("[green]preflight passes[/]" if ok else "[bold red]preflight fails[/]")
        raise typer.Exit(0 if ok else 1)

    _ = (demo, grade_cmd, replay_cmd, postmortem_cmd, redteam_cmd, preflight_cmd, UsageError)
