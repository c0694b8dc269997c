"""The crew on an external rooms server: a `signoff serve` process on a home of its own, which the
desk reaches only over HTTP (`[rooms] url`). `signoff desk crew setup --operator` registers the six
agents, makes the rooms as the manager's agent and sets and reads back the policies there; the
manager and the reproducer run as processes against that server to one receipt-checked hand-off
(and its answer, measured by the desk); crew status comes from the server; a policy changed on
the server is reported by the next setup and set again."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from signoff.demo.fixture import shoplite_source
from signoff.desk.config import DeskConfig
from signoff.desk.crew import Crew, key_role, recorded
from signoff.desk.crew import commands as crew_commands
from signoff.desk.crew.agents import IGNORED
from signoff.desk.local import init_local
from signoff.desk.routes import routers as desk_routers
from signoff.desk.workflow import Desk as DeskWorkflow
from signoff.desk.workflow import forge_for
from signoff.kernel.errors import NotFoundError, RefusedError, UsageError
from signoff.kernel.settings import Settings
from signoff.kernel.tls import tls_context
from signoff.ledger import SqlLedger
from signoff.rooms import RoomService
from signoff.rooms.client import HttpSyncTransport, HttpUserTransport, RoomsUserClient, SignoffOperator
from signoff.rooms.domain.approvals import answer_note
from signoff.rooms.domain.signin import SignIns
from signoff.rooms.http.app import create_app
from signoff.web.routes import routers as web_routers
from tests.conftest import wait_for
from tests.support.cards import answer_as_shown
from tests.support.cli import Result, run_cli
from tests.support.fixtures.desk import COUPON
from tests.support.fixtures.rooms import Server
from tests.support.serve import Process, serve, signoff


@dataclass
class Remote:
    url: str  # the rooms server (another home, its own database)
    admin: str  # the server admin's user token (the operator)
    alice: str  # the crew owner's user token on that server
    settings: Settings  # the desk's home, [rooms] url = the server
    env: dict[str, str]
    tokens: dict[str, str]  # the desk's credentials
    members: dict[str, Process] = field(default_factory=dict)
    people: dict[str, str] = field(default_factory=dict)  # user name -> user token on the server

    def cli(self, *args: str, env: dict[str, str] | None = None) -> Result:
        return run_cli(args, {**self.env, **(env or {})})

    def setup(self, owner: str = "alice") -> Result:
        return self.cli("desk", "crew", "setup", "--owner", owner, "--json", env={"SIGNOFF_ROOMS_OPERATOR": self.admin})

    def crew(self) -> Crew:
        ledger = SqlLedger.open(self.settings)
        try:
            found = recorded(ledger)
        finally:
            ledger.close()
        assert found is not None
        return found

    def start(self, role: str) -> None:
        self.members[role] = Process(signoff("desk", "crew", "run", "--role", role),
                                     {**self.env, "SIGNOFF_DESK_TOKEN": self.tokens["engineering"],
                                      "SIGNOFF_DESK_CONCIERGE_TOKEN": self.tokens["concierge"]})

    def kill(self, role: str) -> None:
        proc = self.members.pop(role).proc
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)

    def states(self) -> dict[str, str]:
        shown = self.cli("desk", "crew", "--json")
        assert shown.exit_code == 0, shown.stderr
        return {r["role"]: r["state"] for r in json.loads(shown.stdout)["roles"]}

    def engineering_room(self) -> list[str]:
        """The crew's commands in the engineering room, as the owner reads them on the server."""
        transport = HttpUserTransport(self.url, self.alice)
        try:
            return [crew_commands.strip_mentions(str(m["body"])).split(" [ref")[0]
                    for m in RoomsUserClient(transport).messages(self.crew().engineering_room)]
        finally:
            transport.close()

    def desk(self) -> tuple[SqlLedger, DeskWorkflow]:
        ledger = SqlLedger.open(self.settings)
        return ledger, DeskWorkflow(ledger, self.settings, forge_for(self.settings, ledger), DeskConfig())


