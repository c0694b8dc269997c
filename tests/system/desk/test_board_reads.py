"""`Desk.bugs()` keeps its folds between calls: what another desk on the same database (another
process) writes shows on the next call, and lists handed out earlier never change under their holder."""

from __future__ import annotations

from signoff.desk.workflow import Desk
from signoff.ledger import SqlLedger
from tests.support.fixtures.desk import COUPON, OVERFLOW, World


def test_the_board_follows_what_another_desk_writes(world: World) -> None:
    first = world.desk.submit_report(COUPON, client="198.51.100.1")
    reader_ledger = SqlLedger.open(world.settings)
    try:
        reader = Desk(reader_ledger, world.settings, world.desk.forge, world.desk.config)
        before = reader.bugs()
        assert [(b.bug_id, b.state, sorted(b.reports)) for b in before] == [
            (first.bug_id, "reproducing", [first.report_id])]
        # The writer files a second report of the same bug and a report of a new bug.
        joined = world.desk.submit_report({**COUPON, "steps": "Two items at 100, then SAVE300."},
                                          client="198.51.100.2")
        other = world.desk.submit_report(OVERFLOW, client="198.51.100.3")
        assert joined.bug_id == first.bug_id and other.bug_id != first.bug_id
        after = reader.bugs()
        assert [(b.bug_id, sorted(b.reports)) for b in after] == [
            (first.bug_id, sorted([first.report_id, joined.report_id])), (other.bug_id, [other.report_id])]
        # Folded as a fresh read would fold them, and the earlier list is as it was.
        assert [b.summary() for b in after] == [reader.bug(b.bug_id).summary() for b in after]
        assert [sorted(b.reports) for b in before] == [[first.report_id]]
        assert reader.bugs() == after  # nothing new: the same folds
    finally:
        reader_ledger.close()
