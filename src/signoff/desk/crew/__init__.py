"""The desk crew: six room agents with their own keys, the rooms they work in, and who may address
whom there. The ledger stays the authority (`signoff.desk.workflow`); the rooms carry the work and
the answers, and the server's addressing policies are the boundary between the public side and the
engineering side.

    public intake room      the concierge and the reporters; anyone there may address the concierge
    engineering room        the manager, reproducer, fixer, reviewer and smoke, and the owner
    bug room (one per bug)  the same engineering identities and the owner; holds the bug's dossier

Only the owner and the four engineering agents (answering it) may address the manager, and only the
manager and the owner may address the other engineering agents, and only in rooms of the desk's
engineering room group (a group is named by its
id, which nobody else can choose). The concierge is not on the engineering side at all: the public
side has no path to it. Setting up writes the policies and reads them back; `drift` compares what
the server holds with what the desk set.

The record (agent ids, room ids, the group, the policies) is ledger case `desk/crew`; the agents'
keys are written once to the rooms keys file (mode 0600), never to the ledger.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from signoff.desk.base import report_case
from signoff.desk.config import DeskConfig
from signoff.desk.records import CrewRecords, CrewSetUp, ReporterLinked, crew_fold
from signoff.kernel.errors import NotFoundError, UsageError
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.rooms import RoomService
from signoff.rooms.client import AgentStore, RoomsConfig, agent_case
from signoff.rooms.domain.model import Principal

CASE = "desk/crew"
ROLES: dict[str, str] = {
    "concierge": "public-facing: answers reporters; no repository access, cannot run code",
    "manager": "hands engineering work over to the crew and checks what comes back",
    "reproducer": "writes a failing test from the dossier",
    "fixer": "drafts a change that makes the reproduction pass",
    "reviewer": "reviews tests and drafts (advisory only)",
    "smoke": "deployment acceptance: checks the live release",
}
ENGINEERING_ROLES = ("manager", "reproducer", "fixer", "reviewer", "smoke")
# The names on the rooms server are the desk's `[desk] crew_prefix` (default "desk", the names every
# crew set up before the prefix existed has, so such a crew keeps its rooms and identities) and a
# fixed suffix. Agent names are unique server-wide and group names per owner, so two desks on one
# server need two prefixes.
DEFAULT_PREFIX = "desk"


def agent_name(role: str, prefix: str = DEFAULT_PREFIX) -> str:
    return f"{prefix}-{role}"


def group_name(prefix: str = DEFAULT_PREFIX) -> str:
    return f"{prefix}-engineering"


def intake_room_name(prefix: str = DEFAULT_PREFIX) -> str:
    return f"{prefix}-intake"


def engineering_room_name(prefix: str = DEFAULT_PREFIX) -> str:
    return f"{prefix}-engineering"


def crew_prefix(settings: Settings, previous: Crew | None) -> str:
    """The prefix this setup uses: the configured one, which must be the recorded crew's (a crew's
    names are its identities on the server: renaming would strand its rooms and keys)."""
    prefix = DeskConfig.load(settings).crew_prefix
    if previous is not None and previous.prefix != prefix:
        raise UsageError(f"the crew was set up with crew_prefix {previous.prefix!r}, not {prefix!r}",
                         f'set [desk] crew_prefix = "{previous.prefix}" back (or set the crew up on a fresh home)')
    return prefix


def key_role(role: str) -> str:
    """The crew role's entry in the rooms keys file."""
    return f"desk.{role}"


@dataclass(frozen=True)
class Crew:
    """What setup recorded: who the crew is on the server, where it works, and the policies set."""

    owner_user_id: str
    owner_name: str
    group_id: str
    intake_room: str
    engineering_room: str
    agents: dict[str, str]  # role -> agent id
    policies: dict[str, dict[str, Any]]
    senders: dict[str, str]  # role -> the sender id the server writes on its messages (opaque)
    server: str | None = None  # the external rooms server's URL; None: this home's own
    owner_agent: str | None = None  # the name of the agent standing in for the owner (on Switch), if any
    prefix: str = DEFAULT_PREFIX  # `[desk] crew_prefix` at setup: the names on the server

    def agent_name(self, role: str) -> str:
        return agent_name(role, self.prefix)

    @property
    def group_name(self) -> str:
        return group_name(self.prefix)

    def role_of(self, agent_id: str) -> str | None:
        return next((r for r, a in self.agents.items() if a == agent_id), None)

    def role_of_sender(self, sender: object) -> str | None:
        return next((r for r, s in self.senders.items() if s == sender), None)

    def as_json(self) -> dict[str, Any]:
        return {"owner_user_id": self.owner_user_id, "owner_name": self.owner_name, "group_id": self.group_id,
                "intake_room": self.intake_room, "engineering_room": self.engineering_room,
                "agents": dict(self.agents), "policies": dict(self.policies), "senders": dict(self.senders),
                **({"server": self.server} if self.server else {}),
                **({"owner_agent": self.owner_agent} if self.owner_agent else {}),
                **({"prefix": self.prefix} if self.prefix != DEFAULT_PREFIX else {})}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Crew:
        return cls(data["owner_user_id"], data["owner_name"], data["group_id"], data["intake_room"],
                   data["engineering_room"], dict(data["agents"]), dict(data["policies"]), dict(data["senders"]),
                   data.get("server"), data.get("owner_agent"), data.get("prefix", DEFAULT_PREFIX))


