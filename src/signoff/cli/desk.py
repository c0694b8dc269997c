"""`signoff desk ...`: operate the bug desk (local forge, credentials, bugs, approvals, merges,
deployments, the engineering service and the concierge)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

import signoff.demo.shoplite_agents  # noqa: F401  (the desk's offline default agents: scripted, for ShopLite)
from signoff.cli.context import console, err_console, print_json, settings
from signoff.cli.progress import reporting
from signoff.kernel.errors import NotFoundError, UsageError
from signoff.kernel.ids import check_id
from signoff.kernel.tls import tls_context

app = typer.Typer(no_args_is_help=True)
forge_app = typer.Typer(no_args_is_help=True)
app.add_typer(forge_app, name="forge", help="The local forge: change requests, reviews, webhook deliveries.")
crew_app = typer.Typer()
app.add_typer(crew_app, name="crew", help="The desk crew: room agents, their rooms and policies, their status.")

Json = Annotated[bool, typer.Option("--json", help="Print JSON.")]
Token = Annotated[str | None, typer.Option("--token", envvar="SIGNOFF_DESK_TOKEN",
                                           help="Your desk credential (or SIGNOFF_DESK_TOKEN).")]


def _desk() -> Any:
    from signoff.desk.service import open_desk

    return open_desk(settings())


def _actor(desk: Any, token: str | None) -> Any:
    if not token:
        raise UsageError("this command needs your desk credential", "pass --token or set SIGNOFF_DESK_TOKEN")
    return desk.credentials.authenticate(token)


@app.command("init")
def init(source: Annotated[Path | None, typer.Option(
             "--source", help="The project's files, for a forge repository not yet created "
                              "(default: the ShopLite example of a source checkout).")] = None,
         owner: Annotated[list[str] | None, typer.Option(
             "--owner", help="A person to issue an owner credential to (repeat for each; default: "
                             "\\[desk] owner and the people of \\[desk.people]).")] = None,
         as_json: Json = False) -> None:
    """Create the project's repository in the local forge and one credential per role (shown once)."""
    from signoff.desk.service import configured_owners, init_local

    s = settings()
    people = tuple(dict.fromkeys(check_id("owner name", n.strip()) for n in owner)) if owner else \
        configured_owners(s)
    local = init_local(s, source=source or _shoplite(), people=people)
    out = {"repo": str(local.desk.forge.path(local.desk.config.repo)), "tokens": local.tokens}
    if as_json:
        print_json(out)
        return
    console.print(f"forge repository: {out['repo']}")
    for role, token in local.tokens.items():
        console.print(f"{role}: {token}")
    console.print("These tokens are shown once; only their digests are stored.")


def _shoplite() -> Path | None:
    """The ShopLite example's files in a source checkout (the default project of `desk init`), if any."""
    from signoff.demo.fixture import shoplite_source

    try:
        return shoplite_source()
    except NotFoundError:
        return None


@app.command("credential")
def credential(role: str, name: str, bot: Annotated[bool, typer.Option("--bot")] = False,
               shared: Annotated[bool, typer.Option("--shared")] = False, as_json: Json = False) -> None:
    """Issue a credential: ROLE is concierge, engineering, owner or recorder."""
    from signoff.desk.service import Credentials

    desk = _desk()
    token = Credentials(desk.ledger).issue(role, name, human=not bot, shared=shared)
    if as_json:
        print_json({"role": role, "name": name, "token": token})
    else:
        console.print(token)


@app.command("credentials")
def credentials_list(as_json: Json = False) -> None:
    """List the credentials issued (role, name, kind, revoked); never a token or its digest."""
    from signoff.cli.output import add_data_row, data_table
    from signoff.desk.service import Credentials

    rows = Credentials(_desk().ledger).list()
    if as_json:
        print_json(rows)
        return
    table = data_table("role", "name", "human", "shared", "revoked")
    for r in rows:
        add_data_row(table, str(r["role"]), str(r["name"]), str(r.get("human", False)), str(r.get("shared", False)),
                     str(r["revoked"]))
    console.print(table)


