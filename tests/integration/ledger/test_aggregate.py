"""The aggregate contract: case ids, typed versioned events, fold by dispatch, pure decisions run
against a ledger."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from signoff.kernel.errors import RefusedError, UsageError
from signoff.ledger import Ledger, MemoryLedger, NewEvent, NewJob, SqlLedger
from signoff.ledger.aggregate import (
    NOTHING,
    Cases,
    Decision,
    EventBody,
    Fold,
    Stamp,
    UnreadableEventError,
    case_type,
    case_type_of,
    read_event,
)
from signoff.ledger.store import Event

TALLY = case_type("test.tally", "test-tally/")


def _to_v2(payload: dict[str, object]) -> dict[str, object]:
    # v1 recorded a count as text ("3"); v2 records an int and who counted
    return {"by": "unknown", "count": int(str(payload["count"]))}


class Opened(EventBody, type="tally.opened", case=TALLY):
    title: str


class Counted(EventBody, type="tally.counted", case=TALLY, version=2, upcasts={1: _to_v2}):
    count: int
    by: str


class Closed(EventBody, type="tally.closed", case=TALLY):
    reason: str | None = None


@dataclass
class Tally:
    key: str
    title: str = ""
    total: int = 0
    closed: bool = False
    log: list[str] = field(default_factory=list)


fold = Fold[Tally](TALLY)


@fold.every
def _log(tally: Tally, ev: EventBody, at: Stamp) -> None:
    tally.log.append(f"{at.version}:{ev.TYPE}")


@fold.on(Opened)
def _opened(tally: Tally, ev: Opened, at: Stamp) -> None:
    tally.title = ev.title


@fold.on(Counted)
def _counted(tally: Tally, ev: Counted, at: Stamp) -> None:
    tally.total += ev.count


def count(tally: Tally, n: int, by: str) -> Decision:
    """A pure decision: no I/O, only the state and the command."""
    if tally.closed:
        raise RefusedError("the tally is closed", "open another")
    if n == 0:
        return NOTHING
    return Decision.of(Counted(count=n, by=by),
                       jobs=[NewJob(f"tally:{tally.key}:{len(tally.log)}", "tally.report", {"n": n})])


def _stored(type_: str, payload: dict[str, object], version: int = 1) -> Event:
    return Event(version, "test-tally/t1", version, type_, payload, "2026-01-01T00:00:00Z", "0" * 64, "0" * 64)


def test_case_ids_name_one_case_type() -> None:
    assert TALLY.case_id("t-1") == "test-tally/t-1" and TALLY.key_of("test-tally/t-1") == "t-1"
    assert case_type_of("test-tally/x") is TALLY and case_type_of("elsewhere/x") is None
    for bad in ("", "../x", "a b", "x" * 200, "-x"):
        with pytest.raises(UsageError):
            TALLY.case_id(bad)
    with pytest.raises(ValueError, match="overlaps"):
        case_type("test.tally2", "test-tally/more/")
    with pytest.raises(ValueError, match="overlaps"):
        case_type("test.tally3", "test-")


def test_event_types_are_registered_once_and_versions_need_upcasts() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        class Again(EventBody, type="tally.opened", case=TALLY):
            title: str
    with pytest.raises(ValueError, match="no upcast"):
        class Jumps(EventBody, type="tally.jumped", case=TALLY, version=3, upcasts={1: _to_v2}):
            count: int


def test_an_event_holds_only_what_its_class_declares() -> None:
    assert Counted(count=2, by="ana").new_event() == NewEvent("tally.counted@2", {"count": 2, "by": "ana"})
    assert Closed().payload() == {"reason": None}
    with pytest.raises(ValueError):
        Counted(count="2", by="ana")  # type: ignore[arg-type]  # strict: no coercion from text
    with pytest.raises(ValueError):
        Opened(title="x", secret="y")  # type: ignore[call-arg]  # unknown field


def test_old_versions_are_read_by_todays_class_without_rewriting_them() -> None:
    old = _stored("tally.counted", {"count": "3"})
    assert read_event(old) == Counted(count=3, by="unknown")
    assert old.payload == {"count": "3"}  # the stored bytes (hashed by the chain) are untouched
    assert read_event(_stored("tally.counted@2", {"count": 4, "by": "bo"})) == Counted(count=4, by="bo")


@pytest.mark.parametrize("type_,payload,says", [
    ("tally.unheard", {}, "unknown type"),
    ("tally.counted@3", {"count": 1, "by": "x"}, "newer than"),
    ("tally.counted@x", {"count": 1, "by": "x"}, "newer than"),
    ("tally.opened", {"title": 7}, "at title"),
    ("tally.opened", {"title": "t", "extra": 1}, "at extra"),
])
def test_an_event_no_class_reads_is_refused_by_name(type_: str, payload: dict[str, object], says: str) -> None:
    with pytest.raises(UnreadableEventError, match=says) as caught:
        read_event(_stored(type_, payload))
    assert caught.value.fix


def test_a_fold_dispatches_on_the_class_and_names_what_it_does_not_cover() -> None:
    tally = fold.over(Tally("t1"), [_stored("tally.opened", {"title": "apples"}),
                                    _stored("tally.counted", {"count": "2"}, 2),
                                    _stored("tally.counted@2", {"count": 5, "by": "bo"}, 3)])
    assert (tally.title, tally.total) == ("apples", 7)
    assert tally.log == ["1:tally.opened", "2:tally.counted", "3:tally.counted"]
    assert fold.missing() == ["tally.closed"]
    fold.ignores(Closed)
    try:
        assert fold.missing() == []
    finally:
        fold._ignored.discard(Closed)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_decisions_run_against_a_ledger_append_atomically_and_retry_on_conflict(tmp_path: Path, kind: str) -> None:
    ledger: Ledger = MemoryLedger() if kind == "memory" else SqlLedger.from_url(f"sqlite:///{tmp_path / 'l.db'}")
    tallies = Cases(ledger, fold, Tally)
    tallies.execute("t1", lambda t: Decision.of(Opened(title="pears")))
    races = []

    def racing(t: Tally) -> Decision:
        if not races:  # another writer appends between this read and the append: decided again
            races.append(ledger.append(TALLY.case_id("t1"), None, [Counted(count=1, by="other").new_event()]))
        return count(t, 2, "ana")

    after = tallies.execute("t1", racing)
    assert (after.total, after.log[-1]) == (3, "3:tally.counted")
    assert [e.type for e in ledger.read("test-tally/t1")] == ["tally.opened", "tally.counted@2", "tally.counted@2"]
    assert tallies.keys() == ["t1"] and tallies.exists("t1") and not tallies.exists("t2")
    assert tallies.execute("t1", lambda t: count(t, 0, "ana")).total == 3  # nothing decided: nothing written
    assert ledger.version("test-tally/t1") == 3
    with pytest.raises(ValueError, match="returned a"):
        tallies.execute("t1", lambda t: Decision.of(_Foreign(note="x")))
    assert ledger.version("test-tally/t1") == 3


OTHER = case_type("test.other", "test-other/")


class _Foreign(EventBody, type="other.noted", case=OTHER):
    note: str
