"""The repair workspace starts a verification of one of the case's candidates, as its operator would:
the form on the case page (CSRF, the candidate chosen from the case's own), the run queued for the
verifier, its steps shown live while it runs, then its verdict and signed evidence. Bad input is a
clear 4xx that writes nothing. A real server, the real verifier workflow and sandbox."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from signoff.demo.fixture import FixtureRepo, build, examples_root
from signoff.demo.repair_room import RepairRoom, coupon_contract, open_repair_room
from signoff.kernel.settings import Settings
from signoff.ledger import NewEvent, SqlLedger
from signoff.repair import read_case
from signoff.repair.case import record
from signoff.repair.decisions import VerificationStep
from signoff.repair.model import case_key
from signoff.rooms.domain.signin import SignIns
from signoff.rooms.http.app import create_app
from signoff.trust import KeyStore, verify_file
from signoff.web.routes import routers
from tests.support.cli import run_cli
from tests.support.fixtures.rooms import Server
from tests.support.requires import require_sandbox
from tests.support.web import password_client

HARNESS = examples_root() / "coupon" / "harness"
PASSWORD = "the operator's passphrase"


@dataclass
class Case:
    ledger: SqlLedger
    settings: Settings
    room: RepairRoom
    repo: FixtureRepo
    case_id: str
    operator: httpx.Client
    bystander: httpx.Client
    csrf: dict[str, str]

    def page(self, client: httpx.Client | None = None) -> str:
        return (client or self.operator).get(f"/repair/{self.case_id}").text

    def start(self, candidate: str, client: httpx.Client | None = None, csrf: str | None = None) -> httpx.Response:
        who = client or self.operator
        token = self.csrf["operator" if who is self.operator else "bystander"] if csrf is None else csrf
        return who.post(f"/repair/{self.case_id}/verifications", data={"csrf": token, "candidate": candidate})

    def events(self) -> int:
        return len(self.ledger.read(case_key(self.case_id)))


@pytest.fixture
def case(tmp_path: Path) -> Iterator[Case]:
    require_sandbox()
    settings = Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path)
    ledger = SqlLedger.open(settings)
    repo = build(examples_root() / "coupon", tmp_path / "coupon")
    room = open_repair_room(ledger, settings, coupon_contract(repo.path, HARNESS), suffix="verify")
    room.say(room.operator, f"@{room.verifier.name} A 10% coupon is applied twice.")
    room.run()
    (opened,) = room.workflow.cases()
    # Two attempts' candidates, as the verifier records them (attempt 1 the false fix, 2 the genuine one).
    false, genuine = repo.candidates["false-fix"], repo.candidates["genuine-fix"]
    ledger.append(case_key(opened.case_id), None, [
        NewEvent("repair.candidate", {"attempt": 1, "commit": false}),
        NewEvent("repair.candidate", {"attempt": 2, "commit": genuine}),
        NewEvent("repair.verdict", {"attempt": 2, "candidate": genuine, "verdict": "INCONCLUSIVE",
                                    "reasons": [{"code": "timeout", "text": "", "detail": ""}], "fingerprint": "f" * 64,
                                    "evidence": "", "diff": "", "tamper": []}),
        NewEvent("repair.review_requested", {})])
    for person in (room.operator, room.bystander):
        SignIns(ledger).set_password(person.id, PASSWORD)
    server = Server(create_app(ledger, settings, routers=routers(settings)))
    url = server.start()
    operator, op_csrf = password_client(url, room.operator.name, PASSWORD)
    bystander, by_csrf = password_client(url, room.bystander.name, PASSWORD)
    try:
        yield Case(ledger, settings, room, repo, opened.case_id, operator, bystander,
                   {"operator": op_csrf, "bystander": by_csrf})
    finally:
        operator.close()
        bystander.close()
        server.stop()
        ledger.close()


def test_the_operator_starts_a_verification_of_a_candidate_and_sees_it_run_to_its_verdict(case: Case) -> None:
    genuine = case.repo.candidates["genuine-fix"]
    page = case.page()
    form = re.search(rf'action="/repair/{case.case_id}/verifications"(.*?)</form>', page, re.DOTALL)
    assert form, "no verification form on the case page"
    assert re.findall(r'<option value="([0-9a-f]{40})"', form.group(1)) == [
        case.repo.candidates["false-fix"], genuine]  # exactly the case's candidates

    started = case.start(genuine)
    assert started.status_code == 303 and started.headers["location"].endswith("#verifications")
    st = read_case(case.ledger, case.case_id)
    assert st.checks[1]["state"] == "queued" and st.checks[1]["by"] == case.room.operator.sender
    shown = case.operator.get(started.headers["location"]).text
    assert "Run 1 was started" in shown and 'id="check-1">queued: the verifier runs it' in shown
    version = case.ledger.version(case_key(case.case_id))

    # While it runs, each step the verifier records is shown; the live stream sends it to the open page.
    record(case.ledger, case.case_id, VerificationStep(1, "executions (1/3)"), "test:step")
    assert 'id="check-1">running: executions (1/3)<' in case.page()
    with case.operator.stream("GET", f"/repair/{case.case_id}/live?after={version}") as live:
        data = next(line for line in live.iter_lines() if line.startswith("data: "))
    assert json.loads(data.removeprefix("data: "))["fields"]["check-1"] == "running: executions (1/3)"

    case.room.run()  # the verifier's job: the approved contract against the candidate, in the sandbox
    st = read_case(case.ledger, case.case_id)
    check = st.checks[1]
    assert check["state"] == "done" and check["verdict"] == "VERIFIED" and check["candidate"] == genuine
    assert verify_file(Path(check["evidence"]), KeyStore(case.settings.keys_dir).trusted()).ok
    steps = [e.payload["step"] for e in case.ledger.read(case_key(case.case_id))
             if e.type == "repair.verification_progress"]
    assert steps[0] == "executions (1/3)" and "writing the evidence" in steps
    final = case.page()
    assert f'id="check-1">VERIFIED · fingerprint {check["fingerprint"][:12]}<' in final
    assert f"/repair/verify?name={Path(check['evidence']).name}" in final
    # It measured; the case's state and review are as they were. The room was told both ends.
    assert st.state == "AWAITING_REVIEW" and st.last_verdict["verdict"] == "INCONCLUSIVE"  # type: ignore[index]
    # `signoff repair show` lists the run too.
    shown_cli = run_cli(["repair", "show", case.case_id], {"SIGNOFF_HOME": str(case.settings.home),
                                                         "SIGNOFF_DB": case.settings.db_url})
    assert f"run 1 (started by {case.room.operator.name} via web): {genuine[:12]} VERIFIED" in shown_cli.stdout
    said = [m["body"] for m in case.room.rooms.read_messages(case.room.operator, case.room.room_id, limit=1000)]
    assert any(f"started run 1, a verification of candidate {genuine[:12]}" in b for b in said)
    assert any(f"run 1 of candidate {genuine[:12]}: VERIFIED" in b for b in said)


# Each bad request (who sends it, which candidate, which CSRF token) and the 4xx that says why.
BAD = [
    ("bystander", "genuine", None, 403, "only the linked operator can start a verification"),
    ("operator", "base", None, 400, "is not a candidate of"),
    ("operator", "", None, 400, "is not a candidate of"),
    ("operator", "genuine", "forged", 403, "csrf"),
]


def test_bad_input_is_a_clear_4xx_and_writes_nothing(case: Case) -> None:
    commits = {"genuine": case.repo.candidates["genuine-fix"], "base": case.repo.base, "": ""}
    before = case.events()
    for who, candidate, csrf, status, words in BAD:
        answer = case.start(commits[candidate], case.operator if who == "operator" else case.bystander, csrf)
        assert answer.status_code == status, (who, candidate, csrf)
        assert words in (answer.text.lower() if words == "csrf" else answer.text)
        assert "Traceback" not in answer.text
    assert case.events() == before and not read_case(case.ledger, case.case_id).checks


def test_a_second_run_of_a_candidate_waits_for_the_first(case: Case) -> None:
    genuine = case.repo.candidates["genuine-fix"]
    assert case.start(genuine).status_code == 303
    before = case.events()
    again = case.start(genuine)
    assert again.status_code == 409 and "run 1 of candidate" in again.text and "still queued" in again.text
    assert case.events() == before


def test_a_run_that_cannot_start_ends_inconclusive_and_says_why(case: Case) -> None:
    assert case.start(case.repo.candidates["false-fix"]).status_code == 303
    case.repo.path.rename(case.repo.path.with_name("moved"))  # the repository is gone when the verifier runs
    case.room.workflow.poll()
    check = read_case(case.ledger, case.case_id).checks[1]
    assert (check["state"], check["verdict"], check["reasons"][0]["code"]) == ("done", "INCONCLUSIVE", "not_run")
    assert 'id="check-1">INCONCLUSIVE (not_run) · repository not found' in case.page()