@app.command("revoke")
def revoke(role: str, name: str, as_json: Json = False) -> None:
    """Revoke every live credential of ROLE issued to NAME: its token stops working for the API, the
    command line and the pages at once (issue a new one with `signoff desk credential`)."""
    from signoff.desk.service import Credentials

    count = Credentials(_desk().ledger).revoke_named(role, name)
    if as_json:
        print_json({"role": role, "name": name, "revoked": count})
    else:
        console.print(f"revoked {count} {role} credential{'s' if count != 1 else ''} of {name}", highlight=False)


@app.command("report")
def report(title: Annotated[str, typer.Option()], component: Annotated[str, typer.Option()] = "",
           steps: Annotated[str, typer.Option()] = "", expected: Annotated[str, typer.Option()] = "",
           actual: Annotated[str, typer.Option()] = "", as_json: Json = False) -> None:
    """File a report through the public intake (the airlock runs first)."""
    from signoff.desk.service import Quarantined

    fields = {k: v for k, v in {"title": title, "component": component, "steps": steps, "expected": expected,
                                "actual": actual}.items() if v}
    try:
        out = _desk().submit_report(fields, client="cli").as_json()
    except Quarantined as exc:
        if as_json:
            print_json({"quarantined": True, "families": exc.families, "message": exc.message})
        else:
            console.print(f"quarantined ({', '.join(exc.families)}): {exc.message}")
        raise typer.Exit(1) from exc
    if as_json:
        print_json(out)
    else:
        console.print(f"{out['report_id']} joined {out['bug_id']}; tracking link (shown once): {out['tracking_url']}")


@app.command("bugs")
def bugs(as_json: Json = False) -> None:
    """List bugs and their states."""
    rows = [b.summary() for b in _desk().bugs()]
    if as_json:
        print_json({"bugs": rows})
        return
    for r in rows:
        extra = f" needs a human: {r['needs_human']}" if r["needs_human"] else ""
        console.print(f"{r['bug_id']}  {r['state']:<18} round {r['round']}  {len(r['reports'])} report(s)  "
                      f"{r['title']}{extra}")


@app.command("show")
def show(bug_id: str, as_json: Json = False) -> None:
    """A bug's events, evidence files, advisory notes, smoke checks and disputes."""
    out = _desk().record(bug_id)
    if as_json:
        print_json(out)
        return
    summary = out["summary"]
    console.print(f"{bug_id}: {summary['state']} (round {summary['round']}) {summary['title']}")
    for entry in out["log"]:
        console.print(f"  v{entry['version']:<3} {entry['at']}  {entry['type']}")
    for path in out["evidence"]:
        console.print(f"  evidence (measured): {path}")
    for n in out["notes"]:
        console.print(f"  note ({n['type']}, {n.get('evidence_kind')}): advisory, never a decision")
    for s in out["smoke"]:
        result = "ok" if s["ok"] else f"failed: {s.get('why')}"
        console.print(f"  smoke check ({s['evidence_kind']}): round {s['round']} {result}; commit "
                      f"{str(s.get('commit', ''))[:12]} at {', '.join(s.get('urls') or [])} by {s.get('by')}",
                      markup=False, highlight=False)
    for d in summary["disputes"]:
        state = "accepted" if d["accepted"] else "open"
        console.print(f"  dispute {d['index']} ({state}): {d['report_id']} answered {d['answer']!r} to the "
                      f"{d['question']} question of round {d['round']}, after it was asked: not counted")


@app.command("approve")
def approve(bug_id: str, head: Annotated[str | None, typer.Option(help="The head SHA you reviewed.")] = None,
            token: Token = None, as_json: Json = False) -> None:
    """Approve the exact head of a bug's change request (owner credential)."""
    from signoff.desk.service import ApproveChange, execute

    desk = _desk()
    who = _actor(desk, token)
    bug = desk.bug(bug_id)
    if head is None:
        raise UsageError("name the head you reviewed", f"pass --head {bug.change['head'] if bug.change else 'SHA'}")
    out = execute(desk, who, ApproveChange(bug_id, head)).summary()
    print_json(out) if as_json else console.print(f"approved {head[:12]} of {bug_id}")


