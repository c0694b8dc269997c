""""Waiting for me" lists what waits for the signed-in person across the workflows, newest first,
each linking to where they decide, with the count in the menu; a bystander sees none of it
(the pages over ASGI, in one process)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from signoff.demo.fixture import shoplite_source
from signoff.demo.notes import build_history
from signoff.desk.local import init_local
from signoff.desk.model import BUG, AnswerUnentitled, DeskEvent, ReproductionFailed, ReproductionRecorded
from signoff.desk.service import Desk, dispute_digest
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.notes.run import start_run
from signoff.repair.model import CardRequested, ContractProposed, Reported, case_key
from signoff.rooms import RoomService
from signoff.rooms.domain.signin import SignIns
from signoff.rooms.http.app import create_app
from signoff.web.routes import routers
from tests.support.fixtures.rooms import World, make_world
from tests.support.requires import require_binary

PASSWORD = "a long enough passphrase"
CONTRACT = {"name": "coupon", "behaviour": "a coupon applies once", "repo": "/r", "base": "main", "harness": "/h",
            "expect": "t.py::t"}


@pytest.fixture(scope="module")
def notes_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A notes run by the demo writer, not shipped (copied into each home)."""
    require_binary("git", "apt-get install -y git")
    root = tmp_path_factory.mktemp("notes-run")
    build_history(root / "repo")
    run = root / "run"
    run.mkdir()
    start_run(root / "repo", None, run, Settings.load(home=root / ".signoff", env={}, cwd=root), script="demo")
    return run


@pytest.fixture
def home(tmp_path: Path, notes_run: Path) -> Iterator[tuple[World, TestClient]]:
    (tmp_path / "signoff.toml").write_text('[notes]\ndeciders = ["alice"]\n')
    settings = Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path)
    ledger = SqlLedger.open(settings)
    world = make_world(RoomService(ledger))
    for person in (world.alice, world.bob):
        SignIns(ledger).set_password(person.id, PASSWORD)
    shutil.copytree(notes_run, settings.home / "notes" / "v1.2")
    with TestClient(create_app(ledger, settings, routers=routers(settings)), base_url="https://testserver") as c:
        yield world, c
    ledger.close()


def _sign_in(client: TestClient, name: str) -> None:
    client.cookies.clear()
    csrf = client.get("/signin").text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    assert client.post("/signin", data={"csrf": csrf, "name": name, "password": PASSWORD},
                       follow_redirects=False).status_code == 303


def _waiting(html: str) -> list[tuple[str, str]]:
    """(kind, link) of each item of the list, in its order."""
    return re.findall(r'<li class="waiting" data-kind="([^"]+)">.*?<a href="([^"]+)"', html, re.S)


def _ask_card(world: World) -> None:
    s = world.service
    s.request_approval(world.fixer, world.room_id, "deploy-1", "Deploy to production?",
                       [{"id": "go", "label": "Ship it", "decision": "accept"},
                        {"id": "no", "label": "Hold", "decision": "decline"}], s.clock.now() + 600, ["alice"])


def _propose_contract(world: World) -> None:
    reported = Reported(case_id="coupon-01", room_id=world.room_id, message_id="m1", reporter=world.bob.sender,
                        report="applied twice", operator=world.alice.sender, operator_name="alice",
                        verifier_name="verifier", contract=CONTRACT, base="b" * 40, harness_digest="d" * 64)
    world.service.ledger.append(case_key("coupon-01"), None, [reported.new_event(), ContractProposed(
        harness_digest="d" * 64, base="b" * 40).new_event()])


