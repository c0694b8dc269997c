"""The room workflow on the real room service, ledger, agents layer and sandbox."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff.demo.fixture import FixtureRepo, examples_root
from signoff.demo.repair_room import RepairRoom, coupon_contract, embedded_agents, open_repair_room
from signoff.kernel.clock import FixedClock
from signoff.kernel.settings import Settings
from signoff.kernel.shown import short
from signoff.ledger import SqlLedger
from signoff.repair import RepairService, decisions
from signoff.repair.case import record
from signoff.repair.jobs import RepairJobs
from signoff.repair.model import Verdict
from signoff.rooms import RoomService
from signoff.trust import KeyStore, verify_file
from tests.support.requires import require_sandbox

HARNESS = examples_root() / "coupon" / "harness"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    require_sandbox()
    yield tmp_path_factory.mktemp("workflow-home") / ".signoff"


@pytest.fixture
def settings(home: Path, tmp_path: Path) -> Settings:
    # A fresh database per test, one shared home (keys, harness store, cached environment).
    return Settings.load(home=home, db_url=f"sqlite:///{tmp_path / 'ledger.db'}", env={})


def _room(settings: Settings, repo: FixtureRepo, harness: Path = HARNESS, clock: FixedClock | None = None,
          **contract: object) -> RepairRoom:
    c = coupon_contract(repo.path, harness)
    if contract:
        from dataclasses import replace

        c = replace(c, **contract)  # type: ignore[arg-type]
    return open_repair_room(SqlLedger.from_url(settings.db_url, clock=clock), settings, c)


def _report(r: RepairRoom) -> str:
    r.say(r.operator, f"@{r.verifier.name} A 10% coupon is applied twice: 10000 cents gives 8100, not 9000.")
    r.run()
    (case,) = r.workflow.cases()
    assert case.state == "CONTRACT_PROPOSED"
    return case.case_id


def _bodies(r: RepairRoom, room_id: str | None = None) -> list[str]:
    return [m["body"] for m in r.rooms.read_messages(r.operator, room_id or r.room_id, limit=1000)]


@pytest.fixture
def any_db_settings(home: Path, db_url: str) -> Settings:
    """The same home, on SQLite and on a real PostgreSQL server."""
    return Settings.load(home=home, db_url=db_url, env={})


def test_full_flow_to_accepted_with_refusals(any_db_settings: Settings, coupon: FixtureRepo) -> None:
    settings = any_db_settings
    r = _room(settings, coupon)
    case_id = _report(r)
    v = r.verifier.name
    docs = r.rooms.documents(r.operator, r.room_id)
    assert [d["name"] for d in docs] == [f"contract {case_id}"]

    approve = r.asked("approve", case_id)  # the command the verifier printed with the contract
    # Another user, another room and a quoted command: each refused, said in the room, nothing approved.
    r.say(r.bystander, approve)
    r.say(r.operator, approve, r.other_room_id)
    r.say(r.operator, f"> {approve}\nlooks right to me")
    # No digest: not recorded, told what it would approve and the exact command. A digest of other
    # content: refused, it changed since it was shown.
    r.say(r.operator, f"@{v} approve {case_id}")
    r.say(r.operator, f"@{v} approve {case_id} #{'0' * 12}")
    r.run()
    st = r.workflow.case(case_id)
    assert st.state == "CONTRACT_PROPOSED" and st.approval is None
    said = _bodies(r)
    assert any("only the linked operator" in b for b in said)
    assert any("only the exact command" in b for b in said)
    assert any("only in its case room" in b for b in _bodies(r, r.other_room_id))
    assert any(b.startswith("approve not recorded: it names no digest") and f"`{approve}`" in b
               and f"document 'contract {case_id}'" in b for b in said)
    assert any("changed since it was shown (shown 000000000000" in b for b in said)
    # The command the verifier printed names the digest of the contract it presented.
    assert approve == f"@{v} approve {case_id} #{short(RepairService.contract_shown(st))}"

    approved = r.say(r.operator, approve)
    r.run()
    st = r.workflow.case(case_id)
    assert st.state == "AWAITING_REVIEW"
    # Each hand-off records who asked for it and from which message; the retry, why.
    first, retry = st.handoffs[1], st.handoffs[2]
    assert (first["asked_by"], first["from_message"], first["reason"]) == (r.operator.sender, approved, "approved")
    assert (retry["asked_by"], retry["from_message"]) == (r.verifier.sender, first["receipt"]["message_id"])
    assert retry["reason"].startswith("attempt 1 refused:") and "tests/test_cart.py" in retry["reason"]
    assert st.history == ["REPORTED", "CONTRACT_PROPOSED", "APPROVED", "REPRODUCED", "FIX_REQUESTED",
                          "FIX_REQUESTED", "CANDIDATE", "VERIFIED", "AWAITING_REVIEW"]
    # Attempt 1 was the test edit to expect 8100: refused by the agents layer, never applied.
    assert "tests/test_cart.py" in st.failures[1]
    assert st.verdicts[2]["verdict"] == "VERIFIED"
    assert "-    return discounted" in st.verdicts[2]["diff"]
    assert verify_file(Path(st.verdicts[2]["evidence"]), KeyStore(settings.keys_dir).trusted()).ok

    candidate = st.verdicts[2]["candidate"]
    accept = r.asked("accept", case_id)
    shown = f"#{short(RepairService.review_shown(st))}"
    assert accept == f"@{v} accept {case_id} {candidate[:12]} {shown}"
    r.say(r.bystander, accept)
    r.say(r.operator, f"@{v} accept {case_id} {shown}")  # names no candidate: told which to review
    r.say(r.operator, f"@{v} accept {case_id} {st.base[:12]} {shown}")  # names a commit not under review
    r.say(r.operator, f"@{v} accept {case_id} {candidate[:12]}")  # names no digest: not recorded
    r.run()
    assert r.workflow.case(case_id).state == "AWAITING_REVIEW"
    said = [m["body"] for m in r.rooms.read_messages(r.operator, r.room_id, limit=1000)
            if m["sender"] == r.verifier.sender]
    assert any(f"`{accept}`" in b and "names the candidate" in b for b in said)
    assert any("is not the one under review" in b for b in said)
    assert any(b.startswith("accept not recorded") and f"`{accept}`" in b for b in said)

    # The verifier presents the review again after a change (a re-verification of the same commit):
    # the command the person typed for the first presentation accepts nothing, though it names the
    # right commit; the second presentation is decided only by its own digest.
    again = Verdict(**{**st.verdicts[2], "attempt": 3, "fingerprint": "e" * 64})
    record(r.workflow.ledger, case_id, decisions.Measure(again, 2), "test:verified-again")
    r.workflow.run_job("repair.review", "test:review-again", {"case_id": case_id})
    second = r.asked("accept", case_id)
    assert second != accept and second.startswith(f"@{v} accept {case_id} {candidate[:12]} #")
    r.say(r.operator, accept)
    r.run()
    st = r.workflow.case(case_id)
    assert st.state == "AWAITING_REVIEW"
    assert any("the review of" in b and "changed since it was shown" in b and f"`{second}`" in b
               for b in _bodies(r))
    r.say(r.operator, second)
    r.run()
    st = r.workflow.case(case_id)
    assert st.state == "ACCEPTED"
    accepted = next(e for e in r.workflow.service.history(case_id) if e.type == "repair.accepted")
    assert accepted.payload["approval"]["digest"] == RepairService.review_shown(st)
    assert accepted.payload["approval"]["digest"].startswith(second.rsplit("#", 1)[1])


def test_harness_changed_after_presentation_refuses_approval(settings: Settings, coupon: FixtureRepo,
                                                               tmp_path: Path) -> None:
    import shutil

    harness = tmp_path / "harness"
    shutil.copytree(HARNESS, harness)
    r = _room(settings, coupon, harness=harness)
    case_id = _report(r)
    (harness / "test_coupon.py").write_text((harness / "test_coupon.py").read_text().replace("9000", "8100"))
    r.say(r.operator, r.asked("approve", case_id))
    r.run()
    assert r.workflow.case(case_id).state == "CONTRACT_PROPOSED"
    assert any("the harness changed since it was presented" in b for b in _bodies(r))


def test_base_that_does_not_reproduce_blocks_the_repair(settings: Settings, coupon: FixtureRepo) -> None:
    r = _room(settings, coupon, expect="test_coupon.py::test_zero_coupon_keeps_total")
    case_id = _report(r)
    r.say(r.operator, r.asked("approve", case_id))
    r.run()
    st = r.workflow.case(case_id)
    assert st.state == "BLOCKED"
    assert st.handoffs == {}  # no fix was ever requested
    assert any("blocked" in b and "base: it passed" in b and "candidate" not in b for b in _bodies(r))


def test_fixer_ignores_a_copied_hand_off(settings: Settings, coupon: FixtureRepo) -> None:
    r = _room(settings, coupon)
    case_id = _report(r)
    # Stop before the fixer acts: run only the verifier's side.
    r.say(r.operator, r.asked("approve", case_id))
    for _ in range(20):
        r.workflow.poll()
    handoff = r.workflow.case(case_id).handoffs[1]
    # Another agent of the same owner may address the fixer, and pastes the exact hand-off text.
    copycat, _ = r.rooms.create_agent(r.rooms.user(r.verifier.owner_user_id), f"copycat-{r.verifier.name[-6:]}")
    r.rooms.add_member(r.rooms.user(r.verifier.owner_user_id), r.room_id, agent_name=copycat.name)
    text = handoff["receipt"]["body"].split(" ", 1)[1]
    r.rooms.post_message(copycat, r.room_id, text, target_names=[r.fixer_agent.name])
    seen = [json.loads(e["payload"]["body"].split(" ", 1)[1].rsplit(" [ref ", 1)[0])["command_id"]
            for e in r.rooms.agent_events(r.fixer_agent.id, 0)
            if e["type"] == "message" and e["payload"]["addressed"] and "propose_fix" in e["payload"]["body"]]
    assert seen.count(handoff["command_id"]) == 2  # the genuine hand-off and the copy
    r.run()
    refusals = r.workflow.ledger.read(f"repair.fixer.{r.fixer_agent.id}")
    assert [e.type for e in refusals] == ["repair.handoff_refused"]
    st = r.workflow.case(case_id)
    assert sorted(st.failures) == [1] and sorted(st.proposals) == [2]  # each attempt acted on once


class _Crash(BaseException):
    """A process dying mid-step (not an error the loop handles)."""


@pytest.mark.parametrize("point", ["after_handoff_post", "before_verify_ack"])
def test_crash_and_resume_repeats_no_effect(settings: Settings, coupon: FixtureRepo, point: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FixedClock()
    r = _room(settings, coupon, clock=clock)
    case_id = _report(r)
    r.say(r.operator, r.asked("approve", case_id))

    if point == "after_handoff_post":
        original = RepairJobs.post

        def crashing_post(self: RepairJobs, room_id: str, text: str, marker: str, targets: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
            receipt = original(self, room_id, text, marker, targets)
            if targets:
                raise _Crash()
            return receipt

        monkeypatch.setattr(RepairJobs, "post", crashing_post)
    else:
        from signoff.ledger import Outbox

        original_ack = Outbox.ack

        def crashing_ack(self: Outbox, job):  # type: ignore[no-untyped-def]
            if job.topic == "repair.verify":
                raise _Crash()
            return original_ack(self, job)

        monkeypatch.setattr(Outbox, "ack", crashing_ack)
    with pytest.raises(_Crash):
        r.run()
    monkeypatch.undo()

    # A new process: new ledger connection, new workflow and fixer, cursors from zero; leases have expired.
    later = FixedClock(clock.now() + 3600)
    ledger = SqlLedger.from_url(settings.db_url, clock=later)
    rooms = RoomService(ledger)
    workflow, fixer = embedded_agents(ledger, rooms, settings, r.verifier, r.fixer_agent)
    for _ in range(50):
        if workflow.poll() + fixer.poll() == 0:
            break
    st = workflow.case(case_id)
    assert st.state == "AWAITING_REVIEW"
    bodies = [m["body"] for m in rooms.read_messages(r.operator, r.room_id, limit=1000)]
    handoffs = [b for b in bodies if '"action": "propose_fix"' in b]
    assert len(handoffs) == 2  # one per attempt, none repeated
    assert len([b for b in bodies if "VERIFIED for candidate" in b]) == 1
    assert len([b for b in bodies if f"{case_id} approved" in b]) == 1
    assert len(st.verdicts) == 1


def test_harness_edited_after_approval_changes_nothing(settings: Settings, coupon: FixtureRepo,
                                                       tmp_path: Path) -> None:
    import shutil

    harness = tmp_path / "harness"
    shutil.copytree(HARNESS, harness)
    r = _room(settings, coupon, harness=harness)
    case_id = _report(r)
    r.say(r.operator, r.asked("approve", case_id))
    r.workflow.poll(max_steps=3)  # approval recorded; nothing verified yet
    # Someone weakens the harness folder after approval: the frozen, approved copy is what runs.
    (harness / "test_coupon.py").write_text("def test_coupon_applies_once():\n    pass\n")
    r.run()
    st = r.workflow.case(case_id)
    assert st.state == "AWAITING_REVIEW" and st.verdicts[2]["verdict"] == "VERIFIED"
    assert st.reproduction is not None and "must leave 9000" in st.reproduction["message"]


def test_hand_off_received_over_the_agent_protocol_matches_the_receipt(settings: Settings,
                                                                        coupon: FixtureRepo) -> None:
    """The fixer as a protocol client (the Switch-compatible stream): the event it is delivered
    matches the verifier's recorded receipt, so it acts on it exactly once."""
    import asyncio

    from signoff.rooms.client import InProcessTransport, RoomsClient

    r = _room(settings, coupon)
    case_id = _report(r)

    async def fixer_side() -> dict:  # type: ignore[type-arg]
        async with RoomsClient(InProcessTransport(r.rooms, agent=r.fixer_agent)) as client:
            await client.connect_to_room(r.room_id)
            r.say(r.operator, r.asked("approve", case_id))
            for _ in range(20):
                r.workflow.poll()  # the verifier's side only: it reproduces, then hands off
            return await client.next_event(
                lambda e: e["type"] == "message" and "propose_fix" in e["payload"]["body"], timeout=60)

    event = asyncio.run(fixer_side())
    assert event["payload"]["addressed"] is True
    r.fixer.on_message(event)
    r.fixer.on_message(event)  # a redelivery changes nothing
    r.run()
    st = r.workflow.case(case_id)
    assert st.state == "AWAITING_REVIEW"
    assert r.workflow.ledger.read(f"repair.fixer.{r.fixer_agent.id}") == []  # nothing refused