@app.command("accept-dispute")
def accept_dispute(bug_id: str, index: int, token: Token = None, as_json: Json = False,
                   shown: Annotated[str | None, typer.Option(
                       help="The digest of the dispute you read (printed without it).")] = None) -> None:
    """Agree with a "no" from a reporter who joined the bug after the question was asked (a human owner):
    the bug reopens for a new reproduction; the test is not put on the rejected list. Without --shown it
    prints the dispute and its digest and records nothing."""
    from signoff.desk.service import AcceptDispute, dispute_digest, execute

    desk = _desk()
    if shown is None:
        disputes = desk.bug(bug_id).disputes
        if 0 <= index < len(disputes):
            d = disputes[index]
            console.print(f"dispute {index} of {bug_id}: report {d.get('report_id')} answered {d.get('answer')} "
                          f"to the {d.get('question')} question (round {d.get('round')}): {d.get('reason') or ''}",
                          highlight=False, markup=False)
            raise UsageError("name the dispute you read",
                             f"pass --shown {dispute_digest(bug_id, d)[:12]} to agree with the text above")
    out = execute(desk, _actor(desk, token), AcceptDispute(bug_id, index, shown, via="cli")).summary()
    print_json(out) if as_json else console.print(f"{bug_id} reopened (round {out['round']}) on dispute {index}")


@app.command("merge")
def merge(bug_id: str, head: Annotated[str | None, typer.Option(help="The head SHA you reviewed.")] = None,
          token: Token = None, as_json: Json = False) -> None:
    """Merge a bug's change request in the local forge (a human owner; the desk checks first). It
    merges the head named by --head, else the head printed here first, and no other."""
    from signoff.desk.service import MergeChange, execute

    desk = _desk()
    who = _actor(desk, token)
    bug = desk.bug(bug_id)
    if head is None and bug.change is not None:
        head = str(bug.change["head"])
        if not as_json:
            console.print(f"merging head {head} of {bug_id}", highlight=False)
    sha = execute(desk, who, MergeChange(bug_id, head or ""))  # no change request: refused as such
    desk.deliver_forge_webhooks()
    out = {"merge_commit": sha, "state": desk.bug(bug_id).state}
    print_json(out) if as_json else console.print(f"merged as {sha[:12]}; {bug_id} is {out['state']}")


@app.command("sync")
def sync(bug_id: str, token: Token = None, as_json: Json = False) -> None:
    """Read a change's head and reviews from the forge's API (GitHub's in GitHub mode), for a webhook
    that was lost or late (owner credential)."""
    desk = _desk()
    out = desk.sync_change(_actor(desk, token), bug_id)
    print_json(out) if as_json else console.print(
        f"{bug_id}: head {out['head'][:12]}, approvals: {', '.join(out['approvals']) or 'none'}")


@app.command("history")
def history(token: Token = None, as_json: Json = False) -> None:
    """Look for recorded merge commits the forge no longer has, replaced by a commit with the same tree
    (a rewritten history); each is recorded as a `history.rewritten` observation, never as an approval."""
    desk = _desk()
    out = {"rewritten": desk.observe_history(_actor(desk, token))}
    if as_json:
        print_json(out)
        return
    for r in out["rewritten"]:
        console.print(f"{r['bug_id']}: {r['old'][:12]} was replaced by {r['new'][:12]} (same tree)")
    if not out["rewritten"]:
        console.print("no rewritten history")


@app.command("deploy-record")
def deploy_record(commit: Annotated[str, typer.Option()], url: Annotated[str, typer.Option()],
                  environment: Annotated[str, typer.Option()] = "production",
                  also: Annotated[list[str] | None, typer.Option(
                      "--also", help="Another URL of the same deployment (repeatable).")] = None,
                  token: Token = None, as_json: Json = False) -> None:
    """Record a deployment (recorder credential): exact commit, required checks (GitHub), health and
    the same assets on every URL, ancestry."""
    desk = _desk()
    out = desk.record_deployment(_actor(desk, token), desk.config.repo, commit, environment, url,
                                 also=also or ())
    print_json(out) if as_json else console.print(json.dumps(out))
    if out["outcome"] != "deployment_recorded":
        raise typer.Exit(1)


