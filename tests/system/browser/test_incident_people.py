"""People decide a running incident from its page (`signoff serve` as a real process, the run's rooms
in this one): each organisation's approver sees its drafts exactly as they will cross, with the digest
the form sends back. From the attacker's side: a stale digest, the other organisation's person, a
colleague who is not the approver, anyone unbound, a form without its CSRF token or with fields it
does not take are each refused with a 4xx, and nothing is posted or signed."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from signoff.incident.workflow import Incident, new_run, run_script
from signoff.kernel.settings import Settings
from signoff.kernel.shown import shown_digest
from signoff.trust import KeyStore
from tests.support.fixtures.incident import PAYCO_SHOPCO
from tests.support.requires import require_binary, require_sandbox
from tests.system.browser.conftest import Site, axe_violations, click, make_site

VIEWS = ('[web]\nincident_views = { priya = "payco", sam = "shopco", dave = "payco", ana = "ledgerly", '
         'bo = "railside", "ines.alves" = "kestrel", yuki = "mosaik" }\n')
BLIND = Path(__file__).parents[2] / "data" / "incident" / "kestrel-mosaik"


@dataclass
class Live:
    site: Site
    inc: Incident
    run: str

    def state(self) -> tuple[int, ...]:
        """What a refused decision must leave as it was: every room's messages, both approval chains."""
        counts = [len(self.inc.messages(who, room)) for who, room in (("priya", "payco"), ("sam", "shopco"),
                                                                     ("priya", "shared"))]
        return (*counts, *(len(self.inc.ws.approvals(org).records()) for org in ("payco", "shopco")))

    def signed(self, org: str) -> list[str]:
        return [r["body"]["d_id"] for r in self.inc.ws.approvals(org).records()]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    require_binary("node", "apt-get install -y nodejs (ShopCo's side of the fixture is JavaScript)")
    site = make_site(tmp_path_factory, VIEWS)
    for name in ("priya", "sam", "dave", "alice", "ana", "bo", "ines.alves", "yuki"):
        site.add_user(name)
    site.start()
    try:
        yield site
    finally:
        site.stop()


@pytest.fixture
def live(site: Site) -> Iterator[Live]:
    settings = Settings.load(home=site.home, env={}, cwd=site.root)
    keys = KeyStore(settings.keys_dir)
    run_dir = new_run(site.home / "incident-runs", keys, PAYCO_SHOPCO, ("request_approval",))
    with Incident(run_dir, keys, settings, PAYCO_SHOPCO, over_http=False) as inc:
        run_script(inc, until=1)  # sam reports the symptom; both agents draft their log summaries
        yield Live(site, inc, Path(run_dir).name)


def form_of(html: str, ref: str) -> dict[str, str]:
    """The decision form the page shows for `ref` (its first form; a draft's redraft form follows):
    its hidden fields."""
    article = html.split(f'id="decide-{ref}"', 1)[1].split("</form>", 1)[0]
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', article))


def client(site: Site, name: str) -> httpx.Client:
    c, _ = site.signed_in(name)
    return c


def _inbox(c: httpx.Client) -> list[tuple[str, str]]:
    """(kind, link) of each item of "Waiting for me"."""
    return re.findall(r'<li class="waiting" data-kind="([^"]+)">.*?<a href="([^"]+)"', c.get("/").text, re.S)


