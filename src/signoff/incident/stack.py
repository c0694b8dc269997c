"""The incident's rooms, identities, policies and roles on a room server, and the run folder.

One run lives in a folder: the room server's database (`rooms.db`, the run's ledger, which also
holds each agent's cursor; with an external server at `[rooms] url`, only the run's ledger), part 1's
workspace (`ws/`: pinned guards, each organisation's records ledger with its approval and
guard-log chains, captures),
`run.json` (names and ids, no secrets) and `secrets.json` (api keys and user tokens, mode 0600, the
way a deployment keeps each identity's credentials next to the process that uses it).

Addressing is enforced by the room server, never by a prompt:

- in `payco-shopco-shared`, only priya and the mediator may address payco-agent (sam and the
  mediator for shopco-agent); only the mediator may address the notary;
- in `payco-internal` priya and PayCo's people (and the approver's notices) may address payco-agent,
  which takes drafts from them all, and only priya may address the approver there (sam likewise in
  `shopco-internal`);
- nobody may address the observer, which only reads.

Fix approvals are approval cards where the server offers them (`decision_channel` `approval_card`).
Where it does not (`addressed_command`: a Switch core, or signoff's own server with cards switched off
in the client's view), the org's human addresses the approver in the org's private room with the
exact command the approver showed for the request (`approve fix INC-0001-fix-payco #<digest>`), the
approver signs it like a disclosure approval and tells the mediator in the shared room; for that the
approver is a member of the shared room, which nobody may address it in, and the mediator's policy
admits it there.
"""

from __future__ import annotations

import json
import shutil
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signoff.incident.parties import Organisation, Parties
from signoff.incident.workspace import Workspace
from signoff.incident.workspace_rooms import write_secret_file
from signoff.kernel.errors import NotFoundError, UsageError
from signoff.ledger import SqlLedger
from signoff.rooms import RoomService
from signoff.rooms.client import Capabilities
from signoff.rooms.protocol.operations import catalogue
from signoff.trust import KeyStore

SHARED = "shared"
# The scripted run's cast (`signoff incident demo`, the red team, the preflight's scratch run): two
# organisations whose people and agents the scripted steps know by name. A run of other
# organisations takes its cast from its configuration (`Cast`); these names are the demo's.
ORGS = ("payco", "shopco")
CAST_NAMES = {"payco": "PayCo", "shopco": "ShopCo"}
CAST_PREFIXES = {"payco": "PAY", "shopco": "SHOP"}
ROOM_NAMES = {"payco": "payco-internal", "shopco": "shopco-internal", SHARED: "payco-shopco-shared"}
HUMANS = {"payco": "priya", "shopco": "sam"}
AGENT_OF = {"payco": "payco-agent", "shopco": "shopco-agent"}
ORG_OF_AGENT = {v: k for k, v in AGENT_OF.items()}
ORG_OF_HUMAN = {v: k for k, v in HUMANS.items()}
# Extra people: a PayCo engineer who is in PayCo's room but is not its approver (red team).
EXTRA_USERS = {"dave": "payco"}
MEDIATOR, NOTARY, APPROVER, OBSERVER = "mediator", "notary", "approver", "observer"
LINK_LABEL = "shared incident room"  # each private room's link to it, where the server has links
COMMANDER_ROLE = ("incident-commander", "Runs the incident: opens it, keeps the record, routes every "
                                        "cross-company request. Exclusive.")
NOTARY_ROLE = ("notary", "Issues the incident salt and compares fingerprints. No model.")
# The demo's two responder roles keep the names their recordings carry; any other organisation's
# agent holds `<key>-responder`.
RESPONDER_ROLES = {"payco": ("provider-responder", "Answers for PayCo (the webhook provider)."),
                   "shopco": ("consumer-responder", "Answers for ShopCo (the webhook consumer).")}