@app.command("work")
def work(token: Token = None, as_json: Json = False) -> None:
    """Run the engineering service until no work is due (engineering credential)."""
    from signoff.desk.service import EngineeringService
    from signoff.ledger import checkpointing

    desk = _desk()
    with reporting("desk work") as progress, checkpointing(desk.ledger, desk.settings):
        n = EngineeringService(desk, _actor(desk, token)).drain(progress=progress)
    print_json({"handled": n}) if as_json else console.print(f"handled {n} work item(s)")


@app.command("deliver")
def deliver(token: Token = None, as_json: Json = False) -> None:
    """Deliver due notifications to tracking pages (concierge credential)."""
    from signoff.desk.service import Concierge

    desk = _desk()
    n = Concierge(desk, _actor(desk, token)).drain()
    print_json({"delivered": n}) if as_json else console.print(f"delivered {n} notification(s)")


@forge_app.command("list")
def forge_list(as_json: Json = False) -> None:
    """Change requests in the local forge."""
    desk = _desk()
    rows = desk.forge.changes(desk.config.repo)
    if as_json:
        print_json({"changes": rows})
        return
    for c in rows:
        state = "merged" if c.get("merged") else ("draft" if c.get("draft") else "open")
        console.print(f"#{c['number']} {state} head {c['head'][:12]} {c['title']}")


@forge_app.command("review")
def forge_review(number: int, login: str, state: Annotated[str, typer.Option()] = "approved",
                 bot: Annotated[bool, typer.Option("--bot")] = False) -> None:
    """Submit a review in the local forge as LOGIN and deliver the webhook."""
    desk = _desk()
    desk.forge.review(desk.config.repo, number, login, state, "Bot" if bot else "User")
    desk.deliver_forge_webhooks()
    console.print(f"{login} reviewed #{number}: {state}")


@forge_app.command("deliver")
def forge_deliver() -> None:
    """Deliver the forge's pending webhooks to the desk, signed."""
    console.print(f"delivered {_desk().deliver_forge_webhooks()} webhook(s)")


@forge_app.command("secret")
def forge_secret() -> None:
    """Print where the webhook secret lives (set the same secret on GitHub in GitHub mode)."""
    desk = _desk()
    desk.webhook_secret()
    console.print(str(settings().home / "desk" / "webhook.secret"))



@crew_app.callback(invoke_without_command=True)
def crew(ctx: typer.Context, url: Annotated[str | None, typer.Option(
             help="The server running the crew (default: \\[rooms] url); without one, this home's database "
                  "as it stands.")] = None,
         token: Token = None, as_json: Json = False) -> None:
    """Each crew role's status (connected only with an open stream and a heartbeat under 90 s),
    the policy drift and the refused commands, as the server sees them (without one, as this home's
    database holds them)."""
    if ctx.invoked_subcommand is not None:
        return
    from signoff.desk.service import crew_view, recorded
    from signoff.rooms import RoomService
    from signoff.rooms.client import RoomsConfig

    keys = RoomsConfig.from_settings(settings())
    desk = None if url else _desk()
    remote = desk is not None and (crew_record := recorded(desk.ledger)) is not None and crew_record.server
    server = url or (None if remote else keys.url)
    if server is not None:
        out = _server_crew(server, token)
    else:
        assert desk is not None
        out = crew_view(desk.ledger, RoomService(desk.ledger), keys=keys)
        if not remote:
            out["view"] = ("this home's database as it stands (no server asked, nothing swept here): a member "
                           "beating on this database shows as connected; a stopped one stays stale (a killed one "
                           "first connected, until its last heartbeat is 90 s old) until `signoff serve` or a crew "
                           "process on this database sweeps its connection, then not running")
    if as_json:
        print_json(out)
        return
    if not out["set_up"]:
        console.print("the desk has no crew yet: run `signoff desk crew setup --owner <user>`")
        return
    if "view" in out:
        console.print(f"view: {out['view']}")
    for r in out["roles"]:
        beat = "no heartbeat" if r["last_beat_seconds"] is None else f"last heartbeat {r['last_beat_seconds']} s ago"
        console.print(f"{r['role']:<11} {r['agent']:<16} {r['state']:<12} {beat}")
    if out["drift"] is None:
        console.print(f"policies: read at setup only on {out['server']} (`signoff desk crew setup` reports drift)")
    for d in out["drift"] or []:
        console.print(f"policy drift: {d}")
    for r in out["refusals"]:
        console.print(f"refused: {r['sender_role'] or r['sender']} sent {r['text']!r}: {r['why']}")
    for i in out.get("ignored", []):
        console.print(f"ignored by {i['by']}: {_ignored_what(i)}: {i['why']}")