def test_an_operator_bound_by_sender_id_is_named_from_the_watch(settings: Settings, coupon: FixtureRepo) -> None:
    """On an external server the operator is a configured identity (an opaque sender id and a
    name), not a principal of ours: commands count by that id, replies name the configured name."""
    from signoff.rooms.client import Person

    r = _room(settings, coupon)
    room = r.rooms.create_room(r.rooms.user(str(r.verifier.owner_user_id)), "bound operator",
                               agent_names=[r.verifier.name, r.fixer_agent.name],
                               user_names=[r.operator.name, r.bystander.name])
    r.workflow.watch(room.id, r.contract, Person("ops-lead", "user", r.operator.sender))
    r.say(r.operator, f"@{r.verifier.name} the coupon is applied twice.", room.id)
    r.run()
    [case] = [c for c in r.workflow.cases() if c.room_id == room.id]
    assert (case.operator, case.operator_name) == (r.operator.sender, "ops-lead")
    assert any(b.startswith("@ops-lead contract for") for b in _bodies(r, room.id))
    r.say(r.bystander, r.asked("approve", case.case_id, room.id), room.id)
    r.run()
    assert r.workflow.case(case.case_id).state == "CONTRACT_PROPOSED"
    assert any("only the linked operator" in b for b in _bodies(r, room.id))


