"""The operator asks for another attempt once a case's attempts have ended: from the room or the
command line, recorded with who asked, why and from which message; anyone else is refused and told
why in the room. The first two tests need no sandbox (the case reaches review by the events the
verifier would record); the last runs the whole loop in it."""

from __future__ import annotations

import json
from pathlib import Path

from signoff.demo.fixture import build, examples_root
from signoff.demo.repair_room import RepairRoom, coupon_contract, open_repair_room
from signoff.kernel.settings import Settings
from signoff.ledger import NewEvent, SqlLedger
from signoff.repair import read_case
from signoff.repair.model import case_key
from tests.support.cli import run_cli
from tests.support.requires import require_sandbox

HARNESS = examples_root() / "coupon" / "harness"


def _awaiting_review(home: Path, tmp_path: Path) -> tuple[RepairRoom, str]:
    """A case whose two attempts ended (one refused, one REJECTED) and whose review is asked."""
    settings = Settings.load(home=home, db_url=f"sqlite:///{tmp_path / 'ledger.db'}", env={})
    repo = build(examples_root() / "coupon", tmp_path / "coupon")
    r = open_repair_room(SqlLedger.open(settings), settings, coupon_contract(repo.path, HARNESS))
    r.say(r.operator, f"@{r.verifier.name} A 10% coupon is applied twice.")
    r.run()
    (case,) = r.workflow.cases()
    assert case.contract.repository == "coupon"  # no public remote: the repository's folder names it

    def handoff(n: int) -> NewEvent:
        return NewEvent("repair.fix_requested", {"attempt": n, "command_id": f"c{n}", "receipt": {
            "message_id": f"$h{n}", "room_id": r.room_id, "sender": r.verifier.sender, "body": "", "addressed": True}})

    r.workflow.ledger.append(case_key(case.case_id), None, [
        handoff(1), NewEvent("repair.attempt_failed", {"attempt": 1, "reason": "edits tests/test_cart.py"}),
        handoff(2), NewEvent("repair.candidate", {"attempt": 2, "commit": "b2" * 20}),
        NewEvent("repair.verdict", {"attempt": 2, "candidate": "b2" * 20, "verdict": "REJECTED",
                                    "reasons": [{"code": "candidate_failed", "text": "", "detail": ""}],
                                    "fingerprint": "f" * 64, "evidence": "", "diff": "", "tamper": []}),
        NewEvent("repair.review_requested", {})])
    assert r.workflow.case(case.case_id).state == "AWAITING_REVIEW"
    return r, case.case_id


def _said(r: RepairRoom) -> list[str]:
    return [m["body"] for m in r.rooms.read_messages(r.operator, r.room_id, limit=1000)
            if m["sender"] == r.verifier.sender]


def test_the_operator_asks_for_another_attempt_in_the_room_and_nobody_else_can(home: Path, tmp_path: Path) -> None:
    r, case_id = _awaiting_review(home, tmp_path)
    v = r.verifier.name
    r.say(r.bystander, f"@{v} retry {case_id} try harder")
    r.say(r.operator, f"@{v} retry {case_id}")  # no reason
    r.workflow.poll()
    assert r.workflow.case(case_id).state == "AWAITING_REVIEW"
    said = _said(r)
    assert any(f"retry refused: only the linked operator can retry {case_id}" in b for b in said)
    assert any(f"retry refused: say why {case_id} needs another attempt" in b for b in said)

    asked = r.say(r.operator, f"@{v} retry {case_id} the candidate still applies the coupon twice on refunds")
    r.workflow.poll()  # the verifier records the request and hands attempt 3 to the fixer
    st = r.workflow.case(case_id)
    assert st.state == "FIX_REQUESTED" and st.attempt == 3
    assert st.history[-2:] == ["RETRY_REQUESTED", "FIX_REQUESTED"]
    handoff = st.handoffs[3]
    assert (handoff["asked_by"], handoff["from_message"]) == (r.operator.sender, asked)
    assert handoff["reason"] == "asked by the operator: the candidate still applies the coupon twice on refunds"
    assert any(b.startswith(f"{case_id}: {r.operator.name} asked for attempt 3") for b in _said(r))
    # The hand-off went to the fixer as a targeted message with its receipt recorded.
    assert handoff["receipt"]["addressed"] is True and handoff["receipt"]["sender"] == r.verifier.sender
    # The old review decides nothing any more.
    r.say(r.operator, f"@{v} reject {case_id} #{'0' * 12}")
    r.workflow.poll()
    assert read_case(r.workflow.ledger, case_id).state == "FIX_REQUESTED"