def _ignored_what(entry: dict[str, Any]) -> str:
    """What a crew member ignored: a command (an engineering member), or an answer on a card (the
    concierge records the answer and its card, not a command)."""
    if "command" in entry:
        return repr(entry["command"])
    card = f" on card {entry['card']}" if entry.get("card") else ""
    return f"answer {str(entry.get('answer', ''))!r}{card}"


def _server_crew(url: str, token: str | None) -> Any:
    import httpx

    from signoff.kernel.errors import UnavailableError
    from signoff.kernel.wire import error_of

    if not token:
        raise UsageError("reading the crew from a server needs an owner credential",
                         "pass --token or set SIGNOFF_DESK_TOKEN")
    try:
        response = httpx.get(f"{url.rstrip('/')}/desk/crew", headers={"Authorization": f"Bearer {token}"},
                             timeout=30, verify=tls_context())
    except httpx.TransportError as exc:
        raise UnavailableError(f"cannot reach {url}: {exc!r}", "is `signoff serve` running there?") from exc
    if response.status_code >= 400:
        raise error_of(response, f"GET {url}/desk/crew", "check the owner credential")
    return response.json()


@crew_app.command("setup")
def crew_setup(owner: Annotated[str, typer.Option(help="The rooms user who owns the crew (a person).")],
               operator: Annotated[str | None, typer.Option(
                   "--operator", envvar="SIGNOFF_ROOMS_OPERATOR", show_default=False,
                   help="With \\[rooms] url: an operator credential on that server (a signoff admin's user "
                        "token, or EMAIL:PASSWORD for a Switch gateway).")] = None,
               as_json: Json = False) -> None:
    """Register the crew as room agents (keys to the rooms keys file, mode 0600), create the public
    intake and engineering rooms, set each agent's addressing policy and read it back. Run again,
    it reports any drift and sets the policies again. With \\[rooms] url, all of it on that server
    through its public faces (--operator)."""
    from signoff.desk.service import setup_crew, setup_remote
    from signoff.rooms import RoomService
    from signoff.rooms.client import RoomsConfig

    desk = _desk()
    config = RoomsConfig.from_settings(settings())
    url = config.url
    err_console.print(config.server_line(), highlight=False, markup=False)
    if url is None:
        crew, drift = setup_crew(RoomService(desk.ledger), settings(), owner)
    elif not operator:
        raise UsageError(f"[rooms] url is set ({url}): the crew is set up there as an operator",
                         "pass --operator CREDENTIAL (an admin's user token, or EMAIL:PASSWORD for a Switch "
                         "gateway login) or set SIGNOFF_ROOMS_OPERATOR")
    else:
        crew, drift = setup_remote(desk.ledger, settings(), owner, operator)
    out = crew.as_json() | {"drift_found": drift}
    if as_json:
        print_json(out)
        return
    for role, agent_id in crew.agents.items():
        console.print(f"{role:<11} {crew.agent_name(role):<16} {agent_id}")
    console.print(f"intake room {crew.intake_room}; engineering room {crew.engineering_room}")
    for d in drift:
        console.print(f"drift found and corrected: {d}")
    console.print("policies set and read back: as the desk set them")


