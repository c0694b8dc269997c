"""The crew on an external rooms server (`[rooms] url`: `signoff serve` on another home, or a Switch
core), set up through the server's public faces only (`rooms.client.ServerSetup`): the six agents
registered with a registration key owned by the crew's owner, the group and the rooms created by the
manager's agent, the policies set and read back through the operator adapter. The desk's ledger
keeps the crew record (with the server's ids) and the agents' cursors; the keys go to the rooms
keys file (mode 0600). Crew status is what the server answers about each agent (`get_room_detail`:
`live` while its connection beats, `crew_status.remote_status`): this home holds none of the server's
connections.
"""

from __future__ import annotations

import asyncio
from typing import Any

from signoff.desk.crew import (
    CASE,
    ENGINEERING_ROLES,
    ROLES,
    Crew,
    agent_name,
    crew_prefix,
    drift,
    engineering_room_name,
    group_name,
    intake_room_name,
    key_role,
    policies,
    record_link,
    recorded,
    require_crew,
    require_report,
)
from signoff.desk.records import CrewSetUp
from signoff.kernel.errors import ConflictError, NotFoundError, UsageError
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.rooms.client import (
    AgentStore,
    HttpSyncTransport,
    HttpTransport,
    RoomsClient,
    RoomsConfig,
    ServerSetup,
    StreamSyncTransport,
    agent_case,
    joined_as,
)

OPERATOR_ENV = "SIGNOFF_ROOMS_OPERATOR"
# On a server whose rooms name no user members (Switch: people come through bridges), the owner acts
# through an agent standing in for them: the rooms role `owner` in the keys file (`signoff rooms
# connect` with [rooms.roles.owner]), bound by its sender id under [rooms.people].
OWNER_STANDIN = "owner"


def setup_remote(ledger: SqlLedger, settings: Settings, owner_name: str, operator: str) -> tuple[Crew, list[str]]:
    """As `crew.setup`, on the server at [rooms] url. Run again, it keeps every identity and room,
    reports the policies that drifted and sets them again. Returns the crew and the drift."""
    config = RoomsConfig.from_settings(settings)
    if config.url is None:
        raise UsageError("the crew goes on this home's own rooms server", "run setup without --operator")
    url = config.url
    previous = recorded(ledger)
    if previous is not None and previous.server != url:
        raise UsageError(f"the crew was set up on {previous.server or 'this home`s own rooms server'}, not {url}",
                         "set [rooms] url back, or set the crew up on a fresh home")
    if previous is not None and previous.owner_name != owner_name:
        raise UsageError(f"the crew belongs to {previous.owner_name}, not {owner_name}",
                         f"run setup with --owner {previous.owner_name}")
    server = ServerSetup(url, operator, label="signoff desk crew", owner_name=owner_name,
                         client_name="signoff-desk-crew-setup")
    try:
        crew = _provision(server, config, previous, owner_name, crew_prefix(settings, previous))
        found = drift(server.operator.policy, crew) if previous is not None else []
        for role, policy in crew.policies.items():
            server.operator.set_policy(crew.agents[role], policy)
        after = drift(server.operator.policy, crew)
    finally:
        server.close()
    if after:
        raise UsageError(f"the server did not keep the crew's policies: {'; '.join(after)}",
                         "check the operator credential (an admin, or the crew's owner) and run setup again")
    if previous != crew:
        ledger.append(CASE, None, [CrewSetUp(**crew.as_json()).new_event()])
    asyncio.run(_start_cursors(ledger, config, crew))
    return crew, found


