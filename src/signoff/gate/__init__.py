"""signoff.gate: a person's approval, bound to the exact content, before code runs.

    from signoff.gate import gate

    @gate(approvers=["alice"], room="ops")
    def deploy(service: str, version: str) -> None: ...

The rooms server decides (approval cards: people only, named responders, first allowed answer);
the card's binding to content and the reading of its decision are `signoff.rooms.domain.bound`'s (the one
content-bound approval of `signoff.ledger.approval`, which workflows use too); this package asks and
waits (approvals.py), and signs and records every decision (record.py). `signoff.mcp` uses the same
approvals for its tools.
"""

from signoff.gate.agent import RoomsAgent
from signoff.gate.approvals import Approvals
from signoff.gate.gate import Gate, GatedBlock, GateRefused, GateTimeout, call_content, gate
from signoff.gate.record import PREDICATE_TYPE

__all__ = [
    "PREDICATE_TYPE",
    "Approvals",
    "Gate",
    "GateRefused",
    "GateTimeout",
    "GatedBlock",
    "RoomsAgent",
    "call_content",
    "gate",
]