@pytest.fixture
def remote(tmp_path: Path, sandbox_ok: None) -> Iterator[Remote]:
    server_db = f"sqlite:///{tmp_path / 'server.db'}"
    ledger = SqlLedger.from_url(server_db)
    try:
        rooms = RoomService(ledger)
        admin = str(rooms.init()["admin_token"])
        alice = rooms.create_user("alice", "Alice")[1]
        people = {name: rooms.create_user(name, name.title())[1] for name in ("mallory", "priya")}
    finally:
        ledger.close()
    base = {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}
    server, url = serve({**base, "SIGNOFF_HOME": str(tmp_path / "server-home"), "SIGNOFF_DB": server_db})
    base["SIGNOFF_REPAIR_ENV_CACHE"] = os.environ["SIGNOFF_REPAIR_ENV_CACHE"]
    r = Remote(url, admin, alice, *_desk_home(tmp_path, "desk", url, base, ""), people=people)
    try:
        server.ready(f"{url}/health")
        yield r
    finally:
        for proc in r.members.values():
            proc.stop()
        server.stop()


PASSWORD = "a long enough passphrase"


@contextmanager
def _desk_served(r: Remote) -> Iterator[str]:
    """The desk's home served in process (its API and its web console); the crew is elsewhere."""
    ledger, desk = r.desk()
    rooms = RoomService(ledger)
    try:
        try:
            alice = rooms.user_by_name("alice")
        except NotFoundError:
            alice = rooms.create_user("alice", "Alice")[0]
        SignIns(ledger).set_password(alice.id, PASSWORD)
        app = create_app(service=rooms, settings=r.settings,
                         routers=[*desk_routers(r.settings), *web_routers(r.settings)])
        app.state.desk = desk
        server = Server(app)
        try:
            yield server.start()
        finally:
            server.stop()
    finally:
        ledger.close()


def _shown(r: Remote, desk_url: str) -> dict[str, str]:
    answer = httpx.get(f"{desk_url}/desk/crew", headers={"Authorization": f"Bearer {r.tokens['alice']}"}, timeout=60,
                       verify=tls_context())
    assert answer.status_code == 200, answer.text
    assert answer.json()["server"] == r.url and answer.json()["drift"] is None
    return {s["role"]: s["state"] for s in answer.json()["roles"]}


def _signed_in(base: str) -> httpx.Client:
    client = httpx.Client(base_url=base, follow_redirects=False, timeout=60, verify=tls_context())
    csrf = client.get("/signin").text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    assert client.post("/signin", data={"csrf": csrf, "name": "alice", "password": PASSWORD}).status_code == 303
    return client


def _page_states(html: str) -> dict[str, str]:
    """Role -> the status badge in the crew page's table."""
    rows = re.findall(r'<th scope="row">(\w+)</th>.*?<span class="badge crew-[\w-]+">([\w ]+)</span>', html)
    return dict(rows)


def _wait(check: Any, what: str, r: Remote, timeout: float = 300) -> None:
    assert wait_for(check, timeout=timeout, interval=0.5), f"{what}: crew {r.states()}, room {r.engineering_room()}"