@dataclass(frozen=True)
class Cast:
    """Who plays one run, from its organisations: each one's approver, people, agent and private
    room, the shared room, and the roles and rooms of every agent. Nothing here is the demo's: the
    PayCo/ShopCo run is the cast of its configuration like any other."""

    parties: Parties

    @property
    def keys(self) -> tuple[str, ...]:
        return self.parties.keys

    def approver(self, org: str) -> str:
        """The person whose decisions the approver signs for `org`."""
        return self.parties.get(org).approver

    def agent(self, org: str) -> str:
        return self.parties.get(org).agent

    def title(self, org: str) -> str:
        return self.parties.get(org).name

    @property
    def approvers(self) -> dict[str, str]:
        return {o.key: o.approver for o in self.parties}

    @property
    def agents(self) -> dict[str, str]:
        return {o.key: o.agent for o in self.parties}

    def org_of_agent(self, name: str) -> str | None:
        return next((o.key for o in self.parties if o.agent == name), None)

    def org_of_approver(self, name: str) -> str | None:
        return next((o.key for o in self.parties if o.approver == name), None)

    def org_of_title(self, title: str) -> str | None:
        return next((o.key for o in self.parties if o.name == title), None)

    @property
    def room_names(self) -> dict[str, str]:
        """Room key -> the room's name on the server: `<org>-internal` each, and the shared room."""
        return {**{o.key: o.private_room for o in self.parties}, SHARED: "-".join(self.keys) + "-shared"}

    @property
    def roles(self) -> dict[str, tuple[str, bool, str]]:
        """Role -> (the agent holding it, exclusive, instructions), in the shared room."""
        out = {COMMANDER_ROLE[0]: (MEDIATOR, True, COMMANDER_ROLE[1])}
        for o in self.parties:
            role, text = RESPONDER_ROLES.get(o.key, (f"{o.key}-responder", f"Answers for {o.name}."))
            out[role] = (o.agent, False, text)
        out[NOTARY_ROLE[0]] = (NOTARY, False, NOTARY_ROLE[1])
        return out

    @property
    def role_of(self) -> dict[str, str]:
        return {agent: role for role, (agent, _, _) in self.roles.items()}

    @property
    def agent_rooms(self) -> dict[str, list[str]]:
        """Each agent's rooms (the approver's shared-room seat is added by `RunInfo.agent_rooms`)."""
        return {MEDIATOR: [SHARED], NOTARY: [SHARED], APPROVER: list(self.keys), OBSERVER: [*self.keys, SHARED],
                **{o.agent: [o.key, SHARED] for o in self.parties}}

    def members(self, key: str) -> list[str]:
        """The people of a room: an organisation's approver and people, or every organisation's (shared)."""
        if key == SHARED:
            return [p for o in self.parties for p in (o.approver, *o.people)]
        o = self.parties.get(key)
        return [o.approver, *o.people]


DEMO_CAST_PARTIES = Parties(tuple(Organisation(org, CAST_NAMES[org], HUMANS[org], agent=AGENT_OF[org],
                                               prefix=CAST_PREFIXES[org], people=tuple(
                                                   n for n, o in EXTRA_USERS.items() if o == org)) for org in ORGS))
ROLES = Cast(DEMO_CAST_PARTIES).roles
ROLE_OF = {agent: role for role, (agent, _, _) in ROLES.items()}
AGENT_ROOMS = Cast(DEMO_CAST_PARTIES).agent_rooms


def _rule(rooms: list[str], users: list[str] | None = None, agents: list[str] | None = None) -> dict[str, Any]:
    return {"rooms": rooms, "room_groups": "*", "users": users or [], "agents": agents or [],
            "owner": False, "owner_agents": False}


