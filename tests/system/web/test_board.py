"""The bug board is one list of bugs with each busy state's count, searched, filtered by state and
component, sorted and paged by a plain GET form (a real desk, a real server, a signed-in owner)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import replace
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
    # Two bugs a page, so that five bugs take three pages.
    monkeypatch.setattr(desk_owner, "BOARD", replace(desk_owner.BOARD, per_page=2))
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


def test_the_board_is_one_list_with_counts_paged(owner: tuple[httpx.Client, list[str]]) -> None:
    client, bugs = owner
    board = client.get("/bugs", params={"sort": "oldest"}).text
    assert re.search(r'reproducing <span class="count">5</span>', board)
    assert "None." not in board and "merged" not in _text(board).split("Search")[0], "empty states are not listed"
    assert _listed(board) == bugs[:2] and "1 to 2 of 5." in board
    second = client.get("/bugs", params={"state": "reproducing", "page": "2", "sort": "oldest"}).text
    assert _listed(second) == bugs[2:4] and "3 to 4 of 5 matching" in second
    assert "page=3" in second and "state=reproducing" in second  # the pager keeps the filter
    last = client.get("/bugs", params={"state": "reproducing", "page": "3", "sort": "oldest"}).text
    assert _listed(last) == bugs[4:] and "5 to 5 of 5 matching" in last and "page=4" not in last
    beyond = client.get("/bugs", params={"page": "9"}).text
    assert _listed(beyond) == [] and "Nothing on page 9: there are 5." in beyond
    newest = client.get("/bugs", params={"sort": "newest"}).text
    assert _listed(newest) == bugs[::-1][:2]


def test_the_board_searches_filters_and_sorts_without_scripts(owner: tuple[httpx.Client, list[str]]) -> None:
    client, bugs = owner
    found = client.get("/bugs", params={"q": "INFINITE total"}).text  # every word, any case
    assert _listed(found) == [bugs[1]] and "1 to 1 of 1 matching (of 5)." in found
    assert 'value="INFINITE total"' in found  # the search box keeps what was asked
    by_component = client.get("/bugs", params={"owner": "area-3"}).text
    assert _listed(by_component) == [bugs[3]]
    by_title = client.get("/bugs", params={"sort": "title"}).text
    assert _listed(by_title) == [bugs[1], bugs[0]]  # "A huge price...", then "Coupon larger..."
    none = client.get("/bugs", params={"q": "no such words", "state": "merged"}).text
    assert _listed(none) == [] and "Nothing matches (of 5)." in none
    form = re.search(r'<form method="get" action="/bugs"[^>]*>', found)
    assert form is not None  # a plain GET form: it works with no script


def _text(page: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", page.split("<main", 1)[1]).split())


@pytest.mark.parametrize(("query", "words"), [({"state": "nope-PWNED"}, "the state asked for is not one this list"),
                                              ({"owner": "area-PWNED"}, "the component asked for is not one"),
                                              ({"sort": "PWNED"}, "the order asked for is not one"),
                                              ({"q": "PWNED" * 50}, "a search is at most 200 characters"),
                                              ({"page": "0"}, "is not a page number"),
                                              ({"state": "reproducing", "page": "two-PWNED"}, "is not a page number")])
def test_bad_board_queries_are_refused_clearly(owner: tuple[httpx.Client, list[str]], query: dict[str, str],
                                               words: str) -> None:
    client, _ = owner
    answer = client.get("/bugs", params=query)
    assert answer.status_code == 400 and words in html.unescape(answer.text) and _listed(answer.text) == []
    assert "PWNED" not in answer.text, "the page's text came from the query string"
