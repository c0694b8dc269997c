"""`signoff notes`: release notes in which every number and hash is recomputed from git."""

from __future__ import annotations

import getpass
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from signoff.cli.context import console, err_console, fail, print_json, settings
from signoff.cli.output import heading
from signoff.cli.progress import reporting
from signoff.kernel.errors import UsageError

if TYPE_CHECKING:
    from signoff.notes import NotesService, RoomOutcome
    from signoff.rooms.client import RoomsConfig

app = typer.Typer(no_args_is_help=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
WriterOpt = Annotated[str, typer.Option("--writer", help="Agent role of the writer (signoff.toml \\[agents.ROLE]).")]
ScriptOpt = Annotated[str, typer.Option("--script", help="Scripted writer to use when the role is scripted: "
                                                     "default or demo.")]


def _login() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        raise UsageError("cannot tell who is deciding", "pass --by NAME") from None


def _notes() -> NotesService:
    """The notes service on this home's ledger, deciders as configured (`[notes] deciders`)."""
    from signoff.ledger import SqlLedger
    from signoff.notes import NotesService

    return NotesService.of(SqlLedger.open(settings()), settings())


def _out(path: Path) -> Path:
    if path.exists() and path.is_dir():
        raise UsageError(f"output {path} is a folder", "pass a file name with -o")
    return path


def _print_sentences(rows: list[dict[str, Any]]) -> None:
    for r in rows:
        status = r.get("status") or ("ok" if r.get("ok") else "FAIL")
        colour = "green" if status in ("ok", "approved") else "red" if status in ("FAIL", "rejected") else "yellow"
        console.print(f"[{colour}]{status:>8}[/] {r['id']}: {r['text']}  [dim]{' '.join(r['facts'])}[/]",
                      highlight=False)
        for e in [*r.get("errors", []), *r.get("judgments", [])]:
            pos = "" if e.get("position") is None else f" at {e['position']}"
            console.print(f"           {e['code']} {e['token']!r}{pos}: {e.get('detail') or e.get('reason')}",
                          highlight=False, markup=False)
        for u in r.get("unchecked", []):
            console.print(f"           not checkable {u['token']!r}: {u['kind']}", highlight=False, markup=False)


@app.command("snapshot")
def snapshot_cmd(
    repo: Annotated[Path, typer.Option("--repo", help="Git work tree.")] = Path("."),
    rev_range: Annotated[str | None, typer.Option("--range", help="A..B, or one revision (default HEAD).")] = None,
    merges: Annotated[bool, typer.Option("--merges/--no-merges",
                                                 help="Read merge commits (no file changes; default).")] = True,
    out: Annotated[Path, typer.Option("-o", "--out", help="Snapshot file to write.")] = Path("snapshot.json"),
) -> None:
    """Read commits and their file changes from git, streaming, into a snapshot file."""
    from signoff.notes import take_snapshot

    with reporting("notes snapshot") as progress:
        s = take_snapshot(repo, rev_range, _out(out), merges=merges, progress=progress)
    console.print(f"snapshot {s.path}: {s.commits} commits in {s.range}, {s.digest[:19]}", highlight=False)


@app.command("facts")
def facts_cmd(
    snapshot: Annotated[Path, typer.Argument(help="Snapshot file.")],
    out: Annotated[Path, typer.Option("-o", "--out", help="Facts file to write.")] = Path("facts.json"),
) -> None:
    """Number the facts (F1..Fn) a sentence may cite: commits, files, counts, derived comparisons."""
    from signoff.notes import build_facts

    f = build_facts(snapshot, _out(out))
    console.print(f"facts {f.path}: {f.count} facts from {f.commits} commits", highlight=False)


@app.command("draft")
def draft_cmd(
    facts: Annotated[Path, typer.Option("--facts", help="Facts file.")],
    out: Annotated[Path, typer.Option("-o", "--out", help="Draft file to write.")] = Path("draft.json"),
    writer: WriterOpt = "writer",
    script: ScriptOpt = "default",
) -> None:
    """Ask the writer agent for sentences citing facts."""
    from signoff.notes import make_draft, write_json

    doc = make_draft(facts, settings(), writer, script)
    write_json(_out(out), doc)
    w = doc.get("writer") or {}
    console.print(f"draft {out}: {len(doc['sentences'])} sentences by {w.get('provider')} ({w.get('kind')})",
                  highlight=False)


@app.command("verify")
def verify_cmd(
    snapshot: Annotated[Path, typer.Option("--snapshot", help="Snapshot file.")],
    facts: Annotated[Path, typer.Option("--facts", help="Facts file.")],
    draft: Annotated[Path, typer.Option("--draft", help="Draft file.")],
    as_json: JsonOpt = False,
) -> None:
    """Recompute cited facts from the snapshot and check every hash and number in every sentence.
    Exit 0 when every sentence passes, 1 otherwise."""
    from signoff.notes import load_draft, verify

    verdict = verify(snapshot, facts, load_draft(draft))
    if as_json:
        print_json(verdict)
    else:
        _print_sentences(verdict["sentences"])
        bad = sum(not s["ok"] for s in verdict["sentences"])
        console.print(f"{len(verdict['sentences']) - bad} of {len(verdict['sentences'])} sentences pass",
                      highlight=False)
    raise typer.Exit(0 if verdict["ok"] else 1)


@app.command("review")
def review_cmd(
    run: Annotated[str, typer.Argument(help="Run folder holding snapshot.json, facts.json and draft.json.")],
    writer: WriterOpt = "writer",
    script: ScriptOpt = "default",
    as_json: JsonOpt = False,
) -> None:
    """Verify, add the editor's OVERCLAIM judgments, and send rejected sentences back to the writer once."""
    from signoff.notes import review, run_dir

    doc = review(run_dir(run, settings()), settings(), writer, script)
    if as_json:
        print_json(doc)
        return
    for rnd in doc["rounds"]:
        heading(f"round {rnd['round']}")
        _print_sentences(rnd["sentences"])


@app.command("decide")
def decide_cmd(
    run: Annotated[str, typer.Argument(help="Run folder.")],
    command: Annotated[str, typer.Argument(help='"approve S1", "approve all", "reject S2", "edit S3 <text>", '
                                                '"ship"; each may name the digest it was shown: "approve S1 '
                                                '#3fa9c2d1e0b7" (from `signoff notes status`).')],
    by: Annotated[str | None, typer.Option("--by", help="Who decides (default: the login name).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Record one human decision (append-only; replayed in order, last decision wins). It is bound
    to the text it decides on: the one named by `#<digest>`, else the text printed here first."""
    from signoff.notes import bound, run_dir, what_is_decided

    notes, folder = _notes(), run_dir(run, settings())
    before = notes.state(folder)
    if not as_json:
        for line in what_is_decided(before, command):
            console.print(f"deciding on {line}", highlight=False, markup=False)
    # Bound to exactly what was printed (or to the digest the command names, from `status`).
    state = notes.decide(folder, bound(command, before), by or _login(), "cli")
    if as_json:
        print_json(state.as_json())
        return
    for s in state.sentences:
        mark = {"approved": "green", "rejected": "red"}.get(s.status, "yellow")
        console.print(f"[{mark}]{s.status:>8}[/] {s.id}{' (edited)' if s.edited else ''}: {s.text}",
                      highlight=False)
    if state.shipped:
        console.print("[bold green]shipped[/]: render with `signoff notes render RUN -o final.md`")


@app.command("status")
def status_cmd(run: Annotated[str, typer.Argument(help="Run folder.")], as_json: JsonOpt = False) -> None:
    """Replay the decisions and show each sentence's state and what still blocks shipping."""
    from signoff.kernel.shown import short
    from signoff.notes import run_dir

    status = _notes().status(run_dir(run, settings()))
    state, problems = status.state, status.blockers
    shown = {k: short(v) for k, v in status.shown.items()}
    whole = {"all": shown["all"], "ship": shown["ship"]}
    if as_json:
        print_json(status.as_json())
        return
    for s in state.sentences:
        console.print(f"{s.status:>8} {s.id} #{shown[s.id]}{' (edited)' if s.edited else ''}: {s.text} "
                      + "".join(f"[{f}]" for f in s.facts), highlight=False, markup=False)
    for p in problems:
        console.print(f"[red]blocks ship[/] {p}", highlight=False)
    console.print(f"decide on exactly this: approve all #{whole['all']} | ship #{whole['ship']} | approve S1 "
                  f"#<its digest>", highlight=False, markup=False)


@app.command("render")
def render_cmd(
    run: Annotated[str, typer.Argument(help="Run folder (shipped).")],
    out: Annotated[Path, typer.Option("-o", "--out", help="Markdown file to write.")] = Path("final.md"),
    commit_url: Annotated[str | None, typer.Option("--commit-url", help="Link template for hashes, e.g. "
                                                   "https://example.org/repo/commit/{hash}")] = None,
    pr_url: Annotated[str | None, typer.Option("--pr-url", help="Link template for the pull request ending a "
                                               "line, e.g. https://github.com/o/r/pull/{number}")] = None,
) -> None:
    """Write the shipped notes as Markdown with [F1] references and a facts appendix, export the
    decisions (decisions.jsonl) and sign evidence of the verification beside them in the run folder
    (notes.intoto.json)."""
    from signoff.notes import run_dir

    if commit_url is not None and "{hash}" not in commit_url:
        raise UsageError(f"--commit-url {commit_url!r} has no {{hash}} placeholder",
                         "pass a template such as https://example.org/repo/commit/{hash}")
    if pr_url is not None and "{number}" not in pr_url:
        raise UsageError(f"--pr-url {pr_url!r} has no {{number}} placeholder",
                         "pass a template such as https://github.com/owner/repo/pull/{number}")
    text, evidence = _notes().publish(run_dir(run, settings()), settings(), commit_url, pr_url)
    _out(out).write_text(text, encoding="utf-8")
    console.print(f"wrote {out}; evidence {evidence} (check with `signoff evidence verify`)", highlight=False)


@app.command("grade")
def grade_cmd(
    file: Annotated[Path, typer.Argument(help="Markdown to grade (ours or any baseline).")],
    snapshot: Annotated[Path, typer.Option("--snapshot", help="Snapshot file.")],
    repo: Annotated[Path | None, typer.Option("--repo", help="The repository the snapshot was taken from (by "
                                              "default the current directory, when it holds the snapshot's "
                                              "tip): the diff of a pull request an item credits is read where "
                                              "its messages leave the item uncertain.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Read the claims of any changelog by meaning and check each against git: supported,
    unsupported (with what git says) or not checkable (with its kind). Exit 1 when any claim is
    unsupported."""
    from signoff.notes import grade, repository_here

    if repo is None and snapshot.is_file():
        repo = repository_here(snapshot, Path.cwd())
    result = grade(file, snapshot, repo)
    if as_json:
        print_json(result)
    else:
        c, s = result["claims"], result["sentences"]
        console.print(f"{file}: {c['supported']}/{c['total']} claims supported ({c['pct']}%), "
                      f"{s['supported']}/{s['checkable']} checkable sentences supported ({s['pct']}%), "
                      f"{c['not_checkable']} not checkable", highlight=False)
        for u in result["unsupported"]:
            console.print(f"  unsupported: {u['kind']} {u['token']!r} ({u['reason']}) in: {u['sentence']}",
                          highlight=False, markup=False)
        kinds: dict[str, int] = {}
        for u in result["not_checkable"]:
            kinds[u["why"]] = kinds.get(u["why"], 0) + 1
        for why, n in sorted(kinds.items()):
            console.print(f"  not checkable: {n} x {why}", highlight=False)
    raise typer.Exit(0 if result["ok"] else 1)


@app.command("run")
def run_cmd(
    repo: Annotated[Path, typer.Option("--repo", help="Git work tree.")] = Path("."),
    rev_range: Annotated[str | None, typer.Option("--range", help="A..B, or one revision (default HEAD).")] = None,
    out: Annotated[Path, typer.Option("--out", help="Run folder to create.")] = Path("notes-run"),
    merges: Annotated[bool, typer.Option("--merges/--no-merges", help="Read merge commits (default).")] = True,
    writer: WriterOpt = "writer",
    script: ScriptOpt = "default",
    as_json: JsonOpt = False,
) -> None:
    """Snapshot, facts, draft, verify and review in one go; then decide, ship and render."""
    from signoff.notes import start_run

    result = start_run(repo, rev_range, out, settings(), merges, writer, script)
    if as_json:
        print_json(result)
        return
    console.print(f"run {out}: {result['commits']} commits, {result['facts']} facts, "
                  f"{result['rounds']} review round(s)", highlight=False)
    _print_sentences(result["sentences"])
    console.print(f'next: signoff notes decide {out} "approve all" && signoff notes decide {out} ship',
                  highlight=False)


def _poll_external(folder: Path, config: RoomsConfig, role: str, room: str, deciders: list[str]) -> list[RoomOutcome]:
    """On the server at [rooms] url, as the agent `signoff rooms connect` registered for `role`."""
    import asyncio

    from signoff.ledger import SqlLedger
    from signoff.notes import NotesService, poll_room_client
    from signoff.rooms.client import Identities, RoomsClient

    if not config.people:
        fail("on an external server the deciders must be bound by sender id",
             "add [rooms.people] NAME = \"<sender id as the server writes it>\" for each decider")
    name = config.key(role)["name"]
    ledger = SqlLedger.open(settings())

    async def poll() -> list[RoomOutcome]:
        async with RoomsClient(config.agent_transport(role)) as client:
            return await poll_room_client(NotesService.of(ledger, settings()), folder, client, name, room, deciders,
                                          Identities.configured(config.people))

    try:
        return asyncio.run(poll())
    finally:
        ledger.close()


@app.command("room")
def room_cmd(
    run: Annotated[str, typer.Argument(help="Run folder.")],
    room: Annotated[str, typer.Option("--room", help="Room id the decisions are made in.")],
    agent: Annotated[str, typer.Option("--agent", help="Name of the notes agent people address "
                                       "(with \\[rooms] url: its role under \\[rooms.roles]).")] = "notes",
    decider: Annotated[list[str] | None, typer.Option("--decider", help="A user who may decide (repeat).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Apply the decisions people addressed to the notes agent in a room (`@notes approve S1`), on the
    embedded server or, with \\[rooms] url, on that server (deciders bound under \\[rooms.people])."""
    from signoff.ledger import SqlLedger
    from signoff.notes import NotesService, outcomes_json, poll_room, run_dir
    from signoff.rooms import RoomService
    from signoff.rooms.client import Identities, RoomsConfig

    folder = run_dir(run, settings())
    config = RoomsConfig.from_settings(settings())
    err_console.print(config.server_line(), highlight=False, markup=False)
    people = config.people  # [rooms.people]: who each sender id is
    if config.embedded:
        rooms = RoomService(SqlLedger.open(settings()))
        notes = NotesService.of(rooms.ledger, settings())
        outcomes = poll_room(notes, folder, rooms, rooms.agent_by_name(agent), room, decider or [],
                             Identities.configured(people) if people else None)
    else:
        outcomes = _poll_external(folder, config, agent, room, decider or [])
    if as_json:
        print_json(outcomes_json(outcomes))
        return
    for o in outcomes:
        mark = "[green]applied[/]" if o.applied else "[red]refused[/]"
        console.print(f"{mark} {o.command!r} from {o.sender}: {o.detail}", highlight=False)
    if not outcomes:
        console.print("no new decisions in the room")


AGENT_ROLES = {"scout": "notes-scout", "writer": "notes-writer", "editor": "notes-editor"}


@app.command("agent")
def agent_cmd(
    role: Annotated[str, typer.Argument(help="scout, writer or editor.")],
    room: Annotated[str, typer.Option("--room", help="Room id the agents work in.")],
    repo: Annotated[Path | None, typer.Option("--repo", help="Git work tree (scout and editor).")] = None,
    writer: WriterOpt = "writer",
    script: ScriptOpt = "default",
) -> None:
    """Run one of notes' room agents until stopped: the scout takes snapshot and facts from git when a
    person asks (`@notes-scout notes A..B`), the writer drafts and revises, the editor re-checks
    against git, verifies and judges; each hands over by an addressed, receipt-checked message. On
    the embedded server, or with \\[rooms] url as the agent registered for role notes-ROLE."""
    import asyncio

    from signoff.ledger import SqlLedger, checkpointing
    from signoff.notes import Crew, NotesAgent, check_options
    from signoff.rooms.client import AgentLoop, Identities, RoomsConfig

    if role not in AGENT_ROLES:
        raise UsageError(f"unknown notes agent {role!r}", f"use one of: {', '.join(AGENT_ROLES)}")
    key = AGENT_ROLES[role]
    check_options(key, repo)
    config = RoomsConfig.from_settings(settings())
    err_console.print(config.server_line(), highlight=False, markup=False)
    crew = Crew({r: config.agent_name(r) for r in AGENT_ROLES.values()})
    ledger = SqlLedger.open(settings())
    try:
        identities: Identities | None = Identities.configured(config.people) if config.people else None
        if config.embedded:
            from signoff.rooms.client import embedded_rooms

            rooms = embedded_rooms(ledger)
            rooms.room(room)  # NotFoundError for an unknown room
            identities = identities or Identities.of_directory(rooms.members(room))
        transport = config.stream_transport(key, ledger)
        agent = NotesAgent(key, settings(), ledger, room, crew, identities, repo, writer, script)

        async def serve() -> None:
            # Other processes write what this one streams: on the embedded server, its housekeeping.
            beside = [asyncio.create_task(work()) for work in config.housekeeping(ledger)]
            try:
                async with AgentLoop(transport, ledger, [room], agent.handle, agent_name=agent.name) as loop:
                    await loop.catch_up()  # what it missed while down (a restarted Switch core never streams it)
                    console.print(f"{agent.name} ready in room {room}", highlight=False)
                    sys.stdout.flush()  # whoever started this process waits for that line
                    await loop.run()
            finally:
                for task in beside:
                    task.cancel()

        with checkpointing(ledger, settings()):  # the head is signed on a schedule while the agent runs
            asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    finally:
        ledger.close()
