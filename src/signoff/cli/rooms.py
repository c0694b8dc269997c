"""`signoff rooms`: bootstrap the room server's identities (admin, users, agents, rooms) and manage
their tokens (rotate, revoke)."""

from __future__ import annotations

import sys
from typing import Annotated, Literal

import typer

from signoff.cli.context import console, err_console, fail, print_json, settings
from signoff.cli.output import add_data_row, data_table
from signoff.cli.rooms_server import create_room_as, policy_app, post_cmd, sender_cmd
from signoff.kernel.errors import RefusedError, UsageError
from signoff.ledger import SqlLedger
from signoff.rooms import OPEN, OWNER_ONLY, RoomService
from signoff.rooms.client import RoomsConfig
from signoff.rooms.domain.signin import LINK_SECONDS, SignIns, check_password_rules, link_url
from signoff.rooms.domain.tokens import Lifetimes

app = typer.Typer(no_args_is_help=True)
user_app = typer.Typer(no_args_is_help=True)
agent_app = typer.Typer(no_args_is_help=True)
room_app = typer.Typer(no_args_is_help=True)
token_app = typer.Typer(no_args_is_help=True)
role_app = typer.Typer(no_args_is_help=True)
app.add_typer(user_app, name="user", help="Add and list users (people).")
app.add_typer(agent_app, name="agent", help="Add agents owned by a user.")
app.add_typer(room_app, name="room", help="Create rooms.")
app.add_typer(token_app, name="token", help="Rotate or revoke user tokens, agent keys and registration keys.")
app.add_typer(policy_app, name="policy", help="Who may address an agent: set and show its addressing policy, on "
                                            "the server this home uses (Switch's gateway, signoff's /admin, or "
                                            "the embedded server).")
app.command("sender")(sender_cmd)
app.command("post")(post_cmd)
app.add_typer(role_app, name="role", help="People's roles: who may answer an approval card addressed to role:NAME.")
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _service() -> RoomService:
    """This home's embedded rooms server, said on standard error (standard output stays the
    command's answer). With `[rooms] url` set, the agents and workflows of this home use the
    server there: acting here would change a server they never see, so it is refused."""
    loaded = settings()
    config = RoomsConfig.from_settings(loaded)
    if config.url is not None:
        raise UsageError(
            f"this command acts on the embedded rooms server in this home's database, not on the server at "
            f"[rooms] url ({config.url}); nothing was changed",
            f"register this home's agents on {config.url} with `signoff rooms connect`, then set it up with "
            f"`signoff rooms room create --as ROLE`, `signoff rooms policy set` and `signoff rooms sender`; its "
            f"people and keys with its own tools (for `signoff serve`: this command in that server's home; for a "
            f"Switch core: its console or gateway API); or remove [rooms] url to use this home's server")
    err_console.print(f"server: this home's embedded rooms server (database {_safe_url(loaded.db_url)})",
                      highlight=False)
    return RoomService(SqlLedger.open(loaded), lifetimes=Lifetimes.from_settings(loaded))


def _safe_url(url: str) -> str:
    """A database URL without its password."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # an unparsable URL is shown by its scheme only
        return url.split(":", 1)[0]


@app.command("init")
def init(as_json: JsonOpt = False,
         name: Annotated[str, typer.Option(help="The admin user's name.")] = "admin") -> None:
    """Create the admin user and a registration key; both secrets are printed once."""
    created = _service().init(name)
    if as_json:
        print_json(created)
        return
    console.print(f"admin user id:    {created['admin_user_id']}")
    console.print(f"admin token:      {created['admin_token']}")
    console.print(f"registration key: {created['registration_key']}")
    console.print("store these now: only their digests are kept.")


def _read_password() -> str:
    """A new password: typed twice at a terminal (hidden), else the first line of standard input."""
    if sys.stdin.isatty():
        password: str = typer.prompt("password", hide_input=True, confirmation_prompt=True)
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    check_password_rules(password)
    return password


@user_app.command("add")
def user_add(name: str, as_json: JsonOpt = False,
             display_name: Annotated[str | None, typer.Option(help="Name people see.")] = None,
             admin: Annotated[bool, typer.Option(help="Make the user an admin.")] = False,
             external: Annotated[bool, typer.Option(help="An outside identity (kept out of internal rooms).")]
             = False,
             password: Annotated[bool, typer.Option(
                 "--password", help="Also set a password for the web pages (asked for, or read from stdin).")]
             = False) -> None:
    """Create a user and print its token once."""
    secret = _read_password() if password else None  # before creating: a bad password changes nothing
    service = _service()
    user, token = service.create_user(name, display_name, admin, external)
    if secret is not None:
        SignIns(service.ledger).set_password(user.id, secret)
    if as_json:
        print_json({"user_id": user.id, "name": user.name, "token": token, "password_set": secret is not None})
        return
    console.print(f"user {user.name} ({user.id})\ntoken: {token}")


@user_app.command("password")
def user_password(name: str) -> None:
    """Set or change a user's password for the web pages (asked for, or read from stdin)."""
    service = _service()
    user = service.user_by_name(name)
    SignIns(service.ledger).set_password(user.id, _read_password())
    console.print(f"password set for {user.name}")