def test_the_operator_asks_for_another_attempt_on_the_command_line(home: Path, tmp_path: Path) -> None:
    r, case_id = _awaiting_review(home, tmp_path)
    env = {"SIGNOFF_HOME": str(home), "SIGNOFF_DB": f"sqlite:///{tmp_path / 'ledger.db'}"}
    before = len(r.workflow.ledger.read(case_key(case_id)))
    refused = run_cli(["repair", "retry", case_id, "--operator", r.bystander.name, "--reason", "mine"], env)
    assert refused.exit_code != 0 and "only the linked operator" in refused.stderr and "fix:" in refused.stderr
    no_reason = run_cli(["repair", "retry", case_id, "--operator", r.operator.name], env)
    assert no_reason.exit_code == 2 and "--reason" in no_reason.stderr and "Traceback" not in no_reason.stderr
    assert len(r.workflow.ledger.read(case_key(case_id))) == before  # nothing written

    done = run_cli(["repair", "retry", case_id, "--operator", r.operator.name, "--reason", "flaky sandbox",
                    "--json"], env)
    assert done.exit_code == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["state"] == "RETRY_REQUESTED" and out["attempt"] == 3
    assert out["request"]["by"] == r.operator.sender and out["request"]["via"] == "cli"
    assert out["request"]["from_message"].startswith("cli:")
    again = run_cli(["repair", "retry", case_id, "--operator", r.operator.name, "--reason", "twice"], env)
    assert again.exit_code != 0 and "RETRY_REQUESTED" in again.stderr
    r.workflow.poll()
    st = r.workflow.case(case_id)
    assert st.handoffs[3]["asked_by"] == r.operator.sender and st.handoffs[3]["reason"].endswith("flaky sandbox")
    shown = run_cli(["repair", "show", case_id], env)
    assert f"attempt 3: asked by {r.operator.sender} from message cli:" in shown.stdout



def test_a_retried_case_runs_its_new_attempt_to_a_review_of_its_own(home: Path, tmp_path: Path) -> None:
    """The whole loop, in the sandbox: attempt 2 VERIFIED and under review; the operator asks for a
    third; it runs to a review of its own, which the first review's command does not decide."""
    require_sandbox()
    settings = Settings.load(home=home, db_url=f"sqlite:///{tmp_path / 'ledger.db'}", env={})
    repo = build(examples_root() / "coupon", tmp_path / "coupon")
    r = open_repair_room(SqlLedger.open(settings), settings, coupon_contract(repo.path, HARNESS))
    v = r.verifier.name
    r.say(r.operator, f"@{v} A 10% coupon is applied twice.")
    r.run()
    (case,) = r.workflow.cases()
    r.say(r.operator, r.asked("approve", case.case_id))
    r.run()
    assert r.workflow.case(case.case_id).verdicts[2]["verdict"] == "VERIFIED"
    first_accept = r.asked("accept", case.case_id)

    asked = r.say(r.operator, f"@{v} retry {case.case_id} a second candidate to compare")
    r.run()
    st = r.workflow.case(case.case_id)
    assert st.state == "AWAITING_REVIEW" and st.verdicts[3]["verdict"] == "VERIFIED"
    assert (st.handoffs[3]["asked_by"], st.handoffs[3]["from_message"]) == (r.operator.sender, asked)
    accept = r.asked("accept", case.case_id)
    assert accept != first_accept and st.candidates[3][:12] in accept
    r.say(r.operator, first_accept)  # typed for the review of attempt 2: decides nothing now
    r.run()
    assert r.workflow.case(case.case_id).state == "AWAITING_REVIEW"
    r.say(r.operator, accept)
    r.run()
    done = r.workflow.case(case.case_id)
    assert done.state == "ACCEPTED"
    [accepted] = [e for e in r.workflow.ledger.read(case_key(case.case_id)) if e.type == "repair.accepted"]
    assert accepted.payload["candidate"] == st.candidates[3]