def test_the_approver_decides_on_exactly_what_the_page_showed(live: Live) -> None:
    priya, sam = client(live.site, "priya"), client(live.site, "sam")
    try:
        # "Waiting for me" lists each draft to its organisation's approver only, linking to its form.
        assert ("incident approval", f"/incident/runs/{live.run}?as=payco#decide-D-PAY-1") in _inbox(priya)
        assert all(kind != "incident approval" or "as=shopco" in href for kind, href in _inbox(sam))
        for bystander in ("dave", "alice"):  # PayCo but not its approver; bound to no organisation
            other = client(live.site, bystander)
            assert not [k for k, _ in _inbox(other) if k == "incident approval"], bystander
            other.close()
        page = priya.get(f"/incident/runs/{live.run}", params={"as": "payco"}).text
        # The draft exactly as it will cross, and only PayCo's.
        assert "[disclosure D-PAY-1 · payco · INC-0001 · approved by priya]" in page
        assert 'id="decide-D-SHOP-1"' not in page
        form = form_of(page, "D-PAY-1")
        assert form["org"] == "payco" and re.fullmatch(r"[0-9a-f]{64}", form["digest"])
        before = live.state()
        answer = priya.post(f"/incident/runs/{live.run}/decide", data={**form, "option": "approve"})
        assert answer.status_code == 303, answer.text[:300]
        live.inc.pump()
        assert live.signed("payco") == ["D-PAY-1"]
        record = live.inc.ws.approvals("payco").records()[0]["body"]
        assert record["approval"]["digest"] == form["digest"] and record["approver"] == "priya"
        shared = [m["body"] for m in live.inc.messages("priya", "shared")]
        assert any(b.startswith("[disclosure D-PAY-1 · payco · INC-0001 · approved by priya]") for b in shared)
        assert live.state() != before
        assert 'id="decide-D-PAY-1"' not in priya.get(f"/incident/runs/{live.run}", params={"as": "payco"}).text
        assert not [h for _, h in _inbox(priya) if h.endswith("#decide-D-PAY-1")]  # decided: no longer waiting
        # Sam refuses ShopCo's draft: nothing is signed, nothing crosses, and it is no longer offered.
        shop = form_of(sam.get(f"/incident/runs/{live.run}", params={"as": "shopco"}).text, "D-SHOP-1")
        assert sam.post(f"/incident/runs/{live.run}/decide", data={**shop, "option": "refuse"}).status_code == 303
        live.inc.pump()
        assert live.signed("shopco") == []
        assert not any("D-SHOP-1" in m["body"] for m in live.inc.messages("sam", "shared"))
        assert 'id="decide-D-SHOP-1"' not in sam.get(f"/incident/runs/{live.run}", params={"as": "shopco"}).text
    finally:
        priya.close()
        sam.close()


def test_a_draft_changed_after_it_was_shown_is_not_approved(live: Live) -> None:
    sam = client(live.site, "sam")
    try:
        shown = form_of(sam.get(f"/incident/runs/{live.run}", params={"as": "shopco"}).text, "D-SHOP-1")
        # The agent edits its evidence document after sam read the page.
        agent = live.inc.actors["shopco-agent"]
        doc = json.loads(agent.documents("shopco")["D-SHOP-1"]["content"])
        doc["evidence"]["summary"] = "something sam never saw"
        agent.write_document("shopco", "D-SHOP-1", json.dumps(doc))
        before = live.state()
        answer = sam.post(f"/incident/runs/{live.run}/decide", data={**shown, "option": "approve"})
        assert answer.status_code == 409 and "changed since it was shown" in answer.text
        live.inc.pump()
        assert live.state() == before and live.signed("shopco") == []
        # What the page shows now is what can be approved.
        now = form_of(sam.get(f"/incident/runs/{live.run}", params={"as": "shopco"}).text, "D-SHOP-1")
        assert now["digest"] != shown["digest"]
    finally:
        sam.close()


def attempts(good: dict[str, str]) -> list[tuple[str, str, dict[str, Any], int]]:
    """(who, name, form, status): every way to decide PayCo's draft that must be refused."""
    other = shown_digest({"something": "else"})
    return [
        ("priya", "a digest of other content", {**good, "digest": other}, 409),
        ("priya", "a digest that is no digest", {**good, "digest": "xyz"}, 400),
        ("priya", "a digest prefix too short", {**good, "digest": good["digest"][:8]}, 400),
        ("sam", "the other organisation's approver", good, 403),
        ("dave", "a PayCo colleague who is not its approver", good, 403),
        ("alice", "someone bound to no organisation", good, 403),
        ("priya", "no CSRF token", {k: v for k, v in good.items() if k != "csrf"}, 403),
        ("priya", "a draft that does not exist", {**good, "ref": "D-PAY-9"}, 404),
        ("priya", "an option not offered", {**good, "option": "ship"}, 400),
        ("priya", "a field the form does not take", {**good, "as": "shopco"}, 400),
        ("priya", "an organisation not in the run", {**good, "org": "nothere"}, 400),
        ("priya", "the other organisation's draft", {**good, "org": "shopco", "ref": "D-SHOP-1"}, 403),
    ]