def policies(owner_id: str, group_id: str, intake_room: str, agents: dict[str, str], *,
             owner_agent: bool = False) -> dict[str, dict[str, Any]]:
    """Who may address each role. Every list is explicit: a missing dimension would mean "anyone".
    `owner_agent`: the owner is an agent standing in for them (on Switch, where people come only
    through bridges), named among the agents instead of the users."""
    def rule(**fields: Any) -> dict[str, Any]:
        return {"rooms": "*", "room_groups": "*", "users": [], "agents": [], "owner": False,
                "owner_agents": False, **fields}

    def owner_and(*others: str, **fields: Any) -> dict[str, Any]:
        if owner_agent:
            return rule(agents=[*others, owner_id], **fields)
        return rule(users=[owner_id], agents=list(others), **fields)

    workers = [agents[r] for r in ENGINEERING_ROLES[1:]]
    out: dict[str, dict[str, Any]] = {
        # On Switch reporters, like the owner, are agents standing in for bridged people.
        "concierge": {"rules": [rule(rooms=[intake_room], users="*", **({"agents": "*"} if owner_agent else {})),
                                owner_and()]},
        # The crew answers the manager; the manager takes orders from the owner only.
        "manager": {"rules": [owner_and(*workers, room_groups=[group_id])]},
    }
    for role in ENGINEERING_ROLES[1:]:
        out[role] = {"rules": [owner_and(agents["manager"], room_groups=[group_id])]}
    return out


def recorded(ledger: SqlLedger) -> Crew | None:
    """The crew as setup last recorded it (None before `signoff desk crew setup`)."""
    found = crew_records(ledger, CASE).crew
    return None if found is None else Crew.from_json(found.payload())


def require_crew(ledger: SqlLedger) -> Crew:
    crew = recorded(ledger)
    if crew is None:
        raise NotFoundError("the desk has no crew yet", "run `signoff desk crew setup --owner <user>`")
    return crew


def setup(rooms: RoomService, settings: Settings, owner_name: str) -> tuple[Crew, list[str]]:
    """Register the crew (owned by `owner_name`, a rooms user), create the group and the two rooms,
    set every policy and read it back. Run again, it keeps what exists, sets the policies again,
    and re-keys nothing. Returns the crew and the drift found before the policies were set again."""
    owner = rooms.user_by_name(owner_name)
    keys = RoomsConfig.from_settings(settings)
    if not keys.embedded:
        raise UsageError("with [rooms] url set, the crew is set up on that server",
                         "run `signoff desk crew setup --owner USER --operator CREDENTIAL`")
    previous = recorded(rooms.ledger)
    if previous is not None and previous.owner_user_id != owner.id:
        raise UsageError(f"the crew belongs to {previous.owner_name}, not {owner_name}",
                         f"run setup with --owner {previous.owner_name}")
    prefix = crew_prefix(settings, previous)
    stored = keys.keys()
    agents: dict[str, Principal] = {}
    for role, description in ROLES.items():
        name = agent_name(role, prefix)
        try:
            agents[role] = rooms.agent_by_name(name)
        except NotFoundError:
            agents[role], key = rooms.create_agent(owner, name, description)
            stored[key_role(role)] = {"name": name, "agent_id": agents[role].id, "api_key": key}
            keys.store_keys(stored)  # each key as soon as it exists: a crash never strands an agent
    if key_role("manager") not in stored:
        raise NotFoundError("the crew's keys are missing from the rooms keys file",
                            f"restore {keys.keys_path} (or re-key the crew with `signoff rooms agent rotate`)")
    group = previous.group_id if previous else rooms.create_group(
        owner, group_name(prefix), "the desk's engineering side")["id"]
    intake = previous.intake_room if previous else rooms.create_room(
        owner, intake_room_name(prefix), "public intake: reporters and the concierge",
        [agent_name("concierge", prefix)], channel_type="channel_public").id
    engineering = previous.engineering_room if previous else rooms.create_room(
        owner, engineering_room_name(prefix), "the desk's engineering crew and its owner",
        [agent_name(r, prefix) for r in ENGINEERING_ROLES], group_name=group_name(prefix)).id
    wanted = policies(owner.id, group, intake, {r: a.id for r, a in agents.items()})
    crew = Crew(owner.id, owner.name, group, intake, engineering, {r: a.id for r, a in agents.items()}, wanted,
                {r: a.sender for r, a in agents.items()}, prefix=prefix)
    found = drift(rooms.policy, crew) if previous is not None else []
    for role, policy in wanted.items():
        rooms.set_policy(owner, agents[role].id, policy)
    after = drift(rooms.policy, crew)
    if after:
        raise UsageError(f"the server did not keep the crew's policies: {'; '.join(after)}",
                         "check that this is the desk's rooms server and run setup again")
    if previous != crew:
        rooms.ledger.append(CASE, None, [CrewSetUp(**crew.as_json()).new_event()])
    _start_cursors(rooms, crew)
    return crew, found


