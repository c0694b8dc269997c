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
- in `payco-internal` only priya (and the approver's notices) may address payco-agent, and only
  priya may address the approver there (sam likewise in `shopco-internal`);
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
# organisations whose people and agents the playbooks know by name. `provision` refuses parties
# with another cast; an incident of other organisations runs without the playbooks.
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
ROLES = {
    "incident-commander": (MEDIATOR, True, "Runs the incident: opens it, keeps the record, routes every "
                                           "cross-company request. Exclusive."),
    "provider-responder": (AGENT_OF["payco"], False, "Answers for PayCo (the webhook provider)."),
    "consumer-responder": (AGENT_OF["shopco"], False, "Answers for ShopCo (the webhook consumer)."),
    "notary": (NOTARY, False, "Issues the incident salt and compares fingerprints. No model."),
}
ROLE_OF = {agent: role for role, (agent, _, _) in ROLES.items()}
AGENT_ROOMS = {
    MEDIATOR: [SHARED],
    NOTARY: [SHARED],
    APPROVER: ["payco", "shopco"],
    OBSERVER: ["payco", "shopco", SHARED],
    AGENT_OF["payco"]: ["payco", SHARED],
    AGENT_OF["shopco"]: ["shopco", SHARED],
}


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
        return AGENT_ROOMS[name] + extra

    def as_json(self) -> dict[str, Any]:
        # The database is named relative to the run folder, so a copied or moved run still opens.
        db = "rooms.db" if self.db_url == _db_url(self.run_dir) else self.db_url
        return {"db": db, "rooms": self.rooms, "agents": self.agents, "users": self.users,
                "without": self.without, "decision_channel": self.decision_channel, "url": self.url,
                "suffix": self.suffix}

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
                   data.get("url"), str(data.get("suffix", "")))

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


def _policies(uid: dict[str, str], aid: dict[str, str], room_ids: dict[str, str],
              cards: bool) -> dict[str, list[dict[str, Any]]]:
    shared, pay, shop = room_ids[SHARED], room_ids["payco"], room_ids["shopco"]
    return {
        AGENT_OF["payco"]: [_rule([shared], [uid["priya"]], [aid[MEDIATOR]]),
                            _rule([pay], [uid["priya"]], [aid[APPROVER]])],
        AGENT_OF["shopco"]: [_rule([shared], [uid["sam"]], [aid[MEDIATOR]]),
                             _rule([shop], [uid["sam"]], [aid[APPROVER]])],
        APPROVER: [_rule([pay], [uid["priya"]]), _rule([shop], [uid["sam"]])],
        MEDIATOR: [_rule([shared], [uid["priya"], uid["sam"]],
                         [aid[NOTARY], aid[AGENT_OF["payco"]], aid[AGENT_OF["shopco"]],
                          *([] if cards else [aid[APPROVER]])])],
        NOTARY: [_rule([shared], [], [aid[MEDIATOR]])],
        OBSERVER: [_rule([])],
    }


def check_cast(parties: Parties) -> None:
    """The scripted run plays its own cast: the organisations must be that cast's."""
    cast = [(o.key, o.approver, o.agent) for o in parties]
    if cast != [(org, HUMANS[org], AGENT_OF[org]) for org in ORGS]:
        raise UsageError("the scripted incident run plays two organisations, payco (priya, payco-agent) and "
                         "shopco (sam, shopco-agent)", "run it with the demo's organisations")


def provision(run_dir: Path, keys: KeyStore, parties: Parties, without: Iterable[str] = (),
              server: Callable[[dict[str, str]], Provisioner] | None = None) -> RunInfo:
    """Create the room server's identities, rooms, roles and policies for one run, and pin the guards.
    `without` names operations the run does not use (e.g. `request_approval`: fix approvals by
    addressed commands instead of cards). `server` makes them elsewhere (given the run's secrets to
    fill); by default on the run's own server, whose database is the run's ledger. The workspace's
    guards are built from `parties`, whose captures the run's evidence servers serve."""
    check_cast(parties)
    run_dir = Path(run_dir)
    if (run_dir / "run.json").exists():
        raise UsageError(f"{run_dir} already holds a run", "pick a fresh folder")
    fresh = not run_dir.exists()
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        return _provision(run_dir, keys, parties, without, server)
    except BaseException:
        if fresh:  # a run that failed half way leaves no folder behind (what an external server made stays)
            shutil.rmtree(run_dir, ignore_errors=True)
        raise


def _provision(run_dir: Path, keys: KeyStore, parties: Parties, without: Iterable[str],
               server: Callable[[dict[str, str]], Provisioner] | None) -> RunInfo:
    db_url = _db_url(run_dir)
    skipped = sorted(set(without))
    ledger = SqlLedger.from_url(db_url)
    secrets: dict[str, str] = {}
    try:
        where = server(secrets) if server is not None else EmbeddedProvisioner(ledger, secrets)
        try:
            uid: dict[str, str] = {}
            for org, name in HUMANS.items():
                uid[name], secrets[f"user:{name}"] = where.create_user(name, f"{name.title()} ({org} on-call)")
            for name, org in EXTRA_USERS.items():
                uid[name], secrets[f"user:{name}"] = where.create_user(name, f"{name.title()} ({org} engineer)")
            aid: dict[str, str] = {}
            for name in AGENT_ROOMS:
                aid[name], secrets[f"agent:{name}"] = where.create_agent(name, f"incident {name}")
            channel = Capabilities.from_catalogue(where.catalogue()).without(*skipped).decision_channel
            placed = RunInfo(run_dir, db_url, {}, {}, {}, skipped, channel, where.url, where.suffix)
            room_ids: dict[str, str] = {}
            for key, people in (("payco", ["priya", "dave"]), ("shopco", ["sam"]), (SHARED, ["priya", "sam"])):
                roles = ([{"name": r, "instructions": text, "exclusive": excl}
                          for r, (_, excl, text) in ROLES.items()] if key == SHARED else [])
                room_ids[key] = where.create_room(ROOM_NAMES[key], [a for a in AGENT_ROOMS
                                                                    if key in placed.agent_rooms(a)], people, roles)
            for name, rules in _policies(uid, aid, room_ids, placed.cards).items():
                where.set_policy(aid[name], rules)
        finally:
            where.close()
        info = RunInfo(run_dir, db_url, room_ids, aid, uid, skipped, channel, where.url, where.suffix)
        with workspace(run_dir, keys) as ws:
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
    "RunInfo",
    "check_cast",
    "provision",
    "read_secrets",
    "run_parties",
    "workspace",
]