def test_everything_waiting_for_me_is_listed_newest_first_with_its_count_in_the_menu(
        home: tuple[World, TestClient]) -> None:
    world, client = home
    _sign_in(client, "alice")
    page = client.get("/").text
    assert _waiting(page) == [("notes run", "/notes/runs/v1.2")]  # alice decides on notes
    assert '<span class="count" id="menu-waiting">1</span>' in page

    _ask_card(world)
    _propose_contract(world)
    page = client.get("/rooms").text  # the menu counts on every page
    assert '<span class="count" id="menu-waiting">3</span>' in page
    page = client.get("/").text
    # The contract and the card were asked after the run was written: newest first.
    [card] = world.service.pending_approvals(world.alice)
    assert _waiting(page) == [("repair contract", "/repair/coupon-01#contract"),
                              ("approval card", f"/#card-{card.card_id}"), ("notes run", "/notes/runs/v1.2")]
    assert f'id="card-{card.card_id}"' in page  # the card is answered on this page, named by its own id
    assert client.get("/repair/coupon-01").status_code == 200  # each link leads to its page
    assert client.get("/notes/runs/v1.2").status_code == 200
    # Each time is readable, with the exact UTC value for machines and scripts.
    times = re.findall(r'<time datetime="([^"]+)" data-precision="minute">([^<]+)</time>', page)
    assert len(times) >= 3
    for exact, shown in times:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", exact)
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", shown) and shown[:16] == exact[:16].replace("T", " ")


def test_a_bystander_sees_nothing_that_waits_for_someone_else(home: tuple[World, TestClient]) -> None:
    world, client = home
    _ask_card(world)
    _propose_contract(world)
    _sign_in(client, "bob")  # in the room, but neither the operator, a card responder nor a notes decider
    page = client.get("/").text
    assert _waiting(page) == []
    assert '<span class="count" id="menu-waiting">0</span>' in page and "Nothing is waiting for you." in page


def _record(ledger: SqlLedger, desk: Desk, bug_id: str, event: DeskEvent) -> None:
    ledger.append(BUG.prefix + bug_id, desk.bug(bug_id).version, [event.new_event()])


@pytest.fixture
def desk_home(tmp_path: Path) -> Iterator[tuple[Desk, list[str], TestClient]]:
    """A desk whose owner is alice (bob is a room user only), a bug that needs a person and a bug
    with a late reporter's "no" to the open reproduction question."""
    settings = Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path)
    ledger = SqlLedger.open(settings)
    desk = init_local(settings, ledger, source=shoplite_source(), people=("alice",)).desk
    bugs = [desk.submit_report({"title": t, "component": f"area-{i}"}, client=f"192.0.2.{i}").bug_id
            for i, t in enumerate(("Coupon applies twice", "Invoice shows yesterday"))]
    _record(ledger, desk, bugs[0], ReproductionRecorded(
        round=1, test_path="tests/test_coupon.py", test_source="def test(): assert False", test_sha256="a" * 64,
        base="b" * 40, message="assert 8100 == 9000", evidence=None, fingerprint=None, evidence_kind="measured",
        agent={}))
    _record(ledger, desk, bugs[0], AnswerUnentitled(report_id="R-late", round=1, question="reproduction",
                                                    answer="no", reason="not what I saw"))
    _record(ledger, desk, bugs[1], ReproductionFailed(
        round=1, reason="three attempts did not reproduce it", measured="passed", needs_human=True,
        baseline_red=False, test_sha256="c" * 64, evidence=None, agent={}))
    rooms = RoomService(ledger)
    for name in ("alice", "bob"):
        person, _ = rooms.create_user(name, name.title())
        SignIns(ledger).set_password(person.id, PASSWORD)
    with TestClient(create_app(ledger, settings, routers=routers(settings)), base_url="https://testserver") as c:
        yield desk, bugs, c
    ledger.close()


def test_a_desk_owner_is_waited_for_by_bugs_and_disputes_and_decides_on_the_bug_page(
        desk_home: tuple[Desk, list[str], TestClient]) -> None:
    desk, (disputed, stuck), client = desk_home
    _sign_in(client, "alice")
    page = client.get("/").text
    assert _waiting(page) == [("bug needing a person", f"/bugs/{stuck}"), ("dispute", f"/bugs/{disputed}#disputes")]
    assert "three attempts did not reproduce it" in page
    bug_page = client.get(f"/bugs/{disputed}").text
    assert 'id="disputes"' in bug_page and "not what I saw" in bug_page
    csrf = bug_page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    action = f"/bugs/{disputed}/disputes/0/accept"
    assert f'action="{action}"' in bug_page
    shown = bug_page.split('name="shown" value="', 1)[1].split('"', 1)[0]
    assert shown == dispute_digest(disputed, desk.bug(disputed).disputes[0])  # the text the page showed
    answer = client.post(action, data={"csrf": csrf, "bug": disputed, "shown": shown}, follow_redirects=False)
    assert answer.status_code == 303
    assert desk.bug(disputed).state == "reopened"
    assert _waiting(client.get("/").text) == [("bug needing a person", f"/bugs/{stuck}")]
    # Agreed once: the same form again is refused and records nothing.
    version = desk.bug(disputed).version
    assert client.post(action, data={"csrf": csrf, "bug": disputed, "shown": shown}).status_code == 409
    assert desk.bug(disputed).version == version
    [approval] = [e.payload["approval"] for e in desk.ledger.read(BUG.case_id(disputed))
                  if e.type == "dispute.accepted"]
    assert approval["digest"] == shown and approval["via"] == "web"