@pytest.mark.slow
@pytest.mark.timeout(900)  # a sandboxed run in a child process on a loaded machine
def test_the_crew_set_up_on_an_external_server_hands_off_and_reports_drift(remote: Remote) -> None:
    r = remote
    # Without the operator credential, setup says what it needs; nothing is recorded.
    bare = r.cli("desk", "crew", "setup", "--owner", "alice")
    assert bare.exit_code != 0 and "error:" in bare.stderr and "--operator" in bare.stderr
    assert "Traceback" not in bare.stderr

    done = r.setup()
    assert done.exit_code == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["server"] == r.url and out["drift_found"] == []
    crew = r.crew()
    keys_file = r.settings.home / "rooms" / "agents.json"
    assert stat.S_IMODE(keys_file.stat().st_mode) == 0o600
    stored = json.loads(keys_file.read_text())
    assert stored["url"] == r.url
    stored = stored["agents"]
    assert {stored[key_role(role)]["agent_id"] for role in crew.agents} == set(crew.agents.values())
    # The server holds what the desk set, read with the operator's own credential.
    operator = SignoffOperator(r.url, r.admin)
    try:
        assert all(operator.policy(crew.agents[role]) == crew.policies[role] for role in crew.agents)
    finally:
        operator.close()
    listed = httpx.get(f"{r.url}/users/me/rooms", headers={"Authorization": f"Bearer {r.alice}"}, timeout=30,
                       verify=tls_context())
    names = {room["name"] for room in listed.json()["rooms"]}
    assert {"desk-intake", "desk-engineering"} <= names

    # Another owner is refused (nothing changes).
    other = r.setup("mallory")
    assert other.exit_code != 0 and "belongs to alice" in other.stderr and "fix:" in other.stderr

    # The manager and the reproducer run against the server; the status comes from it.
    r.start("manager")
    r.start("reproducer")
    _wait(lambda: r.states() == {"concierge": "not running", "manager": "connected", "reproducer": "connected",
                                 "fixer": "not running", "reviewer": "not running", "smoke": "not running"},
          "manager and reproducer connected, the rest not running", r)

    ledger, desk = r.desk()
    try:
        intake = desk.submit_report(COUPON, "198.51.100.7")
        _wait(lambda: desk.bug(intake.bug_id).state == "awaiting_reporter", "the measured reproduction", r)
    finally:
        ledger.close()
    said = r.engineering_room()
    assert said.count(f"start_reproduction {intake.bug_id} round=1") == 1
    assert sum(1 for b in said if b.startswith(f"propose_reproduction {intake.bug_id} round=1")) == 1

    # The owner pastes the hand-off on the server: the reproducer ignores the copy and records it.
    transport = HttpUserTransport(r.url, r.alice)
    try:
        RoomsUserClient(transport).post(crew.engineering_room, f"start_reproduction {intake.bug_id} round=1",
                                        targets=["desk-reproducer"])
    finally:
        transport.close()

    def ignored() -> list[dict[str, Any]]:
        ledger = SqlLedger.open(r.settings)
        try:
            return [dict(e.payload) for e in ledger.read(IGNORED)]
        finally:
            ledger.close()

    _wait(lambda: len(ignored()) == 1, "the copied hand-off ignored", r)
    # The desk's own server shows the same view, over HTTP and on the owner's page.
    with _desk_served(r) as desk_url:
        _wait(lambda: _shown(r, desk_url) == r.states(), "GET /desk/crew as the CLI", r)
        shown = _shown(r, desk_url)
        assert shown["manager"] == shown["reproducer"] == "connected" and shown["fixer"] == "not running"
        page = _signed_in(desk_url).get("/crew")
        assert page.status_code == 200 and r.url in page.text and "Read at setup only" in page.text
        assert _page_states(page.text)["reproducer"] == "connected"
    assert sum(1 for b in r.engineering_room() if b.startswith("propose_reproduction")) == 1

    # A killed reproducer shows as not running once the server's connection lapses.
    r.kill("reproducer")
    _wait(lambda: r.states()["reproducer"] == "not running", "the killed reproducer shown", r)
    assert r.states()["manager"] == "connected"
    with _desk_served(r) as desk_url:
        assert _shown(r, desk_url)["reproducer"] == "not running"
        assert _page_states(_signed_in(desk_url).get("/crew").text)["reproducer"] == "not running"
        assert httpx.get(f"{desk_url}/desk/crew", timeout=30, verify=tls_context()).status_code == 401

    # Someone opens the manager's policy on the server: the next setup reports it and sets it again.
    operator = SignoffOperator(r.url, r.admin)
    try:
        operator.set_policy(crew.agents["manager"], None)
        again = r.setup()
        assert again.exit_code == 0, again.stderr
        found = json.loads(again.stdout)["drift_found"]
        assert [d.split(":")[0] for d in found] == ["manager"] and "the server holds None" in found[0]
        assert operator.policy(crew.agents["manager"]) == crew.policies["manager"]
    finally:
        operator.close()
    assert r.crew() == crew  # same identities, rooms and group: nothing re-keyed or made twice


