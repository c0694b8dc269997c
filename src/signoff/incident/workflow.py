"""The whole incident in rooms: services, scripted humans, the run, its measurements.

`Incident(run_dir, keys, settings)` starts every service of one run over the run's room server
database: both evidence servers (HTTP on loopback), the notary, the approver, the mediator, both
company agents and an outbox worker. `restart(name)` stops one service and starts it again from
durable state only (the room server, the run's ledger with each agent's cursor, the chains), as a crashed
process would come back. Humans are scripted (`SCRIPT`): each step reads the room the way a person
would (e.g. copies the approve command from the draft) and posts through the room server as that
user. Nothing here decides whether the run was good: `signoff.incident.grade` does, from the room
server's API.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signoff.incident.actors import RoomAgent, strip_mentions
from signoff.incident.captures import load_captures
from signoff.incident.evidence_server import EvidenceClient, EvidenceStore, LoopbackServer, make_app
from signoff.incident.guard import GuardConfig, Post
from signoff.incident.notary import IssuedSalt
from signoff.incident.playbooks import (
    PUBLISH_TOPIC,
    REVIEW_LINE,
    ApproverService,
    CompanyAgent,
    Mediator,
    NotaryService,
    parse_disclosure_post,
)
from signoff.incident.playbooks.posts import FIX_APPROVED
from signoff.incident.remote_approver import RemoteApprover, approver_endpoints, notary_ledger, note_in_run
from signoff.incident.roomserver import POLL_WAIT, RoomServerProcess
from signoff.incident.scenario import Scenario
from signoff.incident.stack import (
    AGENT_OF,
    APPROVER,
    MEDIATOR,
    NOTARY,
    SHARED,
    Provisioner,
    RunInfo,
    check_cast,
    provision,
    read_secrets,
    workspace,
)
from signoff.incident.workspace import SHARED_ROOM, Workspace
from signoff.kernel.errors import RefusedError, SignoffError, UsageError
from signoff.kernel.settings import Settings
from signoff.ledger import Ledger, Outbox, SqlLedger, Worker
from signoff.rooms import RoomService
from signoff.rooms.client import (
    HttpSyncTransport,
    HttpUserTransport,
    InProcessSyncTransport,
    InProcessUserTransport,
    RoomsUserClient,
    SyncRoomsClient,
)
from signoff.rooms.domain.model import Principal
from signoff.trust import KeyStore, PublicKey

SERVICES = ("rooms", NOTARY, APPROVER, MEDIATOR, AGENT_OF["payco"], AGENT_OF["shopco"], "evidence")  # the demo's


def services(info: RunInfo) -> tuple[str, ...]:
    """What `Incident.restart` can restart in this run: the room server, the notary, the approver,
    the commander, each organisation's agent and the evidence servers."""
    return ("rooms", NOTARY, APPROVER, MEDIATOR, *info.cast.agents.values(), "evidence")


class Stuck(SignoffError):
    """A scripted step found the room not in the state it waits for."""


