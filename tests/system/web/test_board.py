"""The bug board lists each state's count and its first bugs; `?state=S&page=N` pages through one
state (a real desk, a real server, a signed-in owner)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from signoff.demo.fixture import shoplite_source
from signoff.desk.local import init_local
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.rooms import RoomService
from signoff.rooms.domain.signin import SignIns
from signoff.rooms.http.app import create_app
from signoff.web import desk_owner
from signoff.web.routes import routers
from tests.support.fixtures.rooms import Server
from tests.support.web import password_client

PASSWORD = "the owners' passphrase"
TITLES = ["Coupon larger than the cart gives a negative total", "A huge price gives an infinite total",
          "Search ignores accents in product names", "Shipping address loses the postcode",
          "Invoice PDF shows yesterday's date"]


@pytest.fixture
def owner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[httpx.Client, list[str]]]:
    # Two bugs a section, so that five bugs in one state take three pages.
    monkeypatch.setattr(desk_owner, "PER_STATE", 2)
    settings = Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path)
    ledger = SqlLedger.open(settings)
    desk = init_local(settings, ledger, source=shoplite_source(), people=("alice",)).desk
    bugs = [desk.submit_report({"title": t, "component": f"area-{i}"}, client=f"192.0.2.{i}").bug_id
            for i, t in enumerate(TITLES)]
    rooms = RoomService(ledger)
    alice, _ = rooms.create_user("alice", "Alice")
    SignIns(ledger).set_password(alice.id, PASSWORD)
    server = Server(create_app(ledger, settings, routers=routers(settings)))
    base = server.start()
    client, _ = password_client(base, "alice", PASSWORD)
    try:
        yield client, sorted(bugs)
    finally:
        client.close()
        server.stop()
        ledger.close()


def _listed(page: str) -> list[str]:
    return re.findall(r'<a href="/bugs/([A-Z]+-\d+)">', page)


def test_the_board_shows_counts_and_pages_through_a_state(owner: tuple[httpx.Client, list[str]]) -> None:
    client, bugs = owner
    board = client.get("/bugs").text
    assert re.search(r'reproducing <span class="count">5</span>', board)
    assert _listed(board) == bugs[:2]
    assert 'href="/bugs?state=reproducing">All 5 reproducing bugs' in board
    second = client.get("/bugs", params={"state": "reproducing", "page": "2"}).text
    assert _listed(second) == bugs[2:4] and "3 to 4 of 5." in second
    assert "page=1" in second and "page=3" in second
    last = client.get("/bugs", params={"state": "reproducing", "page": "3"}).text
    assert _listed(last) == bugs[4:] and "5 to 5 of 5." in last and "page=4" not in last
    # One state only: the others are not listed.
    assert "merged" not in _text(last)
    beyond = client.get("/bugs", params={"state": "reproducing", "page": "9"}).text
    assert _listed(beyond) == [] and "No bugs on page 9: there are 5." in beyond


def _text(page: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", page.split("<main", 1)[1]).split())


@pytest.mark.parametrize(("query", "words"), [({"state": "nope-PWNED"}, "the state asked for is not on the board"),
                                              ({"page": "0"}, "is not a page number"),
                                              ({"state": "reproducing", "page": "two-PWNED"}, "is not a page number")])
def test_bad_board_queries_are_refused_clearly(owner: tuple[httpx.Client, list[str]], query: dict[str, str],
                                               words: str) -> None:
    client, _ = owner
    answer = client.get("/bugs", params=query)
    assert answer.status_code == 400 and words in html.unescape(answer.text) and _listed(answer.text) == []
    assert "PWNED" not in answer.text, "the page's text came from the query string"