@dataclass
class RunInfo:
    run_dir: Path
    db_url: str
    rooms: dict[str, str]     # room key -> room id
    agents: dict[str, str]    # agent name -> id
    users: dict[str, str]     # user name -> id
    # Operations the run chose not to use although the server offers them (the client's view).
    without: list[str] = field(default_factory=list)
    decision_channel: str = "approval_card"  # how fix approvals are decided (see the module's doc)
    # An external room server (`[rooms] url`); None: the run's own, on `db_url`. With an external
    # server, `db_url` is only the run's ledger (cursors, the notary, the outbox).
    url: str | None = None
    # Appended to every name the run made on the server (people, agents, rooms): a server keeps
    # names unique, and one external server hosts many runs. "" on the run's own server.
    suffix: str = ""
    # Whether the run can send the traffic again with the fixes (a scenario's end-to-end check);
    # without, the commander closes once every fix is approved.
    rerun: bool = True
    # The run's organisations (read from its workspace when first needed).
    parties: Parties | None = field(default=None, repr=False, compare=False)
    # Each organisation's private room links to the shared room, where the server has room links
    # (`link_rooms`): organisation key -> the link's label. Empty on a server without them.
    links: dict[str, str] = field(default_factory=dict)

    def server_name(self, name: str) -> str:
        """A person's or agent's name as the server knows it (what an @mention or a target names)."""
        return f"{name}{self.suffix}"

    def fix_card(self, incident: str, org: str) -> str:
        """The request id of `org`'s fix approval card (card ids, too, are unique server-wide)."""
        return f"{incident}-fix-{org}{self.suffix}"

    @property
    def cards(self) -> bool:
        return self.decision_channel == "approval_card"

    def agent_rooms(self, name: str) -> list[str]:
        """The rooms an agent works in, in this run."""
        extra = [SHARED] if name == APPROVER and not self.cards else []
        return self.cast.agent_rooms[name] + extra

    @property
    def cast(self) -> Cast:
        """Who plays this run: from the organisations its workspace was set up with."""
        if self.parties is None:
            self.parties = run_parties(self.run_dir)
        return Cast(self.parties)

    def as_json(self) -> dict[str, Any]:
        # The database is named relative to the run folder, so a copied or moved run still opens.
        db = "rooms.db" if self.db_url == _db_url(self.run_dir) else self.db_url
        return {"db": db, "rooms": self.rooms, "agents": self.agents, "users": self.users,
                "without": self.without, "decision_channel": self.decision_channel, "url": self.url,
                "suffix": self.suffix, "rerun": self.rerun, "links": self.links}

    @classmethod
    def load(cls, run_dir: Path) -> RunInfo:
        path = Path(run_dir) / "run.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise NotFoundError(f"no incident run at {run_dir}",
                                "pass the folder `signoff incident demo` printed") from exc
        except ValueError as exc:
            raise UsageError(f"{path} is not a run file", "pass a folder written by `signoff incident demo`") from exc
        db = str(data["db"])
        url = _db_url(Path(run_dir)) if db == "rooms.db" else db
        return cls(Path(run_dir), url, dict(data["rooms"]), dict(data["agents"]), dict(data["users"]),
                   [str(op) for op in data.get("without", [])], str(data.get("decision_channel", "approval_card")),
                   data.get("url"), str(data.get("suffix", "")), bool(data.get("rerun", True)),
                   links={str(k): str(v) for k, v in dict(data.get("links") or {}).items()})

    def room_key(self, room_id: str) -> str | None:
        for key, rid in self.rooms.items():
            if rid == room_id:
                return key
        return None

    def name_of(self, sender: str) -> str:
        """`agent:<id>` / `user:<id>` -> the identity's name (unknown senders stay opaque)."""
        kind, _, ident = sender.partition(":")
        table = self.agents if kind == "agent" else self.users
        for name, i in table.items():
            if i == ident:
                return name
        return sender


def _db_url(run_dir: Path) -> str:
    return f"sqlite:///{(Path(run_dir) / 'rooms.db').resolve()}"


def read_secrets(run_dir: Path) -> dict[str, str]:
    path = Path(run_dir) / "secrets.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise NotFoundError(f"no credentials in {run_dir}", "the run folder is incomplete; run the demo again") from exc
    return {str(k): str(v) for k, v in data.items()}


def workspace(run_dir: Path, keys: KeyStore) -> Workspace:
    ws = Workspace(Path(run_dir) / "ws", keys)
    if (Path(run_dir) / "run.json").exists() and not ws.parties_path.exists():
        ws.use_parties(run_parties(run_dir))  # a run made before organisations came from configuration
    return ws


def run_parties(run_dir: Path) -> Parties:
    """The organisations of a run, as its workspace was set up with them. A run made before
    organisations came from configuration has no `parties.json`: it played the scripted cast."""
    path = Path(run_dir) / "ws" / "parties.json"
    if not path.exists() and (Path(run_dir) / "run.json").exists():
        return Parties(tuple(Organisation(org, CAST_NAMES[org], HUMANS[org], agent=AGENT_OF[org],
                                          prefix=CAST_PREFIXES[org]) for org in ORGS))
    return Parties.read(path)


