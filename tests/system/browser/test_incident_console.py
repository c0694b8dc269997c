"""The incident console against a real `signoff serve` and a real recorded run (`signoff incident
demo`: room server, evidence servers, guards, approver, notary, the real Node.js fixture): the
three lanes and the panels beside them, replay with the scrubber and presentation mode, and "view
as" from the attacker's side: nothing of the other company's room or ledgers in any answer."""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from signoff.incident.recording import load, record_run
from signoff.incident.workflow import Incident, new_run, run_script
from signoff.kernel.errors import UsageError
from signoff.kernel.settings import Settings
from signoff.kernel.tls import tls_context
from signoff.trust import KeyStore
from signoff.web.config import WebConfig
from tests.support.fixtures.incident import PAYCO_SHOPCO
from tests.support.requires import require_binary, require_sandbox
from tests.support.web import HTTP_WAIT
from tests.system.browser.conftest import PASSWORD, Site, axe_violations, click, make_site, overflow, submit_with_enter

ROOM = {"payco": "payco-internal", "shopco": "shopco-internal"}
OTHER = {"payco": "shopco", "shopco": "payco"}


@dataclass
class World:
    site: Site
    run: str
    rows: list[dict[str, Any]]

    def secrets_of(self, org: str) -> list[str]:
        """What only `org` could see: its room's message ids and the texts that appear nowhere else,
        its approval records' message ids and digests, its guard's name on its decisions."""
        own = [r for r in self.rows if r["visible_to"] == [org]]
        elsewhere = " ".join(r.get("text", "") for r in self.rows if org not in r["visible_to"] or
                             len(r["visible_to"]) > 1)
        out = [r["id"] for r in own if r["kind"] == "message"]
        out += [r["text"] for r in own if r["kind"] == "message" and len(r["text"]) >= 24
                and r["text"] not in elsewhere]
        for r in own:
            if r["kind"] == "approval_record":
                out += [r["data"]["draft_msg_id"], r["data"]["approval_msg_id"], r["data"]["text_sha256"]]
        out.append(f"{org} guard")
        return out


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    require_binary("node", "apt-get install -y nodejs (ShopCo's side of the fixture is JavaScript)")
    site = make_site(tmp_path_factory, '[web]\nincident_views = { carol = "payco" }\n')
    site.add_user("alice", "Alice")
    site.add_user("bob", "Bob")
    site.add_user("carol", "Carol (PayCo)")
    summary = json.loads(site.cli("incident", "demo", "--json").stdout)
    run = Path(summary["run"])
    _head, rows = load(run / "recording.jsonl")
    site.start()
    try:
        yield World(site, run.name, rows)
    finally:
        site.stop()


@pytest.fixture
def alice(world: World) -> Iterator[httpx.Client]:
    client, _ = world.site.signed_in("alice")
    yield client
    client.close()


@pytest.mark.slow
def test_the_secrets_are_really_in_the_recording(world: World) -> None:
    # Guards the leak tests below: they look for something that exists.
    for org in ("payco", "shopco"):
        secrets = world.secrets_of(org)
        assert len(secrets) >= 10, secrets
        assert any(s.startswith("$") for s in secrets)


def test_the_full_view_shows_three_lanes_and_the_panels(world: World, alice: httpx.Client) -> None:
    html = alice.get(f"/incident/runs/{world.run}").text
    for heading in ("PayCo private room", "Shared room", "ShopCo private room", "Incident record",
                    "Notary's byte table", "PayCo: signed approvals", "ShopCo: signed approvals"):
        assert heading in html, heading
    assert "Chain intact" in html and "Chain broken" not in html
    assert "data.customer.name" in html and "11 fields match, 1 differ" in html
    # Both secrets sets are present in the full view: the leak tests would see a leak.
    for org in ("payco", "shopco"):
        assert all(s in html for s in world.secrets_of(org) if s.startswith("$"))
    # Guard decisions as counts and rules: the blocked draft is named by its rule.
    assert "draft_outside_private_room" in html
    # signoff's room server has room links: each private room's lane shows its link to the shared room.
    for org in ("payco", "shopco"):
        assert f'<p class="lane-link" id="link-{org}">Room link on the server to the shared room' in html
    # Each post is tagged with the control that produced or checked it.
    for tag in ("guard passed · approver signed", "room server (addressing policy)", "notary (salted fingerprints)",
                "approver (review, digest)", "approver (signed record)", "draft, awaits approval",
                "commander (routes requests)", "person (authenticated)"):
        assert f'<span class="tag">{tag}</span>' in html, tag


