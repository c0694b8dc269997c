"""The ledger page's monitor answers exactly what `verify_chain` answers, though it walks only the
events appended since its last call: an attacker who edits an old, already verified row straight in
the database (another connection, as the sqlite3 shell would) is found on the very next call; in
background mode, by the first call after the read-back that follows the edit, while calls answer
without waiting for that read-back."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import signoff.ledger.audit as audit
from signoff.ledger import ChainMonitor, NewEvent, SqlLedger, sign_checkpoint, verify_chain
from signoff.trust import KeyStore
from tests.conftest import wait_for
from tests.integration.ledger.test_tamper import TAMPERS
from tests.system.ledger.test_checkpoints import _rewrite

N = 9


def _filled(url: str, keys: KeyStore) -> SqlLedger:
    ledger = SqlLedger.from_url(url)
    for i in range(N):
        ledger.append(f"case-{i % 3}", None, [NewEvent("step", {"i": i, "note": f"event {i}"})])
    sign_checkpoint(ledger, keys.ensure("ledger"))
    return ledger


@contextmanager
def _watched(url: str, keys: KeyStore, background: bool = False) -> Iterator[tuple[SqlLedger, ChainMonitor]]:
    """A filled ledger and a monitor that verified it once (the page visited before the attack)."""
    ledger = _filled(url, keys)
    monitor = ChainMonitor(ledger, background=background)
    first = monitor.verify(keys.trusted())
    assert first.ok and first.count == N and first.last_checkpoint == N
    assert monitor.reread().upto == N  # a first walk reads every row
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


def test_text_moved_across_the_digest_separator_is_found(sqlite_url: str, keys: KeyStore) -> None:
    # The read-back joins each column's values with char(31): an attacker who knows it moves the
    # boundary between two rows' payloads, keeping the joined text but for the separator.
    with _watched(sqlite_url, keys) as (ledger, monitor):
        _attack(sqlite_url, [
            "UPDATE events SET payload = payload || char(31) || "
            "(SELECT substr(payload, 1, 5) FROM events WHERE seq = 4) WHERE seq = 3",
            "UPDATE events SET payload = substr(payload, 6) WHERE seq = 4",
        ])
        report = monitor.verify(keys.trusted())
        assert not report.ok and report.broken_seq == 3
        assert report == verify_chain(ledger, trusted=keys.trusted())


def test_a_value_stored_as_bytes_of_the_same_text_is_not_vouched_for(sqlite_url: str, keys: KeyStore) -> None:
    # The same text as a blob joins to the same string in SQLite; only the type tells them apart.
    with _watched(sqlite_url, keys) as (ledger, monitor):
        _attack(sqlite_url, ["UPDATE events SET type = CAST(type AS BLOB) WHERE seq = 2"])
        walked: list[int] = []
        real = audit._walk

        def counting(*args: Any, **kwargs: Any) -> Any:
            walked.append(1 if kwargs.get("start", args[3] if len(args) > 3 else None) is None else 0)
            return real(*args, **kwargs)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(audit, "_walk", counting)
            report = monitor.verify(keys.trusted())
        assert walked and walked[-1] == 1  # walked again from the first event, not vouched for by the digest
        assert report == verify_chain(ledger, trusted=keys.trusted())


def test_in_the_background_a_call_does_not_wait_for_the_read_back(sqlite_url: str, keys: KeyStore) -> None:
    with _watched(sqlite_url, keys, background=True) as (ledger, monitor):
        release, started = threading.Event(), threading.Event()
        real = monitor._unchanged

        def held(*args: Any) -> bool:
            started.set()
            release.wait(30)
            return real(*args)

        monitor._unchanged = held  # type: ignore[method-assign]
        ledger.append("case-1", None, [NewEvent("step", {"i": 100})])
        report = monitor.verify(keys.trusted())  # answered while the read-back is held
        assert started.wait(30)
        assert report.ok and report.count == N + 1 and report.unsigned_tail == 1
        assert monitor.reread().running and monitor.reread().upto == N
        release.set()
        monitor.settle(30)
        assert not monitor.reread().running and monitor.reread().upto == N + 1


@pytest.mark.parametrize("how", sorted(TAMPERS))
def test_in_the_background_an_old_row_changed_is_found_after_the_read_back(db_url: str, keys: KeyStore,
                                                                          how: str) -> None:
    with _watched(db_url, keys, background=True) as (ledger, monitor):
        ledger.append("case-1", None, [NewEvent("step", {"i": 100})])
        assert monitor.verify(keys.trusted()).ok
        monitor.settle(30)
        with ledger.engine.begin() as conn:
            for statement in TAMPERS[how](4):
                conn.exec_driver_sql(statement)
        expected = verify_chain(ledger, trusted=keys.trusted())
        assert not expected.ok
        # Each call may start a read-back (spaced by its cost); a call after the one that follows
        # the change says what `verify_chain` says.
        assert wait_for(lambda: monitor.verify(keys.trusted()) == expected, timeout=30)
        assert monitor.verify(keys.trusted()) == expected  # and it stays broken


def test_in_the_background_a_rewrite_is_named_as_verify_chain_names_it(sqlite_url: str, keys: KeyStore) -> None:
    # The new events' walk starts from a prefix not read back yet: a problem it meets is named
    # only after a walk from the first event, never as the fast walk saw it.
    with _watched(sqlite_url, keys, background=True) as (ledger, monitor):
        _rewrite(ledger, 2, {"i": "forged"})
        report = monitor.verify(keys.trusted())
        assert not report.ok and "history up to it was rewritten" in (report.problem or "")
        assert report == verify_chain(ledger, trusted=keys.trusted())