def _provision(server: ServerSetup, config: RoomsConfig, previous: Crew | None, owner_name: str,
               prefix: str) -> Crew:
    stored = config.keys()
    agents: dict[str, str] = {}
    for role, description in ROLES.items():
        entry = stored.get(key_role(role))
        if entry is None:
            if previous is not None:
                raise NotFoundError(f"the key of the crew's {role} is missing from the rooms keys file",
                                    f"restore {config.keys_path}")
            try:
                registered = server.register(agent_name(role, prefix), description)
            except ConflictError as exc:  # agent names are server-wide: another desk has this one
                raise UsageError(f"{server.base} already has an agent {agent_name(role, prefix)} (another desk's "
                                 f"crew, or one set up from another home): {exc.message}",
                                 'give this desk its own names: set [desk] crew_prefix = "..." and run setup '
                                 "again") from exc
            entry = {"name": agent_name(role, prefix), "agent_id": registered.agent_id, "api_key": registered.api_key}
            stored[key_role(role)] = entry
            config.store_keys(stored)  # each key as soon as it exists: a crash never strands an agent
        agents[role] = entry["agent_id"]

    def as_agent(role: str) -> None:
        server.act_as(stored[key_role(role)]["agent_id"], stored[key_role(role)]["api_key"])

    # Found again when a setup stopped halfway (each is checked below: owner, group, members).
    standin = stored.get(OWNER_STANDIN)
    with_owner = [standin["name"]] if standin else []  # in the rooms as a member where people are not
    as_agent("concierge")
    group_called, intake_called = group_name(prefix), intake_room_name(prefix)
    intake = _named(server.call("list_rooms", {}), intake_called, "room_id") or str(server.call("create_room", {
        "name": intake_called, "description": "public intake: reporters and the concierge",
        "agent_names": [agent_name("concierge", prefix), *with_owner], "user_names": [owner_name],
        "channel_type": "channel_public"})["id"])
    intake_detail = server.call("get_room_detail", {"room_id": intake})
    as_agent("manager")
    group = _named(server.call("list_room_groups", {}), group_called, "id") or str(server.call(
        "create_room_group", {"name": group_called, "description": "the desk's engineering side"})["id"])
    engineering_called = engineering_room_name(prefix)
    engineering = _named(server.call("list_rooms", {}), engineering_called, "room_id") or str(server.call(
        "create_room", {"name": engineering_called, "description": "the desk's engineering crew and its owner",
                        "agent_names": [*(agent_name(r, prefix) for r in ENGINEERING_ROLES), *with_owner],
                        "user_names": [owner_name],
                        "channel_type": "channel_private", "group_name": group_called})["id"])
    detail = server.call("get_room_detail", {"room_id": engineering})
    if previous is not None and (previous.group_id, previous.intake_room, previous.engineering_room) != (
            group, intake, engineering):
        raise UsageError(f"the crew's rooms on {server.base} are not the ones the desk recorded",
                         "check [rooms] url names the server the crew was set up on")
    details = [intake_detail, detail]
    if all("participants" in d and "owner_user_id" in d for d in details):
        owner_id, senders = _identities(server.base, config, owner_name, group, details, agents, prefix)
    else:  # a Switch core's room detail: agent names only, no owner, no users, no sender ids
        contexts = [_context(server.base, stored[key_role(role)], room)
                    for role, room in (("concierge", intake), ("manager", engineering))]
        owner_id, senders = bind_by_joins(server.base, owner_name, config.people, standin, details, contexts,
                                          prefix)
    wanted = policies(owner_id, group, intake, agents,
                      owner_agent=standin is not None and owner_id == standin["agent_id"])
    return Crew(owner_id, owner_name, group, intake, engineering, agents, wanted, senders, server.base,
                standin["name"] if standin and owner_id == standin["agent_id"] else None, prefix)


def _named(listed: Any, name: str, id_field: str) -> str | None:
    entries = listed if isinstance(listed, list) else listed.get("rooms") or listed.get("groups") or []
    return next((str(e[id_field]) for e in entries if e.get("name") == name), None)