def _as(r: Remote, token: str) -> RoomsUserClient:
    return RoomsUserClient(HttpUserTransport(r.url, token))


@pytest.mark.slow
@pytest.mark.timeout(1200)  # two sandboxed rounds in child processes on a loaded machine
def test_a_reporter_linked_on_an_external_server_answers_the_concierge_s_cards(remote: Remote) -> None:
    r = remote
    assert r.setup().exit_code == 0
    crew = r.crew()
    ledger, desk = r.desk()
    try:
        intake = desk.submit_report(COUPON, "198.51.100.7")
    finally:
        ledger.close()
    rid = intake.report_id

    # Linking on the external server needs the operator; a user the server lacks, a report the
    # desk lacks and an operator who may not manage the intake room are refused with a fix line.
    for args, env, said in (
            ((rid, "priya"), {}, "--operator"),
            ((rid, "nobody"), {"SIGNOFF_ROOMS_OPERATOR": r.admin}, "no user nobody"),
            (("R-9999", "priya"), {"SIGNOFF_ROOMS_OPERATOR": r.admin}, "no report R-9999"),
            ((rid, "priya"), {"SIGNOFF_ROOMS_OPERATOR": r.people["mallory"]}, "error:")):
        refused = r.cli("desk", "crew", "link", *args, "--json", env=env)
        assert refused.exit_code != 0 and said in refused.stderr and "fix:" in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr
    linked = r.cli("desk", "crew", "link", rid, "priya", "--json", env={"SIGNOFF_ROOMS_OPERATOR": r.admin})
    assert linked.exit_code == 0, linked.stderr
    link = json.loads(linked.stdout)
    priya, mallory = _as(r, r.people["priya"]), _as(r, r.people["mallory"])
    operator = SignoffOperator(r.url, r.admin)
    try:  # mallory is in the public room too: a stranger who sees priya's card there
        operator.add_user_to_room(crew.intake_room, "mallory")
    finally:
        operator.close()
    try:
        # The sender id is the server's own for priya (what her posts carry there).
        posted = priya.post(crew.intake_room, "hello")
        assert link == {"report_id": rid, "user": "priya", "sender": _sender_of(priya, crew.intake_room, posted)}
        again = r.cli("desk", "crew", "link", rid, "priya", "--json", env={"SIGNOFF_ROOMS_OPERATOR": r.admin})
        assert again.exit_code == 0 and json.loads(again.stdout) == link

        for role in ("manager", "reproducer", "concierge"):
            r.start(role)

        def card() -> dict[str, Any] | None:
            pending = priya.pending()
            return pending[0] if pending else None

        _wait(lambda: card() is not None, "the concierge's card for priya", r)
        first = card()
        assert first is not None and "Is this the bug you saw?" in first["title"]
        # Someone else answering priya's card is discarded by the server (and recorded); nothing moves.
        _refused(mallory, first["request_id"])
        # priya says no, with her reason after the answer: it reaches the desk through the airlock.
        answer_as_shown(priya, first["request_id"], "no")
        no = next(o["label"] for o in first["options"] if o["id"] == "no")  # the label as the card shows it
        priya.post(crew.intake_room, answer_note(first["title"], no, "My total was -100 twice, with two items."))
        ledger, desk = r.desk()
        try:
            _wait(lambda: desk.bug(intake.bug_id).round == 2, "priya's no applied", r)
            events = [e for e in ledger.read(f"desk/bug/{intake.bug_id}")]
            assert [e.type for e in events].count("confirmation.no") == 1
            assert "-100 twice" in json.dumps([e.payload for e in events])
            # Round 2 is measured and asked again; priya's yes moves the bug on.
            _wait(lambda: (c := card()) is not None and c["request_id"] != first["request_id"], "round 2's card", r)
            second = card()
            assert second is not None
            _refused(mallory, second["request_id"])
            answer_as_shown(priya, second["request_id"], "yes")
            _wait(lambda: desk.bug(intake.bug_id).state == "fixing", "priya's yes applied", r)
            assert [e.type for e in ledger.read(f"desk/bug/{intake.bug_id}")].count("confirmation.yes") == 1
        finally:
            ledger.close()
        _link_a_standin(r, crew)
    finally:
        priya.transport.close()
        mallory.transport.close()