class Incident:
    def __init__(self, run_dir: Path, keys: KeyStore, settings: Settings, scenario: Scenario | None = None,
                 over_http: bool = True) -> None:
        """`scenario` makes the traffic where the organisations' captures are missing, and re-runs it
        with the fixes (the end-to-end check); without one, the configured captures must exist."""
        self.run_dir = Path(run_dir)
        self.keys = keys
        self.settings = settings
        self.scenario = scenario
        self.over_http = over_http
        self.info = RunInfo.load(self.run_dir)
        self.secrets = read_secrets(self.run_dir)
        self.ws = workspace(self.run_dir, keys)
        self.cast = self.info.cast
        self.evidence_tokens = {org: secrets.token_urlsafe(24) for org in self.cast.keys}
        self.servers: dict[str, LoopbackServer] = {}
        self.evidence_ledgers: dict[str, Ledger] = {}
        self.actors: dict[str, RoomAgent] = {}
        self.users: dict[str, RoomsUserClient] = {}
        self.ledger: SqlLedger | None = None
        self.rooms: RoomService | None = None
        self.rooms_server: RoomServerProcess | None = None
        self.processes: dict[str, RemoteApprover] = {}
        self.notary_ledger: SqlLedger | None = None
        self.notary_id: str | None = None
        self._connect_approvers()
        self._start_rooms()
        self.decision_channel = self.negotiate()
        self._start_evidence()
        for name in (NOTARY, APPROVER, MEDIATOR, *self.cast.agents.values()):
            self._start_actor(name)

    def negotiate(self) -> str:
        """How fix approvals are decided on this server, from its operation catalogue (less what the
        run chose not to use): it must be the channel the run's rooms and policies were made for."""
        client = self.agent_client(MEDIATOR)
        try:
            offered = client.capabilities().without(*self.info.without)
        finally:
            client.close()
        if offered.decision_channel != self.info.decision_channel:
            self._stop_rooms()
            self._disconnect_approvers()
            self.ws.close()
            raise RefusedError(f"this run was provisioned for fix approvals by {self.info.decision_channel}, "
                               f"but the room server offers {offered.decision_channel}",
                               "provision a new run against this server")
        return offered.decision_channel

    # -- services ------------------------------------------------------------------------------

    def _connect_approvers(self) -> None:
        """The organisations whose approver is a process of its own (`[incident.approvers.<org>]`):
        it signs their approvals, and their guards count only its records. Its incident is the
        notary's current one in the ledger it reads, so the run's notary keeps its salts there."""
        endpoints = {org: e for org, e in approver_endpoints(self.settings).items() if org in self.cast.keys}
        shared = notary_ledger(self.settings)
        if endpoints and shared is None:
            self.ws.close()
            raise UsageError(f"{', '.join(endpoints)}'s approver is a process of its own, and it reads the incident "
                             "from a notary ledger, which the run's notary does not write to",
                             "set [incident.notary] db and id in signoff.toml to the --notary-db and --notary-id "
                             "the approvers were started with")
        for org, endpoint in endpoints.items():
            pinned = PublicKey.from_hex(GuardConfig.read(self.ws.guard_config_path(org)).approver_key, org)
            process = self.processes[org] = RemoteApprover(endpoint, pinned)
            self.ws.use_approver_process(org, process.record)
        if endpoints and shared is not None:
            self.notary_ledger = SqlLedger.from_url(shared.db)
            self.notary_id = shared.notary_id
        if self.processes:
            note_in_run(self.run_dir, self.processes)

    @property
    def service(self) -> RoomService:
        if self.rooms is None:
            raise UsageError("this run's rooms are on an external server", "reach them through its API")
        return self.rooms

    @property
    def run_ledger(self) -> SqlLedger:
        """The run's own ledger: the agents' cursors, the notary's salts, the outbox."""
        assert self.ledger is not None
        return self.ledger

    def _url(self) -> str | None:
        return self.info.url or (self.rooms_server.url if self.rooms_server is not None else None)

    def _start_rooms(self) -> None:
        self.ledger = SqlLedger.from_url(self.info.db_url)
        if self.info.url is not None:
            self.users = {}
            return  # an external server: nothing of it runs here
        self.rooms = RoomService(self.ledger)
        if self.over_http:
            # The room server as its own process, on a loopback port the OS picks.
            self.rooms_server = RoomServerProcess(self.info.db_url)
            self.rooms_server.__enter__()
        self.users = {}

    def _stop_rooms(self) -> None:
        for actor in self.actors.values():
            actor.client.close()
        for user in self.users.values():
            user.close()
        self.users = {}
        if self.rooms_server is not None:
            self.rooms_server.__exit__(None, None, None)
            self.rooms_server = None
        if self.ledger is not None:
            self.ledger.close()

    def agent_client(self, name: str) -> SyncRoomsClient:
        key = self.secrets[f"agent:{name}"]
        url = self._url()
        if url is not None:
            # Each service polls its rooms in turn: an idle poll must not wait out the server's keepalive.
            return SyncRoomsClient(HttpSyncTransport(url, self.info.agents[name], key, client_name="signoff-incident",
                                                     poll_wait=POLL_WAIT))
        return SyncRoomsClient(InProcessSyncTransport(self.service, key))

    def user_client(self, name: str) -> RoomsUserClient:
        if name not in self.users:
            token = self.secrets[f"user:{name}"]
            url = self._url()
            self.users[name] = RoomsUserClient(HttpUserTransport(url, token) if url is not None
                                               else InProcessUserTransport(self.service, token))
        return self.users[name]

    def _start_evidence(self) -> None:
        parties = self.ws.parties
        missing = [p for o in parties for p in o.captures if not p.exists()]
        if missing and self.scenario is not None:
            self.scenario.reproduce(missing[0].parent)  # production traffic before the incident
        for org in parties:
            # A restarted server reopens the same budget ledger: the salt's spent fingerprints stay spent.
            ledger = self.evidence_ledgers[org.key] = self.ws.evidence_ledger(org.key)
            store = EvidenceStore.of(org.key, load_captures(org.captures), ledger)
            server = LoopbackServer(make_app(store, self.evidence_tokens[org.key], self.current_salt))
            server.__enter__()
            self.servers[org.key] = server

    def _stop_evidence(self) -> None:
        for server in self.servers.values():
            server.__exit__(None, None, None)
        for ledger in self.evidence_ledgers.values():
            ledger.close()
        self.servers = {}
        self.evidence_ledgers = {}

    def _issued(self) -> int:
        notary = self.actors.get(NOTARY)
        return len(notary.notary.issued) if isinstance(notary, NotaryService) else 0

    def current_salt(self) -> IssuedSalt | None:
        notary = self.actors.get(NOTARY)
        return notary.current() if isinstance(notary, NotaryService) else None

    def _start_actor(self, name: str) -> None:
        old = self.actors.get(name)
        if old is not None:
            old.client.close()
        args = (self.agent_client(name), self.info, name, self.info.agent_rooms(name), self.run_ledger)
        actor: RoomAgent
        if name == NOTARY and self.notary_ledger is not None:
            actor = NotaryService(*args, ledger=self.notary_ledger, notary_id=self.notary_id)
        elif name == NOTARY:
            actor = NotaryService(*args, ledger=self.run_ledger)
        elif name == APPROVER:
            actor = ApproverService(*args, ws=self.ws, current=self.current_salt, processes=self.processes)
        elif name == MEDIATOR:
            actor = Mediator(*args, issued=self._issued if self.notary_ledger is not None else None)
        else:
            org = self.cast.org_of_agent(name) or ""
            client = EvidenceClient(self.servers[org].url, self.evidence_tokens[org])
            actor = CompanyAgent(*args, org=org, ws=self.ws, ledger=self.run_ledger, evidence=client,
                                 settings=self.settings, current=self.current_salt, scenario=self.scenario)
        self.actors[name] = actor

    def restart(self, name: str) -> None:
        """Stop one service and start it again from durable state only."""
        if name not in services(self.info):
            raise UsageError(f"unknown service {name!r}", f"use one of: {', '.join(services(self.info))}")
        if name == "rooms" and self.info.url is not None:
            raise UsageError(f"the room server at {self.info.url} is not this run's to restart",
                             "restart it where it runs; the agents reconnect")
        if name == "rooms":
            self._stop_rooms()
            self._start_rooms()
            for actor_name in list(self.actors):
                self._start_actor(actor_name)  # their connections lived in the old server process
        elif name == "evidence":
            self._stop_evidence()
            self._start_evidence()
            for agent in self.cast.agents.values():
                self._start_actor(agent)
        else:
            self._start_actor(name)

    def close(self) -> None:
        self._stop_evidence()
        for actor in self.actors.values():
            if isinstance(actor, CompanyAgent):
                actor.evidence.close()
        self._stop_rooms()
        self._disconnect_approvers()
        self.ws.close()

    def _disconnect_approvers(self) -> None:
        for process in self.processes.values():
            process.close()
        if self.notary_ledger is not None:
            self.notary_ledger.close()

    def __enter__(self) -> Incident:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- running -------------------------------------------------------------------------------

    def pump(self, limit: int = 500) -> int:
        """Let every service handle what is waiting, until nothing is (deterministic order)."""
        order = [NOTARY, MEDIATOR, APPROVER, *self.cast.agents.values()]
        worker = Worker(Outbox(self.run_ledger), {PUBLISH_TOPIC: self._publish})
        total = 0
        for _ in range(limit):
            n = sum(self.actors[name].poll() for name in order) + worker.drain()
            total += n
            if n == 0:
                return total
        raise Stuck("the services did not settle", "look at the last messages in the rooms")

    def _publish(self, job: Any) -> None:
        agent = self.actors[self.cast.agent(str(job.payload["org"]))]
        assert isinstance(agent, CompanyAgent)
        agent.publish(job)

    def user(self, name: str) -> Principal:
        """The person's identity as the server knows it (for assertions; people act through user_client)."""
        return self.service.authenticate(self.secrets[f"user:{name}"])

    def say(self, who: str, room: str, body: str, targets: list[str] | None = None,
            roles: list[str] | None = None) -> dict[str, Any]:
        """A person posts through the user endpoint; a role is addressed by typing @role."""
        for actor in self.actors.values():
            actor.beat()  # role mentions reach live holders only
        text = " ".join([*(f"@{r}" for r in roles or []), body])
        result = self.user_client(who).post(self.info.rooms[room], text,
                                            [self.info.server_name(t) for t in targets or []])
        return {"message_id": result["event_id"], "target_statuses": result.get("target_statuses", {})}

    def messages(self, who: str, room: str) -> list[dict[str, Any]]:
        return self.user_client(who).messages(self.info.rooms[room])

    def preflight(self) -> dict[str, Any]:
        """Before the incident: each guard blocks a deliberate draft in the shared room, and each
        evidence server refuses the other company's token."""
        out: dict[str, Any] = {}
        parties = self.ws.parties
        for org in parties.keys:
            verdict = self.ws.guard(org).check(Post(SHARED_ROOM, f"preflight draft\n\nApprove with: approve "
                                                                f"D-{parties.get(org).prefix}-99"))
            out[f"{org}_guard_blocks_draft"] = not verdict.allowed
            other = parties.others(org)[0].key
            wrong = EvidenceClient(self.servers[org].url, self.evidence_tokens[other])
            try:
                wrong.summary()
                out[f"{org}_evidence_refuses_other_token"] = False
            except SignoffError:
                out[f"{org}_evidence_refuses_other_token"] = True
            finally:
                wrong.close()
        return out


