"""`signoff rooms policy ...`, `signoff rooms sender` and `signoff rooms room create --as`: setting a
workflow's rooms up on whichever server this home uses, through signoff's own commands.

Each command acts on the server at `[rooms] url` when it is set (a Switch core or `signoff serve`
elsewhere: through the operator adapter, `/gateway/...` or `/admin/...`, and the agent protocol as
one of this home's registered roles), else on this home's embedded server; it says which on
standard error, and never acts on the embedded server while `[rooms] url` is set.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import typer

from signoff.cli.context import console, err_console, print_json, settings
from signoff.kernel.errors import NotFoundError, UsageError
from signoff.rooms.client import RoomsConfig

policy_app = typer.Typer(no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
OperatorOpt = Annotated[str | None, typer.Option(
    "--operator", envvar="SIGNOFF_ROOMS_OPERATOR", show_default=False,
    help="With \\[rooms] url: the server's operator, EMAIL:PASSWORD for a Switch gateway login, or a signoff "
         "user token (the agent's owner or an admin); or SIGNOFF_ROOMS_OPERATOR.")]
ByOpt = Annotated[str | None, typer.Option(
    "--by", help="On the embedded server: the user who changes it (the agent's owner or an admin; default: its "
                 "owner).")]


def _config() -> RoomsConfig:
    config = RoomsConfig.from_settings(settings())
    err_console.print(config.server_line(), highlight=False, markup=False)
    return config


def _agent_id(config: RoomsConfig, name: str) -> str:
    """The id of the agent a role (or an agent name) of this home's keys file stands for."""
    for role, key in config.keys().items():
        if name in (role, key.get("name")):
            return key["agent_id"]
    raise NotFoundError(f"no agent for {name!r} in {config.keys_path}",
                        "name a role under [rooms.roles] registered with `signoff rooms connect`, or its agent name")


def build_policy(open_: bool, allow: list[str], owner: bool, owner_agents: bool, rooms: list[str],
                 users: list[str], resolve: Any) -> dict[str, Any] | None:
    """The policy the options describe: None is open to anyone in the room; otherwise one rule,
    every dimension explicit (a missing one would mean "anyone")."""
    if open_:
        if allow or users or rooms:
            raise UsageError("--open admits anyone: it takes no --allow, --user or --room",
                             "drop --open to admit only those named")
        return None
    if not (allow or users or owner or owner_agents):
        raise UsageError("the policy admits nobody", "pass --open, or --allow / --user / --owner")
    return {"rules": [{"rooms": rooms or "*", "room_groups": "*", "users": list(users),
                       "agents": [resolve(a) for a in allow], "owner": owner, "owner_agents": owner_agents}]}


@policy_app.command("set")
def policy_set(
    agent: Annotated[str, typer.Argument(help="The agent: a role under \\[rooms.roles] (or, on the embedded "
                                              "server, an agent name).")],
    open_: Annotated[bool, typer.Option("--open", help="Anyone in the agent's rooms may address it (on Switch "
                                                       "the only way a plain Matrix user is admitted).")] = False,
    allow: Annotated[list[str] | None, typer.Option("--allow", help="An agent (role or name) that may address it "
                                                                    "(repeat).")] = None,
    user: Annotated[list[str] | None, typer.Option("--user", help="A user id that may address it (repeat; on "
                                                                  "Switch, bridged accounts only).")] = None,
    owner: Annotated[bool, typer.Option("--owner/--no-owner", help="Its owner may address it.")] = True,
    owner_agents: Annotated[bool, typer.Option("--owner-agents", help="Agents of the same owner may.")] = False,
    room: Annotated[list[str] | None, typer.Option("--room", help="Only in this room (repeat; default: any "
                                                                  "room).")] = None,
    operator: OperatorOpt = None, by: ByOpt = None, as_json: JsonOpt = False,
) -> None:
    """Set who may address an agent, on the server this home uses, and read it back."""
    config = _config()
    if config.url is None:
        from signoff.rooms.client import embedded_rooms

        with _embedded_ledger() as ledger:
            service = embedded_rooms(ledger)
            target = service.agent_by_name(config.agent_name(agent))
            policy = build_policy(open_, allow or [], owner, owner_agents, room or [], user or [],
                                  lambda a: service.agent_by_name(config.agent_name(a)).id)
            actor = service.user_by_name(by) if by else service.user(target.owner_user_id)
            service.set_policy(actor, target.id, policy)
            held = service.agent_record(target.id)["addressing_policy"]
            agent_id = target.id
    else:
        agent_id = _agent_id(config, agent)
        policy = build_policy(open_, allow or [], owner, owner_agents, room or [], user or [],
                              lambda a: _agent_id(config, a))
        with _operator(config, operator) as op:
            op.set_policy(agent_id, policy)
            held = op.policy(agent_id)
    _print_policy(agent, agent_id, held, as_json)


@policy_app.command("show")
def policy_show(agent: Annotated[str, typer.Argument(help="The agent (a role, or an agent name).")],
                operator: OperatorOpt = None, as_json: JsonOpt = False) -> None:
    """The addressing policy the server holds for an agent."""
    config = _config()
    if config.url is None:
        from signoff.rooms.client import embedded_rooms

        with _embedded_ledger() as ledger:
            service = embedded_rooms(ledger)
            target = service.agent_by_name(config.agent_name(agent))
            agent_id, held = target.id, service.agent_record(target.id)["addressing_policy"]
    else:
        agent_id = _agent_id(config, agent)
        with _operator(config, operator) as op:
            held = op.policy(agent_id)
    _print_policy(agent, agent_id, held, as_json)