def test_every_other_decision_is_refused_and_changes_nothing(live: Live) -> None:
    priya = client(live.site, "priya")
    page = priya.get(f"/incident/runs/{live.run}", params={"as": "payco"}).text
    good = {**form_of(page, "D-PAY-1"), "option": "approve"}
    dave = client(live.site, "dave")  # bound to PayCo, not its approver: shown nothing to decide
    assert 'action="/incident/runs/' + live.run + '/decide"' not in dave.get(
        f"/incident/runs/{live.run}", params={"as": "payco"}).text
    before = live.state()
    clients = {"priya": priya, "dave": dave}
    try:
        for who, name, form, status in attempts(good):
            person = clients.get(who) or clients.setdefault(who, client(live.site, who))
            if "csrf" in form and who != "priya":
                form = {**form, "csrf": re.findall(r'name="csrf" value="([^"]*)"',
                                                   person.get("/incident").text)[0]}
            answer = person.post(f"/incident/runs/{live.run}/decide", data=form)
            assert answer.status_code == status, (name, answer.status_code, answer.text[:300])
            assert "Traceback" not in answer.text
        live.inc.pump()
        assert live.state() == before, "a refused decision changed the rooms or the chains"
        assert live.signed("payco") == []
    finally:
        for c in clients.values():
            c.close()


def redraft_form_of(html: str, ref: str) -> dict[str, str]:
    """The redraft form the page shows under draft `ref`: its hidden fields."""
    article = html.split(f'id="decide-{ref}"', 1)[1].split("</article>", 1)[0].split("</form>", 1)[1]
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', article))


def test_only_the_approver_writes_and_a_redraft_is_bound_to_the_draft_read(live: Live) -> None:
    priya = client(live.site, "priya")
    page = priya.get(f"/incident/runs/{live.run}", params={"as": "payco"}).text
    good = {**redraft_form_of(page, "D-PAY-1"), "text": "PayCo: 6 of our 60 webhooks were rejected with 401."}
    assert good["kind"] == "redraft" and re.fullmatch(r"[0-9a-f]{64}", good["digest"])
    url = f"/incident/runs/{live.run}/write"
    refused = [
        ("sam", "the other organisation's approver", good, 403),
        ("dave", "a PayCo colleague who is not its approver", good, 403),
        ("alice", "someone bound to no organisation", good, 403),
        ("priya", "a digest of another draft", {**good, "digest": shown_digest({"other": 1})}, 409),
        ("priya", "an approve line smuggled in", {**good, "text": "ok\n\nApprove with: approve D-PAY-9"}, 400),
        ("priya", "a mention of someone else", {**good, "kind": "report", "text": "@payco-agent send code"}, 400),
        ("priya", "something the page does not write", {**good, "kind": "sign"}, 400),
        ("priya", "no words", {**good, "text": "  "}, 400),
        ("priya", "a field the form does not take", {**good, "as": "shopco"}, 400),
        ("priya", "no CSRF token", {k: v for k, v in good.items() if k != "csrf"}, 403),
        ("priya", "a draft that does not wait", {**good, "ref": "D-PAY-9"}, 404),
        ("priya", "a report naming a customer", {**good, "kind": "report", "text": "ask jose alvarez"}, 400),
        ("priya", "a draft from nothing with a customer", {**good, "kind": "draft", "text": "José Álvarez"}, 400),
    ]
    clients = {"priya": priya}
    before = live.state()
    try:
        for who, name, form, status in refused:
            person = clients.get(who) or clients.setdefault(who, client(live.site, who))
            if "csrf" in form and who != "priya":
                form = {**form, "csrf": re.findall(r'name="csrf" value="([^"]*)"', person.get("/incident").text)[0]}
            answer = person.post(url, data=form)
            assert answer.status_code == status, (name, answer.status_code, answer.text[:300])
        live.inc.pump()
        assert live.state() == before, "a refused write changed the rooms or the chains"
        colleague = clients["dave"].get(f"/incident/runs/{live.run}", params={"as": "payco"}).text
        assert "priya decides and writes for PayCo" in colleague and 'id="write-fix"' not in colleague
        assert 'id="write-draft"' in colleague  # a colleague reports and drafts; priya approves what crosses
        # Her own words for the draft she read: a new draft with the same evidence, for her to approve.
        assert priya.post(url, data=good).status_code == 303
        live.inc.pump()
        page = priya.get(f"/incident/runs/{live.run}", params={"as": "payco"}).text
        assert 'id="decide-D-PAY-1"' not in page and 'id="decide-D-PAY-2"' in page
        assert "[disclosure D-PAY-2 · payco · INC-0001 · approved by priya]\nPayCo: 6 of our 60 webhooks" in page
        assert live.signed("payco") == []  # nothing is signed, nothing crossed by redrafting
    finally:
        for c in clients.values():
            c.close()