def _link_a_standin(r: Remote, crew: Crew) -> None:
    """Where people reach the server only through bridges (a Switch core), the reporter is an agent
    standing in for them, a role of the desk's home: `desk crew link REPORT ROLE` needs no operator,
    puts the stand-in in the intake room through the concierge (with no connection of its own, so
    the running concierge keeps its slot) and binds the sender id the server writes for it."""
    from signoff.rooms.client import RoomsConfig, register_agent

    operator = SignoffOperator(r.url, r.admin)
    try:
        standin = register_agent(r.url, operator.registration_key(owner_name="alice"), "carol-standin", "carol")
    finally:
        operator.close()
    config_path = Path(r.env["SIGNOFF_CONFIG"])
    config_path.write_text(config_path.read_text() + '\n[rooms.roles.carol]\nname = "carol-standin"\n')
    config = RoomsConfig.from_settings(Settings.load(home=r.settings.home, env={"SIGNOFF_CONFIG": str(config_path)}))
    config.store_keys({**config.keys(), "carol": {"name": "carol-standin", "agent_id": standin.agent_id,
                                                  "api_key": standin.api_key}})
    ledger, desk = r.desk()
    try:
        rid = desk.submit_report(COUPON, "198.51.100.8").report_id
    finally:
        ledger.close()
    linked = r.cli("desk", "crew", "link", rid, "carol", "--json")
    assert linked.exit_code == 0, linked.stderr
    assert f"server: {r.url}" in linked.stderr
    assert json.loads(linked.stdout) == {"report_id": rid, "user": "carol-standin",
                                         "sender": f"agent:{standin.agent_id}"}
    assert r.states()["concierge"] == "connected"


def _refused(stranger: RoomsUserClient, request_id: str) -> None:
    answered = answer_as_shown(stranger, request_id, "yes")
    assert answered["outcome"] == "discarded" and answered["allowed"] is False
    assert stranger.approval(request_id)["state"] == "pending"


def _sender_of(client: RoomsUserClient, room: str, posted: dict[str, Any]) -> str:
    return next(str(m["sender"]) for m in client.messages(room) if m["message_id"] == posted["event_id"])


def _desk_home(tmp_path: Path, name: str, url: str, base: dict[str, str],
               desk_toml: str) -> tuple[Settings, dict[str, str], dict[str, str]]:
    """A desk home (its own ledger, keys and credentials) whose crew goes on the server at `url`."""
    config = tmp_path / f"{name}.toml"
    config.write_text(f'[rooms]\nurl = "{url}"\n{desk_toml}')
    home, db = tmp_path / f"{name}-home", f"sqlite:///{tmp_path / f'{name}.db'}"
    env = {**base, "SIGNOFF_HOME": str(home), "SIGNOFF_DB": db, "SIGNOFF_CONFIG": str(config)}
    settings = Settings.load(home=home, db_url=db, env={"SIGNOFF_CONFIG": str(config)}, cwd=tmp_path)
    ledger = SqlLedger.open(settings)
    try:
        return settings, env, init_local(settings, ledger, source=shoplite_source()).tokens
    finally:
        ledger.close()


