"""The repair workspace in a real browser against a real `signoff serve`: the case list, a case
page, "approve this contract" bound to the harness digest, the verifier (the real workflow, sandbox
and fixer agent) running to a VERIFIED candidate, "accept" by the linked operator, the
evidence-file page; and from the attacker's side: forms without CSRF, the wrong person, another
digest, another room, bad input, each refused with nothing recorded or posted."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from signoff.agents import register_script
from signoff.demo.fixture import build, examples_root
from signoff.demo.repair_room import RepairRoom, coupon_contract, open_repair_room
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.repair import RepairService, read_case
from tests.support.requires import require_sandbox
from tests.support.tamper_corpus import RUNTEST_NOOP
from tests.system.browser.conftest import (
    PASSWORD,
    Site,
    axe_violations,
    click,
    make_site,
    overflow,
    submit_with_enter,
    tab_to,
)

HARNESS = examples_root() / "coupon" / "harness"
REPORT = "A 10% coupon is applied twice: 10000 cents gives 8100, not 9000."
MARKUP = '<img src=x onerror="document.title=1"><script>document.title=2</script>'  # in a hostile report


def _tampering_fixer(task: dict[str, Any]) -> dict[str, Any]:
    """A fixer that keeps the defect and makes pytest's runtest a no-op, so that every test "passes"."""
    cart = task["files"]["cart.py"]
    return {"summary": "a faster test run", "files": [{"path": "cart.py", "content": RUNTEST_NOOP + cart}]}


register_script("fixer", _tampering_fixer, name="web-tamper")


@dataclass
class Workspace:
    site: Site
    ledger: SqlLedger
    flow: RepairRoom  # the case the flow test drives to ACCEPTED
    attacked: RepairRoom  # a case the attacks leave as it was
    tampered: RepairRoom  # a case whose candidates tamper with the test run
    flow_case: str
    attacked_case: str
    tampered_case: str

    def state(self, case_id: str) -> str:
        return read_case(self.ledger, case_id).state

    def verifier_runs(self, r: RepairRoom) -> None:
        """`signoff repair run` as the operator of a deployment runs it: a process of its own."""
        self.site.cli("repair", "run", "--verifier", r.verifier.name, "--fixer", r.fixer_agent.name)

    def room_messages(self, r: RepairRoom) -> int:
        return len(r.rooms.read_messages(r.verifier, r.room_id, limit=1000))


def _case(site: Site, ledger: SqlLedger, settings: Settings, suffix: str, report: str = REPORT,
          **contract: Any) -> tuple[RepairRoom, str]:
    from dataclasses import replace

    repo = build(examples_root() / "coupon", site.root / f"coupon-{suffix}")
    r = open_repair_room(ledger, settings, replace(coupon_contract(repo.path, HARNESS), **contract), suffix=suffix)
    for who in (r.operator, r.bystander):
        site.cli("rooms", "user", "password", who.name, stdin=PASSWORD + "\n")
    r.say(r.operator, f"@{r.verifier.name} {report}")
    r.run()
    (case,) = [c for c in r.workflow.cases() if c.room_id == r.room_id]
    assert case.state == "CONTRACT_PROPOSED"
    return r, case.case_id


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    require_sandbox()
    site = make_site(tmp_path_factory)
    site.add_user("outsider", "Olive Outsider")
    settings = Settings.load(home=str(site.home), env={})
    ledger = SqlLedger.open(settings)
    flow, flow_case = _case(site, ledger, settings, "flow")
    attacked, attacked_case = _case(site, ledger, settings, "attack", report=f"{REPORT} {MARKUP}")
    tampered, tampered_case = _case(site, ledger, settings, "tamper", fixer_script="web-tamper")
    tampered.say(tampered.operator, tampered.asked("approve", tampered_case))
    tampered.run()  # in this process, where the tampering fixer is registered, before the server starts
    assert read_case(ledger, tampered_case).state == "AWAITING_REVIEW"
    site.start()
    try:
        yield Workspace(site, ledger, flow, attacked, tampered, flow_case, attacked_case, tampered_case)
    finally:
        site.stop()
        ledger.close()