class Provisioner(ABC):
    """Where a run's identities, rooms and policies are made: the run's own embedded server, or an
    external one through the operator adapter (`signoff.incident.external`)."""

    url: str | None = None  # the external server's address; None for the run's own server
    suffix: str = ""  # what it appends to the names it makes (see RunInfo.suffix)

    @abstractmethod
    def catalogue(self) -> dict[str, Any]:
        """The server's operation catalogue (what it offers)."""

    @abstractmethod
    def create_user(self, name: str, display_name: str) -> tuple[str, str]:
        """A person: (user id, user token)."""

    @abstractmethod
    def create_agent(self, name: str, description: str) -> tuple[str, str]:
        """An agent: (agent id, api key)."""

    @abstractmethod
    def create_room(self, name: str, agent_names: list[str], user_names: list[str],
                    roles: list[dict[str, Any]]) -> str:
        """A room with its members and roles: its id."""

    @abstractmethod
    def set_policy(self, agent_id: str, rules: list[dict[str, Any]]) -> None:
        """An agent's addressing policy."""

    @abstractmethod
    def link_rooms(self, source_room_id: str, target_room_id: str, label: str) -> None:
        """A room link (on a server whose catalogue offers `link_rooms`)."""

    def close(self) -> None:
        return None


class EmbeddedProvisioner(Provisioner):
    """The run's own room server: a `RoomService` on the run's database, with an admin of its own."""

    def __init__(self, ledger: SqlLedger, secrets: dict[str, str]) -> None:
        self.rooms = RoomService(ledger)
        self.admin, secrets["user:admin"] = self.rooms.create_user("admin", "Switch admin", admin=True)

    def catalogue(self) -> dict[str, Any]:
        return catalogue()

    def create_user(self, name: str, display_name: str) -> tuple[str, str]:
        user, token = self.rooms.create_user(name, display_name)
        return user.id, token

    def create_agent(self, name: str, description: str) -> tuple[str, str]:
        agent, key = self.rooms.create_agent(self.admin, name, description)
        return agent.id, key

    def create_room(self, name: str, agent_names: list[str], user_names: list[str],
                    roles: list[dict[str, Any]]) -> str:
        return self.rooms.create_room(self.admin, name, f"incident room {name}", agent_names=agent_names,
                                      user_names=user_names, roles=roles, group_name="crosswire").id

    def set_policy(self, agent_id: str, rules: list[dict[str, Any]]) -> None:
        self.rooms.set_policy(self.admin, agent_id, {"rules": rules})

    def link_rooms(self, source_room_id: str, target_room_id: str, label: str) -> None:
        self.rooms.link_rooms(self.admin, source_room_id, target_room_id, label)


def _policies(cast: Cast, uid: dict[str, str], aid: dict[str, str], room_ids: dict[str, str],
              cards: bool) -> dict[str, list[dict[str, Any]]]:
    """Who may address whom, per agent: in the shared room only an organisation's approver and the
    commander may address its agent, only the commander the notary, and every organisation's
    people the commander (its approvers alone confirm a root cause); in an organisation's private
    room its approver and its people may address its agent (they draft; the agent acts on a
    colleague's drafts only), and only its approver may address the approver (who signs)."""
    shared = room_ids[SHARED]
    approvers = cast.approvers
    out: dict[str, list[dict[str, Any]]] = {}
    for org, agent in cast.agents.items():
        person = uid[approvers[org]]
        people = [uid[p] for p in cast.members(org)]
        out[agent] = [_rule([shared], [person], [aid[MEDIATOR]]), _rule([room_ids[org]], people, [aid[APPROVER]])]
    out[APPROVER] = [_rule([room_ids[org]], [uid[approvers[org]]]) for org in cast.keys]
    out[MEDIATOR] = [_rule([shared], [uid[p] for p in cast.members(SHARED)],
                           [aid[NOTARY], *(aid[a] for a in cast.agents.values()), *([] if cards else [aid[APPROVER]])])]
    out[NOTARY] = [_rule([shared], [], [aid[MEDIATOR]])]
    out[OBSERVER] = [_rule([])]
    return out


def check_cast(parties: Parties) -> None:
    """The scripted run plays its own cast: the organisations must be that cast's."""
    cast = [(o.key, o.approver, o.agent) for o in parties]
    if cast != [(org, HUMANS[org], AGENT_OF[org]) for org in ORGS]:
        raise UsageError("the scripted incident run plays two organisations, payco (priya, payco-agent) and "
                         "shopco (sam, shopco-agent)", "run it with the demo's organisations")


