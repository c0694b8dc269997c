"""Altering, deleting or reordering any single stored event is found by the chain walk."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from signoff.ledger import NewEvent, SqlLedger, verify_chain

N = 9


def _filled(url: str) -> SqlLedger:
    ledger = SqlLedger.from_url(url)
    for i in range(N):
        ledger.append(f"case-{i % 3}", None, [NewEvent("step", {"i": i, "note": f"event {i}"})])
    assert verify_chain(ledger).ok
    return ledger


def _alter(seq: int) -> str:
    return f"UPDATE events SET payload = '{{\"i\":999}}' WHERE seq = {seq}"


def _delete(seq: int) -> str:
    return f"DELETE FROM events WHERE seq = {seq}"


TAMPERS: dict[str, Callable[[int], list[str]]] = {
    "alter": lambda seq: [_alter(seq)],
    "delete": lambda seq: [_delete(seq)],
    # swap the content of this event and the next one (an attacker reordering history)
    "reorder": lambda seq: [
        f"UPDATE events SET seq = -1 WHERE seq = {seq}",
        f"UPDATE events SET seq = {seq} WHERE seq = {seq + 1}",
        f"UPDATE events SET seq = {seq + 1} WHERE seq = -1",
    ],
}


@pytest.mark.parametrize("how", sorted(TAMPERS))
def test_every_single_event_tamper_is_found_sqlite(tmp_path, how: str) -> None:  # type: ignore[no-untyped-def]
    last = N - 1 if how == "reorder" else N
    for seq in range(1, last + 1):
        url = f"sqlite:///{tmp_path / f'{how}-{seq}.db'}"
        ledger = _filled(url)
        with ledger.engine.begin() as conn:
            for stmt in TAMPERS[how](seq):
                conn.exec_driver_sql(stmt)
        report = verify_chain(ledger)
        assert not report.ok, f"{how} of seq {seq} went unnoticed"
        assert report.broken_seq in (seq, seq + 1) or report.broken_seq is None
        assert report.problem
        ledger.close()


@pytest.mark.parametrize("how", sorted(TAMPERS))
def test_tamper_is_found_on_each_database(db_url: str, how: str) -> None:
    ledger = _filled(db_url)
    with ledger.engine.begin() as conn:
        for stmt in TAMPERS[how](4):
            conn.exec_driver_sql(stmt)
    report = verify_chain(ledger)
    assert not report.ok
    assert "seq 4" in (report.problem or "") or "seq 5" in (report.problem or "")
    ledger.close()