def _identities(base: str, config: RoomsConfig, owner_name: str, group: str, details: list[dict[str, Any]],
                agents: dict[str, str], prefix: str) -> tuple[str, dict[str, str]]:
    """The owner's user id and every agent's sender id, as the server reports its rooms' members
    (never from a name in a message). The rooms belong to the agents' owner, the registration
    key's: it must be the user called `owner_name`, and match its [rooms.people] binding if any."""
    members = {str(p["id"]): p for d in details for p in d.get("participants", [])}
    owners = {str(d.get("owner_user_id") or "") for d in details}
    owner = members.get(next(iter(owners))) if len(owners) == 1 else None
    if owner is None or owner.get("name") != owner_name or details[-1].get("group_id") != group:
        raise UsageError(f"the crew's rooms on {base} do not belong to {owner_name} in its group {group_name(prefix)}",
                         f"set the crew up as that server's admin with --owner {owner_name}, on a fresh home")
    bound = config.people.get(owner_name)
    if bound is not None and bound != owner.get("sender"):
        raise UsageError(f"[rooms.people] binds {owner_name} to {bound}, the server names {owner.get('sender')}",
                         "correct [rooms.people] (the sender id as the server writes it)")
    missing = [r for r, a in agents.items() if a not in members]
    if missing:
        raise UsageError(f"the crew's rooms on {base} lack {', '.join(agent_name(r, prefix) for r in missing)}",
                         "add them to the rooms (or set the crew up on a fresh home)")
    return str(owner["id"]), {r: str(members[a]["sender"]) for r, a in agents.items()}


def bind_by_joins(base: str, owner_name: str, people: dict[str, str], standin: dict[str, str] | None,
                  details: list[dict[str, Any]], contexts: list[list[dict[str, Any]]],
                  prefix: str = "desk") -> tuple[str, dict[str, str]]:
    """The owner and every agent's sender id where the room detail names no owner and no senders
    (a Switch core). `details` and `contexts` are the intake room's and the engineering room's
    `get_room_detail` and `read_context` (as the concierge and the manager read them). The owner is
    the stand-in agent [rooms.people] binds by sender id; each agent's sender id is the one its own
    room join carries (`joined_as`), in the room it works in. A name in a message, or a display
    name alone, binds nobody. Returns the stand-in's agent id (the owner in the policies) and the
    roles' sender ids."""
    bound = people.get(owner_name)
    if bound is None or standin is None:
        raise UsageError(f"{base} names no owner of its rooms and no user members (on Switch people come through "
                         f"bridges), so the crew's owner {owner_name} needs an agent standing in for them",
                         f"register one as rooms role `{OWNER_STANDIN}` ([rooms.roles.{OWNER_STANDIN}], `signoff rooms "
                         f"connect`) and bind its sender id under [rooms.people] {owner_name}")
    rooms = {"concierge": 0, **{r: 1 for r in ENGINEERING_ROLES}}
    senders: dict[str, str] = {}
    for role, at in [(OWNER_STANDIN, 0), (OWNER_STANDIN, 1), *rooms.items()]:
        name = standin["name"] if role == OWNER_STANDIN else agent_name(role, prefix)
        room = details[at].get("name") or details[at].get("id")
        if name not in (details[at].get("agent_names") or []):
            raise UsageError(f"room {room} on {base} does not hold {name}",
                             "add it to the room (or set the crew up on a fresh home)")
        found = joined_as(contexts[at], name)
        if role == OWNER_STANDIN:
            if found != {bound}:
                raise UsageError(f"[rooms.people] binds {owner_name} to {bound}, but {name} joined room {room} "
                                 f"as {', '.join(sorted(found)) or 'nobody'}",
                                 "correct [rooms.people] (the sender id on the stand-in's own join)")
            continue
        if len(found) != 1 or bound in found:
            raise UsageError(f"cannot tell {name}'s sender id in room {room} on {base} "
                             f"({len(found)} joins under its name)", "set the crew up on a fresh home")
        senders[role] = found.pop()
    if len(set(senders.values())) != len(senders):
        raise UsageError(f"two of the crew's agents share a sender id on {base}", "set the crew up on a fresh home")
    return standin["agent_id"], senders


def _context(base: str, key: dict[str, str], room: str) -> list[dict[str, Any]]:
    """The room's context as one of the crew reads it, once its own join is there (its sender id is
    learned from it: the stream transport waits for that)."""
    transport = StreamSyncTransport(base, key["agent_id"], key["api_key"], client_name="signoff-desk-crew-setup")
    try:
        transport.open("setup", room)
        _ = transport.sender
        return transport.context("setup")
    finally:
        transport.close()