@user_app.command("link")
def user_link(name: str,
              url: Annotated[str, typer.Option(help="Where `signoff serve` is reached.")] = "http://127.0.0.1:8787",
              minutes: Annotated[int, typer.Option(help="How long the link stays valid.")] = LINK_SECONDS // 60,
              as_json: JsonOpt = False) -> None:
    """Print a one-time sign-in link for the web pages (spent by its first use)."""
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--url {url!r} is not an http(s) address", "e.g. --url https://signoff.example.org")
    service = _service()
    user = service.user_by_name(name)
    if service.credentials.live_user_token(user.id) is None:
        raise RefusedError(f"{user.name}'s token is revoked: they may not sign in",
                           f"issue a new token first: signoff rooms token rotate user {user.name}")
    token = SignIns(service.ledger).issue_link(user.id, minutes * 60)
    link = link_url(url, token)
    if as_json:
        print_json({"user": user.name, "link": link, "minutes": minutes})
        return
    console.print(f"one-time sign-in link for {user.name} (valid {minutes} minutes):")
    print(link)


@user_app.command("list")
def user_list(as_json: JsonOpt = False) -> None:
    """List users (never their tokens)."""
    users = _service().users()
    rows = [{"user_id": u.id, "name": u.name, "display_name": u.display_name, "admin": u.is_admin,
             "external": u.external} for u in users]
    if as_json:
        print_json(rows)
        return
    table = data_table("name", "display name", "id", "admin", "external")
    for r in rows:
        add_data_row(table, str(r["name"]), str(r["display_name"]), str(r["user_id"]), str(r["admin"]),
                     str(r["external"]))
    console.print(table)


@agent_app.command("add")
def agent_add(name: str, owner: Annotated[str, typer.Option(help="Owner user name.")],
              description: Annotated[str, typer.Option(help="What the agent does.")] = "",
              open_: Annotated[bool, typer.Option("--open", help="Anyone in a room may address it.")] = False,
              as_json: JsonOpt = False) -> None:
    """Create an agent (owner-only addressing unless --open) and print its api key once."""
    service = _service()
    agent, key = service.create_agent(service.user_by_name(owner), name, description,
                                      policy=OPEN if open_ else OWNER_ONLY)
    if as_json:
        print_json({"agent_id": agent.id, "name": agent.name, "api_key": key})
        return
    console.print(f"agent {agent.name} ({agent.id})\napi key: {key}")


@room_app.command("create")
def room_create(name: str,
                owner: Annotated[str | None, typer.Option(help="Owner user name (the embedded server).")] = None,
                agent: Annotated[list[str] | None, typer.Option(help="Agent member (repeatable).")] = None,
                user: Annotated[list[str] | None, typer.Option(help="User member (repeatable).")] = None,
                internal_only: Annotated[bool, typer.Option(help="Keep external users out.")] = False,
                as_role: Annotated[str | None, typer.Option(
                    "--as", help="With \\[rooms] url: the role whose agent creates the room (it is a member, and "
                                 "the room is its owner's).")] = None,
                description: Annotated[str, typer.Option(help="What the room is for.")] = "",
                as_json: JsonOpt = False) -> None:
    """Create a room: owned by a user on the embedded server, or, with \\[rooms] url, made on that
    server by one of this home's agents (`--as ROLE`) over the agent protocol."""
    config = RoomsConfig.from_settings(settings())
    if config.url is not None:
        if not as_role or owner:
            raise UsageError(f"on {config.url} a room is made by one of this home's agents, owned by its owner; "
                             "nothing was changed",
                             "pass --as ROLE (a role registered with `signoff rooms connect`), without --owner")
        err_console.print(config.server_line(), highlight=False, markup=False)
        made = create_room_as(config, as_role, name, agent or [], user or [], description)
        if as_json:
            print_json(made)
            return
        console.print(f"room {made['name']} ({made['room_id']}) with {', '.join(made['agents'])}", highlight=False)
        return
    if not owner or as_role:
        raise UsageError("on the embedded server a room is owned by a user", "pass --owner USER (and no --as)")
    service = _service()
    room = service.create_room(service.user_by_name(owner), name, agent_names=agent or [],
                               user_names=user or [], internal_only=internal_only)
    if as_json:
        print_json({"room_id": room.id, "name": room.name})
        return
    console.print(f"room {room.name} ({room.id})")


