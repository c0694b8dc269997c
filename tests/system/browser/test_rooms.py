"""Rooms in a real browser: messages with their senders' kinds, live updates, posting and
addressing, read-only members, policies and documents, approval cards answered in place, and the
refusals (a policy, a wrong responder, a forged form, a non-member)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from signoff.kernel.tls import tls_context
from signoff.ledger import SqlLedger
from signoff.rooms import OPEN, OWNER_ONLY, RoomService
from tests.support.web import HTTP_WAIT
from tests.system.browser.conftest import PASSWORD, Site, axe_violations, click, make_site, overflow, submit_with_enter

CARD = "case-1.merge"
OTHER_CARD = "case-1.ship"


@dataclass
class Rooms:
    site: Site
    room_id: str
    document_id: str

    def service(self) -> RoomService:
        service = RoomService(SqlLedger.from_url(f"sqlite:///{self.site.home / 'signoff.db'}"))
        service.refresh()
        return service


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rooms]:
    site = make_site(tmp_path_factory)
    site.cli("rooms", "user", "password", "admin", stdin=PASSWORD + "\n")
    site.add_user("alice", "Alice")
    site.add_user("bob", "Bob")
    site.add_user("eve", "Eve")
    ledger = SqlLedger.from_url(f"sqlite:///{site.home / 'signoff.db'}")
    s = RoomService(ledger)
    alice = s.user_by_name("alice")
    fixer, _ = s.create_agent(alice, "fixer", "fixes bugs", policy=OWNER_ONLY)
    s.create_agent(alice, "helper", "helps", policy=OPEN)
    room = s.create_room(alice, "case-1", "the coupon bug", agent_names=["fixer", "helper"],
                         user_names=["alice", "bob"])
    s.post_message(fixer, room.id, "I drafted a fix for the coupon rounding.")
    doc = s.create_document(fixer, room.id, "contract", "expected: test_coupon fails on base\n<b>not bold</b>")
    for request_id, title in ((CARD, "Merge the coupon fix?"), (OTHER_CARD, "Ship it tonight?")):
        s.request_approval(fixer, room.id, request_id, title,
                           [{"id": "yes", "label": "Approve", "decision": "accept"},
                            {"id": "no", "label": "Decline", "decision": "decline"}],
                           ledger.clock.now() + 3600, ["alice"])
    ledger.close()
    site.start()
    try:
        yield Rooms(site, room.id, doc)
    finally:
        site.stop()


@pytest.mark.slow
def test_a_room_shows_its_messages_members_policies_and_documents(world: Rooms, tabs: Any) -> None:
    tab = tabs(world.site)
    tab.sign_in("alice")
    page = tab.page
    click(page.get_by_role("link", name="Rooms"))
    assert axe_violations(page) == []
    click(page.get_by_role("link", name="case-1"))
    page.get_by_role("heading", name="Room case-1").wait_for()
    tab.screenshot("room")
    first = page.locator(".message").first
    assert first.locator(".badge.kind").inner_text() == "agent"
    assert first.locator(".body").inner_text() == "I drafted a fix for the coupon rounding."
    sender = first.locator(".from strong")  # the sender by name; the server id (the members list's) as its tooltip
    assert sender.inner_text() == "fixer" and (sender.get_attribute("title") or "").startswith("agent:")
    members = page.get_by_role("heading", name="Members").locator("xpath=..").inner_text()
    assert "person Alice" in members and "agent fixer" in members
    assert '"owner": true' in page.locator("pre").first.inner_text(), "fixer's owner-only policy is shown"
    assert axe_violations(page) == []
    click(page.get_by_role("link", name="contract"))
    assert page.locator("pre").inner_text() == "expected: test_coupon fails on base\n<b>not bold</b>"
    assert page.locator("pre b").count() == 0
    assert axe_violations(page) == []


def test_new_messages_arrive_live(world: Rooms, tabs: Any) -> None:
    reader = tabs(world.site)
    reader.sign_in("alice")
    reader.page.goto(f"/rooms/{world.room_id}")
    reader.page.get_by_text("Live: new messages appear here.").wait_for()
    writer = tabs(world.site)
    writer.sign_in("bob")
    writer.page.goto(f"/rooms/{world.room_id}")
    writer.page.get_by_label("Message", exact=True).fill("hello from bob <i>not italic</i>")
    click(writer.page.get_by_role("button", name="Post"))
    writer.page.get_by_role("status").filter(has_text="Posted").wait_for()
    arrived = reader.page.locator(".message", has_text="hello from bob")
    arrived.wait_for()  # without a reload: over the live stream
    assert arrived.locator(".body").inner_text() == "hello from bob <i>not italic</i>"
    assert arrived.locator(".badge.kind").inner_text() == "person"
    assert arrived.locator("i").count() == 0
    # A protocol message reads as words, live as on the page, its JSON one click away.
    writer.page.get_by_label("Message", exact=True).fill('{"action": "propose_fix", "case_id": "case-1", "attempt": 1}')
    click(writer.page.get_by_role("button", name="Post"))
    summary = reader.page.locator(".body.structured", has_text="Propose fix")
    summary.wait_for()
    assert summary.inner_text() == "Propose fix · attempt: 1 · case id: case-1"
    click(reader.page.get_by_text("Raw JSON").last)
    assert '"action": "propose_fix"' in reader.page.locator("details.raw pre").last.inner_text()
    reader.page.reload()
    assert reader.page.locator(".body.structured").last.inner_text() == "Propose fix · attempt: 1 · case id: case-1"


def test_addressing_an_agent_shows_what_its_policy_said(world: Rooms, tabs: Any) -> None:
    tab = tabs(world.site, width=375)
    tab.sign_in("bob")
    page = tab.page
    page.goto(f"/rooms/{world.room_id}")
    page.get_by_label("Address an agent").select_option("fixer")
    page.get_by_label("Message", exact=True).fill("please fix it my way")
    click(page.get_by_role("button", name="Post"))
    notice = page.get_by_role("status").filter(has_text="Posted")
    assert "@fixer: you may not address this agent here" in notice.inner_text()
    refusal = page.locator(".message", has_text="not permitted to direct messages to me")
    assert refusal.locator(".badge.kind").inner_text() == "agent"
    assert overflow(page) == 0
    assert axe_violations(page) == []


def test_a_reply_joins_its_thread(world: Rooms, tabs: Any) -> None:
    tab = tabs(world.site)
    tab.sign_in("alice")
    page = tab.page
    page.goto(f"/rooms/{world.room_id}")
    thread = page.locator(".thread", has_text="I drafted a fix")
    click(thread.get_by_text("Reply in thread"))
    thread.get_by_label("Reply").fill("looks right to me")
    click(thread.get_by_role("button", name="Reply"))
    again = page.locator(".thread", has_text="I drafted a fix")
    assert again.locator(".message").nth(1).locator(".body").inner_text() == "looks right to me"
    # Its time, to the second, in the reader's time zone (times.js), the UTC text kept as its tooltip.
    at = again.locator(".message").nth(1).locator("time")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", at.get_attribute("datetime") or "")
    # times.js sets the tooltip once the page has loaded: wait for it rather than read it at once.
    expect(at).to_have_attribute("title", re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$"))
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d( \(.+\))?$", at.inner_text())


def test_a_card_is_answered_in_place_with_the_keyboard(world: Rooms, tabs: Any) -> None:
    tab = tabs(world.site)
    tab.sign_in("alice")
    page = tab.page
    card = page.locator(".card", has_text="Merge the coupon fix?")
    tab.screenshot("home")
    assert int(page.locator("#count-cards").inner_text()) >= 1
    card.get_by_label("Approve").focus()
    page.keyboard.press("Space")
    page.keyboard.press("Tab")  # past the other option of the radio group, to the reason
    page.keyboard.type("the reproduction failed on base and passes with the fix")
    page.keyboard.press("Tab")
    submit_with_enter(page)
    page.get_by_role("heading", name="Waiting for me").wait_for()
    confirmed = page.get_by_role("status").filter(has_text="Answered:")  # the answer is confirmed where it was given
    assert "\u201cMerge the coupon fix?\u201d: Approve." in confirmed.inner_text()
    assert page.locator(".card", has_text="Merge the coupon fix?").count() == 0
    service = world.service()
    decided = service.approval(service.user_by_name("alice"), CARD)
    assert decided.state == "accepted" and decided.outcome is not None
    assert decided.outcome["responder"] == f"user:{service.user_by_name('alice').id}"
    page.goto(f"/rooms/{world.room_id}")
    assert page.locator(".message", has_text="Answered \u201cMerge the coupon fix?\u201d: Approve. Reason: the "
                        "reproduction failed on base").count() == 1
    service.ledger.close()


def test_a_wrong_responder_is_refused_as_on_the_api(world: Rooms, tabs: Any) -> None:
    tab = tabs(world.site)
    tab.expect_refusal(403)
    tab.sign_in("admin")  # an admin may read every pending card, but the card names alice only
    page = tab.page
    page.get_by_role("heading", name="Waiting for me").wait_for()
    assert page.locator(".card", has_text="Ship it tonight?").count() == 0  # not waiting for the admin
    page.goto(f"/rooms/{world.room_id}")  # the room shows it to its reader, who tries anyway
    card = page.locator(".card", has_text="Ship it tonight?")
    card.get_by_label("Approve").check()
    card.get_by_label("Reason").fill("I am the admin")
    click(card.get_by_role("button", name="Answer"))
    alert = page.get_by_role("alert")
    assert "admin is not a responder of this card" in alert.inner_text()
    assert axe_violations(page) == []
    service = world.service()
    assert service.approval(service.user_by_name("alice"), OTHER_CARD).state == "pending"
    service.ledger.close()


def test_forged_posts_and_outsiders_are_refused(world: Rooms) -> None:
    bob, csrf = world.site.signed_in("bob")
    try:
        forged = bob.post(f"/rooms/{world.room_id}/messages", data={"body": "forged"})
        assert forged.status_code == 403 and "no valid CSRF token" in forged.text
        forged_answer = bob.post("/approvals/answer", data={"request_id": OTHER_CARD, "option_id": "yes",
                                                            "reason": "x"})
        assert forged_answer.status_code == 403
        # With the token, bob (a member, not a responder) is refused by the service.
        service = world.service()
        shown = service.approval(service.user_by_name("alice"), OTHER_CARD).digest
        service.ledger.close()
        refused = bob.post("/approvals/answer", data={"csrf": csrf, "request_id": OTHER_CARD, "option_id": "yes",
                                                      "digest": shown, "reason": "let me"})
        assert refused.status_code == 403 and "bob is not a responder" in refused.text
    finally:
        bob.close()
    eve, _ = world.site.signed_in("eve")
    try:
        assert eve.get(f"/rooms/{world.room_id}").status_code == 403
        assert eve.get(f"/rooms/{world.room_id}/live?after=0").status_code == 403
        assert eve.get(f"/rooms/{world.room_id}/documents/{world.document_id}").status_code == 403
    finally:
        eve.close()
    with httpx.Client(base_url=world.site.url, verify=tls_context(), timeout=HTTP_WAIT) as anonymous:
        r = anonymous.get(f"/rooms/{world.room_id}/live?after=0")
        assert r.status_code == 303 and r.headers["location"] == "/signin"
    service = world.service()
    assert service.approval(service.user_by_name("alice"), OTHER_CARD).state == "pending"
    bodies = [m["body"] for m in service.read_messages(service.user_by_name("alice"), world.room_id, limit=1000)]
    assert "forged" not in bodies
    service.ledger.close()