@crew_app.command("run")
def crew_run(role: Annotated[list[str] | None, typer.Option(
                 "--role", help="A role to run (repeat; default: the whole crew).")] = None,
             url: Annotated[str | None, typer.Option(
                 help="The rooms server (`signoff serve` on this home); default: \\[rooms] url, else in process.")]
             = None,
             token: Token = None,
             concierge_token: Annotated[str | None, typer.Option(
                 "--concierge-token", envvar="SIGNOFF_DESK_CONCIERGE_TOKEN",
                 help="The desk's concierge credential (for --role concierge).")] = None) -> None:
    """Run crew members until stopped (SIGTERM or Ctrl-C): each an agent loop, the concierge in the
    public intake room, the others in the engineering room. The manager needs the engineering
    credential (--token or SIGNOFF_DESK_TOKEN), the concierge the concierge credential
    (--concierge-token or SIGNOFF_DESK_CONCIERGE_TOKEN); the others hold none."""
    import asyncio

    from signoff.desk.service import PROCESS_ROLES, require_crew, serve_crew

    roles = list(role or PROCESS_ROLES)
    for r in roles:
        if r not in PROCESS_ROLES:
            raise UsageError(f"{r!r} does not run as a crew process",
                             f"run one of {', '.join(PROCESS_ROLES)}")
    desk = _desk()
    crew = require_crew(desk.ledger)
    engineering = _actor(desk, token) if "manager" in roles else None
    if engineering is not None and engineering.role != "engineering":
        raise UsageError("the manager needs the engineering credential", "pass the dke_... token")
    concierge = None
    if "concierge" in roles:
        if not concierge_token:
            raise UsageError("the concierge needs the desk's concierge credential",
                             "pass --concierge-token or set SIGNOFF_DESK_CONCIERGE_TOKEN")
        concierge = desk.credentials.authenticate(concierge_token)
        if concierge.role != "concierge":
            raise UsageError("the concierge runs with the concierge credential only",
                             "pass the concierge's token, not another role's")
    server = url or _rooms_url()
    if crew.server is not None and (server or "").rstrip("/") != crew.server:
        raise UsageError(f"the crew was set up on {crew.server}, not {server or 'this home`s own server'}",
                         f"run it with --url {crew.server} (or that [rooms] url)")
    from signoff.ledger import checkpointing

    with checkpointing(desk.ledger, desk.settings):  # the head is signed on a schedule while the crew runs
        asyncio.run(serve_crew(desk, crew, roles, server, engineering,
                                          lambda line: console.print(line), concierge=concierge))


@crew_app.command("link")
def crew_link(report_id: Annotated[str, typer.Argument(help="The report (R-...).")],
              user: Annotated[str, typer.Argument(help="The rooms user who filed it; or, with the crew on an external "
                                                       "server, a role under \\[rooms.roles] whose agent stands in "
                                                       "for them (on Switch, where people come through bridges).")],
              operator: Annotated[str | None, typer.Option(
                  "--operator", envvar="SIGNOFF_ROOMS_OPERATOR", show_default=False,
                  help="With the crew on an external signoff server: that server's admin's (or the crew owner's) "
                       "user token (not needed for a stand-in).")] = None,
              as_json: Json = False) -> None:
    """Link a report to the person who filed it, so the concierge asks them its cards (or, where the
    server has none, its questions) and answers them about it: a rooms user on this home's server,
    a user of the external signoff server the crew is on (--operator), or the agent standing in for
    the reporter (a role of this home, registered with `signoff rooms connect`)."""
    from signoff.desk.service import link_remote, link_reporter, link_standin, recorded
    from signoff.rooms import RoomService
    from signoff.rooms.client import RoomsConfig

    desk = _desk()
    crew = recorded(desk.ledger)
    config = RoomsConfig.from_settings(settings())
    if crew is not None and crew.server is not None:
        err_console.print(f"server: {crew.server} (the crew's)", highlight=False, markup=False)
    if crew is not None and crew.server is not None and user in config.keys():
        link = link_standin(desk.ledger, settings(), report_id, user)
    elif operator:
        link = link_remote(desk.ledger, settings(), report_id, user, operator)
    else:
        link = link_reporter(RoomService(desk.ledger), report_id, user)
    if as_json:
        print_json(link)
        return
    console.print(f"{link['report_id']} linked to {link['user']} ({link['sender']}, in the intake room)",
                  highlight=False)


def _rooms_url() -> str | None:
    from signoff.rooms.client import RoomsConfig

    return RoomsConfig.from_settings(settings()).url