@pytest.mark.parametrize("org", ["payco", "shopco"])
def test_viewed_as_one_company_nothing_of_the_other_reaches_the_browser(world: World, alice: httpx.Client,
                                                                        org: str) -> None:
    other = OTHER[org]
    secrets = world.secrets_of(other)
    n = len([r for r in world.rows if org in r["visible_to"]])
    answers = {}
    for at in ("", "0", "1", str(n // 2), str(n)):
        answers[f"page at={at}"] = alice.get(f"/incident/runs/{world.run}", params={"as": org, "at": at})
    answers["live frames"] = alice.get(f"/incident/runs/{world.run}/live", params={"as": org})
    for name, r in answers.items():
        assert r.status_code == 200, (name, r.status_code, r.text[:300])
        leaked = [s for s in secrets if s in r.text]
        assert not leaked, f"{name} leaked {other}'s {leaked[:3]}"
    page_html = answers["page at="].text
    assert "Frosted" in page_html and f"lane-{org}" in page_html and f'id="lane-{other}"' not in page_html
    # The viewer's own side is all there.
    assert all(s in page_html for s in world.secrets_of(org) if s.startswith("$"))
    frames = [json.loads(line[6:]) for line in answers["live frames"].text.splitlines() if line.startswith("data: {\"")]
    assert frames and {f["lane"] for f in frames} == {org, "shared"}
    assert "event: done" in answers["live frames"].text


def test_the_postmortem_holds_only_what_both_sides_saw(world: World, alice: httpx.Client) -> None:
    r = alice.get(f"/incident/runs/{world.run}/postmortem")
    assert r.status_code == 200
    for org in ("payco", "shopco"):
        leaked = [s for s in world.secrets_of(org) if s in r.text]
        assert not leaked, f"the postmortem holds {org}'s private {leaked[:3]}"
    html = r.text
    assert "Time to root cause" in html and "Time to close" in html
    assert '<dd id="code-lines">0</dd>' in html
    assert "data.customer.name" in html and "confirmed by priya and sam" in html
    assert "D-SHOP-2</strong> from ShopCo, approved by sam" in html  # what PayCo received
    assert "D-PAY-2</strong> from PayCo, approved by priya" in html  # what ShopCo received
    assert "0 of 60 webhooks rejected" in html


def test_tricks_with_the_view_are_refused(world: World, alice: httpx.Client) -> None:
    base = f"/incident/runs/{world.run}"
    secrets = world.secrets_of("shopco")
    for query in ("as=payco&as=shopco", "as=shopco&as=payco", "as=PayCo", "as=payco%00", "as=both",
                  "as=payco&at=-1", "as=payco&at=x", "as=payco&at=100000", "as=payco&at=1&at=2"):
        for path in (base, f"{base}/live", f"{base}/postmortem"):
            r = alice.get(f"{path}?{query}")
            assert r.status_code == 400, (path, query, r.status_code)
            assert "What to do:" in r.text and not any(s in r.text for s in secrets), (path, query)
    for query in ("as=payco&since=x", "as=payco&since=1&since=2", "as=payco&lane=shopco"):
        r = alice.get(f"{base}/live?{query}")
        assert r.status_code == 400 and "What to do:" in r.text, query
    # A slash in the name never reaches the page (no route matches it); a name that is not a run's is refused.
    assert alice.get("/incident/runs/..%2F..%2Fkeys").status_code == 404
    for path in ("/incident/runs/run-nothere", "/incident/runs/.hidden", "/incident/runs/run-%00",
                 "/incident/runs/run-nothere/live", "/incident/runs/ws/postmortem"):
        r = alice.get(path)
        assert r.status_code == 404 and "What to do:" in r.text, path
    with httpx.Client(base_url=world.site.url, verify=tls_context(), timeout=HTTP_WAIT) as anonymous:
        for path in ("/incident", base, f"{base}?as=payco", f"{base}/live?as=payco", f"{base}/postmortem"):
            r = anonymous.get(path)
            assert r.status_code == 303 and r.headers["location"] == "/signin", path


def test_the_same_recording_always_gives_the_same_page(world: World, alice: httpx.Client) -> None:
    for query in ({}, {"as": "payco", "at": "7"}):
        first = alice.get(f"/incident/runs/{world.run}", params=query).text
        again = alice.get(f"/incident/runs/{world.run}", params=query).text
        assert first == again
    # Another person sees the same console (only the header's name and CSRF token differ).
    bob, _ = world.site.signed_in("bob")
    try:
        theirs = bob.get(f"/incident/runs/{world.run}").text
    finally:
        bob.close()
    mine = alice.get(f"/incident/runs/{world.run}").text
    assert theirs.split('<main id="main">', 1)[1] == mine.split('<main id="main">', 1)[1]


def test_replay_with_the_scrubber_and_presentation_mode(world: World, tabs: Any) -> None:
    tab = tabs(world.site, width=1280)
    tab.sign_in("alice")
    page = tab.page
    click(page.get_by_role("link", name="Incidents"))
    assert axe_violations(page) == []
    click(page.get_by_role("link", name=world.run))
    page.get_by_role("heading", name="Shared room").wait_for()
    tab.screenshot("incident-console")
    assert axe_violations(page) == []
    # At 1280 px the signed approvals show every column, the digest included, with no sideways scroll.
    hidden = page.locator(".panels .scroll").evaluate_all("els => els.map(e => e.scrollWidth - e.clientWidth)")
    assert hidden and max(hidden) <= 0, hidden
    # The timeline breaks between words only.
    assert page.locator("#timeline li").first.evaluate("e => getComputedStyle(e).overflowWrap") != "anywhere"
    shared = page.locator("#lane-shared li")
    total = shared.count()
    assert total > 10 and page.locator("#lane-shared li:visible").count() == total
    scrubber = page.get_by_label("Timeline: step")
    scrubber.fill("0")
    assert page.locator("#lane-shared li:visible").count() == 0
    assert page.locator(".tally .blocked").first.inner_text() == "0"
    # The keyboard: presentation mode on P, then the arrow keys step through the run.
    click(page.locator("h1"))
    page.keyboard.press("p")
    assert "presenting" in (page.locator("body").get_attribute("class") or "")
    assert page.get_by_role("button", name="Presentation mode (P)").get_attribute("aria-pressed") == "true"
    assert not page.locator(".panels").is_visible()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    assert page.locator("#at-out").inner_text() == "3"
    visible_steps = page.locator("#timeline li[data-step]").evaluate_all(
        "els => els.filter(e => !e.hidden).map(e => Number(e.dataset.step))")
    assert visible_steps == [0, 1, 2]
    step_three = page.locator('#timeline li[data-step="2"]').inner_text()
    assert " ".join(page.locator("#now").inner_text().split()) == " ".join(step_three.split())
    tab.screenshot("incident-presentation")
    page.keyboard.press("p")
    assert "presenting" not in (page.locator("body").get_attribute("class") or "")
    # The scrubber's button loads the step from the server: the same view as the script showed.
    click(page.get_by_role("button", name="Show this step"))
    page.wait_for_url(f"**/incident/runs/{world.run}?at=3")
    assert page.locator("#timeline li:visible").count() == 3
    assert overflow(page) == 0
    assert axe_violations(page) == []


def test_view_as_payco_frosts_shopco(world: World, tabs: Any) -> None:
    tab = tabs(world.site, width=375)
    tab.sign_in("alice")
    page = tab.page
    page.goto(f"/incident/runs/{world.run}")
    # With the keyboard alone: Tab to the link, Enter.
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "View as PayCo":
            break
    else:
        raise AssertionError("the keyboard never reached 'View as PayCo'")
    submit_with_enter(page)
    page.wait_for_url("**as=payco")
    frosted = page.locator(".lane.frosted")
    assert "not shown to PayCo" in frosted.inner_text()
    assert page.locator("#lane-shopco").count() == 0
    assert page.get_by_role("heading", name="ShopCo: signed approvals").count() == 0
    assert page.get_by_role("heading", name="PayCo: signed approvals").count() == 1
    html = page.content()
    assert not [s for s in world.secrets_of("shopco") if s in html]
    assert overflow(page) == 0
    assert axe_violations(page) == []
    tab.screenshot("incident-view-as-payco")
    assert PASSWORD not in html


@pytest.mark.slow
def test_the_preflight_panel_runs_the_checklist(world: World, tabs: Any) -> None:
    require_sandbox()
    tab = tabs(world.site)
    tab.sign_in("alice")
    page = tab.page
    page.goto("/incident")
    click(page.get_by_role("link", name="Preflight: check every control before an incident"))
    assert axe_violations(page) == []
    # The home's incident controls were never set up: that item fails, with its fix.
    with page.expect_navigation(timeout=180_000):  # a whole incident's services start and stop
        # The click waits for the navigation it starts as well, under its own deadline.
        click(page.get_by_role("button", name="Run the preflight"), timeout=180_000)
    status = page.get_by_role("status")
    assert status.get_by_role("heading").inner_text().startswith("Preflight fails")
    failed = page.locator(".checks li.fail")
    assert failed.count() == 1 and "controls pinned" in failed.inner_text()
    assert "Fix: run `signoff incident setup`" in failed.inner_text()
    assert page.locator(".checks li.pass", has_text="shopco evidence server refuses payco's token").count() == 1
    world.site.cli("incident", "setup")
    with page.expect_navigation(timeout=180_000):
        click(page.get_by_role("button", name="Run the preflight"), timeout=180_000)
    assert page.get_by_role("status").get_by_role("heading").inner_text().startswith("Preflight passes: 21 of 21")
    assert page.locator(".checks li.fail").count() == 0
    tab.screenshot("incident-preflight")
    assert axe_violations(page) == []


def test_the_preflight_needs_a_person_and_a_token(world: World) -> None:
    with httpx.Client(base_url=world.site.url, verify=tls_context(), timeout=HTTP_WAIT) as anonymous:
        r = anonymous.post("/incident/preflight")
        assert r.status_code == 403 and "no valid CSRF token" in r.text
        csrf = world.site.csrf(anonymous, "/signin")
        r = anonymous.post("/incident/preflight", data={"csrf": csrf})
        assert r.status_code == 303 and r.headers["location"] == "/signin"


class Frames:
    """Every line of one live stream, read in a thread until the server ends it (`done`)."""

    def __init__(self, client: httpx.Client, url: str) -> None:
        self.lines: list[str] = []
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._read, args=(client, url), daemon=True)
        self.thread.start()

    def _read(self, client: httpx.Client, url: str) -> None:
        try:
            with client.stream("GET", url, timeout=httpx.Timeout(10, read=120)) as r:
                assert r.status_code == 200
                for line in r.iter_lines():
                    self.lines.append(line)
        except BaseException as exc:  # reported by the test, not lost in the thread
            self.error = exc

    def finish(self) -> str:
        self.thread.join(timeout=120)
        assert not self.thread.is_alive() and self.error is None, self.error
        return "\n".join(self.lines)


@pytest.mark.slow
def test_watch_a_live_incident(world: World, tabs: Any, alice: httpx.Client) -> None:
    site = world.site
    settings = Settings.load(home=site.home, env={}, cwd=site.root)
    keys = KeyStore(settings.keys_dir)
    run_dir = new_run(site.home / "incident-runs", keys, PAYCO_SHOPCO)
    with Incident(run_dir, keys, settings, PAYCO_SHOPCO, over_http=False) as inc:
        tab = tabs(site)
        tab.sign_in("alice")
        page = tab.page
        page.goto("/incident")
        assert page.locator("li", has_text=run_dir.name).locator(".badge.live").inner_text() == "running"
        click(page.get_by_role("link", name=run_dir.name))
        page.get_by_text("Live: new messages appear in the lanes.").wait_for()
        assert page.locator("#lane-shared li").count() == 0
        payco = tabs(site)
        payco.sign_in("bob")
        payco.page.goto(f"/incident/runs/{run_dir.name}?as=payco")
        payco.page.get_by_text("Live: new messages appear in the lanes.").wait_for()
        frames = Frames(alice, f"/incident/runs/{run_dir.name}/live?as=payco")
        run_script(inc, until=1)  # sam reports the symptom; the commander opens the incident
        # Without a reload: over the live stream, in each lane.
        page.locator("#lane-shared li", has_text="signatures are failing").wait_for()
        page.locator("#lane-payco li", has_text="Approve with: approve D-PAY-1").wait_for()
        page.locator("#lane-shopco li", has_text="Approve with: approve D-SHOP-1").wait_for()
        assert page.locator("#lane-shared li", has_text="signatures are failing").locator(".body").inner_text() == \
            "@incident-commander signatures are failing: some PayCo webhooks are rejected with 401 by our " \
            "verifier since this morning."
        tab.screenshot("incident-live")
        assert axe_violations(page) == []
        payco.page.locator("#lane-payco li", has_text="Approve with: approve D-PAY-1").wait_for()
        run_script(inc, start=1, until=3)
        payco.page.locator("#lane-shared li", has_text="[disclosure D-SHOP-1").wait_for()
        assert payco.page.locator("#lane-shopco").count() == 0
        early = alice.get(f"/incident/runs/{run_dir.name}/postmortem")
        assert early.status_code == 409 and "still going" in early.text and "What to do:" in early.text
    # The run is over: both pages turn into its replay. (Recording reads the rooms with asyncio.run,
    # which cannot run in this thread while the sync Playwright's loop does.)
    with ThreadPoolExecutor(1) as pool:
        pool.submit(record_run, run_dir, keys).result()
    page.get_by_text("Replay of the recording").wait_for()
    payco.page.get_by_text("Replay of the recording").wait_for()
    stream = frames.finish()
    assert stream.rstrip().endswith("event: done\ndata: {}")
    _head, rows = load(run_dir / "recording.jsonl")
    finished = World(site, run_dir.name, rows)
    shopco_only = finished.secrets_of("shopco")
    assert [s for s in shopco_only if s.startswith("$")], "ShopCo's room had messages to leak"
    for where, text in (("live frames", stream), ("PayCo's page", payco.page.content())):
        leaked = [s for s in shopco_only if s in text]
        assert not leaked, f"{where} carried ShopCo's {leaked[:3]}"
    lanes = {json.loads(line[6:])["lane"] for line in stream.splitlines() if line.startswith('data: {"')}
    assert lanes == {"payco", "shared"}


def test_the_postmortem_page(world: World, tabs: Any) -> None:
    tab = tabs(world.site)
    tab.sign_in("alice")
    page = tab.page
    page.goto(f"/incident/runs/{world.run}")
    click(page.get_by_role("link", name="Postmortem"))
    page.get_by_role("heading", name="Measured outcome").wait_for()
    assert page.locator("#code-lines").inner_text() == "0"
    assert page.get_by_role("heading", name="PayCo received").count() == 1
    assert page.locator(".timeline li").count() > 10
    tab.screenshot("incident-postmortem")
    assert overflow(page) == 0
    assert axe_violations(page) == []


def test_a_person_bound_to_payco_gets_payco_s_view_only(world: World) -> None:
    carol, _ = world.site.signed_in("carol")
    base = f"/incident/runs/{world.run}"
    secrets = world.secrets_of("shopco")
    try:
        assert f'href="{base}?as=payco"' in carol.get("/incident").text
        for path in (base, f"{base}?as=shopco", f"{base}?as=", f"{base}/live", f"{base}/live?as=shopco",
                     f"{base}?at=3"):
            r = carol.get(path)
            assert r.status_code == 403, (path, r.status_code)
            assert "carol may see incidents as PayCo only" in r.text and "?as=payco" in r.text
            assert not [s for s in secrets if s in r.text], path
        for path in (f"{base}?as=payco", f"{base}?as=payco&at=5", f"{base}/live?as=payco", f"{base}/postmortem"):
            r = carol.get(path)
            assert r.status_code == 200, path
            assert not [s for s in secrets if s in r.text], path
        assert "Both companies" not in carol.get(f"{base}?as=payco").text
    finally:
        carol.close()


def test_a_bad_incident_views_setting_is_refused(tmp_path: Path) -> None:
    # Organisations come from each run's configuration, so a key is checked for its shape here (a
    # person bound to a company no run has sees no run at all).
    for bad in ('incident_views = { dave = "Evil Corp" }', 'incident_views = "payco"', "incident_views = { dave = 1 }"):
        (tmp_path / "signoff.toml").write_text(f"[web]\n{bad}\n")
        settings = Settings.load(home=tmp_path / "home", env={}, cwd=tmp_path)
        with pytest.raises(UsageError, match="incident_views maps user names to a company"):
            WebConfig.load(settings)


def test_a_rewritten_approval_shows_as_a_broken_chain(world: World, alice: httpx.Client) -> None:
    runs = world.site.home / "incident-runs"
    copy = runs / "run-tampered"
    shutil.copytree(runs / world.run, copy)
    db = sqlite3.connect(copy / "ws" / "payco" / "records.db")
    try:
        changed = db.execute("UPDATE events SET payload = replace(payload, '\"approver\":\"priya\"', "
                             "'\"approver\":\"mallory\"') WHERE case_id = 'incident-chain/payco/approvals'").rowcount
        db.commit()
    finally:
        db.close()
    assert changed >= 1
    html = alice.get(f"/incident/runs/{copy.name}").text
    payco = html.split('id="ledger-payco-h"', 1)[1].split('id="ledger-shopco-h"', 1)[0]
    shopco = html.split('id="ledger-shopco-h"', 1)[1]
    assert "Chain broken" in payco and "Chain intact" not in payco
    assert "Chain intact" in shopco
    assert "Chain intact" in alice.get(f"/incident/runs/{world.run}").text.split('id="ledger-shopco-h"', 1)[0]
