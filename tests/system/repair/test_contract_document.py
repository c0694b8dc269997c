"""The case room's contract document names the repository (as people know it, never with the
credentials of its remote) and the base revision, and once the contract is approved, the approver
and the approval message. No sandbox: only the verifier's messages and the document job run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from signoff import git
from signoff.demo.fixture import build, examples_root
from signoff.demo.repair_room import coupon_contract, open_repair_room
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.repair import RepairService

HARNESS = examples_root() / "coupon" / "harness"
SECRET = "ghp_not-for-the-room"


def test_the_contract_document_names_the_repository_then_the_approval(tmp_path: Path) -> None:
    settings = Settings.load(home=tmp_path / ".signoff", db_url=f"sqlite:///{tmp_path / 'ledger.db'}", env={})
    repo = build(examples_root() / "coupon", tmp_path / "coupon")
    git.run(repo.path, "remote", "add", "origin", f"https://alice:{SECRET}@github.com/example/shop.git?t={SECRET}")
    r = open_repair_room(SqlLedger.open(settings), settings, coupon_contract(repo.path, HARNESS))
    r.say(r.operator, f"@{r.verifier.name} A 10% coupon is applied twice.")
    r.run()
    (case,) = r.workflow.cases()
    assert case.contract.repository == "https://github.com/example/shop.git"
    # What the operator approves names the repository too.
    elsewhere = replace(case, contract=replace(case.contract, repository="https://example.org/other.git"))
    assert RepairService.contract_shown(case) != RepairService.contract_shown(elsewhere)

    def document() -> dict[str, object]:
        (doc,) = [d for d in r.rooms.documents(r.operator, r.room_id) if d["name"] == f"contract {case.case_id}"]
        (loaded,) = r.rooms.load_documents(r.operator, [str(doc["id"])])
        return loaded

    # The room carries a reference to the repository at the case's base commit, attached once.
    (ref,) = r.rooms.list_references(r.operator, r.room_id)["references"]
    assert ref["type"] == "github" and SECRET not in str(ref)
    assert ref["value"]["urls"] == ["https://github.com/example/shop", f"https://github.com/example/shop/commit/{case.base}"]
    assert r.workflow.jobs.attach_repository(case)
    assert len(r.rooms.list_references(r.operator, r.room_id)["references"]) == 1

    before = str(document()["content"])
    assert "- repository: https://github.com/example/shop.git" in before
    assert f"- base revision: {case.base}" in before and SECRET not in before and "## Approved" not in before

    approved = r.say(r.operator, r.asked("approve", case.case_id))
    for env in r.workflow.rooms.events():  # the verifier reads the approval (its jobs are run below, one)
        r.workflow.on_message(env)
    st = r.workflow.case(case.case_id)
    assert st.state == "APPROVED"
    job = {"case_id": case.case_id}
    r.workflow.run_job("repair.contract_approved", f"{case.case_id}:contract-approved", job)
    after = document()
    content = str(after["content"])
    assert content.startswith(before.rsplit("\nApprove exactly this", 1)[0])
    assert f"- approved by: {r.operator.name} (sender id {r.operator.sender})" in content
    assert f"- approval message: {approved}" in content
    assert f"- harness digest approved: {case.harness_digest}" in content
    assert f"- digest of the contract as shown: {RepairService.contract_shown(case)}" in content
    # Delivered again (a lapsed lease): the document is already so, and is not written again.
    r.workflow.run_job("repair.contract_approved", f"{case.case_id}:contract-approved", job)
    assert document()["version"] == after["version"]