def provision(run_dir: Path, keys: KeyStore, parties: Parties, without: Iterable[str] = (),
              server: Callable[[dict[str, str]], Provisioner] | None = None, rerun: bool = True,
              pinned: Workspace | None = None) -> RunInfo:
    """Create the room server's identities, rooms, roles and policies for one run, and pin the guards.
    `without` names operations the run does not use (e.g. `request_approval`: fix approvals by
    addressed commands instead of cards). `server` makes them elsewhere (given the run's secrets to
    fill); by default on the run's own server, whose database is the run's ledger. The workspace's
    guards are built from `parties`, whose captures the run's evidence servers serve; or, with
    `pinned` (the incident set up in a home), they are that workspace's pinned guards. `rerun`: the
    run can send the traffic again with the fixes (a scenario's)."""
    run_dir = Path(run_dir)
    if (run_dir / "run.json").exists():
        raise UsageError(f"{run_dir} already holds a run", "pick a fresh folder")
    fresh = not run_dir.exists()
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        return _provision(run_dir, keys, parties, without, server, rerun, pinned)
    except BaseException:
        if fresh:  # a run that failed half way leaves no folder behind (what an external server made stays)
            shutil.rmtree(run_dir, ignore_errors=True)
        raise


def _provision(run_dir: Path, keys: KeyStore, parties: Parties, without: Iterable[str],
               server: Callable[[dict[str, str]], Provisioner] | None, rerun: bool,
               pinned: Workspace | None) -> RunInfo:
    db_url = _db_url(run_dir)
    skipped = sorted(set(without))
    ledger = SqlLedger.from_url(db_url)
    secrets: dict[str, str] = {}
    try:
        where = server(secrets) if server is not None else EmbeddedProvisioner(ledger, secrets)
        try:
            cast = Cast(parties)
            uid: dict[str, str] = {}
            for o in parties:
                for name in (o.approver, *o.people):
                    what = "on-call" if name == o.approver else "engineer"
                    uid[name], secrets[f"user:{name}"] = where.create_user(name, f"{name.title()} ({o.key} {what})")
            aid: dict[str, str] = {}
            for name in cast.agent_rooms:
                aid[name], secrets[f"agent:{name}"] = where.create_agent(name, f"incident {name}")
            offered = Capabilities.from_catalogue(where.catalogue()).without(*skipped)
            channel = offered.decision_channel
            placed = RunInfo(run_dir, db_url, {}, {}, {}, skipped, channel, where.url, where.suffix, parties=parties)
            room_ids: dict[str, str] = {}
            names = cast.room_names
            for key in (*cast.keys, SHARED):
                roles = ([{"name": r, "instructions": text, "exclusive": excl}
                          for r, (_, excl, text) in cast.roles.items()] if key == SHARED else [])
                agents = [a for a in cast.agent_rooms if key in placed.agent_rooms(a)]
                room_ids[key] = where.create_room(names[key], agents, cast.members(key), roles)
            links: dict[str, str] = {}
            if offered.room_links:
                # Each organisation's private room points at the shared room (one way: the shared
                # room does not point at anyone's private room).
                for org in cast.keys:
                    where.link_rooms(room_ids[org], room_ids[SHARED], LINK_LABEL)
                    links[org] = LINK_LABEL
            for name, rules in _policies(cast, uid, aid, room_ids, placed.cards).items():
                where.set_policy(aid[name], rules)
        finally:
            where.close()
        info = RunInfo(run_dir, db_url, room_ids, aid, uid, skipped, channel, where.url, where.suffix, rerun,
                       parties=parties, links=links)
        with workspace(run_dir, keys) as ws:
            if pinned is not None:
                ws.adopt(pinned)
            else:
                ws.setup(parties)
        (run_dir / "run.json").write_text(json.dumps(info.as_json(), indent=1, sort_keys=True) + "\n",
                                          encoding="utf-8")
        write_secret_file(run_dir / "secrets.json", secrets)
        return info
    finally:
        ledger.close()


__all__ = [
    "AGENT_OF",
    "AGENT_ROOMS",
    "APPROVER",
    "HUMANS",
    "MEDIATOR",
    "NOTARY",
    "OBSERVER",
    "ORGS",
    "ROLES",
    "ROLE_OF",
    "ROOM_NAMES",
    "SHARED",
    "Cast",
    "RunInfo",
    "check_cast",
    "provision",
    "read_secrets",
    "run_parties",
    "workspace",
]