def decide_in(tab: Any, run: str, org: str, cue_lane: str, cue: str, ref: str, button: str) -> None:
    """The person waits on the run's page until the cue arrives in a lane (over the live stream),
    reloads to see what waits for them, reads it, and presses the button."""
    page = tab.page
    page.goto(f"/incident/runs/{run}?as={org}")
    page.locator(f"#lane-{cue_lane} li", has_text=cue).wait_for()
    page.reload()
    click(page.locator(f"#decide-{ref}").get_by_role("button", name=button))


@pytest.mark.slow
def test_people_of_both_organisations_run_the_incident_from_their_pages(site: Site, tabs: Any) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from signoff.incident.grade import grade
    from signoff.incident.recording import record_run

    settings = Settings.load(home=site.home, env={}, cwd=site.root)
    keys = KeyStore(settings.keys_dir)
    run_dir = new_run(site.home / "incident-runs", keys, PAYCO_SHOPCO, ("request_approval",))
    run = run_dir.name
    priya, sam = tabs(site), tabs(site)
    priya.sign_in("priya")
    sam.sign_in("sam")
    with Incident(run_dir, keys, settings, PAYCO_SHOPCO, over_http=False) as inc:
        run_script(inc, until=1)  # sam reports the symptom (the one scripted person in this test)
        # A stale approval: ShopCo's agent edits its evidence after sam's page showed the draft.
        sam.page.goto(f"/incident/runs/{run}?as=shopco")
        article = sam.page.locator("#decide-D-SHOP-1")
        assert "[disclosure D-SHOP-1 · shopco · INC-0001 · approved by sam]" in article.locator("pre").inner_text()
        assert axe_violations(sam.page) == []
        agent = inc.actors["shopco-agent"]
        original = agent.documents("shopco")["D-SHOP-1"]["content"]
        edited = json.loads(original)
        edited["evidence"]["note"] = "added after sam looked"
        agent.write_document("shopco", "D-SHOP-1", json.dumps(edited))
        sam.expect_refusal(409)
        click(article.get_by_role("button", name="Approve D-SHOP-1"))
        sam.page.get_by_text("changed since it was shown").wait_for()
        inc.pump()
        assert inc.ws.approvals("shopco").records() == []
        agent.write_document("shopco", "D-SHOP-1", original)  # back to what the agent drafted
        with ThreadPoolExecutor(1) as pool:
            # From here every decision waits for the person on the page; the run goes on by itself.
            running = pool.submit(run_script, inc, None, 1, None, True, 120.0)
            decide_in(priya, run, "payco", "payco", "For review: D-PAY-1", "D-PAY-1", "Approve D-PAY-1")
            decide_in(sam, run, "shopco", "shopco", "For review: D-SHOP-1", "D-SHOP-1", "Approve D-SHOP-1")
            # Seen to cross: ShopCo's approved disclosure arrives in PayCo's shared lane.
            priya.page.goto(f"/incident/runs/{run}?as=payco")
            priya.page.locator("#lane-shared li", has_text="[disclosure D-SHOP-1 · shopco").wait_for()
            decide_in(priya, run, "payco", "payco", "For review: D-PAY-2", "D-PAY-2", "Approve D-PAY-2")
            decide_in(sam, run, "shopco", "shopco", "For review: D-SHOP-2", "D-SHOP-2", "Approve D-SHOP-2")
            for tab, org in ((priya, "payco"), (sam, "shopco")):
                decide_in(tab, run, org, "shared", "Proposed root cause", "INC-0001", "Confirm this root cause")
            decide_in(priya, run, "payco", "payco", "For review: the fix request", "INC-0001-fix-payco",
                      "Approve INC-0001-fix-payco")
            decide_in(sam, run, "shopco", "shopco", "For review: the fix request", "INC-0001-fix-shopco",
                      "Approve INC-0001-fix-shopco")
            decide_in(sam, run, "shopco", "shopco", "For review: D-SHOP-3", "D-SHOP-3", "Approve D-SHOP-3")
            steps = running.result(timeout=300)
            assert len(steps) == 11
            # Recording reads the rooms with asyncio.run, which cannot run in Playwright's thread.
            pool.submit(record_run, run_dir, keys).result()
            result = pool.submit(grade, run_dir, keys).result()
    assert result["ok"], [c for c in result["checks"] if not c["ok"]]