def _csrf(client: httpx.Client, path: str) -> str:
    return client.get(path).text.split('name="csrf" value="', 1)[1].split('"', 1)[0]


@pytest.mark.slow
def test_attacks_on_the_case_actions_are_refused_and_change_nothing(workspace: Workspace) -> None:
    w, r, case_id = workspace, workspace.attacked, workspace.attacked_case
    digest = RepairService.contract_shown(read_case(w.ledger, case_id))  # the contract as the page presents it
    operator, op_csrf = w.site.signed_in(r.operator.name)
    bystander, by_csrf = w.site.signed_in(r.bystander.name)
    outsider, out_csrf = w.site.signed_in("outsider")
    before = (w.ledger.count_events(), w.room_messages(r))  # after the sign-ins, which are events too
    try:
        # Without a token, with a made-up one, with another browser's: 403.
        for token in ("", "forged", by_csrf):
            resp = operator.post(f"/repair/{case_id}/approve", data={"csrf": token, "shown": digest})
            assert resp.status_code == 403 and "CSRF" in resp.text
        # A member of the room who is not the linked operator: refused by the workflow's own rule.
        for verb in ("approve", "accept", "reject"):
            resp = bystander.post(f"/repair/{case_id}/{verb}", data={"csrf": by_csrf, "shown": digest})
            assert resp.status_code == 403 and f"only the linked operator can {verb}" in resp.text
        # Someone outside the case room sees neither the case nor its page, and cannot act.
        assert case_id not in outsider.get("/repair").text
        resp = outsider.get(f"/repair/{case_id}")
        assert resp.status_code == 403 and "not in the room" in resp.text and REPORT not in resp.text
        resp = outsider.post(f"/repair/{case_id}/approve", data={"csrf": out_csrf, "shown": digest})
        assert resp.status_code == 403
        assert outsider.get(f"/repair/{case_id}/live").status_code == 403  # nor follow it live
        # The report's markup is text on the page, never markup.
        shown = operator.get(f"/repair/{case_id}").text
        assert "&lt;img src=x" in shown and "&lt;script&gt;" in shown and MARKUP not in shown
        # The operator approving another digest than the one presented: 409.
        resp = operator.post(f"/repair/{case_id}/approve", data={"csrf": op_csrf, "shown": "0" * 64})
        assert resp.status_code == 409 and "reload the case" in resp.text
        # Accepting a case that is not awaiting review: 409 with the workflow's reason.
        resp = operator.post(f"/repair/{case_id}/accept", data={"csrf": op_csrf})
        assert resp.status_code == 409 and "not awaiting review" in resp.text
        # Bad input: an unknown verb, an unknown case, a path outside the evidence folder, a forged upload.
        assert operator.post(f"/repair/{case_id}/merge", data={"csrf": op_csrf}).status_code == 404
        assert operator.get("/repair/no-such-case").status_code == 404
        for name in ("../signoff.db", "/etc/passwd", "../web/secret"):
            resp = operator.get("/repair/verify", params={"name": name})
            assert resp.status_code == 404 and "no evidence file" in resp.text
        csrf = _csrf(operator, "/repair/verify")
        resp = operator.post("/repair/verify", data={"csrf": csrf},
                             files={"file": ("forged.intoto.json", b'{"payloadType": "x"}', "application/json")})
        assert resp.status_code == 422 and "does not verify" in resp.text and "It proves nothing" in resp.text
        resp = operator.post("/repair/verify", data={"csrf": csrf})
        assert resp.status_code == 400 and "no evidence file was uploaded" in resp.text
        resp = operator.post("/repair/verify", files={"file": ("x.intoto.json", b"{}", "application/json")})
        assert resp.status_code == 403
    finally:
        for c in (operator, bystander, outsider):
            c.close()
    assert (w.ledger.count_events(), w.room_messages(r)) == before  # nothing recorded, nothing posted
    assert w.state(case_id) == "CONTRACT_PROPOSED"