def _print_policy(agent: str, agent_id: str, held: Any, as_json: bool) -> None:
    if as_json:
        print_json({"agent": agent, "agent_id": agent_id, "policy": held})
        return
    rules = (held or {}).get("rules") or []
    console.print(f"{agent} ({agent_id}): " + ("open to anyone in its rooms" if not rules else
                                               f"{len(rules)} rule(s)"), highlight=False)
    for rule in rules:
        console.print(f"  {rule}", highlight=False, markup=False)


class _operator:
    """The server's operator adapter for the duration of a command."""

    def __init__(self, config: RoomsConfig, credential: str | None) -> None:
        if not credential:
            raise UsageError(f"changing or reading a policy on {config.url} needs its operator",
                             "pass --operator EMAIL:PASSWORD (a Switch gateway login) or a signoff user token, "
                             "or set SIGNOFF_ROOMS_OPERATOR")
        from signoff.rooms.client import operator_for

        assert config.url is not None
        self.op = operator_for(config.url, credential)

    def __enter__(self) -> Any:
        return self.op

    def __exit__(self, *exc: object) -> None:
        self.op.close()


class _embedded_ledger:
    def __enter__(self) -> Any:
        from signoff.ledger import SqlLedger

        self.ledger = SqlLedger.open(settings())
        return self.ledger

    def __exit__(self, *exc: object) -> None:
        self.ledger.close()


def sender_cmd(role: Annotated[str, typer.Argument(help="A role under \\[rooms.roles] (on the embedded server, "
                                                        "an agent or user name).")],
               room: Annotated[str | None, typer.Option("--room", help="A room the agent is in (with \\[rooms] "
                                                                        "url: read from its join there).")] = None,
               as_json: JsonOpt = False) -> None:
    """The sender id the server writes on an identity's messages: what \\[rooms.people] binds a person
    (or an agent standing in for one) by. On a Switch core it is read from the agent's own join in
    the room (a Matrix id), never from a name."""
    config = _config()
    if config.url is None:
        with _embedded_ledger() as ledger:
            from signoff.rooms.client import embedded_rooms

            service = embedded_rooms(ledger)
            try:
                sender = service.agent_by_name(config.agent_name(role)).sender
            except NotFoundError:
                sender = service.user_by_name(role).sender
    else:
        if not room:
            raise UsageError("the server writes an agent's sender id on its join in a room",
                             "pass --room ROOM_ID (a room the agent is in)")
        from signoff.rooms.client import SyncRoomsClient

        client = SyncRoomsClient(config.agent_sync_transport(role))
        try:
            client.open(f"sender@{room}", room)
            sender = client.sender
        finally:
            client.transport.close()
    if as_json:
        print_json({"role": role, "sender": sender})
        return
    console.print(sender, highlight=False)
    err_console.print(f"bind a person to it with: [rooms.people] NAME = \"{sender}\"", highlight=False,
                      markup=False)


def create_room_as(config: RoomsConfig, role: str, name: str, agents: list[str], users: list[str],
                   description: str) -> dict[str, Any]:
    """Create a room on the server at [rooms] url as the agent of `role` (over the agent protocol:
    the room is its owner's), with `agents` (by name; the creator is added too) and `users`."""
    transport = config.agent_transport(role)
    members = list(dict.fromkeys([config.agent_name(role), *(config.agent_name(a) for a in agents)]))

    async def create() -> dict[str, Any]:
        try:
            return dict(await transport.call("create_room", {
                "name": name, "description": description or name, "agent_names": members,
                "user_names": users}, None))
        finally:
            await transport.aclose()

    made = asyncio.run(create())
    return {"room_id": str(made["id"]), "name": str(made.get("name", name)), "agents": members}


def post_cmd(text: Annotated[str, typer.Argument(help="The message (a command is sent exactly as the agent printed "
                                                      "it, e.g. `@repair-verifier approve coupon-01 #3fa9c2d1e0b7`).")],
             as_role: Annotated[str, typer.Option("--as", help="The role whose agent posts (with \\[rooms] url: e.g. "
                                                               "the agent standing in for a bridged person).")],
             room: Annotated[str, typer.Option("--room", help="The room id.")],
             thread: Annotated[str | None, typer.Option("--thread", help="Reply in this message's thread.")] = None,
             as_json: JsonOpt = False) -> None:
    """Post a message in a room as one of this home's agents, on the server at \\[rooms] url. A
    leading `@name` addresses that agent, as the server decides. Prints the receipt: the id, sender
    and exact text the server recorded."""
    config = _config()
    if not text.strip():
        raise UsageError("the message is empty", "pass the text to post")
    if config.url is None:
        raise UsageError("on the embedded server people post as themselves (the pages, or a user token)",
                         "set [rooms] url to post as one of this home's registered agents")
    from signoff.rooms.client import RoomsClient

    async def post() -> Any:
        transport = config.agent_transport(as_role)
        try:
            async with RoomsClient(transport, client_name="signoff-rooms-post") as client:
                await client.connect_to_room(room)
                names = [w[1:].rstrip(":,") for w in text.split()[:1] if w.startswith("@")]
                if names:
                    return await client.send_targeted_message(text.split(" ", 1)[1] if " " in text else "",
                                                              names, thread_id=thread)
                return await client.post_message(text, thread)
        finally:
            await transport.aclose()

    receipt = asyncio.run(post())
    if as_json:
        print_json(receipt.to_dict())
        return
    console.print(f"{receipt.message_id} from {receipt.sender}: {receipt.body}", highlight=False, markup=False)