# -- the scripted humans ---------------------------------------------------------------------

APPROVE_LINE = re.compile(r"^Approve with: approve (D-[A-Z]{2,8}-[0-9]+)$")
CONFIRM_LINE = re.compile(r"please confirm with: @incident-commander "
                          r"(confirm root cause INC-[0-9]{4} #[0-9a-f]{12,64})$")
FIX_LINE = re.compile(r"^To approve the fix, address the approver: approve fix (INC-[0-9]{4}-fix-[a-z0-9]+)$")


def reviewed_command(inc: Incident, org: str, what: str) -> str | None:
    """The exact command of the approver's latest review notice in the org's room for `what` (a
    disclosure id or a fix request id): the person reads the draft and copies that command."""
    approver = f"agent:{inc.info.agents[APPROVER]}"
    for m in reversed(inc.messages(inc.cast.approver(org), org)):
        hit = REVIEW_LINE.match(m["body"].rstrip().rsplit("\n", 1)[-1])
        if m["sender"] == approver and hit and hit.group(2) == what:
            return hit.group(1)
    return None


def _approve_latest(org: str) -> Callable[[Incident], None]:
    """The org's human reads the latest unapproved draft and copies the command the approver showed
    for it (naming the digest of that draft and its evidence), literally."""

    def step(inc: Incident) -> None:
        human = inc.cast.approver(org)
        msgs = inc.messages(human, org)
        agent_sender = f"agent:{inc.info.agents[inc.cast.agent(org)]}"
        approved = {m["body"].split(" ")[1] for m in msgs if m["sender"] == f"agent:{inc.info.agents[APPROVER]}"
                    and " approved by " in m["body"]}
        for m in reversed(msgs):
            hit = APPROVE_LINE.match(m["body"].rstrip().rsplit("\n", 1)[-1])
            if m["sender"] == agent_sender and hit and hit.group(1) not in approved:
                command = reviewed_command(inc, org, hit.group(1))
                if command is None:
                    raise Stuck(f"the approver showed no digest for {hit.group(1)}", "the approver reviews each draft")
                inc.say(human, org, command, targets=[APPROVER])
                return
        raise Stuck(f"{human} found no draft to approve in {org}-internal", "the agent should have drafted one")

    return step