@pytest.mark.slow
def test_approve_a_contract_and_accept_a_verified_case(workspace: Workspace, tabs: Any) -> None:
    w, r, case_id = workspace, workspace.flow, workspace.flow_case
    digest = read_case(w.ledger, case_id).harness_digest
    tab = tabs(w.site, width=375)
    tab.sign_in(r.operator.name)
    page = tab.page
    click(page.get_by_role("link", name="Repair", exact=True))
    cases = page.get_by_role("table", name="Cases and their states")
    assert "contract proposed" in cases.get_by_role("row", name=case_id).inner_text()
    assert w.attacked_case not in cases.inner_text()  # a case of a room this operator is not in
    tab.screenshot("repair-cases")
    assert axe_violations(page) == [] and overflow(page) == 0
    click(cases.get_by_role("link", name=case_id))

    contract = page.get_by_role("region", name="Contract")
    assert digest in contract.inner_text() and "test_coupon.py::test_coupon_applies_once" in contract.inner_text()
    # The harness files the digest names, each with its own digest and text, before approving.
    harness = contract.get_by_role("list", name="Harness files")
    click(harness.get_by_text("test_coupon.py"))
    assert "def test_coupon_applies_once" in harness.locator("pre.harness-file").inner_text()
    assert REPORT in page.get_by_role("region", name="Report untrusted").inner_text()
    assert axe_violations(page) == [] and overflow(page) == 0
    contract.scroll_into_view_if_needed()
    tab.screenshot("repair-contract")
    click(page.get_by_role("button", name=f"Approve this contract (harness {digest[:12]})"))
    assert "approve" in page.get_by_role("status").inner_text()
    # The page sent the operator's own message; the verifier judges it as any room message.
    sent = [m for m in r.rooms.read_messages(r.operator, r.room_id, limit=1000) if m["sender"] == r.operator.sender]
    # ... naming the digest of the contract the page showed, as the verifier printed it in the room.
    shown = RepairService.contract_shown(read_case(w.ledger, case_id))
    assert sent[-1]["body"] == f"@{r.verifier.name} approve {case_id} #{shown}"
    assert sent[-1]["body"].startswith(r.asked("approve", case_id))
    w.verifier_runs(r)
    assert w.state(case_id) == "AWAITING_REVIEW"
    # The open page follows the case live, whoever moved it (here `signoff repair run`, another process).
    page.locator("#case-state", has_text="awaiting review").wait_for()
    assert "now awaiting review" in page.locator("#live-status").inner_text()
    page.locator("#sent-notice").wait_for(state="hidden")  # "your approve was sent" went when the state moved on

    page.goto(f"/repair/{case_id}")
    assert page.locator("#case-state").inner_text() == "awaiting review"
    stages = page.get_by_role("table", name="The latest run, from its evidence file (which verifies)").inner_text()
    assert "base" in stages and "failed (assertion)" in stages and "candidate" in stages and "passed" in stages
    attempts = page.get_by_role("region", name="Attempts")
    assert attempts.locator(".retry").count() == 1  # attempt 1 (a test edit) refused; why is shown
    assert "Retried because" in attempts.inner_text() and "VERIFIED" in attempts.inner_text()
    diff = page.get_by_role("region", name="Diff")
    assert diff.locator("#verdict").inner_text() == "VERIFIED" and diff.locator("table.diff tr.add").count() > 0
    evidence = page.get_by_role("region", name="Evidence").locator(".evidence-file")
    assert evidence.count() >= 2 and {evidence.nth(i).locator(".badge").inner_text()
                                      for i in range(evidence.count())} == {"measured"}
    timeline = page.get_by_role("region", name="Timeline").inner_text()
    assert "approved" in timeline and "verdict: VERIFIED" in timeline and "review requested" in timeline
    assert axe_violations(page) == [] and overflow(page) == 0
    # At 375 px each stage is a card, its cells as wide as the screen allows, not columns of a few letters.
    widths = page.locator("table.records td").evaluate_all("els => els.map(e => e.getBoundingClientRect().width)")
    assert widths and min(widths) > 250, widths
    # Accept and reject do not look alike.
    looks = [page.get_by_role("button", name=name).evaluate("e => getComputedStyle(e).backgroundColor")
             for name in (f"Accept {case_id}", f"Reject {case_id}")]
    assert looks[0] != looks[1], looks

    # Accept, with the keyboard alone: it names the candidate the page shows.
    candidate = str((read_case(w.ledger, case_id).last_verdict or {})["candidate"])
    click(page.locator("h1"))
    tab_to(page, f"Accept {case_id} (candidate {candidate[:12]})")
    submit_with_enter(page)
    page.get_by_role("status").wait_for()
    sent = [m for m in r.rooms.read_messages(r.operator, r.room_id, limit=1000) if m["sender"] == r.operator.sender]
    st = read_case(w.ledger, case_id)
    assert sent[-1]["body"] == f"@{r.verifier.name} accept {case_id} {candidate} #{RepairService.review_shown(st)}"
    w.verifier_runs(r)
    assert w.state(case_id) == "ACCEPTED"
    page.goto(f"/repair/{case_id}")
    assert page.locator("#case-state").inner_text() == "accepted"
    assert page.get_by_role("button", name=f"Reject {case_id}").count() == 0