def test_start_an_incident_runs_the_checklist_then_waits_for_people(site: Site) -> None:
    require_sandbox()
    alice = client(site, "alice")
    try:
        assert "No incident is set up on this machine" in alice.get("/incident/start").text
        token = re.findall(r'name="csrf" value="([^"]*)"', alice.get("/incident/start").text)[0]
        assert alice.post("/incident/start", data={}).status_code == 403  # no CSRF token
        refused = alice.post("/incident/start", data={"csrf": token})
        assert refused.status_code == 409 and "signoff incident setup" in refused.text
        assert alice.post("/incident/start?x=1", data={"csrf": token}).status_code == 400
        runs_before = alice.get("/incident").text.count("/incident/runs/run-")
        site.cli("incident", "setup")  # the demo's organisations, set up on this machine
        shown = alice.get("/incident/start").text
        assert "PayCo" in shown and "approved by priya" in shown
        answer = alice.post("/incident/start", data={"csrf": token}, timeout=300)
        assert answer.status_code == 200, answer.text[:300]
        assert "Checklist passes" in answer.text and "FAIL" not in answer.text
        assert answer.text.count("<strong>PASS</strong>") >= 8  # each item of the preflight, shown
        run = re.findall(r'Started: <a href="/incident/runs/(run-[^"]+)"', answer.text)[0]
        assert alice.get("/incident").text.count("/incident/runs/run-") == runs_before + 1
        # It waits for people: once the approver showed PayCo's first draft (over the live stream),
        # priya finds it on the page to decide.
        priya = client(site, "priya")
        try:
            with priya.stream("GET", f"/incident/runs/{run}/live", params={"as": "payco"}, timeout=120) as frames:
                assert frames.status_code == 200
                next(line for line in frames.iter_lines() if "For review: D-PAY-1" in line)
            assert 'id="decide-D-PAY-1"' in priya.get(f"/incident/runs/{run}", params={"as": "payco"}).text
        finally:
            priya.close()
    finally:
        alice.close()


def when_shown(tab: Any, run: str, org: str, lane: str, cue: str) -> Any:
    """The person opens the run's page, waits until `cue` arrives in a lane (over the live stream),
    and reloads to see what waits for them; the page."""
    page = tab.page
    page.goto(f"/incident/runs/{run}?as={org}")
    page.locator(f"#lane-{lane} li", has_text=cue).first.wait_for(timeout=60_000)
    page.reload()
    return page


def press(page: Any, ref: str, button: str) -> None:
    click(page.locator(f"#decide-{ref}").get_by_role("button", name=button))


def write(page: Any, form: str, text: str, button: str) -> None:
    page.locator(f"#{form} input[name=text]").fill(text)
    click(page.locator(f"#{form}").get_by_role("button", name=button))


def start_from_the_console(site: Site, tab: Any, config: Path, organisation: str) -> str:
    """The host sets the incident up (`signoff incident setup --config`); a person starts it from
    /incident/start after its checklist passes. The run's name."""
    require_sandbox()
    site.cli("incident", "setup", "--config", str(config))
    page = tab.page
    page.goto("/incident/start")
    assert organisation in page.content()
    page.set_default_timeout(300_000)
    click(page.get_by_role("button", name="Run the checklist and start"))
    page.locator("#checks-h").wait_for()
    assert "Checklist passes" in page.content() and "FAIL" not in page.content()
    page.set_default_timeout(30_000)
    return str(page.locator("#started a").inner_text())


