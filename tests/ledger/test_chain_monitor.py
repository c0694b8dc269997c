"""The ledger page's monitor answers exactly what `verify_chain` answers, though it walks only the
events appended since its last call: an attacker who edits an old, already verified row straight in
the database (another connection, as the sqlite3 shell would) is found on the very next call."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import signoff.ledger.audit as audit
from signoff.ledger import ChainMonitor, Ledger, NewEvent, sign_checkpoint, verify_chain
from signoff.trust import KeyStore
from tests.ledger.test_checkpoints import _rewrite
from tests.ledger.test_tamper import TAMPERS

N = 9


def _filled(url: str, keys: KeyStore) -> Ledger:
    ledger = Ledger.from_url(url)
    for i in range(N):
        ledger.append(f"case-{i % 3}", None, [NewEvent("step", {"i": i, "note": f"event {i}"})])
    sign_checkpoint(ledger, keys.ensure("ledger"))
    return ledger


@contextmanager
def _watched(url: str, keys: KeyStore) -> Iterator[tuple[Ledger, ChainMonitor]]:
    """A filled ledger and a monitor that verified it once (the page visited before the attack)."""
    ledger = _filled(url, keys)
    monitor = ChainMonitor(ledger)
    first = monitor.verify(keys.trusted())
    assert first.ok and first.count == N and first.last_checkpoint == N
    try:
        yield ledger, monitor
    finally:
        monitor.close()
        ledger.close()


@pytest.fixture
def keys(tmp_path: Path) -> KeyStore:
    return KeyStore(tmp_path / "keys")


def _attack(url: str, statements: list[str]) -> None:
    """Run the statements on a connection of the attacker's own, outside signoff."""
    db = sqlite3.connect(url.removeprefix("sqlite:///"))
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()


@pytest.mark.parametrize("how", sorted(TAMPERS))
def test_an_old_row_changed_after_a_visit_is_found_on_the_next(tmp_path: Path, keys: KeyStore, how: str) -> None:
    last = N - 1 if how == "reorder" else N
    for seq in range(1, last + 1):
        url = f"sqlite:///{tmp_path / f'{how}-{seq}.db'}"
        with _watched(url, keys) as (ledger, monitor):
            _attack(url, TAMPERS[how](seq))
            report = monitor.verify(keys.trusted())
            assert not report.ok, f"{how} of seq {seq} after a visit went unnoticed"
            assert report == verify_chain(ledger, trusted=keys.trusted())
            assert monitor.verify(keys.trusted()) == report  # and it stays broken


def test_an_edit_that_keeps_the_length_and_the_hash_is_found(sqlite_url: str, keys: KeyStore) -> None:
    with _watched(sqlite_url, keys) as (_, monitor):
        _attack(sqlite_url, ["UPDATE events SET payload = replace(payload, 'event 2', 'event 7') WHERE seq = 3"])
        report = monitor.verify(keys.trusted())
        assert not report.ok and report.broken_seq == 3 and "altered" in (report.problem or "")


def test_a_consistent_rewrite_of_verified_history_is_found_by_the_checkpoint(db_url: str, keys: KeyStore) -> None:
    with _watched(db_url, keys) as (ledger, monitor):
        _rewrite(ledger, 2, {"i": "forged"})
        report = monitor.verify(keys.trusted())
        assert not report.ok and "history up to it was rewritten" in (report.problem or "")
        assert report == verify_chain(ledger, trusted=keys.trusted())


@pytest.mark.parametrize("how", sorted(TAMPERS))
def test_a_tamper_after_a_visit_is_found_on_each_database(db_url: str, keys: KeyStore, how: str) -> None:
    with _watched(db_url, keys) as (ledger, monitor):
        with ledger.engine.begin() as conn:
            for statement in TAMPERS[how](4):
                conn.exec_driver_sql(statement)
        report = monitor.verify(keys.trusted())
        assert not report.ok and report == verify_chain(ledger, trusted=keys.trusted())


def test_only_the_new_events_are_hashed_again(db_url: str, keys: KeyStore, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = _filled(db_url, keys)
    monitor = ChainMonitor(ledger)
    hashed: list[int] = []
    real: Callable[..., str] = audit.event_hash

    def counting(seq: int, *rest: Any) -> str:
        hashed.append(seq)
        return real(seq, *rest)

    monkeypatch.setattr(audit, "event_hash", counting)
    assert monitor.verify(keys.trusted()).count == N
    assert hashed == list(range(1, N + 1))
    hashed.clear()
    ledger.append("case-1", None, [NewEvent("step", {"i": 100}), NewEvent("step", {"i": 101})])
    report = monitor.verify(keys.trusted())
    assert report.ok and report.count == N + 2 and report.last_checkpoint == N and report.unsigned_tail == 2
    assert hashed == [N + 1, N + 2]
    assert report == verify_chain(ledger, trusted=keys.trusted())
    monitor.close()
    ledger.close()


def test_the_checkpoints_are_checked_against_the_keys_of_each_call(sqlite_url: str, keys: KeyStore,
                                                                   tmp_path: Path) -> None:
    with _watched(sqlite_url, keys) as (_, monitor):
        # Nothing was written since: the chain's answer is reused, the keys are not.
        others = KeyStore(tmp_path / "others")
        others.ensure("ledger")
        report = monitor.verify(others.trusted())
        assert not report.ok and "not signed by a trusted ledger key" in (report.problem or "")


def test_a_consistent_truncation_below_a_checkpoint_is_found(sqlite_url: str, keys: KeyStore) -> None:
    with _watched(sqlite_url, keys) as (ledger, monitor):
        # The newest events go, and the head and the case versions are made to agree with what is left.
        _attack(sqlite_url, [
            "DELETE FROM events WHERE seq > 7",
            "UPDATE chain_head SET seq = 7, hash = (SELECT hash FROM events WHERE seq = 7) WHERE id = 1",
            "UPDATE cases SET version = (SELECT count(*) FROM events e WHERE e.case_id = cases.case_id)",
        ])
        assert verify_chain(ledger).ok  # the chain alone agrees with itself
        report = monitor.verify(keys.trusted())
        assert not report.ok and "events were deleted" in (report.problem or "")
        assert report == verify_chain(ledger, trusted=keys.trusted())