def test_an_evidence_file_opens_as_what_it_proves(workspace: Workspace, tabs: Any) -> None:
    w, r, case_id = workspace, workspace.flow, workspace.flow_case
    verdict = read_case(w.ledger, case_id).last_verdict
    assert verdict is not None and verdict["verdict"] == "VERIFIED", "runs after the flow test"
    tab = tabs(w.site)
    tab.sign_in(r.operator.name)
    page = tab.page
    page.goto(f"/repair/{case_id}")
    page.get_by_role("region", name="Stages measured").scroll_into_view_if_needed()
    page.evaluate("window.scrollBy(0, -40)")
    tab.screenshot("repair-case")
    click(page.get_by_role("region", name="Evidence").get_by_role("link", name="what it proves").last)
    result = page.get_by_role("region", name="the evidence folder", exact=False)
    assert page.locator("#proved-verdict").inner_text() in ("VERIFIED", "INCONCLUSIVE")
    assert "verified: signed by" in result.inner_text()
    cannot = result.locator(".cannot").inner_text()
    assert "not run again here" in cannot and "frozen harness re-digested: matches" in cannot
    tab.screenshot("repair-verify")
    assert axe_violations(page) == []
    # The same file uploaded: its subjects have no folder here, and the page says what it could not redo.
    page.goto("/repair/verify")
    page.get_by_label("Upload an evidence file (.intoto.json)").set_input_files(verdict["evidence"])
    click(page.get_by_role("button", name="Check the uploaded file"))
    assert page.locator("#proved-verdict").inner_text() == "VERIFIED"
    assert Path(verdict["evidence"]).name in page.get_by_role("heading", level=2).inner_text()
    stages = page.get_by_role("table", name="Stages, re-derived from the recorded runs").inner_text()
    assert "failed (assertion)" in stages
    assert axe_violations(page) == []


def test_tampering_is_shown_first_and_the_case_can_only_be_rejected(workspace: Workspace, tabs: Any) -> None:
    w, r, case_id = workspace, workspace.tampered, workspace.tampered_case
    tab = tabs(w.site)
    tab.sign_in(r.operator.name)
    page = tab.page
    page.goto(f"/repair/{case_id}")
    alert = page.get_by_role("alert")
    assert alert.count() == 1 and "Tampering found (harness_integrity)" in alert.inner_text()
    # Shown first: before the report, the contract and everything else the page holds.
    order = page.evaluate("Array.from(document.querySelectorAll('main > section')).map(s => s.getAttribute('role'))")
    assert order[0] == "alert"
    diff = page.get_by_role("region", name="Diff")
    assert diff.locator("#verdict").inner_text() == "INCONCLUSIVE" and "harness_integrity" in diff.inner_text()
    assert "_pytest" in diff.get_by_role("note").inner_text()  # the static signal on the added lines
    assert page.get_by_role("region", name="Attempts").locator(".retry").count() == 1
    assert "harness_integrity" in page.get_by_role("region", name="Attempts").locator(".retry").inner_text()
    assert page.get_by_role("button", name=f"Accept {case_id}").count() == 0
    assert "can only be rejected" in page.get_by_role("region", name="Review").inner_text()
    assert axe_violations(page) == []
    click(page.get_by_role("button", name=f"Reject {case_id}"))
    page.get_by_role("status").wait_for()
    w.verifier_runs(r)
    assert w.state(case_id) == "DECLINED"