def _first_failing_event(inc: Incident) -> str:
    for m in inc.messages("sam", SHARED):
        parsed = parse_disclosure_post(m["body"])
        if parsed and parsed[0]["org"] == "shopco" and parsed[1].get("rejected"):
            return str(parsed[1]["rejected"][0])
    raise Stuck("sam sees no list of failing events in the shared room", "ShopCo's first disclosure is missing")


def _confirm(human: str) -> Callable[[Incident], None]:
    def step(inc: Incident) -> None:
        for m in reversed(inc.messages(human, SHARED)):
            hit = CONFIRM_LINE.search(m["body"])
            if hit and m["sender"] == f"agent:{inc.info.agents[MEDIATOR]}":
                inc.say(human, SHARED, hit.group(1), roles=["incident-commander"])
                return
        raise Stuck(f"{human} sees no root cause to confirm", "the notary's comparison should lead to one")

    return step


def _accept_fix(org: str) -> Callable[[Incident], None]:
    def step(inc: Incident) -> None:
        if inc.decision_channel == "addressed_command":
            _command_fix(inc, org)
            return
        person = inc.user_client(inc.cast.approver(org))
        cards = [c for c in person.pending() if str(c["request_id"]).endswith(inc.info.fix_card("", org))]
        if not cards:
            raise Stuck(f"{inc.cast.approver(org)} has no fix card to answer",
                        f"{inc.cast.agent(org)} should have requested one")
        person.answer(cards[0]["card_id"], "approve", cards[0]["digest"])  # the card as listed

    return step


