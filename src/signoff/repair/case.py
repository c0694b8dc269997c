"""Reading and recording repair cases in a ledger, through the aggregate contract's `Cases`.

The events on `repair.case.<id>` are the source of truth (`model`); a decision (`decisions`) is
always applied to the case as it is when it is written: `record` reads, folds, decides and appends
at the version read, and decides again on a conflict.
"""

from __future__ import annotations

from signoff.kernel.errors import NotFoundError, UsageError
from signoff.ledger import Ledger
from signoff.ledger.aggregate import NOTHING, Cases, Decision
from signoff.repair.decisions import Command, decide
from signoff.repair.model import REPAIR_CASE, CaseState, fold, initial


def cases(ledger: Ledger) -> Cases[CaseState]:
    return Cases(ledger, fold, initial)


def read_case(ledger: Ledger, case_id: str) -> CaseState:
    try:
        st = cases(ledger).load(case_id)
    except UsageError:
        st = initial(case_id)  # not a case id at all: no such case
    if not st.exists:
        raise NotFoundError(f"no repair case {case_id}", "list cases with `signoff repair cases`")
    return st


def read_cases(ledger: Ledger) -> list[CaseState]:
    """Every repair case in the ledger, in the order they were opened."""
    found = (cases(ledger).load(key) for key in cases(ledger).keys())
    return [st for st in found if st.exists]


def record(ledger: Ledger, case_id: str, command: Command, idem: str) -> CaseState:
    """Record what `command` (what a job measured) makes of the case as it is when it is written
    (`decisions.decide`). An abandoned case stays as its operator left it: a job still in flight
    records nothing on it."""

    def guarded(now: CaseState) -> Decision:
        if not now.exists:
            raise NotFoundError(f"no repair case {case_id}", "list cases with `signoff repair cases`")
        return NOTHING if now.state == "ABANDONED" else decide(now, command)

    return cases(ledger).execute(case_id, guarded, idem)


__all__ = ["REPAIR_CASE", "CaseState", "cases", "read_case", "read_cases", "record"]
