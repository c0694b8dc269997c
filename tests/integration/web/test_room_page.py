"""A room page as people read it: senders by name, protocol messages as a summary in words with
their JSON folded, hostile text inert, and every message of a long room reachable a page at a time
(the pages over ASGI, in one process)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.rooms import RoomService
from signoff.rooms.domain.signin import SignIns
from signoff.rooms.http.app import create_app
from signoff.web import rooms_pages
from signoff.web.routes import routers
from tests.integration.web.test_inbox import PASSWORD, _sign_in
from tests.support.fixtures.rooms import World, make_world


@pytest.fixture
def room(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[World, TestClient]]:
    monkeypatch.setattr(rooms_pages, "HISTORY", 3)  # three messages a page: seven take three pages
    settings = Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path)
    ledger = SqlLedger.open(settings)
    world = make_world(RoomService(ledger))
    SignIns(ledger).set_password(world.alice.id, PASSWORD)
    with TestClient(create_app(ledger, settings, routers=routers(settings)), base_url="https://testserver") as c:
        _sign_in(c, "alice")
        yield world, c
    ledger.close()


def _bodies(page: str) -> list[str]:
    return re.findall(r'<p class="body">([^<]*)</p>', page)


def _older(page: str) -> str | None:
    found = re.search(r'<a href="(/rooms/[^"#]+\?before=\d+)#messages" rel="prev">Older messages</a>', page)
    return found.group(1) if found else None


def test_every_message_of_a_long_room_is_reached_a_page_at_a_time(room: tuple[World, TestClient]) -> None:
    world, client = room
    for n in range(1, 8):
        world.service.post_message(world.alice, world.room_id, f"message {n}")
    newest = client.get(f"/rooms/{world.room_id}").text
    assert _bodies(newest) == ["message 5", "message 6", "message 7"] and "data-live=" in newest
    older = _older(newest)
    assert older is not None
    middle = client.get(older).text
    assert _bodies(middle) == ["message 2", "message 3", "message 4"]
    assert "data-live=" not in middle, "an older page does not follow the room live"
    assert f'<a href="/rooms/{world.room_id}#messages">Newest messages</a>' in middle
    oldest_link = _older(middle)
    assert oldest_link is not None
    oldest = client.get(oldest_link).text
    assert _bodies(oldest) == ["message 1"] and _older(oldest) is None


@pytest.mark.parametrize("before", ["x-PWNED", "-1", "1" * 30])
def test_a_page_that_is_not_a_position_is_refused_plainly(room: tuple[World, TestClient], before: str) -> None:
    world, client = room
    answer = client.get(f"/rooms/{world.room_id}", params={"before": before})
    assert answer.status_code == 400 and "is not a position in the room" in answer.text
    assert "PWNED" not in answer.text


def test_senders_are_named_and_protocol_messages_read_as_words(room: tuple[World, TestClient]) -> None:
    world, client = room
    command = {"action": "propose_fix", "case_id": "coupon-01", "attempt": 2, "base": "ab" * 20,
               "note": "<script>alert(1)</script>", "command_id": "c0ffee"}
    world.service.post_message(world.fixer, world.room_id, json.dumps(command))
    world.service.post_message(world.alice, world.room_id, '{"not json" <img src=x onerror=alert(1)>')
    page = client.get(f"/rooms/{world.room_id}").text
    line = re.search(r'<p class="body structured">([^<]*)</p>', page)
    assert line is not None
    assert line.group(1) == ("Propose fix · attempt: 2 · case id: coupon-01 · note: "
                             "&lt;script&gt;alert(1)&lt;/script&gt;")  # no digest, no machinery id
    raw = re.search(r'<details class="raw"><summary>Raw JSON</summary><pre>(.*?)</pre></details>', page, re.S)
    assert raw is not None and json.loads(raw.group(1).replace("&#34;", '"').replace("&lt;", "<")
                                          .replace("&gt;", ">")) == command
    assert "<script>" not in page and "<img" not in page
    assert _bodies(page) == ['{&#34;not json&#34; &lt;img src=x onerror=alert(1)&gt;']  # not JSON: text as sent
    names = re.findall(r'<strong title="([^"]+)">([^<]+)</strong>', page)
    assert (world.fixer.sender, world.fixer.name) in names and (world.alice.sender, "Alice") in names
    shown = re.sub(r"<[^>]+>", " ", page.split('id="messages"', 1)[1].split('id="post-title"', 1)[0])
    assert world.fixer.sender not in shown, "a raw sender id is text on a message line"


def _found(page: str) -> list[tuple[str, str]]:
    """(body, link to its place in the room) of each search result, in the page's order."""
    return re.findall(r'<p class="body">([^<]*)</p>\s*</li>\s*</ol>\s*<p class="meta"><a href="([^"]+)">Show it', page)


def test_a_room_search_pages_its_matches_to_their_places_and_only_for_readers(
        room: tuple[World, TestClient], monkeypatch: pytest.MonkeyPatch) -> None:
    world, client = room
    monkeypatch.setattr(rooms_pages, "SEARCH_PAGE", 2)
    posts = [(world.alice, "Coupon fix: first try"), (world.fixer, "coupon tests pass"), (world.alice, "unrelated"),
             (world.alice, "the COUPON code is 50% off"), (world.bob, "coupon rollback"), (world.alice, "lunch?")]
    for who, text in posts:
        world.service.post_message(who, world.room_id, text)
    assert 'action="/rooms/' + world.room_id + '/search"' in client.get(f"/rooms/{world.room_id}").text
    first = client.get(f"/rooms/{world.room_id}/search", params={"q": "coupon"}).text
    assert [b for b, _ in _found(first)] == ["coupon rollback", "the COUPON code is 50% off"]  # newest first
    older = re.search(r'<a href="([^"]+)" rel="next">Older matches</a>', first)
    assert older is not None
    second = client.get(f"/rooms/{world.room_id}/search" + older.group(1).replace("&amp;", "&")).text
    assert [b for b, _ in _found(second)] == ["coupon tests pass", "Coupon fix: first try"]
    assert "Older matches" not in second
    body, place = _found(second)[1]
    shown = client.get(place.replace("&amp;", "&")).text  # the history page that shows it, at its anchor
    anchor = place.split("#", 1)[1]
    assert f'id="{anchor}"' in shown and body in _bodies(shown)
    by_name = client.get(f"/rooms/{world.room_id}/search", params={"q": "alice COUPON"}).text  # sender names too
    assert [b for b, _ in _found(by_name)] == ["the COUPON code is 50% off", "Coupon fix: first try"]
    wildcard = client.get(f"/rooms/{world.room_id}/search", params={"q": "%"}).text  # LIKE's % is a character
    assert [b for b, _ in _found(wildcard)] == ["the COUPON code is 50% off"]
    for bad in ("x" * 201 + "PWNED", "PWNED\x00"):
        refused = client.get(f"/rooms/{world.room_id}/search", params={"q": bad})
        assert refused.status_code == 400 and "PWNED" not in refused.text
    carol, _ = world.service.create_user("carol", "Carol")  # a bystander, not in the room
    SignIns(world.service.ledger).set_password(carol.id, PASSWORD)
    _sign_in(client, "carol")
    kept_out = client.get(f"/rooms/{world.room_id}/search", params={"q": "coupon"})
    assert kept_out.status_code == 403 and "coupon" not in kept_out.text.lower()