def _command_fix(inc: Incident, org: str) -> None:
    """Without approval cards: the org's human reads the agent's request and copies the command the
    approver showed for it."""
    agent_sender = f"agent:{inc.info.agents[inc.cast.agent(org)]}"
    for m in reversed(inc.messages(inc.cast.approver(org), org)):
        hit = FIX_LINE.match(m["body"].rstrip().rsplit("\n", 1)[-1])
        command = reviewed_command(inc, org, hit.group(1)) if m["sender"] == agent_sender and hit else None
        if command is not None:
            inc.say(inc.cast.approver(org), org, command, targets=[APPROVER])
            return
    raise Stuck(f"{inc.cast.approver(org)} found no fix to approve in {org}-internal",
                f"{inc.cast.agent(org)} should have asked")


@dataclass(frozen=True)
class PersonDecides:
    """A step that is a person's decision: `who` of `org` approves a disclosure or a fix, or confirms
    the root cause (`kind`). Scripted, `act` makes it as the person would; in a live incident
    (`run_script(..., people=True)`) the run waits for the person to make it, from the console
    (`signoff.incident.people`) or their chat."""

    who: str
    org: str
    kind: str  # disclosure, fix or root_cause
    act: Callable[[Incident], None]

    def __call__(self, inc: Incident) -> None:
        self.act(inc)

    def made(self, inc: Incident) -> int:
        """How many decisions of this kind by this person took effect: the approver's notices of
        signed disclosures in the org's room or of signed fixes to the commander, or the person's
        confirmations of the root cause."""
        approver = f"agent:{inc.info.agents[APPROVER]}"
        if self.kind == "disclosure":
            return sum(1 for m in inc.messages(self.who, self.org)
                       if m["sender"] == approver and SIGNED_NOTICE.match(strip_mentions(m["body"])))
        if self.kind == "fix":
            notices = [FIX_APPROVED.match(strip_mentions(m["body"])) for m in inc.messages(self.who, SHARED)
                       if m["sender"] == approver]
            return sum(1 for hit in notices if hit is not None and hit.group(1) == inc.cast.title(self.org))
        person = f"user:{inc.info.users[self.who]}"
        return sum(1 for m in inc.messages(self.who, SHARED)
                   if m["sender"] == person and CONFIRMATION.search(m["body"]))


SIGNED_NOTICE = re.compile(r"^D-[A-Z]{2,8}-[0-9]+ approved by \S+; signed record [0-9]+\.$")
CONFIRMATION = re.compile(r"(^|\s)confirm root cause INC-[0-9]{4} #[0-9a-f]{12,64}$")
PEOPLE_POLL_SECONDS = 0.5  # how often a live incident looks for a person's decision while it waits


def wait_for_person(inc: Incident, step: PersonDecides, nth: int, patience: float | None = None) -> None:
    """Let the services run until `step.who`'s `nth` decision of its kind (counted from the start of
    the incident, 1 for the first) has taken effect. A refused or stale decision takes none: the run
    goes on waiting, and the page shows the item again."""
    import time

    deadline = None if patience is None else time.monotonic() + patience
    while True:
        inc.pump()
        if step.made(inc) >= nth:
            return
        if deadline is not None and time.monotonic() > deadline:
            raise Stuck(f"{step.who} did not decide ({step.kind}) within {patience} s",
                        "decide on the incident's page, or in the room")
        time.sleep(PEOPLE_POLL_SECONDS)  # waiting for a person, who decides in another process