ByAdmin = Annotated[str, typer.Option("--by", help="The admin user recorded as granting or revoking.")]


def _change_role(role: str, user: str, by: str, as_json: bool, grant: bool) -> None:
    service = _service()
    person = service.user_by_name(user)
    change = service.grant_person_role if grant else service.revoke_person_role
    change(service.user_by_name(by), role, person.id)
    if as_json:
        print_json({"role": role, "user": person.name, "holds": grant})
        return
    console.print(f"{person.name} {'now holds' if grant else 'no longer holds'} role {role}")


@role_app.command("grant")
def role_grant(role: str, user: str, by: ByAdmin = "admin", as_json: JsonOpt = False) -> None:
    """Let a person answer approval cards addressed to role:ROLE (from their next answer on)."""
    _change_role(role, user, by, as_json, grant=True)


@role_app.command("revoke")
def role_revoke(role: str, user: str, by: ByAdmin = "admin", as_json: JsonOpt = False) -> None:
    """Take a person's role away: from now on their answers to role:ROLE cards are discarded."""
    _change_role(role, user, by, as_json, grant=False)


@role_app.command("list")
def role_list(as_json: JsonOpt = False) -> None:
    """Every people's role and who holds it now."""
    service = _service()
    rows = [{"role": role, "users": sorted(service.user(u).name for u in ids)}
            for role, ids in sorted(service.people_role_table().items())]
    if as_json:
        print_json(rows)
        return
    table = data_table("role", "held by")
    for r in rows:
        add_data_row(table, str(r["role"]), ", ".join(r["users"]))
    console.print(table)


TokenKind = Annotated[Literal["user", "agent"], typer.Argument(help="user (a token) or agent (an api key).")]


@token_app.command("rotate")
def token_rotate(kind: TokenKind, name: str, as_json: JsonOpt = False) -> None:
    """Issue a new token for a user or agent and print it once; the old one stops working."""
    token = _service().rotate_token(kind, name)
    if as_json:
        print_json({"kind": kind, "name": name, "token": token})
        return
    console.print(f"new {'token' if kind == 'user' else 'api key'} for {kind} {name}: {token}")


@token_app.command("revoke")
def token_revoke(kind: Annotated[Literal["user", "agent", "registration"], typer.Argument(
                     help="user, agent, or registration (a registration key, passed with --key).")],
                 name: Annotated[str | None, typer.Argument(help="The user or agent name.")] = None,
                 key: Annotated[str | None, typer.Option(help="The registration key to revoke.")] = None,
                 as_json: JsonOpt = False) -> None:
    """Make a user's token, an agent's key or a registration key stop working now."""
    service = _service()
    if kind == "registration":
        if key is None or name is not None:
            fail("revoking a registration key needs the key itself",
                 "signoff rooms token revoke registration --key KEY")
        service.revoke_registration_key(key)
    else:
        if name is None or key is not None:
            fail(f"name the {kind} whose token to revoke", f"signoff rooms token revoke {kind} NAME")
        service.revoke_token(kind, name)
    if as_json:
        print_json({"kind": kind, "name": name, "revoked": True})
        return
    console.print(f"revoked the {kind} {'key' if kind == 'registration' else name}")
@app.command("connect")
def connect(
    registration_key: Annotated[str | None, typer.Option(
        help="A registration key of the server at \\[rooms] url (or SIGNOFF_ROOMS_REGISTRATION_KEY).",
        envvar="SIGNOFF_ROOMS_REGISTRATION_KEY", show_default=False)] = None,
    overwrite: Annotated[bool, typer.Option(help="Register again (rotates every role's key).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Register every \\[rooms.roles] role on the server at \\[rooms] url and store their keys (mode 0600)."""
    config = RoomsConfig.from_settings(settings())
    if not registration_key:
        raise UsageError("a registration key is needed to register agents",
                         "pass --registration-key or set SIGNOFF_ROOMS_REGISTRATION_KEY")
    if config.url is not None:
        err_console.print(f"server: {config.url} ([rooms] url)", highlight=False, markup=False)
    done = config.connect(registration_key, overwrite=overwrite)
    keys = config.keys()
    rows = [{"role": role, "name": k["name"], "agent_id": k["agent_id"], "registered_now": role in done}
            for role, k in sorted(keys.items())]
    if as_json:
        print_json({"url": config.url, "keys": str(config.keys_path), "agents": rows})
        return
    table = data_table("role", "agent", "id", "registered now")
    for r in rows:
        add_data_row(table, str(r["role"]), str(r["name"]), str(r["agent_id"]), "yes" if r["registered_now"] else "no")
    console.print(table)
    console.print(f"keys stored in {config.keys_path} (mode 0600)")
