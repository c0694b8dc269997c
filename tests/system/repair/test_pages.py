"""The repair case page binds what the operator approves to what it showed, from the attacker's side
(a real server, the real verifier workflow, a signed-in operator):
- the contract shows every harness file (text and digest) from the frozen copy; when that copy was
  altered, nothing is shown and the contract cannot be approved from the page;
- "Accept" carries the candidate commit and the review the page showed: a page loaded before a newer
  candidate accepts nothing (409, nothing posted); reloaded, it accepts the candidate it now shows.

No sandbox: the case reaches review by the events the verifier would record."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
import pytest

from signoff.demo.fixture import build, examples_root
from signoff.demo.repair_room import RepairRoom, coupon_contract, open_repair_room
from signoff.kernel.digests import sha256_file
from signoff.kernel.settings import Settings
from signoff.ledger import NewEvent, SqlLedger
from signoff.repair import RepairService, read_case
from signoff.repair.model import case_key
from signoff.repair.verifier import harness_store
from signoff.rooms.domain.signin import SignIns
from signoff.rooms.http.app import create_app
from signoff.web.routes import routers
from tests.support.fixtures.rooms import Server
from tests.support.web import password_client

HARNESS = examples_root() / "coupon" / "harness"
PASSWORD = "the operator's passphrase"
FIRST, NEWER = "a1" * 20, "b2" * 20


@dataclass
class Case:
    ledger: SqlLedger
    settings: Settings
    room: RepairRoom
    case_id: str
    operator: httpx.Client
    csrf: str

    def page(self) -> str:
        return self.operator.get(f"/repair/{self.case_id}").text

    def accept_form(self) -> dict[str, str]:
        """The hidden fields of the Accept form as the page renders it now."""
        form = re.search(rf'action="/repair/{self.case_id}/accept"(.*?)</form>', self.page(), re.DOTALL)
        assert form, "no accept form on the page"
        fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', form.group(1)))
        return {**fields, "csrf": self.csrf}

    def messages(self) -> list[str]:
        r = self.room
        return [m["body"] for m in r.rooms.read_messages(r.operator, r.room_id, limit=1000)]

    def verified(self, attempt: int, commit: str) -> None:
        """A candidate VERIFIED and put to review, as the verifier records it."""
        self.ledger.append(case_key(self.case_id), None, [
            NewEvent("repair.candidate", {"attempt": attempt, "commit": commit}),
            NewEvent("repair.verdict", {"attempt": attempt, "candidate": commit, "verdict": "VERIFIED",
                                        "reasons": [], "fingerprint": "f" * 64, "evidence": "",
                                        "diff": f"--- a/cart.py\n+++ b/cart.py\n+# attempt {attempt}\n",
                                        "tamper": [], "signals": []}),
            NewEvent("repair.review_requested", {})])


@pytest.fixture
def case(tmp_path: Path) -> Iterator[Case]:
    settings = Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path)
    ledger = SqlLedger.open(settings)
    repo = build(examples_root() / "coupon", tmp_path / "coupon")
    room = open_repair_room(ledger, settings, coupon_contract(repo.path, HARNESS), suffix="pages")
    room.say(room.operator, f"@{room.verifier.name} A 10% coupon is applied twice.")
    room.run()
    (opened,) = room.workflow.cases()
    SignIns(ledger).set_password(room.operator.id, PASSWORD)
    server = Server(create_app(ledger, settings, routers=routers(settings)))
    operator, csrf = password_client(server.start(), room.operator.name, PASSWORD)
    try:
        yield Case(ledger, settings, room, opened.case_id, operator, csrf)
    finally:
        operator.close()
        server.stop()
        ledger.close()


def test_the_contract_shows_the_harness_it_approves(case: Case) -> None:
    page = case.page()
    test_file = HARNESS / "test_coupon.py"
    assert sha256_file(test_file) in page and "def test_coupon_applies_once" in page
    # The approve form names the digest of the contract as presented (its harness digest included).
    assert f'name="shown" value="{RepairService.contract_shown(read_case(case.ledger, case.case_id))}"' in page
    # The room's contract document carries the same files.
    r = case.room
    ids = [str(d["id"]) for d in r.rooms.documents(r.operator, r.room_id) if d["name"] == f"contract {case.case_id}"]
    (document,) = r.rooms.load_documents(r.operator, ids)
    assert test_file.read_text() in document["content"] and sha256_file(test_file) in document["content"]


def test_a_harness_that_cannot_be_shown_cannot_be_approved(case: Case) -> None:
    st = read_case(case.ledger, case.case_id)
    frozen = harness_store(case.settings) / st.harness_digest
    frozen.chmod(0o755)
    (frozen / "test_coupon.py").chmod(0o644)
    # The attacker's swap: a frozen harness file that can no longer fail. This is data the page must
    # refuse to show (its bytes no longer match the approved digest), not an assertion of this test.
    (frozen / "test_coupon.py").write_text("def test_coupon_applies_once():\n    assert True\n")
    page = case.page()
    assert "cannot be shown here" in page and "altered" in page and "assert True" not in page
    assert f"/repair/{case.case_id}/approve" not in page
    before = case.messages()
    r = case.operator.post(f"/repair/{case.case_id}/approve",
                           data={"csrf": case.csrf, "shown": RepairService.contract_shown(st)})
    assert r.status_code == 403 and "cannot be shown here" in r.text
    assert case.messages() == before and read_case(case.ledger, case.case_id).state == "CONTRACT_PROPOSED"


def test_an_accept_from_a_page_loaded_before_a_newer_candidate_accepts_nothing(case: Case) -> None:
    case.ledger.append(case_key(case.case_id), None, [NewEvent("repair.approved", {
        "message_id": "m", "by": case.room.operator.sender, "harness_digest": ""})])
    case.verified(1, FIRST)
    seen = case.accept_form()  # the operator reviews candidate FIRST
    case.verified(2, NEWER)  # ... and a newer candidate is put to review before the click
    before = case.messages()
    r = case.operator.post(f"/repair/{case.case_id}/accept", data=seen)
    assert r.status_code == 409 and "is not the one under review" in r.text and NEWER[:12] in r.text
    assert case.messages() == before  # nothing sent to the verifier
    # The same candidate with a review the page never showed (another verdict text): refused too.
    case.verified(3, NEWER)
    stale_review = {**case.accept_form(), "shown": seen.get("shown", "")}
    r = case.operator.post(f"/repair/{case.case_id}/accept", data=stale_review)
    assert r.status_code == 409 and case.messages() == before

    fresh = case.accept_form()
    assert fresh["candidate"] == NEWER
    assert case.operator.post(f"/repair/{case.case_id}/accept", data=fresh,
                              follow_redirects=False).status_code == 303
    # The message names the review the page showed: the verifier binds it again when it decides.
    assert case.messages()[-1] == f"@{case.room.verifier.name} accept {case.case_id} {NEWER} #{fresh['shown']}"
    case.room.run()
    st = read_case(case.ledger, case.case_id)
    accepted = [e.payload for e in case.ledger.read(case_key(case.case_id)) if e.type == "repair.accepted"]
    assert st.state == "ACCEPTED" and accepted[0]["candidate"] == NEWER


def test_an_approval_names_the_contract_the_page_showed(case: Case) -> None:
    """A form without the digest of what was shown, or with the digest of another contract, approves
    nothing and sends nothing; the one the page rendered sends the operator's command."""
    st = read_case(case.ledger, case.case_id)
    before = case.messages()
    other = RepairService.contract_shown(replace(st, base="0" * 40))
    for data in ({"csrf": case.csrf}, {"csrf": case.csrf, "shown": other},
                 {"csrf": case.csrf, "harness_digest": st.harness_digest}):
        r = case.operator.post(f"/repair/{case.case_id}/approve", data=data)
        assert r.status_code in (400, 409), r.text
        assert case.messages() == before
    shown = re.search(rf'action="/repair/{case.case_id}/approve"(.*?)</form>', case.page(), re.DOTALL)
    assert shown is not None
    fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', shown.group(1)))
    assert case.operator.post(f"/repair/{case.case_id}/approve", data=fields,
                              follow_redirects=False).status_code == 303
    assert case.messages()[-1] == f"@{case.room.verifier.name} approve {case.case_id} #{fields['shown']}"


