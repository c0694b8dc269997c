"""The PayCo/ShopCo bug reproduced and fixed with the real node process."""

from __future__ import annotations

from pathlib import Path

from signoff.demo.payco_shopco.fixture import customer_names, load_capture
from signoff.demo.payco_shopco.simulate import SimulationResult, simulate


def _accented_ids() -> list[str]:
    return [f"evt_{i + 1:04d}" for i, name in enumerate(customer_names()) if not name.isascii()]


def test_exactly_the_six_accented_events_are_rejected(buggy_run: SimulationResult) -> None:
    assert len(buggy_run.accepted) + len(buggy_run.rejected) == 60
    assert len(_accented_ids()) == 6
    assert buggy_run.rejected == _accented_ids()


def test_captures_show_the_escape_on_paycos_side_only(buggy_run: SimulationResult) -> None:
    payco = {c.event_id: c for c in load_capture(buggy_run.payco_capture)}
    shopco = {c.event_id: c for c in load_capture(buggy_run.shopco_capture)}
    assert set(payco) == set(shopco) and len(payco) == 60
    for event_id in buggy_run.rejected:
        assert b"\\u" in payco[event_id].raw
        assert b"\\u" not in shopco[event_id].raw
        assert payco[event_id].status == shopco[event_id].status == 401
    for event_id in buggy_run.accepted:
        assert payco[event_id].raw == shopco[event_id].raw


def test_shopco_fix_verifying_raw_bytes_rejects_none(node: str, tmp_path: Path) -> None:
    result = simulate(tmp_path, fixed_shopco=True)
    assert result.rejected == [] and len(result.accepted) == 60


def test_payco_fix_sending_utf8_rejects_none(node: str, tmp_path: Path) -> None:
    result = simulate(tmp_path, fixed_payco=True)
    assert result.rejected == [] and len(result.accepted) == 60
