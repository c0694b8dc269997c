"""The notes workflow on the aggregate contract: every notes event type has a class and a fold
handler, events written by old code (491180a) read through the classes unchanged and fold to the
state the old code computed, and the pure decision needs no ledger and no files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from signoff.kernel.errors import ConflictError, RefusedError, UsageError
from signoff.kernel.shown import short
from signoff.ledger import Event, SqlLedger
from signoff.ledger.aggregate import NOTHING, case_type_of, read_event
from signoff.notes.decisions import Decide, bound, decide, needs_checking, parse, shown_of
from signoff.notes.model import (
    FOLDS,
    NOTES_HANDOFFS,
    NOTES_ROOM,
    NOTES_RUN,
    Decided,
    Handoffs,
    RoomLog,
    RoomRef,
    State,
    apply_decision,
    handoffs_fold,
    room_fold,
    run_fold,
)
from signoff.notes.run import case_of
from signoff.rooms.domain.receipts import Receipt
from tests.support.paths import DATA

OLD = DATA / "old-ledgers"
EXPECTED = json.loads((Path(__file__).parent / "old_ledger_states.json").read_text())


def test_every_notes_event_type_has_a_fold_handler() -> None:
    assert [f.missing() for f in FOLDS] == [[], [], []]
    assert sorted(NOTES_RUN.events) == ["notes.decided"]
    assert sorted(NOTES_ROOM.events) == ["notes.room_cursor", "notes.room_handled"]
    assert sorted(NOTES_HANDOFFS.events) == ["notes.handed_off", "notes.handing_off"]


def _sentences(folder: Path) -> list[dict[str, object]]:
    # The run folders kept hold review.json, whose last round is the draft the decisions bind to.
    review = json.loads((folder / "review.json").read_text())
    return [{"id": s["id"], "text": s["text"], "facts": s["facts"]} for s in review["sentences"]]


@pytest.fixture
def old_ledger(tmp_path: Path) -> SqlLedger:
    shutil.copy(OLD / "main.db", tmp_path / "main.db")  # opening migrates it in place
    return SqlLedger.from_url(f"sqlite:///{tmp_path / 'main.db'}")


def test_every_notes_event_491180a_wrote_reads_through_its_class(old_ledger: SqlLedger) -> None:
    cases = old_ledger.case_ids("notes.")
    assert len(cases) == 2  # the demo's run, and run2 with approve, reject, edit and an unverified approve all
    for case in cases:
        assert case_type_of(case) is NOTES_RUN
        for ev in old_ledger.read(case):
            body = read_event(ev)
            assert isinstance(body, Decided)
            assert body.payload() == ev.payload  # read as written: nothing dropped, nothing added


@pytest.mark.parametrize("name", ["run", "run2"])
def test_old_ledgers_fold_to_the_state_the_old_code_computed(old_ledger: SqlLedger, name: str) -> None:
    """old_ledger_states.json is the output of 491180a's `replay` over the same events."""
    folder = OLD / "notes-runs" / name
    state = run_fold.over(State.of(_sentences(folder)), old_ledger.read(case_of(folder)))
    assert state.as_json() == EXPECTED[name]


def test_the_old_export_reads_through_the_class_too() -> None:
    from signoff.notes.checks import read_decisions

    folder = OLD / "notes-runs" / "run"
    state = State.of(_sentences(folder))
    for rec in read_decisions(folder):
        apply_decision(state, rec)
    assert state.as_json() == EXPECTED["run"]


def _event(case: str, type_: str, payload: dict[str, object], version: int = 1) -> Event:
    return Event(seq=version, case_id=case, version=version, type=type_, payload=payload,
                 recorded_at="2026-12-05T07:00:00Z", prev_hash="", hash="")


def test_room_and_handoff_events_as_old_code_wrote_them_read_and_fold() -> None:
    """The shapes of notes/room.py and notes/crew.py at 491180a (no old ledger holds them)."""
    room = "notes.room.abc"
    log = room_fold.over(RoomLog("abc"), [
        _event(room, "notes.room_cursor", {"room_id": "r1", "agent": "agent:notes", "cursor": 7}, 1),
        _event(room, "notes.room_handled", {"message_id": "m1"}, 2),
        _event(room, "notes.room_handled", {"message_id": "m2", "sender": "@notes:hs"}, 3),
    ])
    assert log.cursor is not None and (log.cursor.room_id, log.cursor.cursor) == ("r1", 7)
    assert log.handled == {"m1", "m2"} and log.own == {"@notes:hs"}
    receipt = Receipt(message_id="m3", room_id="r1", sender="agent:scout", body="@writer draft run", sequence=4,
                      target_statuses={"agent:writer": "delivered"}).to_dict()
    case = "notes.handoffs.run-1"
    announced = {"key": "draft:run-1:", "from": "notes-scout", "to": "notes-writer", "text": "draft run",
                 "source": None}
    events = [_event(case, "notes.handing_off", announced, 1),
              _event(case, "notes.handed_off", {"key": "draft:run-1:", "receipt": receipt}, 2)]
    for ev in events:
        assert read_event(ev).payload() == ev.payload
    folded = handoffs_fold.over(Handoffs("run-1"), events)
    assert list(folded.by_key.values()) == [{**announced, "receipt": receipt}]


