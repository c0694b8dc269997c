"""Bugs written by commit 491180a (tests/data/old-ledgers/desk.db, the desk demo) read through
today's event classes and fold to the state the old string-dispatched fold gave them.

tests/data/desk/old-bugs-491180a.json is that state, as 491180a's `signoff.desk.model.fold` made it
from the same events (sets as sorted lists)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from signoff.desk import records
from signoff.desk.model import BUG, Bug, fold
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.ledger.aggregate import case_type_of, case_types, read_event
from tests.support.paths import DATA

OLD = DATA / "old-ledgers" / "desk.db"
EXPECTED = json.loads((DATA / "desk" / "old-bugs-491180a.json").read_text())


@pytest.fixture
def old_ledger(tmp_path: Path) -> SqlLedger:
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(OLD, home / "signoff.db")  # opening migrates in place: never the kept file
    return SqlLedger.open(Settings.load(home=home, env={}))


def _state(bug: Bug) -> dict[str, Any]:
    return {k: sorted(v) if isinstance(v, set) else v for k, v in dataclasses.asdict(bug).items()}


def test_every_old_bug_event_reads_through_its_class_and_folds_as_before(old_ledger: SqlLedger) -> None:
    cases = old_ledger.case_ids(BUG.prefix)
    assert sorted(BUG.key_of(c) for c in cases) == sorted(EXPECTED)
    types = set()
    for case_id in cases:
        events = old_ledger.read(case_id)
        for ev in events:
            body = read_event(ev)
            assert body.CASE is BUG and body.payload() | ev.payload == body.payload()
            types.add(ev.type)
        assert _state(fold(BUG.key_of(case_id), events)) == EXPECTED[BUG.key_of(case_id)]
    assert len(types) >= 12  # the demo wrote most kinds: opened, attached, reproduced, confirmed, merged, ...


def test_every_old_event_of_the_desks_typed_cases_reads_through_its_class(old_ledger: SqlLedger) -> None:
    desk = [ct for ct in case_types() if ct.name.startswith("desk.")]
    assert records.REPORT in desk
    read = 0
    for ev in old_ledger.stream():
        ct = case_type_of(ev.case_id)
        if ct in desk:
            body = read_event(ev)
            assert body.CASE is ct and body.payload() == ev.payload  # as written, nothing added or lost
            read += 1
    assert {ct.name for ct in desk} >= {"desk.bug", "desk.report", "desk.notes", "desk.smoke", "desk.deploy",
                                         "desk.intake", "desk.quarantine", "desk.clusters", "desk.credentials",
                                         "desk.forge", "desk.webhook", "desk.inbox", "desk.card", "desk.crew"}
    assert read == sum(1 for ev in old_ledger.stream() if ev.case_id.startswith("desk/"))  # every desk event


def test_the_old_desk_records_fold_to_what_the_desk_read_from_them(old_ledger: SqlLedger) -> None:
    book = records.credential_fold.over(records.CredentialBook(), old_ledger.read("desk/credentials"))
    assert len(book.issued) == 8 and not book.revoked
    change = records.forge_fold.over(records.ChangeRequest(), old_ledger.read("desk/forge/shoplite/1")).cr
    assert change["merged"] and change["head"] == change["reviews"][0]["commit_id"]
    crew = records.crew_fold.over(records.CrewRecords(), old_ledger.read("desk/crew")).crew
    assert crew is not None and crew.owner_name == "alice"
    inboxes = [records.inbox_fold.over(records.Inbox(), old_ledger.read(c)) for c in old_ledger.case_ids("desk/inbox/")]
    assert [n.card is not None for i in inboxes for n in i.notices].count(True) == 4  # of 5 notices, 4 asked a card