def test_a_rejection_names_the_review_the_page_showed(case: Case) -> None:
    """Attacker's side: a reject posted without the review's digest, or for a review the page never
    showed (a newer candidate came in), rejects nothing (on 491180a any reject form was sent)."""
    case.ledger.append(case_key(case.case_id), None, [NewEvent("repair.approved", {
        "message_id": "m", "by": case.room.operator.sender, "harness_digest": ""})])
    case.verified(1, FIRST)
    seen = case.page()
    case.verified(2, NEWER)
    before = case.messages()
    stale = _shown(seen, "reject")
    for data in ({"csrf": case.csrf}, {"csrf": case.csrf, "shown": stale}):
        r = case.operator.post(f"/repair/{case.case_id}/reject", data=data)
        assert r.status_code == 409 and case.messages() == before
        assert read_case(case.ledger, case.case_id).state == "AWAITING_REVIEW"
    fresh = _shown(case.page(), "reject")
    assert fresh and fresh != stale
    r = case.operator.post(f"/repair/{case.case_id}/reject", data={"csrf": case.csrf, "shown": fresh},
                           follow_redirects=False)
    assert r.status_code == 303
    assert case.messages()[-1] == f"@{case.room.verifier.name} reject {case.case_id} #{fresh}"
    case.room.run()
    [declined] = [e.payload for e in case.ledger.read(case_key(case.case_id)) if e.type == "repair.declined"]
    assert declined["approval"]["meaning"] == "refuse" and declined["approval"]["option"] == "reject"


def _shown(page: str, verb: str) -> str:
    """The digest of what was shown that the page's `verb` form carries ("" when it carries none)."""
    form = re.search(rf'action="/repair/[^"]+/{verb}"(.*?)</form>', page, re.DOTALL)
    found = re.search(r'name="shown" value="([^"]*)"', form.group(1)) if form else None
    return found.group(1) if found else ""