def test_someone_who_is_not_a_desk_owner_neither_sees_nor_accepts_a_dispute(
        desk_home: tuple[Desk, list[str], TestClient]) -> None:
    desk, (disputed, _), client = desk_home
    _sign_in(client, "bob")
    assert _waiting(client.get("/").text) == []
    csrf = client.get("/").text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    version = desk.bug(disputed).version  # (signing in writes to the ledger: the bug's own case is watched)
    for index in ("0", "-1", "x", "9"):
        assert client.post(f"/bugs/{disputed}/disputes/{index}/accept",
                           data={"csrf": csrf, "bug": disputed}).status_code == 403
    _sign_in(client, "alice")
    csrf = client.get("/").text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    for index, status in (("-1", 400), ("x", 400), ("9", 404), ("0000001", 400)):
        assert client.post(f"/bugs/{disputed}/disputes/{index}/accept",
                           data={"csrf": csrf, "bug": disputed}).status_code == status
    assert client.post(f"/bugs/{disputed}/disputes/0/accept", data={"bug": disputed}).status_code == 403  # no CSRF
    assert desk.bug(disputed).version == version and desk.bug(disputed).state == "awaiting_reporter"


def test_agreeing_with_a_dispute_binds_the_text_the_page_showed(
        desk_home: tuple[Desk, list[str], TestClient]) -> None:
    # The attacker's side: an owner's form replayed without the digest, with a made-up one, or with the
    # digest of the same dispute's text altered is refused, and the bug stays as it was.
    desk, (disputed, stuck), client = desk_home
    _sign_in(client, "alice")
    page = client.get(f"/bugs/{disputed}").text
    csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    dispute = desk.bug(disputed).disputes[0]
    version = desk.bug(disputed).version
    for shown, status in ((None, 400), ("not-a-digest", 400), ("0" * 64, 409),
                          (dispute_digest(disputed, {**dispute, "reason": "Fine by me"}), 409),
                          (dispute_digest(stuck, dispute), 409)):
        data = {"csrf": csrf, "bug": disputed, **({"shown": shown} if shown else {})}
        refused = client.post(f"/bugs/{disputed}/disputes/0/accept", data=data)
        assert refused.status_code == status, (shown, refused.text)
    assert desk.bug(disputed).version == version and desk.bug(disputed).state == "awaiting_reporter"


def test_a_case_asked_on_an_approval_card_is_listed_once_as_the_card(home: tuple[World, TestClient]) -> None:
    world, client = home
    _propose_contract(world)
    asked = CardRequested(request_id="repair-card:coupon-01:contract", stage="contract",
                          verbs={"approve": "approve"}, candidate="")
    world.service.ledger.append(case_key("coupon-01"), 2, [asked.new_event()])
    _sign_in(client, "alice")
    assert "repair contract" not in [kind for kind, _ in _waiting(client.get("/").text)]


def test_a_workflow_that_cannot_be_read_costs_the_menu_its_count_not_the_page(
        home: tuple[World, TestClient], tmp_path: Path) -> None:
    _, client = home
    broken = tmp_path / ".signoff" / "notes" / "broken"
    broken.mkdir(parents=True)
    (broken / "review.json").write_text("{not json")
    _sign_in(client, "alice")
    rooms = client.get("/rooms")
    assert rooms.status_code == 200 and 'id="menu-waiting"' not in rooms.text
    start = client.get("/")
    assert start.status_code == 400 and "Traceback" not in start.text  # the start page says why