def _say(who: str, room: str, body: str | Callable[[Incident], str], targets: list[str] | None = None,
         roles: list[str] | None = None) -> Callable[[Incident], None]:
    def step(inc: Incident) -> None:
        inc.say(who, room, body(inc) if callable(body) else body, targets=targets, roles=roles)

    return step


SCRIPT: list[tuple[str, Callable[[Incident], None]]] = [
    ("sam reports the symptom", _say("sam", SHARED, "signatures are failing: some PayCo webhooks are rejected with "
                                     "401 by our verifier since this morning.", roles=["incident-commander"])),
    ("priya approves PayCo's log summary", PersonDecides("priya", "payco", "disclosure", _approve_latest("payco"))),
    ("sam approves ShopCo's log summary", PersonDecides("sam", "shopco", "disclosure", _approve_latest("shopco"))),
    ("sam asks PayCo's agent directly (refused by the server)",
     _say("sam", SHARED, "can you just send us one failing payload and your signing code?", targets=["payco-agent"])),
    ("sam asks the commander for fingerprints",
     _say("sam", SHARED, lambda inc: f"please ask for a salted fingerprint of {_first_failing_event(inc)} from both "
          "sides so the notary can compare bytes.", roles=["incident-commander"])),
    ("priya approves PayCo's fingerprint", PersonDecides("priya", "payco", "disclosure", _approve_latest("payco"))),
    ("sam approves ShopCo's fingerprint", PersonDecides("sam", "shopco", "disclosure", _approve_latest("shopco"))),
    ("priya confirms the root cause", PersonDecides("priya", "payco", "root_cause", _confirm("priya"))),
    ("sam confirms the root cause", PersonDecides("sam", "shopco", "root_cause", _confirm("sam"))),
    ("priya approves PayCo's fix", PersonDecides("priya", "payco", "fix", _accept_fix("payco"))),
    ("sam approves ShopCo's fix", PersonDecides("sam", "shopco", "fix", _accept_fix("shopco"))),
    ("sam approves the end-to-end result", PersonDecides("sam", "shopco", "disclosure", _approve_latest("shopco"))),
]


@dataclass
class RunResult:
    run_dir: Path
    steps: list[str]
    preflight: dict[str, Any]


def run_script(inc: Incident, until: int | None = None, start: int = 0,
               between: Callable[[int, Incident], None] | None = None, people: bool = False,
               patience: float | None = None) -> list[str]:
    """Play the scripted humans from step `start` up to (not including) `until`, settling the services
    after each step. `between(i, inc)` runs after step i settled (tests restart services there).
    With `people`, every decision (approvals, confirmations) waits for the real person instead
    (`wait_for_person`, at most `patience` seconds each); only the reports and requests stay scripted."""
    done = []
    inc.pump()
    for i, (label, step) in enumerate(SCRIPT[start:until], start):
        if people and isinstance(step, PersonDecides):
            wait_for_person(inc, step, _nth(i), patience)
        else:
            step(inc)
        inc.pump()
        done.append(label)
        if between is not None:
            between(i, inc)
    return done


def _nth(i: int) -> int:
    """Which decision of its person and kind step `i` is (1 for the first), counted over the script."""
    step = SCRIPT[i][1]
    assert isinstance(step, PersonDecides)
    same = (step.who, step.kind)
    return sum(1 for _, s in SCRIPT[:i + 1] if isinstance(s, PersonDecides) and (s.who, s.kind) == same)


def new_run(base: Path, keys: KeyStore, scenario: Scenario, without: tuple[str, ...] = (),
            server: Callable[[dict[str, str]], Provisioner] | None = None) -> Path:
    """A fresh run folder provisioned for `scenario`, whose traffic goes to the run's captures."""
    from signoff.kernel.ids import new_id

    check_cast(scenario.parties)  # the scripted steps know the demo's people by name
    run_dir = Path(base) / f"run-{new_id()[:10]}"
    provision(run_dir, keys, scenario.captured_in(run_dir / "ws" / "captures"), without, server)
    return run_dir