def test_a_fixer_that_sees_its_hand_off_before_the_verifier_recorded_it_waits_for_the_record(
        settings: Settings, coupon: FixtureRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """As separate processes the fixer can be handed the message between the server's answer to
    the verifier and the verifier's record of that receipt: it waits for the record, then acts."""
    import threading

    from signoff.demo.repair_room import agent_rooms
    from signoff.repair.fixer import FixerWorker

    r = _room(settings, coupon)
    case_id = _report(r)
    r.say(r.operator, r.asked("approve", case_id))
    fixer = FixerWorker(r.workflow.ledger, agent_rooms(r.rooms, r.fixer_agent), settings, 2, receipt_wait=60)
    waiting = threading.Event()
    original_wait = FixerWorker._await_receipt

    def noting_wait(self: FixerWorker, st, attempt):  # type: ignore[no-untyped-def]
        waiting.set()  # it read the case, and the receipt was not there
        return original_wait(self, st, attempt)

    monkeypatch.setattr(FixerWorker, "_await_receipt", noting_wait)
    delivered: list[threading.Thread] = []
    original_post = RepairJobs.post

    def post_then_deliver(self: RepairJobs, room_id: str, text: str, marker: str, targets: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
        receipt = original_post(self, room_id, text, marker, targets)
        if targets and not delivered:  # the first hand-off: the fixer sees it before it is recorded
            [env] = [e for e in r.rooms.agent_events(r.fixer_agent.id, 0)
                     if (e.get("payload") or {}).get("message_id") == receipt.message_id]
            delivered.append(threading.Thread(target=fixer.on_message, args=(env,)))
            delivered[0].start()
            assert waiting.wait(60)
        return receipt

    monkeypatch.setattr(RepairJobs, "post", post_then_deliver)
    for _ in range(20):
        r.workflow.poll()
        if 1 in r.workflow.case(case_id).handoffs:
            break
    delivered[0].join(120)
    st = r.workflow.case(case_id)
    assert r.workflow.ledger.read(f"repair.fixer.{r.fixer_agent.id}") == []  # not refused
    assert 1 in st.failures or 1 in st.proposals  # acted on


def test_the_verifier_does_not_answer_the_servers_offline_notice(settings: Settings, coupon: FixtureRepo) -> None:
    """Switch answers a message for an agent that is not connected with "I'm currently offline",
    @-mentioning the sender: addressed to the verifier, but the server's own notice, not a report."""
    r = _room(settings, coupon)
    case_id = _report(r)
    before = _bodies(r)
    notice = r.say(r.fixer_agent, f"@{r.verifier.name} I'm currently offline \u2014 my connector isn't reporting in")
    assert [e["payload"]["addressed"] for e in r.rooms.agent_events(r.verifier.id, 0)
            if e["type"] == "message" and e["payload"]["message_id"] == notice] == [True]
    r.run()
    assert _bodies(r)[len(before) + 1:] == []  # nothing said back
    assert r.workflow.case(case_id).state == "CONTRACT_PROPOSED"
    # A person's second report in the same room is answered: the case that is open.
    r.say(r.operator, f"@{r.verifier.name} the coupon is also applied on refunds")
    r.run()
    assert any(b == f"{case_id} is open (CONTRACT_PROPOSED)." or b.startswith(f"{case_id} is open")
               for b in _bodies(r)[len(before) + 2:])


def _stuck_on_the_fixer(r: RepairRoom) -> str:
    """A case whose hand-off the fixer never acted on (the verifier's side only ran)."""
    case_id = _report(r)
    r.say(r.operator, r.asked("approve", case_id))
    for _ in range(20):
        r.workflow.poll()
    assert r.workflow.case(case_id).state == "FIX_REQUESTED"
    return case_id


def test_a_case_stuck_on_a_lost_hand_off_is_resumed_by_its_operator_only(settings: Settings,
                                                                          coupon: FixtureRepo) -> None:
    from signoff.kernel.errors import RefusedError
    from signoff.repair import Move

    r = _room(settings, coupon)
    case_id = _stuck_on_the_fixer(r)
    first = r.workflow.case(case_id).handoffs[1]["receipt"]["message_id"]
    ledger = r.workflow.ledger
    with pytest.raises(RefusedError, match="only the linked operator"):
        r.workflow.service.move(case_id, Move("resume", r.bystander.sender, r.bystander.name, "", "cli",
                                              "by-bystander"))
    assert r.workflow.case(case_id).resumed == 0
    st = r.workflow.service.move(case_id, Move("resume", r.operator.sender, r.operator.name, "the core restarted",
                                               "cli", "k1"))
    assert st.resumed == 1 and 1 not in st.handoffs
    [event] = [e for e in ledger.read(f"repair.case.{case_id}") if e.type == "repair.resumed"]
    assert event.payload["by"] == r.operator.sender and event.payload["reason"] == "the core restarted"
    for _ in range(20):
        r.workflow.poll()  # the verifier hands attempt 1 over again: a new message, a new receipt
    again = r.workflow.case(case_id)
    assert again.state == "FIX_REQUESTED" and again.handoffs[1]["receipt"]["message_id"] != first
    r.run()  # the fixer sees both: the first no longer matches the recorded receipt, the second is acted on
    st = r.workflow.case(case_id)
    assert st.state == "AWAITING_REVIEW"
    assert len([a for a in (1, 2) if a in st.proposals or a in st.failures]) == 2  # each attempt acted on once
    assert [e.type for e in ledger.read(f"repair.fixer.{r.fixer_agent.id}")] == ["repair.handoff_refused"]


def test_the_operator_abandons_a_stuck_case_in_the_room_and_the_room_opens_another(settings: Settings,
                                                                                   coupon: FixtureRepo) -> None:
    r = _room(settings, coupon)
    case_id = _stuck_on_the_fixer(r)
    v = r.verifier.name
    r.say(r.bystander, f"@{v} abandon {case_id} not wanted")
    r.say(r.operator, f"@{v} abandon {case_id}")  # no reason
    for _ in range(5):
        r.workflow.poll()
    assert r.workflow.case(case_id).state == "FIX_REQUESTED"
    bodies = _bodies(r)
    assert any(f"only the linked operator can abandon {case_id}" in b for b in bodies)
    assert any(f"say why {case_id} is abandoned" in b for b in bodies)
    r.say(r.operator, f"@{v} abandon {case_id} the fixer's hand-off was lost in a restart")
    r.run()
    st = r.workflow.case(case_id)
    assert st.state == "ABANDONED" and not st.proposals and not st.failures  # the fixer's late work records nothing
    [event] = [e for e in r.workflow.ledger.read(f"repair.case.{case_id}") if e.type == "repair.abandoned"]
    assert event.payload["by"] == r.operator.sender and event.payload["via"] == "room"
    assert any(b.startswith(f"{case_id} abandoned by") for b in _bodies(r))
    r.say(r.operator, f"@{v} the coupon is also applied on refunds")
    r.run()
    assert [c.state for c in r.workflow.cases()] == ["ABANDONED", "CONTRACT_PROPOSED"]