# -- the pure decision: no ledger, no files --------------------------------------------------------

SENTENCES = [{"id": "S1", "text": "Two commits.", "facts": ["F1"]},
             {"id": "S2", "text": "Nine files.", "facts": ["F2"]}]
AT = "2026-12-06T08:00:00Z"


def _decide(state: State, command: str, by: str = "alice", errors: dict[str, list[dict[str, object]]] | None = None,
            ref: RoomRef | None = None) -> Decided | None:
    cmd = parse(command, [s.id for s in state.sentences])
    checked = {(s.id, s.text): (errors or {}).get(s.id, []) for s in needs_checking(state, cmd)}
    decision = decide(state, Decide(cmd, by, AT, "cli", checked, ref))
    if decision is NOTHING:
        return None
    (event,) = decision.events
    assert isinstance(event, Decided)
    apply_decision(state, event)
    return event


def test_a_decision_records_the_approval_of_what_was_shown() -> None:
    state = State.of(SENTENCES)
    ev = _decide(state, bound("approve S1", state))
    assert ev is not None and ev.approval is not None
    assert (ev.approval.by, ev.approval.via, ev.approval.meaning) == ("alice", "cli", "approve")
    assert ev.approval.digest == shown_of(State.of(SENTENCES), "approve", "S1")
    assert state.get("S1").status == "approved"
    ev = _decide(state, bound("reject S2", state))
    assert ev is not None and ev.approval is not None and ev.approval.meaning == "refuse"


def test_no_decision_without_the_digest_of_what_was_shown() -> None:
    state = State.of(SENTENCES)
    for command in ("approve S1", "approve all", "reject S2", "edit S1 One commit.", "ship"):
        with pytest.raises(UsageError, match="does not say which"):
            _decide(state, command)
    assert state.count == 0


def test_a_digest_of_other_text_is_refused() -> None:
    state = State.of(SENTENCES)
    seen = short(shown_of(state, "approve", "S1"))
    _decide(state, bound("edit S1 Three commits.", state), by="bob")
    with pytest.raises(ConflictError, match="changed since it was shown"):
        _decide(state, f"approve S1 #{seen}")
    assert state.get("S1").status == "pending"


def test_the_verifier_results_come_in_and_block_approval() -> None:
    state = State.of(SENTENCES)
    bad = {"S2": [{"code": "NUMBER_WORD_UNSUPPORTED", "token": "Nine"}]}
    ev = _decide(state, bound("approve all", state), errors=bad)
    assert ev is not None and ev.unverified == {"S2": "does not verify: NUMBER_WORD_UNSUPPORTED 'Nine'"}
    with pytest.raises(RefusedError, match="cannot approve: S2 does not verify"):
        _decide(state, bound("approve S2", state), errors=bad)
    with pytest.raises(RefusedError, match="cannot ship: S2: not approved; NUMBER_WORD_UNSUPPORTED 'Nine'"):
        _decide(state, bound("ship", state), errors=bad)


def test_results_for_other_text_than_the_state_holds_are_not_used() -> None:
    state = State.of(SENTENCES)
    cmd = parse(bound("approve S1", state), ["S1", "S2"])
    with pytest.raises(ConflictError, match="changed while the decision was made"):
        decide(state, Decide(cmd, "alice", AT, "cli", {("S1", "an older text"): []}))


def test_a_room_message_is_decided_once() -> None:
    state = State.of(SENTENCES)
    ref = RoomRef(room_id="r1", message_id="m1", sender="user:alice")
    assert _decide(state, bound("approve S1", state), ref=ref) is not None
    assert _decide(state, bound("approve S2", state), ref=ref) is None


def test_nothing_is_decided_after_ship() -> None:
    state = State.of(SENTENCES)
    _decide(state, bound("approve all", state))
    _decide(state, bound("ship", state))
    assert state.shipped
    with pytest.raises(RefusedError, match="has shipped"):
        _decide(state, bound("reject S1", state))


def test_who_decides_is_read_from_notes_and_its_former_web_name(tmp_path: Path) -> None:
    from signoff.kernel.settings import Settings
    from signoff.notes.service import deciders_of

    def load(text: str) -> Settings:
        (tmp_path / "signoff.toml").write_text(text)
        return Settings.load(home=tmp_path / "home", env={"SIGNOFF_CONFIG": str(tmp_path / "signoff.toml")})

    assert deciders_of(load("")) == ()
    assert deciders_of(load('[notes]\ndeciders = ["alice"]\n[web]\nnotes_deciders = ["bob", "alice"]\n')) == \
        ("alice", "bob")
    for bad in ('[notes]\ndeciders = "alice"\n', '[notes]\ndeciders = ["", "bob"]\n', '[web]\nnotes_deciders = [1]\n'):
        with pytest.raises(UsageError, match="must be a list of person names"):
            deciders_of(load(bad))