def new_live_run(base: Path, keys: KeyStore, home: Path, without: tuple[str, ...] = ("request_approval",),
                 server: Callable[[dict[str, str]], Provisioner] | None = None) -> Path:
    """A fresh run folder for the incident set up in `home` (`signoff incident setup`): its
    organisations, people and agents, its pinned guards and its captures. People decide fixes by
    addressed commands (which the console posts); nothing here can send the traffic again, so the
    commander closes once every fix is approved."""
    from signoff.kernel.ids import new_id

    with Workspace(Path(home) / "incident", keys) as pinned:
        if not pinned.is_set_up():
            raise UsageError(f"no incident is set up in {home}", "run `signoff incident setup --config incident.toml`")
        run_dir = Path(base) / f"run-{new_id()[:10]}"
        provision(run_dir, keys, pinned.parties, without, server, rerun=False, pinned=pinned)
    return run_dir


def closed(inc: Incident) -> bool:
    """Whether the commander closed the run's incident (its record says so)."""
    mediator = inc.actors[MEDIATOR]
    assert isinstance(mediator, Mediator)
    mediator.forget()
    return any(rec.get("status") == "closed" for rec in mediator.records().values())


def play_live(run_dir: Path, keys: KeyStore, settings: Settings, patience: float | None = None,
              over_http: bool = False, ready: Callable[[], None] | None = None) -> dict[str, Any]:
    """Run a live incident (`new_live_run`) until the commander closes it: every step is the
    people's, from the console or their chat (reporting the symptom, asking for fingerprints,
    approving, redrafting or refusing drafts, confirming the root cause, naming and approving
    fixes); the agents only draft. Then record it. `patience`: at most so many seconds in all.
    `ready` is called once every service is connected to its rooms and holds its role: a message a
    person posts before that would reach no service (the server delivers to connected agents)."""
    import time

    from signoff.incident.recording import record_run

    deadline = None if patience is None else time.monotonic() + patience
    with Incident(run_dir, keys, settings, over_http=over_http) as inc:
        if ready is not None:
            ready()
        while True:
            inc.pump()
            if closed(inc):
                break
            if deadline is not None and time.monotonic() > deadline:
                raise Stuck(f"the incident was not closed within {patience} s", "decide on the incident's page")
            time.sleep(PEOPLE_POLL_SECONDS)  # waiting for people, who act in another process
    return {"run": str(run_dir), "recording": str(record_run(run_dir, keys))}


def run_demo(base: Path, keys: KeyStore, settings: Settings, scenario: Scenario,
             between: Callable[[int, Incident], None] | None = None, over_http: bool = True,
             without: tuple[str, ...] = (), server: Callable[[dict[str, str]], Provisioner] | None = None,
             people: bool = False, patience: float | None = None) -> dict[str, Any]:
    """Provision a fresh run, play the whole incident, record it, and measure it (through the room
    server). `without` names server operations not to use (`request_approval`: fix approvals by
    addressed commands); `server` provisions on an external server (`signoff.incident.external`)
    instead of a room server of the run's own. With `people` the run waits for the real people's
    decisions (`run_script`); their fixes are decided by addressed commands, which the console posts."""
    if people and "request_approval" not in without:
        without = (*without, "request_approval")
    run_dir = new_run(base, keys, scenario, without, server)
    return play(run_dir, keys, settings, scenario, between, over_http, people, patience)


def play(run_dir: Path, keys: KeyStore, settings: Settings, scenario: Scenario,
         between: Callable[[int, Incident], None] | None = None, over_http: bool = True,
         people: bool = False, patience: float | None = None) -> dict[str, Any]:
    """Play a provisioned run (`new_run`) to its end, record it and measure it (see `run_demo`)."""
    from signoff.incident.grade import measure, observe
    from signoff.incident.recording import record_run

    with Incident(run_dir, keys, settings, scenario, over_http=over_http) as inc:
        pre = inc.preflight()
        steps = run_script(inc, between=between, people=people, patience=patience)
    view = observe(run_dir)  # through the room server, over HTTP
    recording = record_run(run_dir, keys, view=view)
    metrics = measure(run_dir, keys, view)
    return {"run": str(run_dir), "steps": steps, "preflight": pre, "recording": str(recording), **metrics}


__all__ = ["SCRIPT", "SERVICES", "Incident", "PersonDecides", "RunResult", "Stuck", "closed", "new_live_run",
           "new_run", "play", "play_live", "reviewed_command", "run_demo", "run_script", "services",
           "wait_for_person"]