def _start_cursors(rooms: RoomService, crew: Crew) -> None:
    """Each agent's stream starts where the crew was set up, not where its process first connects:
    a hand-off (or a reporter's question to the concierge) sent before a member's first start
    still reaches it."""
    head = rooms.head()
    for role, agent_id in crew.agents.items():
        room = crew.intake_room if role == "concierge" else crew.engineering_room
        store = AgentStore(rooms.ledger, agent_case(agent_id))
        if room not in store.state.cursors:
            store.opened(room, head)


def drift(policy_of: Callable[[str], dict[str, Any] | None], crew: Crew) -> list[str]:
    """Each role whose policy on the server (`policy_of(agent_id)`) is not the one the desk set, in words."""
    out = []
    for role, agent_id in crew.agents.items():
        held = policy_of(agent_id)
        if held != crew.policies[role]:
            out.append(f"{role}: the server holds {held!r}, the desk set {crew.policies[role]!r}")
    return out


# -- reporters linked to room users ------------------------------------------------------------------

REPORTERS = "desk/crew/reporters"


def link_reporter(rooms: RoomService, report_id: str, user_name: str) -> dict[str, str]:
    """Link a filed report to the rooms user who filed it (the owner does this, on the server's
    home): the user joins the public intake room, and the concierge asks that user the report's
    cards and answers that user about it. The sender id is kept as the server writes it."""
    crew = require_crew(rooms.ledger)
    if crew.server is not None:
        raise UsageError(f"the crew is on {crew.server}: the reporter is linked there, as an operator",
                         "pass --operator CREDENTIAL (that server's admin's or the crew owner's user token), or "
                         "name the role under [rooms.roles] whose agent stands in for the reporter (on Switch)")
    owner = rooms.user_by_name(crew.owner_name)
    user = rooms.user_by_name(user_name)
    require_report(rooms.ledger, report_id)
    if user.id not in {m.id for m in rooms.members(crew.intake_room)}:
        rooms.add_member(owner, crew.intake_room, user_name=user.name)
    return record_link(rooms.ledger, report_id, user.name, user.sender)


def require_report(ledger: SqlLedger, report_id: str) -> None:
    if ledger.version(report_case(report_id)) == 0:
        raise NotFoundError(f"no report {report_id}", "link a report id the desk gave its reporter")


def record_link(ledger: SqlLedger, report_id: str, user_name: str, sender: str) -> dict[str, str]:
    """The link as the server names the user (its sender id as the server writes it); once."""
    link = {"report_id": report_id, "user": user_name, "sender": sender}
    if reporter_links(ledger).get(report_id) != link:
        ledger.append(REPORTERS, None, [ReporterLinked(**link).new_event()])
    return link


def reporter_links(ledger: SqlLedger) -> dict[str, dict[str, str]]:
    """Report id -> {report_id, user, sender}, the latest link of each report."""
    return {rid: {"report_id": ev.report_id, "user": ev.user, "sender": ev.sender}
            for rid, ev in crew_records(ledger, REPORTERS).links.items()}


def crew_records(ledger: SqlLedger, case: str) -> CrewRecords:
    """One of the crew's cases (the setup, or one of its logs) folded."""
    return crew_fold.over(CrewRecords(), ledger.read(case))
