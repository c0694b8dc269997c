"""The loop from report to merge on SQLite and on PostgreSQL (the ledger is the only state besides
the forge's git repositories)."""

from __future__ import annotations

from pathlib import Path

from tests.support.fixtures.desk import COUPON, COUPON_2, open_world


def test_report_to_merge(db_url: str, tmp_path: Path, sandbox_ok: None) -> None:
    w = open_world(tmp_path / ".signoff", db_url=db_url)
    w.intakes["first"] = w.desk.submit_report(COUPON, "198.51.100.7")
    w.intakes["second"] = w.desk.submit_report(COUPON_2, "198.51.100.8")
    assert w.intakes["first"].bug_id == w.intakes["second"].bug_id
    w.engineering.drain()
    assert w.bug().state == "awaiting_reporter"
    w.desk.confirm(w.reporter("second"), "yes", bug_id=w.bug_id)
    w.engineering.drain()
    b = w.bug()
    assert b.state == "in_review" and b.change is not None
    w.desk.approve(w.actor("alice"), w.bug_id, b.change["head"])
    w.desk.merge(w.actor("alice"), w.bug_id)
    w.deliver()
    assert w.bug().state == "merged"
    assert w.concierge.drain() == 2  # both reporters were asked about the reproduction