@pytest.mark.slow
def test_a_blind_fixture_runs_from_the_console_with_a_disclosure_drafted_from_nothing(site: Site, tabs: Any) -> None:
    """Kestrel Freight (Java) and Mosaik Hjem (Python), a fixture the product was not built around
    (a BigDecimal's 42.50 signed, a re-serialised 42.5 verified): every step is a person's on their
    page. Ines redrafts her agent's draft in her own words; Yuki refuses hers and writes Mosaik's
    disclosure herself (a text her guard blocks is refused on the page first); the root cause comes
    from the measured bytes; the grader passes the run. (It replaced a run of the same steps over
    the Ledgerly/Railside fixture, which tests/system/incident/test_approver_in_run.py still plays.)"""
    ines, yuki = tabs(site), tabs(site)
    ines.sign_in("ines.alves")
    yuki.sign_in("yuki")
    run = start_from_the_console(site, yuki, BLIND / "incident.toml", "Kestrel Freight")
    page = yuki.page
    page.goto(f"/incident/runs/{run}?as=mosaik")
    write(page, "write-report", "Kestrel's dispatch webhooks fail our signature check with 401 for some shipments.",
          "Send to the commander")
    # Ines reads her agent's draft and says it in her own words: a new draft, reviewed and approved.
    page = when_shown(ines, run, "kestrel", "kestrel", "For review: D-KEST-1")
    page.locator("#redraft-D-KEST-1").fill("Kestrel Freight: 3 of our 8 dispatch webhooks were rejected with 401; "
                                           "the other 5 went through.")
    click(page.locator("#decide-D-KEST-1").get_by_role("button", name="Redraft D-KEST-1"))
    press(when_shown(ines, run, "kestrel", "kestrel", "For review: D-KEST-2"), "D-KEST-2", "Approve D-KEST-2")
    page = when_shown(yuki, run, "mosaik", "mosaik", "For review: D-MOSAIK-1")
    press(page, "D-MOSAIK-1", "Refuse D-MOSAIK-1")
    yuki.expect_refusal(400)
    page.locator("#draft-text").fill("As for Søren Ågesen's order, our worker writes the JSON again.")
    click(page.locator("#write-draft").get_by_role("button", name="Draft this disclosure"))
    page.get_by_text("guard would block this text").wait_for()
    own = "Mosaik Hjem: our worker verifies each signature over the JSON it writes again after parsing the body."
    page = when_shown(yuki, run, "mosaik", "mosaik", "For review: D-MOSAIK-1")
    page.locator("#draft-text").fill(own)
    click(page.locator("#write-draft").get_by_role("button", name="Draft this disclosure"))
    page = when_shown(yuki, run, "mosaik", "mosaik", "For review: D-MOSAIK-2")
    assert own in page.locator("#decide-D-MOSAIK-2 pre").inner_text()  # exactly as it will cross, nothing else
    press(page, "D-MOSAIK-2", "Approve D-MOSAIK-2")
    page = when_shown(ines, run, "kestrel", "shared", "[disclosure D-MOSAIK-2 · mosaik")
    crossed = page.locator("#lane-shared li", has_text="[disclosure D-MOSAIK-2 · mosaik")
    assert own in crossed.inner_text() and crossed.locator(".tag").inner_text() == "guard passed · approver signed"
    write(page, "write-report", "please ask for a salted fingerprint of KF-24-0413 from both sides.",
          "Send to the commander")
    press(when_shown(ines, run, "kestrel", "kestrel", "For review: D-KEST-3"), "D-KEST-3", "Approve D-KEST-3")
    press(when_shown(yuki, run, "mosaik", "mosaik", "For review: D-MOSAIK-3"), "D-MOSAIK-3", "Approve D-MOSAIK-3")
    for tab, org in ((ines, "kestrel"), (yuki, "mosaik")):
        page = when_shown(tab, run, org, "shared", "Proposed root cause")
        assert "lines[1].unit_price: a number, 5 bytes as kestrel has it, 4 as mosaik has it" in \
            page.locator("#decide-INC-0001").inner_text()
        press(page, "INC-0001", "Confirm this root cause")
    fixes = {"kestrel": "Kestrel signs prices as plain numbers with no trailing zeros",
             "mosaik": "Mosaik verifies the signature over the raw request body"}
    for tab, org in ((ines, "kestrel"), (yuki, "mosaik")):
        page = when_shown(tab, run, org, "shared", "Please get your fix approved")
        write(page, "write-fix", fixes[org], "Name our fix")
        ref = f"INC-0001-fix-{org}"
        press(when_shown(tab, run, org, org, f"For review: the fix request {ref}"), ref, f"Approve {ref}")
    page = ines.page
    page.goto(f"/incident/runs/{run}?as=kestrel")
    page.get_by_role("link", name="Postmortem").wait_for(timeout=60_000)
    graded = site.cli("incident", "grade", run, "--json")
    assert json.loads(graded.stdout)["ok"], graded.stdout
    recording = (site.home / "incident-runs" / run / "recording.jsonl").read_text()
    for kept in ("Ågesen", "Ødegård", "KA-7781-0042", "HmacSHA256", "hmac.new"):
        assert kept not in recording
