"""Ledgers written by commit 491180a (tests/data/old-ledgers, see its README) open, verify and read
with today's code: the chain walks, signed checkpoints check, today's appends continue the chain,
and every event of a case type a workflow has registered reads through its typed class.

Events of case types no workflow has registered yet are listed in UNTYPED, by family (a case id up to
its key). As a workflow's port registers its case types, its families leave the ledgers' untyped
events, and this test names the entries to take out of UNTYPED: the set says which workflows are not
typed yet.
"""

from __future__ import annotations

import importlib
import re
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

import signoff
from signoff.ledger import NewEvent, SigningPolicy, SqlLedger, signing_problem, verify_chain
from signoff.ledger.aggregate import case_type_of, read_event
from signoff.ledger.engine import HEADS, stored_revisions
from signoff.trust import KeyStore
from tests.support.paths import DATA

OLD = DATA / "old-ledgers"
DATABASES = sorted(p.name for p in OLD.glob("*.db"))

# The events each database holds, and whether 491180a signed its head (only the shared ledger of the
# demos was signed; the desk and incident demos wrote theirs unsigned).
EVENTS = {"desk.db": 376, "incident-payco-fingerprints.db": 1, "incident-payco-records.db": 6,
          "incident-rooms.db": 256, "incident-shopco-fingerprints.db": 1, "incident-shopco-records.db": 8,
          "main.db": 64}
SIGNED = {"main.db"}

# Families of case ids that no registered case type owns yet, with the workflow that writes them.
UNTYPED = {
    "agents/": "agents: call records",
    "demo-": "the ledger demo",
    "rooms.agent.": "rooms",
    "rooms.user.": "rooms",
}


def _register_case_types() -> None:
    """Import every workflow's model module: that is where a workflow on the contract declares its
    case types and event classes (docs/ledger.md), so a port that lands is checked here unasked."""
    root = Path(signoff.__file__).parent
    for path in sorted(root.rglob("model.py")):
        importlib.import_module(".".join(("signoff", *path.relative_to(root).with_suffix("").parts)))


def family(case_id: str) -> str:
    """The case id up to its key: `desk/bug/BUG-0001` -> `desk/`, `rooms.user.ana` -> `rooms.user.`,
    `demo-8e438237` -> `demo-`."""
    if "/" in case_id:
        return case_id.split("/", 1)[0] + "/"
    if case_id.count(".") >= 2:
        return ".".join(case_id.split(".", 2)[:2]) + "."
    return re.sub(r"[0-9a-f]+$", "", case_id)


@pytest.fixture(params=DATABASES)
def old(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A copy of one old database (opening one migrates it in place)."""
    copy = tmp_path / str(request.param)
    shutil.copyfile(OLD / str(request.param), copy)
    return copy


def test_every_old_database_is_checked() -> None:
    assert DATABASES == sorted(EVENTS), "a database was added to or removed from tests/data/old-ledgers"


@pytest.mark.real_migrations
def test_an_old_ledger_opens_verifies_and_takes_new_events(old: Path) -> None:
    ledger = SqlLedger.from_url(f"sqlite:///{old}")
    with ledger.engine.connect() as conn:
        assert stored_revisions(conn) == HEADS
    count = EVENTS[old.name]
    trusted = KeyStore(OLD / "public-keys").trusted()
    report = verify_chain(ledger, trusted=trusted)
    assert report.ok, report.problem
    assert (report.count, ledger.head()) == (count, (count, report.head_hash))
    unsigned = signing_problem(report, SigningPolicy().unsigned_tail_limit)  # what `signoff ledger verify` adds
    if old.name in SIGNED:
        assert unsigned is None and report.last_checkpoint is not None and report.last_checkpoint <= count
    else:
        assert unsigned is not None and unsigned.message.startswith(f"no signed checkpoint: all {count} events")
    # today's appends continue the old chain
    ledger.append("test/old-ledgers/continued", 0, [NewEvent("test.appended", {"on": old.name})])
    again = verify_chain(ledger, trusted=trusted)
    assert again.ok and again.count == count + 1, again.problem
    ledger.close()


@pytest.mark.real_migrations
def test_old_events_read_through_their_classes(old: Path) -> None:
    _register_case_types()
    ledger = SqlLedger.from_url(f"sqlite:///{old}")
    read = 0
    for event in ledger.stream():
        case = case_type_of(event.case_id)
        if case is None:
            assert family(event.case_id) in UNTYPED, f"no case type owns {event.case_id!r}, nor does UNTYPED list it"
            continue
        body = read_event(event)  # raises UnreadableEventError, naming the event, for what no class reads
        assert body.CASE is case, f"event {event.seq} ({event.type}) of a {case.name} case read as {body.CASE.name}"
        read += 1
    assert read == sum(1 for e in ledger.stream() if case_type_of(e.case_id) is not None)
    ledger.close()


def test_untyped_lists_exactly_the_families_no_case_type_owns() -> None:
    _register_case_types()
    untyped = set()
    for name in DATABASES:
        # immutable: a WAL database opened even read-only would get -wal and -shm files beside it
        with closing(sqlite3.connect(f"file:{OLD / name}?mode=ro&immutable=1", uri=True)) as conn:
            untyped |= {family(c) for (c,) in conn.execute("SELECT DISTINCT case_id FROM events")
                        if case_type_of(c) is None}
    assert not set(UNTYPED) - untyped, f"typed now: take {sorted(set(UNTYPED) - untyped)} out of UNTYPED"
    assert not untyped - set(UNTYPED), f"no case type owns {sorted(untyped - set(UNTYPED))}: type them or list them"
