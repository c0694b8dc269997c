"""The room page as served: messages escaped however often the page is rendered (each message's
markup is made once and kept), one reply form, in the thread asked for, that works without
JavaScript, and membership checked on every visit, also after a change made by another process."""

from __future__ import annotations

import re
from urllib.parse import unquote

from signoff.ledger import SqlLedger
from signoff.rooms import OPEN, RoomService
from signoff.rooms.domain.signin import SignIns
from tests.system.web.conftest import PASSWORD, Clients, csrf_of, sign_in

HOSTILE = '<script>alert(1)</script> " onmouseover="alert(2)'


def _room(service: RoomService) -> str:
    alice = service.user_by_name("alice")
    bob, _ = service.create_user("bob", 'Bob <img src=x onerror="alert(3)">')
    SignIns(service.store.ledger).set_password(bob.id, PASSWORD)
    fixer, _ = service.create_agent(alice, "fixer", "fixes", policy=OPEN)
    room = service.create_room(alice, "ops", agent_names=["fixer"], user_names=["alice", "bob"])
    service.post_message(fixer, room.id, "first thread")
    service.post_message(bob, room.id, HOSTILE)
    return room.id


def test_hostile_text_is_escaped_on_every_visit(service: RoomService, clients: Clients) -> None:
    room_id = _room(service)
    browser = clients()
    assert sign_in(browser) == 303
    for _ in range(3):  # the first visit makes each message's markup, later ones reuse it
        html = browser.get(f"/rooms/{room_id}").text
        assert "<script>alert(1)" not in html and 'onmouseover="alert' not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt; &#34; onmouseover=&#34;alert(2)" in html
        assert "<img src=x" not in html and "Bob &lt;img src=x onerror=&#34;alert(3)&#34;&gt;" in html


def test_one_reply_form_in_the_thread_asked_for_without_javascript(service: RoomService, clients: Clients) -> None:
    room_id = _room(service)
    browser = clients()
    sign_in(browser)
    html = browser.get(f"/rooms/{room_id}").text
    assert 'name="thread_id"' not in html, "no reply form until one is asked for"
    links = re.findall(r'<a href="\?reply=([^"#]+)#reply">Reply in thread</a>', html)
    assert len(links) == 2
    first = unquote(links[0])  # the link carries the thread's id quoted for a URL
    assert first.startswith("$")
    html = browser.get(f"/rooms/{room_id}?reply={links[0]}").text
    assert html.count('name="thread_id"') == 1
    thread = html.split(f'id="t-{first}"', 1)[1].split('<li class="thread"', 1)[0]
    assert f'name="thread_id" value="{first}"' in thread and "Reply in thread" not in thread
    answer = browser.post(f"/rooms/{room_id}/messages",
                          data={"csrf": csrf_of(browser, f"/rooms/{room_id}"), "thread_id": first,
                                "body": "a reply, without script"})
    assert answer.status_code == 303
    html = browser.get(f"/rooms/{room_id}").text
    thread = html.split(f'id="t-{first}"', 1)[1].split('<li class="thread"', 1)[0]
    assert "first thread" in thread and "a reply, without script" in thread


def test_a_member_removed_by_another_process_is_refused_at_the_next_visit(service: RoomService,
                                                                          clients: Clients) -> None:
    room_id = _room(service)
    bob = clients()
    assert sign_in(bob, "bob") == 303
    assert bob.get(f"/rooms/{room_id}").status_code == 200  # the room and its members are now cached
    # Another process's view of the same database.
    other = SqlLedger.from_url(service.store.ledger.engine.url.render_as_string(hide_password=False))
    try:
        others = RoomService(other)
        others.remove_member(others.user_by_name("alice"), room_id, others.user_by_name("bob"))
    finally:
        other.close()
    refused = bob.get(f"/rooms/{room_id}")
    assert refused.status_code == 403
    assert HOSTILE not in refused.text and "alert(1)" not in refused.text