def _another_desk(r: Remote, tmp_path: Path, name: str, desk_toml: str) -> Remote:
    """A second desk on the same rooms server."""
    return Remote(r.url, r.admin, r.alice, *_desk_home(tmp_path, name, r.url, r.env, desk_toml), people=r.people)


def test_two_desks_on_one_server_each_have_their_own_crew_and_cannot_reach_the_other(
        remote: Remote, tmp_path: Path) -> None:
    first = remote
    assert first.setup().exit_code == 0
    # A second desk with the default names collides with the first's identities: refused, with the fix.
    clash = _another_desk(first, tmp_path, "clash", "")
    refused = clash.setup()
    assert refused.exit_code != 0 and "crew_prefix" in refused.stderr and "fix:" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    config = Path(clash.env["SIGNOFF_CONFIG"])  # a prefix that is no name on a server: refused
    config.write_text(config.read_text() + '[desk]\ncrew_prefix = "Shop Desk!"\n')
    shown = clash.setup()
    assert shown.exit_code != 0 and "crew_prefix" in shown.stderr and "fix:" in shown.stderr

    # Same owner (alice), same server: with its own prefix the second desk gets its own everything.
    second = _another_desk(first, tmp_path, "shop", '[desk]\ncrew_prefix = "shop"\n')
    done = second.setup()
    assert done.exit_code == 0, done.stderr
    one, two = first.crew(), second.crew()
    assert two.prefix == "shop" and one.prefix == "desk"
    assert not set(one.agents.values()) & set(two.agents.values())
    assert one.group_id != two.group_id
    assert {one.intake_room, one.engineering_room}.isdisjoint({two.intake_room, two.engineering_room})
    listed = httpx.get(f"{first.url}/users/me/rooms", headers={"Authorization": f"Bearer {first.alice}"}, timeout=30,
                       verify=tls_context())
    names = {room["name"] for room in listed.json()["rooms"]}
    assert {"desk-intake", "desk-engineering", "shop-intake", "shop-engineering"} <= names
    # Setup again on each finds everything again: nothing made twice, nothing re-keyed.
    for desk, crew in ((first, one), (second, two)):
        again = desk.setup()
        assert again.exit_code == 0 and json.loads(again.stdout)["drift_found"] == [], again.stderr
        assert desk.crew() == crew
    # A crew's names are its identities: changing the prefix under a set-up crew is refused.
    renamed = Path(second.env["SIGNOFF_CONFIG"])
    renamed.write_text(renamed.read_text().replace('"shop"', '"shop2"'))
    moved = second.setup()
    assert moved.exit_code != 0 and "crew_prefix 'shop'" in moved.stderr and "fix:" in moved.stderr, moved.stderr
    assert second.crew() == two
    # Each desk's policies name only its own manager and its own group.
    assert two.policies["reproducer"]["rules"][0]["agents"] == [two.agents["manager"]]
    assert two.policies["reproducer"]["rules"][0]["room_groups"] == [two.group_id]

    # The first desk's manager cannot reach the second's engineering room, nor address its crew.
    key = json.loads((first.settings.home / "rooms" / "agents.json").read_text())["agents"][key_role("manager")]
    manager = HttpSyncTransport(first.url, key["agent_id"], key["api_key"])
    try:
        with pytest.raises((RefusedError, NotFoundError)):
            manager.open("intruder", two.engineering_room)
        with pytest.raises((RefusedError, NotFoundError)):
            manager.call("get_room_detail", {"room_id": two.engineering_room}, "")
        manager.open("own", one.engineering_room)
        with pytest.raises(UsageError, match="shop-reproducer' is not a member"):
            manager.call("send_targeted_message", {"body": "start_reproduction BUG-0001 round=1",
                                                   "target_names": ["shop-reproducer"]}, "own")
    finally:
        manager.close()
