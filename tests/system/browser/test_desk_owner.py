"""The desk's owner pages in a real browser: the board, a bug under review (untrusted dossiers,
measured reproduction, advisory notes, the diff, its tier and what is missing), approving the
exact head and merging; refused as a bot, with the shared key, as a non-owner, on a stale head."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from signoff.desk.model import fold
from signoff.kernel.tls import tls_context
from signoff.ledger import SqlLedger
from tests.conftest import wait_for
from tests.support.fixtures.desk import COUPON, open_world, sandbox_ok  # noqa: F401 (a fixture)
from tests.support.web import HTTP_WAIT
from tests.system.browser.conftest import Site, axe_violations, click, make_site, overflow, submit_with_enter


@dataclass
class Review:
    site: Site
    bug_id: str
    tokens: dict[str, str]

    def bug(self) -> Any:
        ledger = SqlLedger.from_url(f"sqlite:///{self.site.home / 'signoff.db'}")
        try:
            return fold(self.bug_id, ledger.read(f"desk/bug/{self.bug_id}"))
        finally:
            ledger.close()


@pytest.fixture(scope="module")
def review(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Review]:
    request.getfixturevalue("sandbox_ok")
    site = make_site(tmp_path_factory)
    site.add_user("alice", "Alice")
    site.add_user("eve", "Eve")
    w = open_world(site.home)
    first = w.desk.submit_report(COUPON, "198.51.100.7")
    w.engineering.drain()
    w.desk.confirm(w.desk.reporter(first.report_id, first.capability), "yes")
    w.engineering.drain()
    assert w.desk.bug(first.bug_id).state == "in_review", w.desk.bug(first.bug_id).summary()
    w.ledger.close()
    site.start()
    try:
        yield Review(site, first.bug_id, w.tokens)
    finally:
        site.stop()


@pytest.mark.slow
def test_a_non_owner_is_refused(review: Review, tabs: Any) -> None:
    tab = tabs(review.site)
    tab.expect_refusal(403)
    tab.sign_in("eve")
    tab.page.goto("/bugs")
    assert "eve is not a desk owner" in tab.page.get_by_role("alert").inner_text()
    tab.page.goto(f"/bugs/{review.bug_id}")
    assert "eve is not a desk owner" in tab.page.get_by_role("alert").inner_text()
    assert COUPON["title"] not in tab.page.content()


def test_the_board_and_the_bug_page_show_what_review_needs(review: Review, tabs: Any) -> None:
    tab = tabs(review.site, width=375)
    tab.sign_in("alice")
    page = tab.page
    assert page.locator("#count-bug-review").inner_text() == "1"
    waiting = page.locator('li.waiting[data-kind="bug review"] a')
    assert waiting.get_attribute("href") == f"/bugs/{review.bug_id}#change"
    assert page.locator("#menu-waiting").inner_text() == page.locator("#count-waiting").inner_text()
    assert axe_violations(page) == [] and overflow(page) == 0
    click(page.get_by_role("link", name="Bugs", exact=True))
    assert "None." not in page.locator("main").inner_text()  # no section for each empty state
    # The person narrows the board with its form (no script needed): the state, then a word of the title.
    page.get_by_label("State", exact=True).select_option("in_review")
    page.get_by_label("Search", exact=True).fill(COUPON["title"].split()[0].upper())
    click(page.get_by_role("button", name="Show"))
    bugs = page.get_by_role("table", name="Bugs")
    assert review.bug_id in bugs.inner_text() and "1 to 1 of 1 matching" in page.locator("#listing-count").inner_text()
    assert "state=in_review" in page.url
    assert axe_violations(page) == [] and overflow(page) == 0
    click(bugs.get_by_role("link", name=review.bug_id))
    page.get_by_role("heading", name=f"{review.bug_id}: {COUPON['title']}").wait_for()
    assert "untrusted" in page.get_by_role("heading", name="Reports").inner_text()
    assert "measured" in page.get_by_role("heading", name="Reproduction").inner_text()
    # Each agent's note says whose it is: a model's opinion (advisory) or a scripted agent's (simulated).
    notes = page.get_by_role("region", name="Notes")
    assert "No rule reads them" in notes.inner_text()
    badges = notes.locator(".note .badge").all_inner_texts()
    assert "\\n" not in notes.inner_text(), "notes read as text, not as JSON strings with their escapes"
    assert len(badges) == notes.locator(".note").count() and set(badges) <= {"advisory", "simulated"}
    assert "fails on the base revision" in page.get_by_role("region", name="Reproduction").inner_text()
    assert page.locator("table.diff tr.add").count() > 0
    # At 375 px the code keeps its indentation and scrolls inside its own box: it never wraps.
    assert page.locator("table.diff td.code").first.evaluate("e => getComputedStyle(e).whiteSpace") == "pre"
    assert page.locator(".diff-scroll").first.evaluate("e => getComputedStyle(e).overflowX") == "auto"
    assert "tier 1" in page.get_by_role("region", name="Change request").inner_text()
    assert "no human approval of this exact head" in page.locator(".missing").inner_text()
    tab.screenshot("bug")
    assert axe_violations(page) == [] and overflow(page) == 0


def _api(review: Review, who: str, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
    return httpx.post(f"{review.site.url}/desk/bugs/{review.bug_id}/{path}", json=body,
                      headers={"Authorization": f"Bearer {review.tokens[who]}"}, verify=tls_context(),
                      timeout=HTTP_WAIT)


def test_approve_the_exact_head_and_merge(review: Review, tabs: Any) -> None:
    head = review.bug().change["head"]
    # The API's refusals, beside the pages: a bot cannot approve, the shared key cannot merge.
    bot = _api(review, "release-bot", "approve", {"head": head})
    assert bot.status_code == 403 and "not a human user" in bot.json()["detail"]
    assert _api(review, "shared", "merge", {"head": head}).status_code == 403
    tab = tabs(review.site)
    tab.expect_refusal(403)
    tab.expect_refusal(409)
    tab.sign_in("alice")
    page = tab.page
    page.goto(f"/bugs/{review.bug_id}")
    # Merging before any approval: refused, and the page says why.
    click(page.get_by_role("button", name="Merge"))
    assert "merge refused: no human approval of this exact head" in page.get_by_role("alert").inner_text()
    assert review.bug().state == "in_review"
    # A forged approval of another head is refused by the desk.
    client, csrf = review.site.signed_in("alice")
    try:
        stale = client.post(f"/bugs/{review.bug_id}/approve", data={"csrf": csrf, "head": "0" * 40})
        assert stale.status_code == 409 and "review the current head" in stale.text
    finally:
        client.close()
    page.goto(f"/bugs/{review.bug_id}")
    page.get_by_label("Note (optional)").fill("the diff clamps the total at zero")
    page.get_by_label("Note (optional)").press("Tab")
    submit_with_enter(page)  # "Approve this exact head", with the keyboard
    page.locator(".ready").wait_for()
    assert "alice" in page.get_by_role("region", name="Change request").inner_text()
    assert [a["login"] for a in review.bug().approvals] == ["alice"]
    click(page.get_by_role("button", name="Merge"))
    page.locator(".meta", has_text="state merged").wait_for()
    assert review.bug().state == "merged"
    assert "Merged as" in page.get_by_role("region", name="Change request").inner_text()
    assert "by alice" in page.get_by_role("region", name="Change request").inner_text()
    assert page.get_by_role("button", name="Merge").count() == 0
    assert axe_violations(page) == []


def test_evidence_carries_kind_badges_and_verify_results(review: Review, tabs: Any) -> None:
    tab = tabs(review.site)
    tab.expect_refusal(404)
    tab.sign_in("alice")
    page = tab.page
    page.goto(f"/bugs/{review.bug_id}")
    timeline = page.get_by_role("region", name="Reproduction").locator(".evidence-file")
    assert timeline.count() >= 1
    assert timeline.first.locator(".badge").inner_text() == "measured"
    assert "verified: signed by" in timeline.first.inner_text()
    click(page.get_by_role("link", name="Evidence", exact=True))
    files = page.locator(".evidence-file")
    tab.screenshot("evidence")
    assert files.count() >= timeline.count()
    kinds = {files.nth(i).locator(".badge").inner_text() for i in range(files.count())}
    made_for = page.get_by_role("link", name=f"bug {review.bug_id}")  # each file says what it was made for
    assert made_for.count() >= timeline.count()
    assert "measured" in kinds and kinds <= {"measured", "reported", "simulated", "advisory", "unlabelled"}
    assert axe_violations(page) == [] and overflow(page) == 0
    with page.expect_download() as download:
        click(files.first.get_by_role("link"))
    raw = Path(download.value.path()).read_text()
    assert '"payloadType"' in raw and '"signatures"' in raw
    # The download is confined to the evidence folder, however the name is spelt.
    client, _ = review.site.signed_in("alice")
    try:
        for name in ("..%2Fsignoff.db", "%2e%2e%2fweb%2fsecret", "%2Fetc%2Fpasswd", "..%2F..%2Fsignoff.toml",
                     "agents%2F..%2F..%2Fsignoff.db"):
            r = client.get(f"/evidence/raw/{name}")
            assert r.status_code == 404 and "no evidence file" in r.text, name
        page.goto("/evidence/raw/nothing-here.intoto.json")
        assert "no evidence file" in page.get_by_role("alert").inner_text()
    finally:
        client.close()


def test_the_ledger_page_shows_the_chain_and_its_checkpoints(review: Review, tabs: Any) -> None:
    tab = tabs(review.site)
    tab.sign_in("alice")
    page = tab.page
    click(page.get_by_role("link", name="Ledger"))
    assert "intact" in page.get_by_role("region", name="Hash chain").inner_text()
    tab.screenshot("ledger")
    assert axe_violations(page) == []
    # The person looks for the bug's events: each links back to the bug.
    events = page.get_by_role("region", name="Events")
    events.get_by_label("Search", exact=True).fill(review.bug_id)
    click(events.get_by_role("button", name="Show"))
    page.locator("li.event").get_by_role("link", name=f"desk/bug/{review.bug_id}").first.wait_for()
    assert axe_violations(page) == []
    page.goto("/ledger")
    review.site.cli("ledger", "checkpoint")
    page.reload()
    chain = page.get_by_role("region", name="Hash chain").inner_text()
    assert "Last signed checkpoint at event" in chain or "Signed up to the head" in chain
    assert "event " in page.get_by_role("region", name="Signed checkpoints").inner_text()
    # A writer with database access but no key rewrites an event: the page says the chain is broken.
    db = sqlite3.connect(review.site.home / "signoff.db")
    db.execute("UPDATE events SET payload = replace(payload, 'alice', 'mallory') WHERE seq = "
               "(SELECT max(seq) FROM events WHERE payload LIKE '%alice%')")
    db.commit()
    db.close()

    def broken() -> bool:
        # Old events are read back in the background: a visit soon after the edit shows it.
        page.reload()
        alert = page.get_by_role("alert")
        return alert.count() > 0 and "broken" in alert.inner_text()

    assert wait_for(broken, timeout=30)


def test_the_crew_page_shows_each_role_as_the_server_sees_it(review: Review, tabs: Any) -> None:
    review.site.cli("desk", "crew", "setup", "--owner", "alice")
    tab = tabs(review.site, width=375)
    tab.sign_in("alice")
    page = tab.page
    click(page.get_by_role("link", name="Crew", exact=True))
    table = page.get_by_role("table", name="Crew status")
    table.wait_for()
    rows = table.get_by_role("row")
    assert rows.count() == 7  # the header and six roles
    assert "desk-manager" in table.inner_text() and "not running" in table.inner_text()
    assert "connected" not in table.inner_text().replace("not running", "")
    assert "As the desk set them." in page.get_by_role("region", name="Addressing policies").inner_text()
    tab.screenshot("crew")
    assert axe_violations(page) == [] and overflow(page) == 0