def link_remote(ledger: SqlLedger, settings: Settings, report_id: str, user_name: str,
                operator: str) -> dict[str, str]:
    """`crew.link_reporter` for a crew on an external server: the operator (that server's admin, or
    the crew's owner) adds the user, who must exist there, to the intake room; the user's sender id
    is the one the server reports for that member (`get_room_detail`, read by the concierge), never
    a name in a message."""
    crew = require_crew(ledger)
    if crew.server is None:
        raise UsageError("the crew is on this home's own rooms server", "link the reporter without --operator")
    require_report(ledger, report_id)
    config = RoomsConfig.from_settings(settings)
    server = ServerSetup(crew.server, operator, label="signoff desk crew")
    try:
        try:
            server.operator.add_user_to_room(crew.intake_room, user_name)
        except NotFoundError as exc:
            raise NotFoundError(f"{crew.server} has no user {user_name}: {exc.message}",
                                f"create the user there first (an admin), then link {report_id} to them") from exc
        key = config.key(key_role("concierge"))
        server.act_as(key["agent_id"], key["api_key"])
        detail = server.call("get_room_detail", {"room_id": crew.intake_room})
    finally:
        server.close()
    found = [p for p in detail.get("participants", []) if p.get("type") == "user" and p.get("name") == user_name]
    if len(found) != 1 or not found[0].get("sender"):
        raise UsageError(f"{crew.server} does not name {user_name} among the intake room's members",
                         "check the user's name on that server and link again")
    return record_link(ledger, report_id, user_name, str(found[0]["sender"]))


def link_standin(ledger: SqlLedger, settings: Settings, report_id: str, role: str) -> dict[str, str]:
    """`crew.link_reporter` where the reporter reaches the crew's server through an agent standing
    in for them: on a Switch core people come only through bridges and its rooms hold no user
    members, so the reporter is a role of this home (`[rooms.roles.<role>]`, registered by `signoff
    rooms connect`). The concierge puts the stand-in in the intake room (`invite_agent_to_room`), and
    the link binds the sender id on the stand-in's own join there (`joined_as`), never a name in a
    message; the concierge addresses its questions to the stand-in's agent name."""
    crew = require_crew(ledger)
    if crew.server is None:
        raise UsageError("the crew is on this home's own rooms server", f"link {report_id} to a rooms user there")
    require_report(ledger, report_id)
    config = RoomsConfig.from_settings(settings)
    standin = config.key(role)
    name = config.agent_name(role)
    # The concierge adds the stand-in without a connection of its own: a running concierge holds
    # its slot in the intake room, which a second connection would take over.
    concierge = config.key(key_role("concierge"))
    maker = HttpSyncTransport(crew.server, concierge["agent_id"], concierge["api_key"],
                              client_name="signoff-desk-crew-link")
    try:
        maker.call("invite_agent_to_room", {"room_id": crew.intake_room, "agent_name": name,
                                            "include_subagents": False}, "")
    finally:
        maker.close()
    # The stand-in's sender id is the one on its own join in the intake room (read as itself).
    transport = StreamSyncTransport(crew.server, standin["agent_id"], standin["api_key"],
                                    client_name="signoff-desk-crew-link")
    try:
        transport.open("link", crew.intake_room)
        found = {transport.sender}
    finally:
        transport.close()
    if len(found) != 1 or found & set(crew.senders.values()):
        raise UsageError(f"cannot tell {name}'s sender id in the intake room on {crew.server} "
                         f"({len(found)} joins under its name)",
                         f"check that {name} ({standin['agent_id']}) is the stand-in's agent, then link again")
    return record_link(ledger, report_id, name, found.pop())


def _room_of(crew: Crew, role: str) -> str:
    return crew.intake_room if role == "concierge" else crew.engineering_room


async def _start_cursors(ledger: SqlLedger, config: RoomsConfig, crew: Crew) -> None:
    """Each agent's stream starts where the crew was set up (as on this home's own server): one
    short stream per agent reads the server's position. Its connection lapses by itself."""
    for role, agent_id in crew.agents.items():
        store = AgentStore(ledger, agent_case(agent_id))
        room = _room_of(crew, role)
        if room in store.state.cursors:
            continue
        key = config.key(key_role(role))
        client = RoomsClient(HttpTransport(crew.server or "", agent_id, key["api_key"]), heartbeat_interval=3600)
        client.rooms = [room]
        await client.start()
        try:
            if client.cursor is not None:
                store.opened(room, client.cursor)
        finally:
            await client.close()
